"""A player's own settings in a campaign: where their character blogs, and who they are
when they comment on external blogs (pbp.services.noteworthy.blog_settings, commenters)."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import Field

from pbp.inputs import Body, Id, Text


class BlogChoiceIn(Body):
    kind: Literal["builtin", "external"] = Field(
        description="Blog on pbp, or on the player's own blog (whose feed pbp reads)."
    )
    url: Text | None = Field(
        default=None,
        max_length=2000,
        description="For an external blog: its home page or its feed.",
    )
    character_id: Id | None = Field(
        default=None, description="The character the form changes: must be yours."
    )

    names: ClassVar[dict[str, str]] = {"kind": "where you blog", "url": "your blog's address"}
    needed: ClassVar[dict[str, str]] = {"kind": "choose the built-in blog or your own blog"}
    wrong: ClassVar[dict[str, str]] = {"kind": "choose the built-in blog or your own blog"}


class CommenterIdentityIn(Body):
    """Your profile addresses as a commenter on other players' blogs (replacing the ones
    you gave before; an empty list removes them)."""

    uris: list[Annotated[Text, Field(min_length=1, max_length=2000)]] = Field(max_length=5)
    character_id: Id | None = Field(
        default=None, description="The character the form changes: must be yours."
    )

    names: ClassVar[dict[str, str]] = {"uris": "profile addresses", "uris[]": "a profile address"}
