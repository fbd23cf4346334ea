"""Keeping a game alive (issue #30): the referee's nudges and activity rule, and a player's
hiatus."""

from __future__ import annotations

from datetime import date
from typing import ClassVar

from pydantic import Field

from pbp.inputs import Body, Text


class ActivitySettingsIO(Body):
    """When nudges go, and the rule the activity check measures each character against."""

    names: ClassVar[dict[str, str]] = {
        "nudge_hours": "the hours before the deadline",
        "overdue_hours": "the hours after the deadline",
        "rule_count": "the entries or posts the rule asks for",
        "rule_days": "the posting window",
    }
    nudge_hours: list[int] = Field(
        default_factory=lambda: [48, 24],
        max_length=10,
        description="Hours before a deadline a nudge goes to each player who still has "
        "something to do; any number, [] for none.",
    )
    overdue_hours: int | None = Field(
        default=0,
        ge=0,
        le=24 * 14,
        description="Hours after the deadline the overdue nudge goes (to the silent players, "
        "and the list of them to the referee); null: none.",
    )
    rule_count: int = Field(
        default=1,
        ge=1,
        le=100,
        description="Noteworthy: entries each turn; a forum game: posts each window.",
    )
    rule_days: int | None = Field(
        default=None,
        ge=1,
        le=60,
        description="A forum game's posting window in days (its turns: forum games have no "
        "deadlines); ignored in Noteworthy.",
    )


class AwayIn(Body):
    """A player's hiatus: away until a date, with a note to the referee."""

    names: ClassVar[dict[str, str]] = {"until": "the date you are back", "note": "the note"}
    until: date = Field(description="The day you are back (in the campaign's time zone).")
    note: Text = Field(default="", max_length=2000, description="For the referee.")
