"""The referee's activity check (issue #30 item 2): every character, turn by turn, with
their entries, notes and posts, and whether they met the campaign's activity rule
(`plan.Plan`: "1 entry per turn", "2 posts every 7 days").

Noteworthy's turns are read with the history page's own reader
(`history.campaign_history`): the turns, and each character's standing and challenges in
them, are the history page's numbers, so the two pages cannot disagree. A forum game has
no turns: its posting windows (`plan.window_start`) stand in for them.

A turn is "met" when the character posted what the rule asks; "excused" when it did not
but its player was away (`hiatus`) at some time during the turn; not counted while the
turn runs and the rule is not met yet, nor before the character was in the game, nor for
the winner. "Missed in a row" counts back from the latest counted turn: missed turns add
one, excused turns are stepped over (neither a miss nor a break), a met turn stops it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlmodel import Session, col, func, select

from pbp import links
from pbp.models import AuditLog, Campaign, Character, Entry, Note, Post, Thread, Turn, User
from pbp.services import audit_actions as lines
from pbp.services import campaigns
from pbp.services.alive import hiatus as hiatus_service
from pbp.services.alive.plan import Plan, is_forum, plan_of, window_start
from pbp.services.noteworthy import history as history_service

MAX_WINDOWS = 26  # a forum game's check shows its last half year of weeks at most


@dataclass(frozen=True)
class Period:
    key: str  # what a nudge is keyed by: "t3", or "w2026-03-09" for a forum window
    number: int
    label: str  # "turn 3", "the week from 2026-03-09"
    start: datetime
    end: datetime | None  # the deadline; None: an open turn with none
    finished: bool  # the deadline passed or the turn was closed
    url: str  # where a player does what the period asks


@dataclass(frozen=True)
class Cell:
    entries: int = 0
    notes: int = 0
    posts: int = 0
    challenges: int = 0  # made in the turn: the history page's "made"
    status: str | None = None  # at the turn's start (history's), None: not in the game
    met: bool | None = None  # None: not counted
    excused: bool = False
    asked: bool = False  # the rule applies: in the game, not the winner, not dropped


@dataclass(frozen=True)
class Row:
    character_id: int
    name: str
    slug: str
    status: str  # now
    user_id: int | None
    player: str
    cells: tuple[Cell, ...]
    missed_in_row: int
    away_until: datetime | None


@dataclass(frozen=True)
class Activity:
    plan: Plan
    periods: tuple[Period, ...]
    rows: tuple[Row, ...]

    def row(self, character_id: int) -> Row:
        return next(r for r in self.rows if r.character_id == character_id)


def check(*, session: Session, campaign: Campaign, actor: User | None, now: datetime) -> Activity:
    """The referee's activity page (and its API twin)."""
    campaigns.require_referee(
        session=session, campaign=campaign, user=actor, doing="see the activity check"
    )
    return measure(session=session, campaign=campaign, now=now)


def measure(*, session: Session, campaign: Campaign, now: datetime) -> Activity:
    """The check itself, for the page and for the nudges (no permission asked)."""
    plan = plan_of(campaign)
    characters = session.exec(
        select(Character, User)
        .outerjoin(User, col(User.id) == Character.user_id)
        .where(Character.campaign_id == campaign.id)
        .order_by(col(Character.name))
    ).all()
    absences = hiatus_service.all_of(session, campaign)
    dropped = _dropped(session, campaign)
    away = hiatus_service.current(session, campaign, now)
    if is_forum(campaign):
        periods, cells = _forum(session, campaign, plan, characters, now)
    else:
        periods, cells = _noteworthy(session, campaign, plan, now)
    rows = []
    for character, user in characters:
        line = []
        for period in periods:
            cell = cells.get((period.key, character.id), Cell())
            gone = dropped.get(character.id)
            # Asked to post: in the game, not the winner, not ruled dropped before the turn.
            if cell.status not in (None, "winner") and (gone is None or period.start < gone):
                cell = _with(cell, asked=True)
                met = _met(cell, plan)
                if met or period.finished:
                    excused = not met and hiatus_service.overlaps(
                        absences, character.user_id, period.start, period.end or now
                    )
                    cell = _with(cell, met=None if excused else met, excused=excused)
            line.append(cell)
        hiatus = away.get(character.user_id) if character.user_id else None
        rows.append(
            Row(
                character_id=character.id,
                name=character.name,
                slug=character.slug,
                status=character.status,
                user_id=character.user_id,
                player=user.display_name if user else "",
                cells=tuple(line),
                missed_in_row=missed_in_row(line, periods),
                away_until=hiatus.until if hiatus else None,
            )
        )
    return Activity(plan, tuple(periods), tuple(rows))


def _dropped(session: Session, campaign: Campaign) -> dict[int, datetime]:
    """Character id -> when the referee ruled it dropped (roster.drop_character): from then
    on it is asked for nothing, so it is neither nudged nor counted as missing."""
    rows = session.exec(
        select(AuditLog.detail, AuditLog.created_at).where(
            AuditLog.campaign_id == campaign.id,
            AuditLog.action == lines.CharacterDropped.action,
        )
    ).all()
    return {
        detail["character_id"]: at for detail, at in rows if detail.get("character_id") is not None
    }


