"""What the turn page (`/c/<slug>/turns/<n>`) shows, read in one place.

Every event and results mail links here. The page shows the turn's event (the general
text, plus the reader's own tailored part; the referee sees every tailored text), the
deadline, the turn's entries, and its challenges: live counts while the turn is open, the
stored result once it is resolved (never a tally recomputed from today's data: a note that
arrived later must not rewrite what the referee resolved).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sqlmodel import Session, col, select

from pbp.errors import NotFound
from pbp.models import Campaign, Character, Event, Turn
from pbp.services import campaigns, lookups, mentions
from pbp.services.noteworthy import planet, tally
from pbp.services.noteworthy.planet import TailoredText
from pbp.services.noteworthy.tally_record import without_ruling_notes

MAX_ENTRIES = 500  # a turn's entries on one page; a 24-player turn has a few dozen


@dataclass(frozen=True)
class TurnChallenge:
    entry_id: int
    challenger: Character | None
    target: Character | None
    supporters: list[Character]
    opposers: list[Character]
    outcome: str
    explanation: list[str]
    counts: bool  # valid and not withdrawn
    consequence: str | None = None  # the referee's words, once the turn is resolved


@dataclass
class TurnPage:
    campaign: Campaign
    turn: Turn
    event: str | None
    tailored: list[TailoredText]
    entries: list[planet.PlanetEntry]
    challenges: list[TurnChallenge]
    eliminated: list[Character]
    explanation: list[str]
    numbers: list[int] = field(default_factory=list)  # every turn's number, oldest first

    @property
    def resolved(self) -> bool:
        return self.turn.status == "resolved"

    @property
    def previous(self) -> int | None:
        earlier = [n for n in self.numbers if n < self.turn.number]
        return earlier[-1] if earlier else None

    @property
    def next(self) -> int | None:
        later = [n for n in self.numbers if n > self.turn.number]
        return later[0] if later else None


def turn_list(*, session: Session, campaign: Campaign) -> list[Turn]:
    """Every turn, the latest first."""
    return list(
        session.exec(
            select(Turn).where(Turn.campaign_id == campaign.id).order_by(col(Turn.number).desc())
        )
    )


def turn_numbers(*, session: Session, campaign: Campaign) -> list[int]:
    return list(
        session.exec(
            select(col(Turn.number))
            .where(Turn.campaign_id == campaign.id)
            .order_by(col(Turn.number))
        )
    )


def turn_page(
    *,
    session: Session,
    campaign: Campaign,
    number: int,
    reader_character_ids: frozenset[int],
    is_referee: bool,
) -> TurnPage:
    turn = session.exec(
        select(Turn).where(Turn.campaign_id == campaign.id, Turn.number == number)
    ).first()
    if turn is None:
        raise NotFound(f"{campaign.name} has no turn {number} yet")
    by_id = {c.id: c for c in campaigns.characters(session=session, campaign=campaign)}
    general, tailored = None, []
    events = session.exec(select(Event).where(Event.turn_id == turn.id).order_by(col(Event.id)))
    shown = [
        e
        for e in events
        if e.character_id is None or is_referee or e.character_id in reader_character_ids
    ]
    # Issue #29 item 4: "@Name" in an event links to the character.
    book = mentions.book_if_needed(
        session=session, campaign=campaign, texts=[e.text for e in shown]
    )
    for event in shown:
        if event.character_id is None:
            general = mentions.plain_text_markup(event.text, book)
        else:
            text = mentions.plain_text_markup(event.text, book)
            tailored.append(TailoredText(by_id[event.character_id], event.mode, text))
    view = planet.planet(session=session, campaign=campaign, turn_number=number, limit=MAX_ENTRIES)
    if turn.status == "resolved":
        challenges, eliminated, explanation = _stored(turn.result or {}, by_id)
        # Issue #27 item 7: the results mail links here, so the consequences it carries
        # are shown here too (recorded on the challenges when the turn was resolved).
        recorded = lookups.recorded_challenges(session=session, turn=turn)
        challenges = [
            replace(c, consequence=recorded[c.entry_id].consequence)
            if c.entry_id in recorded
            else c
            for c in challenges
        ]
    else:
        live = tally.live_challenges(session=session, campaign=campaign, turn=turn)
        challenges = [_live(c, by_id) for c in live]
        if not is_referee:  # the referee's ruling notes are theirs until the turn is resolved
            notes = tally.ruling_notes(session=session, campaign=campaign, turn=turn)
            challenges = [
                replace(c, explanation=without_ruling_notes(c.explanation, notes))
                for c in challenges
            ]
        eliminated, explanation = [], []
    return TurnPage(
        campaign=campaign,
        turn=turn,
        event=general,
        tailored=tailored,
        entries=list(reversed(view.entries)),  # the turn read as it happened
        challenges=challenges,
        eliminated=eliminated,
        explanation=explanation,
        numbers=turn_numbers(session=session, campaign=campaign),
    )


def _live(c, by_id: dict[int, Character]) -> TurnChallenge:
    return TurnChallenge(
        entry_id=c.entry_id,
        challenger=by_id.get(c.challenger_id),
        target=by_id.get(c.target_id),
        supporters=[by_id[p.character_id] for p in c.supporters if p.character_id in by_id],
        opposers=[by_id[p.character_id] for p in c.opposers if p.character_id in by_id],
        outcome=c.outcome.value,
        explanation=list(c.explanation),
        counts=c.live,
    )


def _stored(result: dict, by_id: dict[int, Character]):
    def people(ids) -> list[Character]:
        return [by_id[i] for i in ids or [] if i in by_id]

    challenges = [
        TurnChallenge(
            entry_id=c["entry_id"],
            challenger=by_id.get(c.get("challenger_id")),
            target=by_id.get(c.get("target_id")),
            supporters=people(c.get("supporters")),
            opposers=people(c.get("opposers")),
            outcome=c.get("outcome", ""),
            explanation=list(c.get("explanation") or []),
            counts=bool(c.get("valid")) and not c.get("withdrawn"),
        )
        for c in result.get("challenges", [])
    ]
    # The turn's explanation repeats each challenge's lines; they are shown under the
    # challenge already, so the turn's list keeps only what is about the turn as a whole.
    shown = {line for c in challenges for line in c.explanation}
    explanation = [line for line in result.get("explanation") or [] if line not in shown]
    return challenges, people(result.get("eliminated")), explanation


def zone_of(campaign: Campaign) -> ZoneInfo:
    try:
        return ZoneInfo(campaign.time_zone or "UTC")
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")


def in_zone(moment: datetime, zone: ZoneInfo) -> datetime:
    """A stored time (naive UTC or aware) in `zone`."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(zone)
