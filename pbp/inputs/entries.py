"""A player's entries and notes on the built-in blog (pbp.services.noteworthy.hosted_blog)."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from pbp import limits
from pbp.inputs import Body, Id, Text

_ENTRY_NAMES = {"title": "an entry's title", "body": "an entry", "mood": "a mood"}
_ENTRY_NEEDED = {
    "title": "an entry needs a title",
    "mood": 'every entry needs a "Current mood:" (Noteworthy)',
}


class EntryIn(Body):
    title: Text = Field(min_length=1, max_length=limits.ENTRY_TITLE)
    body: Text = Field(default="", max_length=limits.ENTRY_BODY, description="Markdown.")
    mood: Text = Field(
        min_length=1, max_length=200, description='The "Current mood:" line, e.g. Challenging.'
    )
    target_id: Id | None = Field(
        default=None, description="For a challenge: the character challenged."
    )
    icon_id: Id | None = Field(
        default=None, description="One of your character's icons; left out: its default."
    )

    names: ClassVar[dict[str, str]] = {**_ENTRY_NAMES, "target_id": "the target"}
    needed: ClassVar[dict[str, str]] = _ENTRY_NEEDED


class EntryEdit(Body):
    title: Text = Field(min_length=1, max_length=limits.ENTRY_TITLE)
    body: Text = Field(default="", max_length=limits.ENTRY_BODY, description="Markdown.")
    mood: Text = Field(min_length=1, max_length=200)

    names: ClassVar[dict[str, str]] = _ENTRY_NAMES
    needed: ClassVar[dict[str, str]] = _ENTRY_NEEDED


class NoteIn(Body):
    # May be empty when the note takes a position: "Support." alone is a note.
    body: Text = Field(default="", max_length=limits.NOTE_BODY, description="Markdown.")
    stance: Literal["support", "oppose", "none"] = "none"
    fate: Text | None = Field(
        default=None, max_length=limits.FATE, description="The fate you wish on the loser."
    )
    reply_to: Id | None = Field(
        default=None, description="The note of the same entry this one answers (a reply)."
    )
    icon_id: Id | None = Field(
        default=None, description="One of your character's icons; left out: its default."
    )

    names: ClassVar[dict[str, str]] = {
        "body": "a note",
        "stance": "a position",
        "fate": "the fate you wish",
        "reply_to": "the note you reply to",
    }
    wrong: ClassVar[dict[str, str]] = {"stance": "a position is Support, Oppose or No position"}
