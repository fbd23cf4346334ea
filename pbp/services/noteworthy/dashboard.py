"""Everything the referee's dashboard shows, gathered in a fixed number of queries."""

from __future__ import annotations

import functools
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session, col, select

from pbp.models import Blog, Campaign, Character, Entry, Event, Note, Ruling, Turn, User
from pbp.rules import noteworthy as nw
from pbp.services.noteworthy import cadence, commenters, hidden_entries, websub
from pbp.services.noteworthy import tally as tally_service
from pbp.services.noteworthy.feed_problems import FeedProblem, feed_problem

SIX_TO_TWENTY_FOUR = "Noteworthy is written for 6-24 players"


@dataclass
class RosterRow:
    character: Character
    player: User | None
    blog: Blog
    entries_this_turn: int
    # An external blog's "push" (WebSub) or "poll", with its last delivery's time.
    delivery: websub.DeliveryMode | None = None

    @property
    def problem(self) -> FeedProblem | None:
        """The feed's last failed read in plain words (None when it reads fine)."""
        return feed_problem(self.blog)


@dataclass
class Unmapped:
    name: str
    uri: str | None
    notes: int
    # The character whose name (or alias) the commenter signs with, when one does: an
    # "unverified author", who counts only once the referee maps them (issue #16).
    claims: str | None = None


@dataclass
class FlaggedNote:
    id: int
    entry_id: int
    author: str
    flags: list[str]


@dataclass
class Dashboard:
    campaign: Campaign
    turn: Turn | None
    tally: nw.Tally | None
    roster: list[RosterRow]
    events: list[Event]
    # This turn's entries and notes as read-only rows (tally.ENTRY_COLUMNS, NOTE_COLUMNS).
    entries: dict[int, Any]
    notes: dict[int, Any]
    rulings: list[Ruling]
    unmapped: list[Unmapped]
    identities: list[commenters.Identity] = field(default_factory=list)
    flagged_notes: list[FlaggedNote] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    # A resolved turn's tally as it was resolved (tally.turn_record), with what arrived
    # since; `tally` is then None: the page never shows a recomputed result.
    stored: dict | None = None
    # This turn's entries their authors hid, as (id, character_id, title, hidden_at) rows:
    # out of the tally and of every player's sight, listed here (hidden_entries).
    hidden: list[Any] = field(default_factory=list)

    @functools.cached_property
    def characters(self) -> dict[int, Character]:
        # Built once: the page looks a name up for every position of every challenge.
        return {row.character.id: row.character for row in self.roster}

    @property
    def next_number(self) -> int:
        return self.turn.number + 1 if self.turn else 1

    @property
    def queued(self) -> dict:
        """The next turn's event as the referee queued it for the schedule ({} when none
        is): the form that posts the event by hand starts from it."""
        return self.campaign.settings.get("queued_event") or {}

    def queued_for(self, character_id: int) -> dict:
        """The queued event's text tailored for one character ({} when there is none)."""
        tailored = self.queued.get("tailored", [])
        return next((t for t in tailored if t["character_id"] == character_id), {})

    @property
    def reminds_at(self) -> list[datetime]:
        """When the schedule nudges the players with no entry in the open turn, before
        and after its deadline (issue #30 item 1); none without a deadline."""
        if self.turn is None or self.turn.status != "open":
            return []
        return cadence.reminds_at(self.campaign, self.turn)

    @property
    def game_over(self) -> bool:
        """A character has won (Noteworthy: "The last PC left wins"): no turn follows."""
        return self.campaign.status == "ended"

    @property
    def can_post_event(self) -> bool:
        return not self.game_over and (self.turn is None or self.turn.status == "resolved")

    @property
    def missing_posters(self) -> list[Character]:
        """Noteworthy: "In a turn, you post at least one in-character entry". From the rows
        the page has already read; reminders.missing_posters asks the database the same."""
        if self.turn is None or self.turn.status == "resolved":
            return []
        return [
            r.character
            for r in self.roster
            if r.entries_this_turn == 0 and r.character.status != "winner"
        ]

    def name(self, character_id) -> str:
        character = self.characters.get(character_id)
        return character.name if character else "(nobody)"


