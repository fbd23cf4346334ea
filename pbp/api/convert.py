"""Rows and rule results as the API's response models (pbp.api.schemas).

Only what the matching page shows goes out: no email addresses, no flags on entries,
tailored events only to whom they are addressed.
"""

from __future__ import annotations

from pbp.api import schemas as s
from pbp.models import Blog, Campaign, Character, Entry, Event, Note, Ruling, Turn
from pbp.rules import noteworthy as nw


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


def feed_health(blog: Blog) -> s.FeedHealthOut | None:
    if blog.kind != "external":
        return None
    return s.FeedHealthOut(
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


def _position(p: nw.Position) -> s.PositionOut:
    return s.PositionOut(
        character_id=p.character_id,
        note_id=p.note_id,
        stance=p.stance.value,
        published=p.published,
        explanation=p.explanation,
    )


def challenge_out(c: nw.ChallengeResult, consequence: str | None) -> s.ChallengeOut:
    return s.ChallengeOut(
        entry_id=c.entry_id,
        challenger_id=c.challenger_id,
        target_id=c.target_id,
        target_explanation=c.target.explanation,
        made_at=c.made_at,
        valid=c.valid,
        invalid_reason=c.invalid_reason.value if c.invalid_reason else None,
        withdrawn=c.withdrawn,
        outcome=c.outcome.value,
        supporters=[_position(p) for p in c.supporters],
        opposers=[_position(p) for p in c.opposers],
        explanation=list(c.explanation),
        consequence=consequence,
    )


def _flag(f: nw.Flag) -> s.FlagOut:
    return s.FlagOut(kind=f.kind.value, message=f.message, entry_id=f.entry_id, note_id=f.note_id)


def tally_out(t: nw.Tally, consequences: dict[int, str]) -> s.TallyOut:
    ignored = [i for c in t.challenges for i in c.ignored]
    return s.TallyOut(
        turn=t.turn,
        closed=t.closed,
        complete=t.complete,
        needs_ruling=t.needs_ruling,
        challenges=[challenge_out(c, consequences.get(c.entry_id)) for c in t.challenges],
        ignored_notes=[
            s.IgnoredNoteOut(
                note_id=i.note_id,
                author_id=i.author_id,
                reason=i.reason.value,
                explanation=i.explanation,
            )
            for i in ignored
        ],
        flags=[_flag(f) for f in t.flags],
        standings=[s.StandingOut(id=c.id, name=c.name, status=c.status.value) for c in t.standings],
        advanced=list(t.advanced),
        eliminated=list(t.eliminated),
        endgame=s.EndgameOut(
            phase=t.endgame.phase.value,
            finalists=list(t.endgame.finalists),
            winner_id=t.endgame.winner_id,
            explanation=t.endgame.explanation,
        ),
        provocation=t.provocation.explanation if t.provocation.recommended else None,
        rulings=[
            s.AppliedRulingOut(
                kind=r.ruling.kind.value,
                subject_id=r.ruling.subject_id,
                value=r.ruling.value,
                applied=r.applied,
                explanation=r.explanation,
            )
            for r in t.rulings
        ],
        explanation=list(t.explanation),
    )
