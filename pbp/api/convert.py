"""Rows and rule results as the API's response models (pbp.api.schemas).

Only what the matching page shows goes out: no email addresses, no flags on entries,
tailored events only to whom they are addressed.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pbp.api import schemas as s
from pbp.models import Blog, Campaign, Character, Entry, Event, Note, Ruling, Turn

OutT = TypeVar("OutT", bound=s.Out)


class _RowWith:
    """A row read by attribute, with the few fields a response adds or renames."""

    def __init__(self, row: object, extra: dict[str, Any]):
        self._row, self._extra = row, extra

    def __getattr__(self, name: str) -> Any:
        return self._extra[name] if name in self._extra else getattr(self._row, name)


def out(model: type[OutT], row: object, **extra: Any) -> OutT:
    """`model` read from `row`'s attributes (`from_attributes`), with `extra` on top."""
    return model.model_validate(_RowWith(row, extra) if extra else row)


def campaign_out(campaign: Campaign, role: str | None, unread: int | None = None) -> s.CampaignOut:
    return out(s.CampaignOut, campaign, role=role, unread=unread if role else None)


def character_out(character: Character, blog: Blog) -> s.CharacterOut:
    aliases = [str(a) for a in character.aliases or []]
    return out(s.CharacterOut, character, aliases=aliases, blog=out(s.BlogOut, blog))


def feed_health(blog: Blog, delivery: Any = None) -> s.FeedHealthOut | None:
    """`delivery`: the roster row's push-or-poll (pbp.services.noteworthy.websub.DeliveryMode)."""
    if blog.kind != "external":
        return None
    if delivery is None:
        return out(s.FeedHealthOut, blog, delivery="poll", last_delivery_at=blog.last_success_at)
    return out(
        s.FeedHealthOut, blog, delivery=delivery.mode, last_delivery_at=delivery.last_delivery_at
    )


def turn_out(turn: Turn, events: list[Event], readable: set[int] | None) -> s.TurnOut:
    """`readable`: the characters whose tailored events the caller may read (None: all)."""
    general = next((e.text for e in events if e.character_id is None), None)
    tailored = [
        out(s.TailoredOut, e)
        for e in events
        if e.character_id is not None and (readable is None or e.character_id in readable)
    ]
    return out(s.TurnOut, turn, event=general, tailored=tailored)


def entry_out(entry: Entry, author: Character, turn_number: int | None) -> s.EntryOut:
    return out(
        s.EntryOut, entry, character_id=author.id, character_slug=author.slug, turn=turn_number
    )


def note_out(note: Note) -> s.NoteOut:
    return out(s.NoteOut, note, fate=note.fate_text, in_reply_to=note.parent_note_id)


def ruling_out(ruling: Ruling) -> s.RulingOut:
    value = (ruling.value or {}).get("value")
    return out(s.RulingOut, ruling, subject_id=ruling.subject_id or None, value=value)


# -- the tally -----------------------------------------------------------------------------


def challenge_out(record: dict, consequence: str | None) -> s.ChallengeOut:
    """One challenge of a tally record (pbp.services.noteworthy.tally_record)."""
    return s.ChallengeOut.model_validate({**record, "consequence": consequence})


def tally_out(record: dict, consequences: dict[int, str]) -> s.TallyOut:
    """A tally record (services.noteworthy.tally_record), with the consequences recorded since."""
    challenges = [
        {**c, "consequence": consequences.get(c["entry_id"], c.get("consequence"))}
        for c in record["challenges"]
    ]
    return s.TallyOut.model_validate({**record, "challenges": challenges})
