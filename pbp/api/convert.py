"""Rows and rule results as the API's response models (pbp.api.schemas).

Only what the matching page shows goes out: no email addresses, no flags on entries,
tailored events only to whom they are addressed.
"""

from __future__ import annotations

from pbp.api import schemas as s
from pbp.models import Blog, Campaign, Character, Entry, Event, Note, Ruling, Turn


def campaign_out(campaign: Campaign, role: str | None) -> s.CampaignOut:
    return s.CampaignOut(
        id=campaign.id,
        slug=campaign.slug,
        name=campaign.name,
        ruleset=campaign.ruleset,
        status=campaign.status,
        created_at=campaign.created_at,
        role=role,
    )


def character_out(character: Character, blog: Blog) -> s.CharacterOut:
    return s.CharacterOut(
        id=character.id,
        slug=character.slug,
        name=character.name,
        status=character.status,
        aliases=[str(a) for a in character.aliases or []],
        blog=s.BlogOut(kind=blog.kind, feed_url=blog.feed_url, home_url=blog.home_url),
    )


def feed_health(blog: Blog, delivery=None) -> s.FeedHealthOut | None:
    """`delivery`: the roster row's push-or-poll (pbp.services.websub.DeliveryMode)."""
    if blog.kind != "external":
        return None
    return s.FeedHealthOut(
        delivery=delivery.mode if delivery else "poll",
        last_delivery_at=delivery.last_delivery_at if delivery else blog.last_success_at,
        last_polled_at=blog.last_polled_at,
        last_success_at=blog.last_success_at,
        next_poll_at=blog.next_poll_at,
        failure_count=blog.failure_count,
        last_error=blog.last_error,
        gone=blog.gone,
    )


def turn_out(turn: Turn, events: list[Event], readable: set[int] | None) -> s.TurnOut:
    """`readable`: the characters whose tailored events the caller may read (None: all)."""
    general = next((e.text for e in events if e.character_id is None), None)
    tailored = [
        s.TailoredOut(character_id=e.character_id, mode=e.mode, text=e.text)
        for e in events
        if e.character_id is not None and (readable is None or e.character_id in readable)
    ]
    return s.TurnOut(
        number=turn.number,
        status=turn.status,
        opened_at=turn.opened_at,
        deadline=turn.deadline,
        closed_at=turn.closed_at,
        resolved_at=turn.resolved_at,
        event=general,
        tailored=tailored,
    )


def entry_out(entry: Entry, author: Character, turn_number: int | None) -> s.EntryOut:
    return s.EntryOut(
        id=entry.id,
        character_id=author.id,
        character_slug=author.slug,
        turn=turn_number,
        title=entry.title,
        url=entry.url,
        body_html=entry.body_html,
        mood=entry.mood,
        mood_raw=entry.mood_raw,
        published_at=entry.published_at,
        updated_at=entry.updated_at,
        first_seen_at=entry.first_seen_at,
    )


def note_out(note: Note) -> s.NoteOut:
    return s.NoteOut(
        id=note.id,
        entry_id=note.entry_id,
        author_character_id=note.author_character_id,
        author_name=note.author_name,
        body_html=note.body_html,
        stance=note.stance,
        fate=note.fate_text,
        published_at=note.published_at,
    )


def ruling_out(ruling: Ruling) -> s.RulingOut:
    return s.RulingOut(
        id=ruling.id,
        kind=ruling.kind,
        subject_id=ruling.subject_id or None,
        value=(ruling.value or {}).get("value"),
        reason=ruling.reason,
        created_at=ruling.created_at,
    )


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