def dashboard(*, session: Session, campaign: Campaign) -> Dashboard:
    """The open (latest) turn's rows are read once and serve both the tally and the page:
    a fixed number of queries, and no work on earlier turns."""
    turn = session.exec(
        select(Turn)
        .where(Turn.campaign_id == campaign.id)
        .order_by(col(Turn.number).desc())
        .limit(1)
    ).first()
    rows = session.exec(
        select(Character, Blog, User)
        .join(Blog, col(Blog.character_id) == Character.id)
        .outerjoin(User, col(User.id) == Character.user_id)
        .where(Character.campaign_id == campaign.id)
        .order_by(Character.name)
    ).all()
    counts: Counter = Counter()
    events, entries, notes, rulings, hidden = [], {}, {}, [], []
    result = stored = None
    if turn is not None:
        events = list(session.exec(select(Event).where(Event.turn_id == turn.id)))
        turn_rows = tally_service.load_turn(session=session, campaign=campaign, turn=turn)
        kept = turn.status == "resolved" and "tally" in (turn.result or {})
        if campaign.ruleset == "noteworthy" and kept:
            stored = tally_service.turn_record(session=session, campaign=campaign, turn=turn)
        elif campaign.ruleset == "noteworthy":
            result = tally_service.tally_of(campaign, turn, turn_rows)
        entries = {e.id: e for e in turn_rows.entries}
        notes = {n.id: n for n in turn_rows.notes}
        counts = Counter(e.character_id for e in turn_rows.entries)
        rulings = turn_rows.rulings
        hidden = hidden_entries.hidden_in_turn(session=session, turn_id=turn.id)
    modes = websub.delivery_modes(session=session, blogs=[b for _, b, _ in rows])
    roster = [RosterRow(c, u, b, counts.get(c.id, 0), modes.get(b.id)) for c, b, u in rows]
    board = Dashboard(
        campaign,
        turn,
        result,
        roster,
        events,
        entries,
        notes,
        rulings,
        unmapped_commenters(session=session, campaign=campaign),
        commenters.identities(session=session, campaign=campaign),
        flagged_notes(session=session, entry_ids=list(entries)),
        stored=stored,
        hidden=hidden,
    )
    if campaign.ruleset == "noteworthy" and not 6 <= len(roster) <= 24:
        board.warnings.append(f"{SIX_TO_TWENTY_FOUR}; this campaign has {len(roster)}.")
    return board


def unmapped_commenters(*, session: Session, campaign: Campaign) -> list[Unmapped]:
    """Commenters on external blogs not yet mapped to a character (their notes wait)."""
    entries = (
        select(Entry.id)
        .join(Character, col(Character.id) == Entry.character_id)
        .where(Character.campaign_id == campaign.id)
    )
    rows = session.exec(
        select(Note.author_name, Note.author_uri, sa.func.count())
        .where(col(Note.entry_id).in_(entries), col(Note.author_character_id).is_(None))
        .group_by(col(Note.author_name), col(Note.author_uri))
        .order_by(sa.func.count().desc())
    ).all()
    if not rows:
        return []
    names: dict[str, str] = {}
    for name, aliases in session.exec(
        select(Character.name, Character.aliases).where(Character.campaign_id == campaign.id)
    ):
        for signed in (name, *(aliases or [])):
            names.setdefault(signed.strip().lower(), name)
    return [
        Unmapped(name or "(anonymous)", uri, n, names.get((name or "").strip().lower()))
        for name, uri, n in rows
    ]


def flagged_notes(*, session: Session, entry_ids: list[int]) -> list[FlaggedNote]:
    """This turn's notes with a reason to look at them (e.g. dated after first seen)."""
    if not entry_ids:
        return []
    rows = session.exec(
        select(Note.id, Note.entry_id, Note.author_name, Note.flags)
        .where(col(Note.entry_id).in_(entry_ids), sa.cast(Note.flags, sa.Text) != "[]")
        .order_by(col(Note.id))
    ).all()
    return [FlaggedNote(i, e, a or "(anonymous)", list(f)) for i, e, a, f in rows if f]