def _met(cell: Cell, plan: Plan) -> bool:
    done = cell.posts if plan.rule_days is not None else cell.entries
    return done >= plan.rule_count


def _with(cell: Cell, **changes) -> Cell:
    return Cell(**{**cell.__dict__, **changes})


def missed_in_row(cells, periods) -> int:
    missed = 0
    for cell, period in zip(reversed(cells), reversed(periods), strict=True):
        if cell.excused or (not period.finished and not cell.met):
            continue  # stepped over: away, or the turn still runs
        if cell.met is not False:
            break
        missed += 1
    return missed


def _noteworthy(session, campaign, plan, now):
    past = history_service.campaign_history(session=session, campaign=campaign)
    turns = {t.number: t for t in session.exec(select(Turn).where(Turn.campaign_id == campaign.id))}
    entries = Counter(
        {
            (turn_id, character_id): n
            for turn_id, character_id, n in session.exec(
                select(Entry.turn_id, Entry.character_id, func.count())
                .join(Character, col(Character.id) == Entry.character_id)
                .where(Character.campaign_id == campaign.id, col(Entry.hidden_at).is_(None))
                .group_by(Entry.turn_id, Entry.character_id)
            )
        }
    )
    notes = Counter(
        {
            (turn_id, character_id): n
            for turn_id, character_id, n in session.exec(
                select(Entry.turn_id, Note.author_character_id, func.count())
                .join(Entry, col(Entry.id) == Note.entry_id)
                .join(Character, col(Character.id) == Entry.character_id)
                .where(Character.campaign_id == campaign.id, col(Entry.hidden_at).is_(None))
                .group_by(Entry.turn_id, Note.author_character_id)
            )
        }
    )
    periods, cells = [], {}
    for line in past.turns:
        turn = turns[line.number]
        period = _turn_period(campaign, turn, now)
        key = period.key
        periods.append(period)
        for cid, standing in line.standings.items():
            cells[(key, cid)] = Cell(
                entries=entries[(turn.id, cid)],
                notes=notes[(turn.id, cid)],
                challenges=standing.made,
                status=standing.status,
            )
    return periods, cells


def _forum(session, campaign, plan, characters, now):
    assert plan.rule_days is not None
    length = timedelta(days=plan.rule_days)
    current = window_start(campaign, plan, now)
    first = max(campaign.created_at, current - (MAX_WINDOWS - 1) * length)
    first = window_start(campaign, plan, first)
    posts = session.exec(
        select(Post.character_id, Post.author_id, Post.created_at)
        .join(Thread, col(Thread.id) == Post.thread_id)
        .where(
            Thread.campaign_id == campaign.id,
            col(Post.deleted_at).is_(None),
            col(Post.created_at) >= first,
        )
    ).all()
    by_user = {c.user_id: c.id for c, _ in characters if c.user_id}
    count: Counter = Counter()
    for character_id, author_id, at in posts:
        who = character_id or by_user.get(author_id)
        if who:
            count[(window_start(campaign, plan, at), who)] += 1
    periods, cells = [], {}
    start = first
    while start <= now:
        period = _window_period(campaign, plan, start, now)
        key, end = period.key, start + length
        periods.append(period)
        for character, _user in characters:
            joined = character.created_at < end
            status = character.status if joined else None
            cells[(key, character.id)] = Cell(posts=count[(start, character.id)], status=status)
        start = end
    return periods, cells


def _turn_period(campaign: Campaign, turn: Turn, now: datetime) -> Period:
    finished = turn.status != "open" or (turn.deadline is not None and turn.deadline <= now)
    return Period(
        f"t{turn.number}", turn.number, f"Turn {turn.number}", turn.opened_at,
        turn.deadline or turn.closed_at, finished, links.write(campaign.slug),
    )  # fmt: skip


def _window_period(campaign: Campaign, plan: Plan, start: datetime, now: datetime) -> Period:
    assert plan.rule_days is not None
    length = timedelta(days=plan.rule_days)
    end = start + length
    return Period(
        f"w{start:%Y-%m-%dT%H%M}", int((start - campaign.created_at) / length) + 1,
        f"the {plan.rule_days}-day window from {start:%Y-%m-%d}", start, end, end <= now,
        links.forum(campaign.slug),
    )  # fmt: skip


def recent_periods(*, session: Session, campaign: Campaign, now: datetime) -> list[Period]:
    """The last two periods (the one running and the one before), read cheaply: what the
    nudge job looks at before it takes a campaign's lock (one query at most)."""
    plan = plan_of(campaign)
    if plan.rule_days is not None:
        current = window_start(campaign, plan, now)
        starts = [current - timedelta(days=plan.rule_days), current]
        return [
            _window_period(campaign, plan, start, now)
            for start in starts
            if start >= campaign.created_at
        ]
    latest = session.exec(
        select(Turn)
        .where(Turn.campaign_id == campaign.id)
        .order_by(col(Turn.number).desc())
        .limit(2)
    ).all()
    return [_turn_period(campaign, turn, now) for turn in reversed(latest)]
