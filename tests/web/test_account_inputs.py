"""Issue #32 item 2: the account forms are read with pbp.inputs models, as every other form.

WTForms only draws them and carries the CSRF token. A refused account form comes back with
422, each reason beside its field, and what was typed (never a password) still in it.
"""

from __future__ import annotations

import re

import pytest
from pydantic import ValidationError

from pbp.inputs import accounts as inputs
from pbp.web import forms

LONG = "x" * 201


@pytest.mark.parametrize(
    ("model", "body", "field"),
    [
        (inputs.LoginIn, {"email": "not-an-address", "password": "p"}, "email"),
        (inputs.LoginIn, {"email": "a@b.example", "password": ""}, "password"),
        (inputs.LoginIn, {"email": "a@b.example", "password": LONG}, "password"),
        (inputs.SignupIn, {"email": "a@b.example", "display_name": ""}, "display_name"),
        (inputs.SignupIn, {"email": "a@b.example", "display_name": "n" * 121}, "display_name"),
        (inputs.NewPasswordIn, {"password": "short", "confirm": "short"}, "password"),
        (inputs.NewPasswordIn, {"password": "long enough x", "confirm": "other"}, "confirm"),
        (
            inputs.ChangePasswordIn,
            {"current": "", "password": "p" * 10, "confirm": "p" * 10},
            "current",
        ),
        (inputs.ResetRequestIn, {"email": "a@b@c"}, "email"),
        (inputs.ResetRequestIn, {"email": "a@b.example", "extra": "x"}, "extra"),
    ],
)
def test_each_model_refuses_the_shape_it_must(model, body, field):
    with pytest.raises(ValidationError) as refused:
        model.model_validate(body)
    assert [error["loc"][0] for error in refused.value.errors()] == [field]


def test_accepted_fields_come_back_clean():
    invite = inputs.AcceptInviteIn.model_validate(
        {
            "display_name": "Ada",
            "email": "  ada@b.example ",
            "password": "p" * 10,
            "confirm": "p" * 10,
        }
    )
    assert invite.email == "ada@b.example" and invite.password == "p" * 10
    # A password is taken as typed: its spaces are part of it.
    assert inputs.LoginIn.model_validate({"email": "a@b.c", "password": " x "}).password == " x "


def test_a_short_password_is_one_reason_not_two():
    """The two passwords "differ" is not said of a password refused for its length."""
    with pytest.raises(ValidationError) as refused:
        inputs.NewPasswordIn.model_validate({"password": "short", "confirm": "shorter"})
    assert len(refused.value.errors()) == 1


def test_no_account_form_validates_with_wtforms():
    """Only the drawing is WTForms': no field of an account form carries a validator."""
    carrying = [
        f"{form.__name__}.{name}"
        for form in vars(forms).values()
        if isinstance(form, type)
        and issubclass(form, forms.FlaskForm)
        and form is not forms.FlaskForm
        for name, unbound in vars(form).items()
        if getattr(unbound, "kwargs", {}).get("validators")
    ]
    assert carrying == []


def _errors_beside(html: str, field: str) -> list[str]:
    block = re.search(rf'<ul class="field-errors" id="{field}-errors">(.*?)</ul>', html, re.S)
    return re.findall(r"<li>(.*?)</li>", block.group(1)) if block else []


def test_a_refused_login_keeps_the_address_and_says_why_beside_it(client, auth):
    page = auth.post("/login", {"email": "ada at example", "password": "whatever"})
    html = page.get_data(as_text=True)
    assert page.status_code == 422
    assert _errors_beside(html, "email") == ["This is not an email address."]
    assert 'value="ada at example"' in html
    assert "whatever" not in html  # a password is never drawn back


def test_a_refused_signup_keeps_the_name(app, client, auth):
    app.config["PBP_SIGNUP"] = "open"
    page = auth.post("/signup", {"display_name": "Ada Quill", "email": ""})
    html = page.get_data(as_text=True)
    assert page.status_code == 422
    assert _errors_beside(html, "email") == ["This field is required."]
    assert 'value="Ada Quill"' in html


def test_a_refused_change_of_password_says_why_beside_each_field(client, auth):
    auth.login(auth.create_user())
    page = auth.post("/account/password", {"current": "", "password": "short", "confirm": "x"})
    html = page.get_data(as_text=True)
    assert page.status_code == 422
    assert _errors_beside(html, "current") == ["This field is required."]
    assert _errors_beside(html, "password") == ["The password must have at least 10 characters."]
    assert _errors_beside(html, "confirm") == []  # one reason is enough
