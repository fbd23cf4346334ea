"""The referee's turn: an event (with its tailored texts), a resolve, a ruling, the
settings and cadence, the queued event and the final notice; the API's bodies, which the
dashboard's forms are read with too."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import Field

from pbp import limits
from pbp.inputs import MAX_ID, Body, Id, RulingKind, Text


class TailoredIn(Body):
    names: ClassVar[dict[str, str]] = {"text": "a tailored text"}
    character_id: Id
    mode: Literal["addition", "replacement"] = "addition"
    text: Text = Field(min_length=1, max_length=limits.EVENT_TEXT)


class EventIn(Body):
    names: ClassVar[dict[str, str]] = {"text": "the event", "tailored": "the tailored texts"}
    wrong: ClassVar[dict[str, str]] = {
        "deadline_hours": "deadline hours must be a whole number of hours, from 1 to a year",
        "expected_number": "the turn's number must be a whole number",
    }
    text: Text = Field(
        default="", max_length=limits.EVENT_TEXT, description="The event for everyone."
    )
    tailored: list[TailoredIn] = Field(
        default_factory=list,
        max_length=100,
        description="Text for one character, added to or replacing the general text.",
    )
    deadline_hours: int | None = Field(
        default=None,
        ge=1,
        le=24 * 366,
        description="Close in this many hours; leave out for the campaign's cadence.",
    )
    expected_number: int | None = Field(
        default=None,
        ge=1,
        le=MAX_ID,
        description="The number the new turn must get (refused otherwise); a retry of a "
        "turn already open with this number returns it.",
    )


class ConsequenceIn(Body):
    entry_id: Id
    text: Text = Field(min_length=1, max_length=limits.CONSEQUENCE)


class ResolveIn(Body):
    names: ClassVar[dict[str, str]] = {"consequences": "the consequences"}
    consequences: list[ConsequenceIn] = Field(
        default_factory=list,
        max_length=200,
        description="What each challenge's outcome means in the setting (shown to players).",
    )


class RulingIn(Body):
    names: ClassVar[dict[str, str]] = {"reason": "the reason", "value": "the ruling's value"}
    wrong: ClassVar[dict[str, str]] = {
        "kind": "choose what the ruling decides from the list",
        "subject_id": "the ruling's subject is an entry or note number",
    }
    kind: RulingKind
    subject_id: Id | None = Field(
        default=None, description="The entry or note ruled on; null for the turn itself."
    )
    value: int | bool | Annotated[Text, Field(max_length=200)] | None = Field(
        default=None, description="A character id, or a word such as support or invalid."
    )
    reason: Text = Field(default="", max_length=limits.RULING_REASON)


class CadenceIO(Body):
    kind: Literal["manual", "daily", "hours"] = Field(
        default="manual", description="When turns close: by hand, daily at a time, every N hours."
    )
    at: Text | None = Field(
        default=None,
        max_length=5,
        description="For daily turns: the time of day (HH:MM), in the campaign's zone.",
    )
    hours: int | None = Field(
        default=None, ge=1, le=24 * 14, description='For "hours": how long a turn lasts.'
    )
    remind_hours: int | None = Field(
        default=None,
        ge=1,
        le=24 * 14,
        description="One nudge this many hours before a turn's deadline to players with no "
        "entry; null: the activity settings' nudges (default 48 and 24 hours), which replace "
        "this once set (PUT /campaigns/{slug}/activity/settings).",
    )


class SettingsIO(Body):
    """The campaign's rules settings and turn cadence (the dashboard's settings form)."""

    names: ClassVar[dict[str, str]] = {"time_zone": "the time zone", "custom_moods": "the moods"}
    wrong: ClassVar[dict[str, str]] = {
        "opening_turns": "opening turns must be a whole number, from 0",
        "fair_interval_hours": "the fair interval must be a whole number of hours",
        "cadence": "the cadence's hours must be whole numbers, and its time of day HH:MM",
    }

    opening_turns: int = Field(ge=0, le=1000, description="Turns before challenges are allowed.")
    fair_interval_hours: int | None = Field(
        default=None,
        ge=1,
        le=24 * 366,
        description="How long before a turn's end an entry counts as fair; null for none.",
    )
    custom_moods: dict[
        Annotated[Text, Field(max_length=60)], Annotated[Text, Field(max_length=60)]
    ] = Field(
        default_factory=dict,
        max_length=50,
        description="The campaign's own moods, each mapped to the action it stands for.",
    )
    time_zone: Text = Field(min_length=1, max_length=64, description="An IANA zone name.")
    cadence: CadenceIO = Field(default_factory=CadenceIO)


class QueuedEventIO(Body):
    """The next turn's event, opened by the scheduler at the deadline; empty clears it."""

    names: ClassVar[dict[str, str]] = {"text": "the queued event"}

    text: Text = Field(default="", max_length=limits.EVENT_TEXT)
    tailored: list[TailoredIn] = Field(default_factory=list, max_length=100)


class FinalNoticeIn(Body):
    names: ClassVar[dict[str, str]] = {"text": "the final notice"}
    needed: ClassVar[dict[str, str]] = {"text": "write the final notice first"}
    text: Text = Field(min_length=1, max_length=limits.FINAL_NOTICE)
