"""The referee's changes to one character: name, aliases, feed, dropping out, a new
player; the API's bodies, which the character page's forms are read with too."""

from __future__ import annotations

from typing import Annotated, ClassVar

from pydantic import Field

from pbp.inputs import Body, Id, Text


class RenameIn(Body):
    names: ClassVar[dict[str, str]] = {"name": "a character's name"}
    needed: ClassVar[dict[str, str]] = {"name": "give the character a name"}
    name: Text = Field(min_length=1, max_length=120)


class AliasesIn(Body):
    names: ClassVar[dict[str, str]] = {"aliases": "aliases", "aliases[]": "an alias"}
    aliases: list[Annotated[Text, Field(min_length=1, max_length=120)]] = Field(
        max_length=20, description='Other names the character goes by in entries ("Vance").'
    )


class FeedIn(Body):
    names: ClassVar[dict[str, str]] = {"feed_url": "the feed address"}
    feed_url: Text | None = Field(
        default=None,
        max_length=2000,
        description="The feed of the player's own blog; null or empty for pbp's built-in blog.",
    )


class DropIn(Body):
    names: ClassVar[dict[str, str]] = {"reason": "the reason"}
    reason: Text = Field(default="", max_length=2000, description="Kept in the audit log.")


class HandOverIn(Body):
    names: ClassVar[dict[str, str]] = {"email": "the new player's address"}
    wrong: ClassVar[dict[str, str]] = {"member_id": "choose the new player from the list"}
    member_id: Id | None = Field(
        default=None, description="A player of the campaign (their user id) to give it to."
    )
    email: Text | None = Field(
        default=None,
        max_length=320,
        description="Without member_id: whom to mail the new invitation (else a link only).",
    )
