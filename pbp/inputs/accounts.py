"""The account forms' fields: logging in, accepting an invitation, signing up, resetting and
changing a password.

These check shape only (present, long enough, an address, the same password twice); the
rules themselves (a wrong password, a used link, an address already taken) live in
pbp.services.accounts. The pages still draw these forms with WTForms, which carries the
CSRF token and the labels; what is accepted is decided here, as for every other form.
"""

from __future__ import annotations

import re
from typing import Annotated, ClassVar

from pydantic import AfterValidator, Field, ValidationInfo, field_validator

from pbp import limits
from pbp.inputs import Body, Text

_ADDRESS = re.compile(r"^[^@\s]+@[^@\s]+$")


def _address(value: str) -> str:
    if not _ADDRESS.match(value.strip()):
        raise ValueError("not an email address")
    return value.strip()


Email = Annotated[Text, Field(min_length=1, max_length=limits.EMAIL), AfterValidator(_address)]
Password = Annotated[Text, Field(min_length=1, max_length=limits.PASSWORD_MAX)]
NewPassword = Annotated[Text, Field(min_length=limits.PASSWORD_MIN, max_length=limits.PASSWORD_MAX)]
DisplayName = Annotated[Text, Field(min_length=1, max_length=limits.DISPLAY_NAME)]


class _Account(Body):
    """What every account form says of its fields."""

    names: ClassVar[dict[str, str]] = {
        "email": "the email address",
        "password": "the password",
        "confirm": "the password typed again",
        "current": "the current password",
        "display_name": "your name",
    }
    needed: ClassVar[dict[str, str]] = {
        "email": "This field is required.",
        "password": "This field is required.",
        "confirm": "This field is required.",
        "current": "This field is required.",
        "display_name": "This field is required.",
    }
    wrong: ClassVar[dict[str, str]] = {
        "email": "This is not an email address.",
        "confirm": "The two passwords differ.",
    }


class _NewPassword(_Account):
    """A new password, typed twice."""

    password: NewPassword
    confirm: Password

    @field_validator("confirm")
    @classmethod
    def _same_twice(cls, confirm: str, info: ValidationInfo) -> str:
        # Checked on `confirm`, so the reason shows beside it; a password refused for its
        # own length is not in `info.data`, and one reason is enough then.
        if "password" in info.data and confirm != info.data["password"]:
            raise ValueError("the two passwords differ")
        return confirm


class LoginIn(_Account):
    email: Email
    password: Password
    next: Text = ""


class ResetRequestIn(_Account):
    email: Email


ResendConfirmationIn = ResetRequestIn


class SignupIn(_Account):
    display_name: DisplayName
    email: Email


class AcceptInviteIn(_NewPassword):
    """Accepting an invitation by making an account (a signed-in account only presses Join)."""

    display_name: DisplayName
    email: Email


class NewPasswordIn(_NewPassword):
    """The reset link's page and the sign-up confirmation's: the password chosen there."""


class ChangePasswordIn(_NewPassword):
    current: Password
