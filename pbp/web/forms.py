"""The account pages' forms, drawn with WTForms (labels, hints and the CSRF token), and
how every page reads a form: with the input models of pbp.inputs, the API's own.

`checked` reads an account form with its model (pbp.inputs.accounts) and puts each reason
beside its field; `parsed` reads a game's form and refuses it as a whole. The rules
themselves live in the services (pbp.services.accounts.logins for the accounts).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

from flask_wtf import FlaskForm
from pydantic import ValidationError as InputError
from wtforms import HiddenField, PasswordField, StringField, SubmitField

from pbp import limits
from pbp.errors import UserError
from pbp.inputs import Body


def _email_field(label: str = "Email address") -> StringField:
    return StringField(
        label, render_kw={"autocomplete": "email", "type": "email", "spellcheck": "false"}
    )


def _new_password_fields(label: str = "New password") -> tuple[PasswordField, PasswordField]:
    password = PasswordField(
        label,
        description=f"At least {limits.PASSWORD_MIN} characters; a few words make a good one.",
        render_kw={"autocomplete": "new-password"},
    )
    confirm = PasswordField(f"{label} again", render_kw={"autocomplete": "new-password"})
    return password, confirm


def _current_password(label: str) -> PasswordField:
    return PasswordField(label, render_kw={"autocomplete": "current-password"})


class LoginForm(FlaskForm):
    email = _email_field()
    password = _current_password("Password")
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
    current = _current_password("Current password")
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


def checked(form: FlaskForm, model: type[M]) -> M | None:
    """An account form's fields read with `model`, or None with each reason put beside its
    field (the page is drawn again, with 422 and what was typed)."""
    typed = {name: form[name].data or "" for name in model.model_fields if name in form}
    try:
        return model.model_validate(typed)
    except InputError as exc:
        for error in exc.errors():
            reason = _said(model, error)
            reason = reason[:1].upper() + reason[1:] + ("" if reason.endswith(".") else ".")
            name = str(error["loc"][0]) if error["loc"] else ""
            if name in form:
                form[name].errors = [*form[name].errors, reason]
            else:
                form.form_errors.append(reason)
        return None


# pydantic's word for a short text; "too_short" when the length is checked after a
# validator (pbp.inputs.Text's), as for every other sized value.
TOO_SHORT = ("string_too_short", "too_short")


def _said(model: type[Body], error) -> str:
    name = str(error["loc"][0]) if error["loc"] else ""
    what = model.names.get(name, name.replace("_", " "))
    if len(error["loc"]) > 1:  # one item of a list: "a profile address"
        what = model.names.get(f"{name}[]", what)
    ctx = error.get("ctx") or {}
    kind = error["type"]
    if kind == "missing" or (kind in TOO_SHORT and not error.get("input")):
        return model.needed.get(name, f"{what} is needed")
    text = isinstance(error.get("input"), str)
    if kind == "string_too_long" or (kind == "too_long" and text):
        length, limit = len(error["input"]), ctx["max_length"]
        return (
            f"{what} may be at most {limit:,} characters; this one has {length:,}: "
            f"shorten it by {length - limit:,}"
        )
    if kind in TOO_SHORT and text:
        return f"{what} must have at least {ctx['min_length']:,} characters"
    if kind == "too_long":
        return f"give at most {ctx['max_length']} {what}"
    if name in model.wrong:
        return model.wrong[name]
    if kind == "literal_error":
        return f"{what} is one of {ctx['expected']}"
    return f"{what}: {error['msg']}"
