"""Standings and history: every character across every turn, the arc of a campaign.

Built from what each turn kept when it happened (`Turn.start_standings`, `Turn.result`)
and the Challenge rows written when it was resolved, never by re-running the tally: the
history shows what was decided, the referee's rulings included, even if the rules change
later. `campaign_history` reads three queries whatever the campaign's size (characters,
turns, challenges); `build_history` is the pure part, shared with the archive.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from sqlmodel import Session, col, select

from pbp.models import Campaign, Challenge, Character, Turn

#: Challenge.outcome -> which side won. "invalid", "withdrawn" and "needs_ruling" decide
#: nothing (Noteworthy: "A withdrawn challenge has no effect").
WINNING_SIDE = {"challenger": "challenger", "target": "target"}
STATUS_ORDER = {"winner": 0, "active": 1, "outsider": 2}
#: A character added after the turn opened who still took part in it (a challenge the
#: referee ruled valid, or one made against them): shown, never "not in the game yet".
JOINED = "joined"


@dataclass(frozen=True)
class Person:
    """A character as the history shows it: plain values, no database row."""

    id: int
    name: str
    slug: str
    status: str  # now: active | outsider | winner


@dataclass(frozen=True)
class Bout:
    """One challenge and how it ended."""

    entry_id: int
    challenger_id: int
    target_id: int | None
    outcome: str | None  # Challenge.outcome
    consequence: str | None
    supporters: int
    opposers: int

    @property
    def winner_id(self) -> int | None:
        side = WINNING_SIDE.get(self.outcome or "")
        return {"challenger": self.challenger_id, "target": self.target_id}.get(side or "")

    @property
    def loser_id(self) -> int | None:
        side = WINNING_SIDE.get(self.outcome or "")
        return {"challenger": self.target_id, "target": self.challenger_id}.get(side or "")


@dataclass(frozen=True)
class Standing:
    """One character in one turn. `status` None: not in the game yet (joined later);
    "joined": added after the turn opened, yet part of a challenge in it; `status_after`
    None: the turn is not resolved yet."""

    status: str | None
    status_after: str | None
    made: int = 0
    received: int = 0
    won: int = 0
    lost: int = 0


@dataclass(frozen=True)
class TurnLine:
    number: int
    status: str  # open | closed | resolved
    opened_at: datetime
    resolved_at: datetime | None
    standings: dict[int, Standing]
    bouts: tuple[Bout, ...]
    eliminated: tuple[int, ...]
    winner_id: int | None  # who won the final in this turn (Noteworthy endnotes)
    explanation: tuple[str, ...]

    @property
    def active(self) -> int:
        """How many characters were still in play when the turn opened."""
        return sum(1 for s in self.standings.values() if s.status == "active")


@dataclass(frozen=True)
class Totals:
    """A character's whole campaign: the row of the standings table."""

    person: Person
    made: int
    received: int
    won: int
    lost: int
    outsider_from: int | None  # the turn whose resolution made them an outsider


@dataclass(frozen=True)
class History:
    characters: tuple[Person, ...]  # winner, active, then outsiders (latest to fall first)
    turns: tuple[TurnLine, ...]
    totals: tuple[Totals, ...]  # same order as `characters`

    def name(self, character_id: int | None) -> str:
        for person in self.characters:
            if person.id == character_id:
                return person.name
        return "(nobody)"


def campaign_history(*, session: Session, campaign: Campaign) -> History:
    """The campaign's history in three queries."""
    characters = session.exec(
        select(Character).where(Character.campaign_id == campaign.id).order_by(col(Character.id))
    ).all()
    turns = session.exec(
        select(Turn).where(Turn.campaign_id == campaign.id).order_by(col(Turn.number))
    ).all()
    challenges = session.exec(
        select(Challenge)
        .join(Turn, col(Turn.id) == Challenge.turn_id)
        .where(Turn.campaign_id == campaign.id)
        .order_by(col(Challenge.made_at), col(Challenge.id))
    ).all()
    return build_history(characters, turns, challenges)


