"""A search of a campaign (issue #33 item 2): the page's form (a GET) and the API's query
string are read with this one model."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from pbp.inputs import MAX_ID, Body, Text

MAX_QUERY = 200


class SearchIn(Body):
    names: ClassVar[dict[str, str]] = {"q": "the words to search for", "turn": "the turn"}
    wrong: ClassVar[dict[str, str]] = {
        "turn": "the turn is a turn's number",
        "kind": "in or out of character is 'ic' or 'ooc'",
        "rolls": "'has rolls' is yes or no",
    }
    q: Text = Field(default="", max_length=MAX_QUERY, description="The words, all of them.")
    character: Text | None = Field(
        default=None, max_length=80, description="Only what this character wrote (their slug)."
    )
    turn: int | None = Field(default=None, ge=1, le=MAX_ID, description="Only this turn.")
    mood: Text | None = Field(
        default=None, max_length=200, description="Only entries in this mood."
    )
    kind: Literal["ic", "ooc"] | None = Field(
        default=None, description="Only in character (ic) or out of character (ooc) texts."
    )
    rolls: bool = Field(default=False, description="Only forum posts with rolls.")
