"""A campaign and its roster as a referee sends them: the API's bodies, which the
dashboard's forms are read with too (pbp.web.forms.parsed)."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import Field, model_validator

from pbp.inputs import Body, Id, Ruleset, Text


class CampaignIn(Body):
    names: ClassVar[dict[str, str]] = {"name": "a campaign's name"}
    needed: ClassVar[dict[str, str]] = {"name": "give the campaign a name"}
    wrong: ClassVar[dict[str, str]] = {"ruleset": "choose the rules from the list"}
    name: Text = Field(min_length=1, max_length=200)
    ruleset: Ruleset = "noteworthy"


class CharacterIn(Body):
    names: ClassVar[dict[str, str]] = {
        "name": "a character's name",
        "feed_url": "the feed address",
        "aliases": "aliases",
        "aliases[]": "an alias",
    }
    needed: ClassVar[dict[str, str]] = {"name": "give the character a name"}
    name: Text = Field(min_length=1, max_length=120)
    feed_url: Text | None = Field(
        default=None,
        max_length=2000,
        description="The feed of the player's own blog; leave out for a blog on pbp.",
    )
    aliases: list[Annotated[Text, Field(min_length=1, max_length=120)]] = Field(
        default_factory=list,
        max_length=20,
        description='Other names the character goes by in entries ("Vance").',
    )


class CommenterIn(Body):
    """Who a commenter on an external blog is. A profile address ("uri") counts for their
    later notes too; a name credits only the notes waiting now (anyone can type a name)."""

    character_id: Id
    kind: Literal["name", "uri", "email_hash"] = "name"
    value: Text = Field(min_length=1, max_length=2000)


class ReadIn(Body):
    """What to mark read (pbp.services.unread): one scene, one entry's notes, or, with
    neither, everything in the campaign ("Mark all read", the pages' button)."""

    scene: Id | None = Field(default=None, description="A forum scene (thread) id.")
    entry: Id | None = Field(default=None, description="An entry id: its notes are read.")

    @model_validator(mode="after")
    def _one_place(self) -> ReadIn:
        if self.scene is not None and self.entry is not None:
            raise ValueError("name a scene or an entry, not both")
        return self