def build_history(
    characters: Iterable[Character], turns: Iterable[Turn], challenges: Iterable[Challenge]
) -> History:
    """Pure: rows in, History out (rows are only read)."""
    people = [Person(c.id, c.name, c.slug, c.status) for c in characters]
    by_turn: dict[int, list[Challenge]] = defaultdict(list)
    for challenge in challenges:
        by_turn[challenge.turn_id].append(challenge)
    lines: list[TurnLine] = []
    previous: dict[int, str | None] = {}
    for turn in sorted(turns, key=lambda t: t.number):
        line = _turn_line(turn, people, by_turn[turn.id], previous)
        lines.append(line)
        previous = {
            cid: s.status_after if s.status_after is not None else s.status
            for cid, s in line.standings.items()
        }
    totals = [_totals(person, lines) for person in people]
    totals.sort(key=_rank)
    return History(tuple(t.person for t in totals), tuple(lines), tuple(totals))


def _turn_line(
    turn: Turn, people: list[Person], rows: list[Challenge], previous: dict[int, str | None]
) -> TurnLine:
    result = turn.result or {}
    counts = {c["entry_id"]: c for c in result.get("challenges", []) if "entry_id" in c}
    bouts = tuple(
        Bout(
            entry_id=row.entry_id,
            challenger_id=row.challenger_id,
            target_id=row.target_id,
            outcome=row.outcome,
            consequence=row.consequence,
            supporters=len(counts.get(row.entry_id, {}).get("supporters", [])),
            opposers=len(counts.get(row.entry_id, {}).get("opposers", [])),
        )
        for row in rows
    )
    endgame = result.get("endgame") or {}
    winner = endgame.get("winner_id") if endgame.get("phase") == "won" else None
    eliminated = {*result.get("eliminated", []), *(b.loser_id for b in bouts if b.loser_id)}
    resolved = turn.status == "resolved"
    standings = {}
    involved = {b.challenger_id for b in bouts} | {b.target_id for b in bouts}
    for person in people:
        status = _status_at_start(turn, person.id, previous)
        if status is None and person.id in involved:
            status = JOINED
        after = None
        if resolved:
            after = "active" if status == JOINED else status
            if status is not None and person.id in eliminated:
                after = "outsider"
            if person.id == winner:
                after = "winner"
        standings[person.id] = _standing(person.id, status, after, bouts, winner, eliminated)
    return TurnLine(
        number=turn.number,
        status=turn.status,
        opened_at=turn.opened_at,
        resolved_at=turn.resolved_at,
        standings=standings,
        bouts=bouts,
        eliminated=tuple(sorted(eliminated)),
        winner_id=winner,
        explanation=tuple(result.get("explanation", [])),
    )


def _status_at_start(turn: Turn, character_id: int, previous: dict[int, str | None]):
    """The turn's snapshot when it has one (Noteworthy resolves a turn against the
    standings at its start); otherwise carried over from the turn before."""
    if turn.start_standings:
        return turn.start_standings.get(str(character_id))
    return previous.get(character_id, "active")


def _standing(cid, status, after, bouts, winner, eliminated) -> Standing:
    won = sum(1 for b in bouts if b.winner_id == cid) + (1 if cid == winner else 0)
    lost = sum(1 for b in bouts if b.loser_id == cid)
    final_loser = winner is not None and cid in eliminated and cid != winner and not lost
    return Standing(
        status=status,
        status_after=after,
        made=sum(1 for b in bouts if b.challenger_id == cid),
        received=sum(1 for b in bouts if b.target_id == cid),
        won=won,
        lost=lost + (1 if final_loser else 0),
    )


def _totals(person: Person, lines: list[TurnLine]) -> Totals:
    standings = [(line.number, line.standings[person.id]) for line in lines]
    fell = next(
        (
            n
            for n, s in standings
            if s.status in ("active", JOINED) and s.status_after == "outsider"
        ),
        None,
    )
    return Totals(
        person=person,
        made=sum(s.made for _, s in standings),
        received=sum(s.received for _, s in standings),
        won=sum(s.won for _, s in standings),
        lost=sum(s.lost for _, s in standings),
        outsider_from=fell,
    )


def _rank(totals: Totals) -> tuple:
    """Survivors first, then outsiders from the latest to fall: the chart reads as a
    staircase, the arc of the campaign."""
    fell = totals.outsider_from if totals.outsider_from is not None else 0
    return (STATUS_ORDER.get(totals.person.status, 3), -fell, totals.person.name.lower())
