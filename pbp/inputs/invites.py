"""The referee's invitations (pbp.services.accounts.logins.create_invite): the page's form and
the API's body, read with one model."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from pbp import limits
from pbp.inputs import Body, Text


class InviteIn(Body):
    email: Text | None = Field(
        default=None, max_length=320, description="Whom to mail the link (else a link only)."
    )
    role: Literal["player", "referee"] = "player"
    character: Text | None = Field(
        default=None,
        max_length=80,
        description="The slug of a character waiting for its player, to come with it.",
    )
    days: int = Field(
        default=limits.INVITE_DAYS,
        ge=1,
        le=limits.MAX_INVITE_DAYS,
        description="How long the link works.",
    )

    names: ClassVar[dict[str, str]] = {
        "email": "the player's email",
        "role": "the role",
        "character": "the character",
        "days": "how long the link works",
    }
    wrong: ClassVar[dict[str, str]] = {
        "role": "the role is Player or Co-referee",
        "days": f"an invite works for 1 to {limits.MAX_INVITE_DAYS} days: give a whole number",
    }


class AcceptInviteIn(Body):
    """An invitation accepted by an account that exists (issue #35 item 3): the token's."""

    invitation: Text = Field(
        min_length=1,
        max_length=2000,
        description="The invitation link as the referee sent it, or its last part.",
    )

    names: ClassVar[dict[str, str]] = {"invitation": "the invitation link"}
    needed: ClassVar[dict[str, str]] = {"invitation": "paste the invitation link"}
