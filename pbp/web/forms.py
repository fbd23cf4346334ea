"""WTForms classes for the account pages (login, invites, password reset), and `parsed`:
the game's forms read with the API's own input models (pbp.inputs).

Every form is a `FlaskForm`, so it carries the CSRF token; templates render it with
`form.hidden_tag()`. Validators here only check shape (present, long enough, same
twice); the rules themselves live in pbp.services.accounts.logins.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TypeVar

from flask_wtf import FlaskForm
from pydantic import ValidationError as InputError
from wtforms import HiddenField, PasswordField, StringField, SubmitField
from wtforms.validators import EqualTo, InputRequired, Length, Optional, Regexp

from pbp.errors import UserError
from pbp.inputs import Body
from pbp.services.accounts.logins import MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH

_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+$")


def _email_field(label: str = "Email address", required: bool = True) -> StringField:
    presence = InputRequired() if required else Optional()
    return StringField(
        label,
        validators=[
            presence,
            Length(max=320),
            Regexp(_EMAIL, message="This is not an email address."),
        ],
        render_kw={"autocomplete": "email", "type": "email", "spellcheck": "false"},
    )


def _new_password_fields(label: str = "New password") -> tuple[PasswordField, PasswordField]:
    password = PasswordField(
        label,
        validators=[InputRequired(), Length(min=MIN_PASSWORD_LENGTH, max=MAX_PASSWORD_LENGTH)],
        description=f"At least {MIN_PASSWORD_LENGTH} characters; a few words make a good one.",
        render_kw={"autocomplete": "new-password"},
    )
    confirm = PasswordField(
        f"{label} again",
        validators=[InputRequired(), EqualTo("password", message="The two passwords differ.")],
        render_kw={"autocomplete": "new-password"},
    )
    return password, confirm


class LoginForm(FlaskForm):
    email = _email_field()
    password = PasswordField(
        "Password",
        validators=[InputRequired(), Length(max=MAX_PASSWORD_LENGTH)],
        render_kw={"autocomplete": "current-password"},
    )
    next = HiddenField()
    submit = SubmitField("Log in")


class LogoutForm(FlaskForm):
    submit = SubmitField("Log out")


class JoinForm(FlaskForm):
    """Accept an invite as the account that is logged in."""

    submit = SubmitField("Join")


class AcceptInviteForm(FlaskForm):
    display_name = StringField(
        "Your name",
        validators=[InputRequired(), Length(max=120)],
        description="Shown to the referee and the other players.",
        render_kw={"autocomplete": "nickname"},
    )
    email = _email_field()
    password, confirm = _new_password_fields("Choose a password")
    submit = SubmitField("Create my account and join")


class ResetRequestForm(FlaskForm):
    email = _email_field()
    submit = SubmitField("Email me a reset link")


class ChangePasswordForm(FlaskForm):
    current = PasswordField(
        "Current password",
        validators=[InputRequired(), Length(max=MAX_PASSWORD_LENGTH)],
        render_kw={"autocomplete": "current-password"},
    )
    password, confirm = _new_password_fields()
    submit = SubmitField("Change my password")


class ResetPasswordForm(FlaskForm):
    password, confirm = _new_password_fields()
    submit = SubmitField("Set the new password")


class SignupForm(FlaskForm):
    """Open sign-up (PBP_SIGNUP=open): the account works once the address is confirmed.
    No password here (issue #28 item 7): it is chosen on the confirmation page, which only
    the address's owner reaches."""

    display_name = StringField(
        "Your name",
        validators=[InputRequired(), Length(max=120)],
        description="Shown to the referees and players you play with.",
        render_kw={"autocomplete": "nickname"},
    )
    email = _email_field()
    submit = SubmitField("Sign up")


class ConfirmSignupForm(FlaskForm):
    """The confirmation link's page: the owner of the address chooses the password."""

    password, confirm = _new_password_fields("Choose a password")
    submit = SubmitField("Confirm and log in")


class ResendConfirmationForm(FlaskForm):
    email = _email_field()
    submit = SubmitField("Send me a new confirmation link")


# -- the game's forms, read with the API's models ------------------------------------------

M = TypeVar("M", bound=Body)


class FormRefused(UserError):
    """A form its input model refuses: shown again with what was typed (the API answers the
    same body with 422 too)."""

    status = 422


def parsed(model: type[M], typed: Mapping[str, object]) -> M:
    """`typed` (a form's fields, as text) read with `model`, or FormRefused in the words a
    person reads. A field the form leaves empty takes the model's default when that
    default is None (a select's "no choice"); fields the model lacks (the CSRF token, the
    button) are not its business."""
    data = {}
    for name, field in model.model_fields.items():
        if name not in typed:
            continue
        if typed[name] == "" and not field.is_required() and field.default is None:
            continue
        data[name] = typed[name]
    try:
        return model.model_validate(data)
    except InputError as exc:
        raise FormRefused("; ".join(_said(model, e) for e in exc.errors())) from exc


def _said(model: type[Body], error) -> str:
    name = str(error["loc"][0]) if error["loc"] else ""
    what = model.names.get(name, name.replace("_", " "))
    if len(error["loc"]) > 1:  # one item of a list: "a profile address"
        what = model.names.get(f"{name}[]", what)
    ctx = error.get("ctx") or {}
    kind = error["type"]
    if kind == "missing" or (kind == "string_too_short" and not error.get("input")):
        return model.needed.get(name, f"{what} is needed")
    text = isinstance(error.get("input"), str)
    if kind == "string_too_long" or (kind == "too_long" and text):
        length, limit = len(error["input"]), ctx["max_length"]
        return (
            f"{what} may be at most {limit:,} characters; this one has {length:,}: "
            f"shorten it by {length - limit:,}"
        )
    if kind == "too_long":
        return f"give at most {ctx['max_length']} {what}"
    if name in model.wrong:
        return model.wrong[name]
    if kind == "literal_error":
        return f"{what} is one of {ctx['expected']}"
    return f"{what}: {error['msg']}"
