"""What waits on a member, across every campaign they are in: the signed-in home page's
"Waiting on you" and the API's `GET /me/board` (issue #29 item 1).

A player is waiting for:
- their entry of the open turn, when their character has none yet (Noteworthy: "In a turn,
  you post at least one in-character entry"), with the turn's deadline;
- a challenge against their character, with its count as it stands and when its fair
  interval ends (or the turn's deadline, without one);
- a forum scene where someone posted since their own last post there, saying how many of
  those posts are whispers to them;
- an invitation to their address not yet accepted.
A referee (a forum GM) is waiting for: flags that need a ruling, commenters to map, a
turn past its deadline, mail that failed, feeds that fail.

Most urgent first: what has a time limit, soonest first; then the rest, in the order of
`KINDS`. The lines are built from a fixed number of queries whatever the number of
campaigns, entries or posts: one per kind over all the member's campaigns. Only the
tallies of turns that changed since the last look are run (the live counts and flags of
a turn are kept per campaign content version, which every change bumps:
pbp.content_version).

Beside each campaign, what is new to the member since they last read it ("N new",
pbp.services.unread): one more query for all the campaigns.

Secrecy: a scene's new posts are counted through `visibility.can_see_post`, the one rule
for posts, so a whisper to someone else or a GM-only post never shows here.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import sqlalchemy as sa
from cachetools import LRUCache
from sqlmodel import Session, col, select

from pbp import links
from pbp.models import (
    Blog,
    Campaign,
    Character,
    Entry,
    Hiatus,
    Invite,
    Membership,
    Note,
    Turn,
    User,
)
from pbp.models.forum import Post, PostRecipient, Thread
from pbp.models.mail import OutboxMessage
from pbp.services import unread
from pbp.services.accounts.logins import invite_token
from pbp.services.forum.rolls import Viewer
from pbp.services.forum.visibility import FORUM_RULESETS, can_see_post
from pbp.services.noteworthy import tally
from pbp.templating import in_zone

#: The kinds of line, in the order they come when no time limit sorts them.
KINDS = (
    "overdue",
    "flags",
    "challenge",
    "entry",
    "whisper",
    "scene",
    "invite",
    "commenters",
    "mail",
    "feeds",
    "away",
)


@dataclass(frozen=True)
class Waiting:
    """One thing to do: what, where (a path on this site) and by when."""

    kind: str
    campaign_slug: str
    campaign_name: str
    text: str
    path: str
    due: datetime | None = None


@dataclass(frozen=True)
class Board:
    items: tuple[Waiting, ...]
    campaigns: tuple[tuple[Campaign, str], ...]  # every campaign of the member, with the role
    # What is new to the member in each campaign, by id (pbp.services.unread): "N new".
    unread: dict[int, int] = field(default_factory=dict)

    def news(self, campaign_id: int) -> str:
        """ "3 new" beside a campaign; "" when nothing is."""
        return unread.shown(self.unread.get(campaign_id, 0))

    def time_zone(self, slug: str) -> str:
        """The campaign's time zone, for a line's time limit; UTC for an invitation."""
        return next((c.time_zone for c, _ in self.campaigns if c.slug == slug), "UTC")


@dataclass(frozen=True)
class _TurnSummary:
    """What the board needs of a turn's tally: each live challenge's target and counts, and
    how many flags wait for a ruling."""

    challenges: tuple[tuple[int | str | None, int | str | None, int, int, datetime], ...]
    flags: int


_summaries: LRUCache = LRUCache(maxsize=4096)
_summaries_lock = threading.Lock()


def board(*, session: Session, user: User, now: datetime, secret_key: str) -> Board:
    """Everything waiting on `user`, most urgent first (see the module docstring);
    `secret_key` signs the links of their invitations."""
    rows = session.exec(
        select(Campaign, Membership.role)
        .join(Membership, col(Membership.campaign_id) == Campaign.id)
        .where(Membership.user_id == user.id)
        .order_by(col(Campaign.created_at).desc())
    ).all()
    campaigns = tuple((campaign, role) for campaign, role in rows)
    playing = [c for c, role in campaigns if role == "player" and c.status != "ended"]
    refereeing = [c for c, role in campaigns if role == "referee" and c.status != "ended"]
    refereed_noteworthy = [c for c in refereeing if c.ruleset == "noteworthy"]
    noteworthy = [c for c in playing if c.ruleset == "noteworthy"]
    forum = [c for c, _ in campaigns if c.ruleset in FORUM_RULESETS and c.status != "ended"]
    items = [
        *_entries_to_write(session, user, noteworthy),
        *_challenges_and_flags(session, user, noteworthy, refereed_noteworthy),
        *_scenes(session, user, forum, {c.id for c in refereeing}),
        *_invitations(session, user, now, secret_key),
        *_referee_chores(session, refereed_noteworthy, now),
        *_failed_mail(session, refereeing),
        *_away(
            session,
            user,
            [c for c, _ in campaigns if c.status != "ended"],
            {c.id for c in refereeing},
            now,
        ),
    ]
    news = unread.unread_counts(session=session, user=user, campaigns=campaigns)
    return Board(items=tuple(sorted(items, key=_urgency)), campaigns=campaigns, unread=news)


def _urgency(item: Waiting) -> tuple:
    far = datetime.max.replace(tzinfo=UTC)
    return (_aware(item.due) if item.due else far, KINDS.index(item.kind), item.campaign_name)


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _open_turns(session: Session, campaigns: Iterable[Campaign]) -> dict[int, Turn]:
    ids = [c.id for c in campaigns]
    if not ids:
        return {}
    turns = session.exec(
        select(Turn).where(col(Turn.campaign_id).in_(ids), col(Turn.status).in_(("open", "closed")))
    ).all()
    return {turn.campaign_id: turn for turn in turns}


def _entries_to_write(session: Session, user: User, campaigns: list[Campaign]) -> list[Waiting]:
    if not campaigns:
        return []
    wrote = select(Entry.id).where(
        col(Entry.turn_id) == Turn.id, col(Entry.character_id) == Character.id
    )
    rows = session.exec(
        select(Character, Turn, Campaign)
        .join(Blog, col(Blog.character_id) == Character.id)
        .join(Turn, col(Turn.campaign_id) == Character.campaign_id)
        .join(Campaign, col(Campaign.id) == Character.campaign_id)
        .where(
            Character.user_id == user.id,
            col(Character.campaign_id).in_([c.id for c in campaigns]),
            Character.status != "winner",
            Turn.status == "open",
            ~sa.exists(wrote),
        )
    ).all()
    return [
        Waiting(
            "entry",
            campaign.slug,
            campaign.name,
            f"Write {character.name}'s entry for turn {turn.number}",
            links.write(campaign.slug),
            turn.deadline,
        )
        for character, turn, campaign in rows
    ]


def _challenges_and_flags(
    session: Session,
    user: User,
    playing: list[Campaign],
    noteworthy_refereed: list[Campaign],
) -> list[Waiting]:
    """Challenges against the member's characters, and flags in the referee's turns: both
    read from the turn's tally, run only for a turn that changed since it was last run."""
    turns = _open_turns(session, [*playing, *noteworthy_refereed])
    if not turns:
        return []
    mine = dict(
        session.exec(
            select(Character.id, Character.name).where(
                Character.user_id == user.id,
                col(Character.campaign_id).in_([c.id for c in playing]),
            )
        ).all()
    )
    names: dict[int, str] | None = None
    items = []
    for campaign in [*playing, *noteworthy_refereed]:
        turn = turns.get(campaign.id)
        if turn is None:
            continue
        summary = _summary(session, campaign, turn)
        if campaign in noteworthy_refereed and summary.flags:
            items.append(
                Waiting(
                    "flags",
                    campaign.slug,
                    campaign.name,
                    f"{summary.flags} flag(s) in turn {turn.number} wait for your ruling",
                    links.referee_board(campaign.slug) + "#tally",
                )
            )
        for challenger, target, support, oppose, made_at in summary.challenges:
            if target not in mine or turn.status != "open":
                continue
            if names is None:
                names = _character_names(session, playing)
            interval = (campaign.settings or {}).get("fair_interval_hours")
            ends = made_at + timedelta(hours=interval) if interval else turn.deadline
            who = names.get(challenger, "someone") if isinstance(challenger, int) else "someone"
            items.append(
                Waiting(
                    "challenge",
                    campaign.slug,
                    campaign.name,
                    f"{who} challenges {mine[target]}: {support} support · {oppose} oppose",
                    links.turn(campaign.slug, turn.number),
                    ends,
                )
            )
    return items


def _summary(session: Session, campaign: Campaign, turn: Turn) -> _TurnSummary:
    # The creation time tells a campaign from a later one that was given a freed id.
    key = (campaign.id, campaign.created_at, campaign.content_version, turn.id, turn.status)
    with _summaries_lock:
        found = _summaries.get(key)
    if found is not None:
        return found
    result = tally.tally(session=session, campaign=campaign, turn=turn)
    summary = _TurnSummary(
        challenges=tuple(
            (c.challenger_id, c.target_id, len(c.supporters), len(c.opposers), c.made_at)
            for c in result.challenges
            if c.live
        ),
        flags=len(result.flags) if result.needs_ruling else 0,
    )
    with _summaries_lock:
        _summaries[key] = summary
    return summary


def _character_names(session: Session, campaigns: list[Campaign]) -> dict[int, str]:
    return dict(
        session.exec(
            select(Character.id, Character.name).where(
                col(Character.campaign_id).in_([c.id for c in campaigns])
            )
        ).all()
    )


def _scenes(
    session: Session, user: User, campaigns: list[Campaign], gm_of: set[int]
) -> list[Waiting]:
    """Scenes where someone posted, visibly to the member, since the member's last post
    there (a scene they have not posted in waits on them only once it names them: whispers
    to them count everywhere)."""
    if not campaigns:
        return []
    ids = [c.id for c in campaigns]
    last_mine = (
        select(Post.thread_id, sa.func.max(Post.id).label("last"))
        .join(Thread, col(Thread.id) == Post.thread_id)
        .where(col(Thread.campaign_id).in_(ids), Post.author_id == user.id)
        .group_by(col(Post.thread_id))
        .subquery()
    )
    whispered = select(PostRecipient.post_id).where(PostRecipient.user_id == user.id)
    rows = session.exec(
        select(Post, Thread, last_mine.c.last, col(Post.id).in_(whispered))
        .join(Thread, col(Thread.id) == Post.thread_id)
        .outerjoin(last_mine, last_mine.c.thread_id == Post.thread_id)
        .where(
            col(Thread.campaign_id).in_(ids),
            col(Post.deleted_at).is_(None),
            sa.or_(col(Post.author_id).is_(None), col(Post.author_id) != user.id),
            sa.or_(
                col(Post.id) > last_mine.c.last,
                sa.and_(last_mine.c.last.is_(None), col(Post.id).in_(whispered)),
            ),
        )
        .order_by(col(Post.id))
    ).all()
    by_id = {c.id: c for c in campaigns}
    counts: dict[int, list] = {}
    for post, thread, _last, to_me in rows:
        role = "referee" if thread.campaign_id in gm_of else "player"
        recipients = {user.id} if to_me else set()
        if not can_see_post(post, Viewer(user.id, role), recipients):
            continue
        seen = counts.setdefault(thread.id, [thread, 0, 0])
        seen[1] += 1
        seen[2] += 1 if to_me else 0
    items = []
    for thread, new, whispers in counts.values():
        campaign = by_id[thread.campaign_id]
        text = f"{new} new post(s) in “{thread.title}” since yours"
        if whispers:
            text += f", {whispers} whispered to you"
        items.append(
            Waiting(
                "whisper" if whispers else "scene",
                campaign.slug,
                campaign.name,
                text,
                links.thread(campaign.slug, thread.id),
            )
        )
    return items


def _invitations(session: Session, user: User, now: datetime, secret_key: str) -> list[Waiting]:

    rows = session.exec(
        select(Invite, Campaign)
        .join(Campaign, col(Campaign.id) == Invite.campaign_id)
        .where(
            sa.func.lower(Invite.email) == user.email.lower(),
            col(Invite.used_at).is_(None),
            Invite.expires_at > now,
        )
    ).all()
    return [
        Waiting(
            "invite",
            campaign.slug,
            campaign.name,
            f"You are invited to {campaign.name}",
            links.invite(invite_token(invite=invite, secret_key=secret_key)),
            invite.expires_at,
        )
        for invite, campaign in rows
    ]


def _referee_chores(session: Session, campaigns: list[Campaign], now: datetime) -> list[Waiting]:
    """A turn past its deadline, commenters to map and failing feeds, for the referee."""
    if not campaigns:
        return []
    ids = [c.id for c in campaigns]
    by_id = {c.id: c for c in campaigns}
    items = []
    for turn in session.exec(
        select(Turn).where(
            col(Turn.campaign_id).in_(ids), Turn.status == "open", col(Turn.deadline) < now
        )
    ):
        campaign = by_id[turn.campaign_id]
        items.append(
            Waiting(
                "overdue",
                campaign.slug,
                campaign.name,
                f"Turn {turn.number} is past its deadline: close it",
                links.referee_board(campaign.slug),
                turn.deadline,
            )
        )
    unmapped = session.exec(
        select(Character.campaign_id, sa.func.count(col(Note.id)))
        .join(Entry, col(Entry.character_id) == Character.id)
        .join(Note, col(Note.entry_id) == Entry.id)
        .where(col(Character.campaign_id).in_(ids), col(Note.author_character_id).is_(None))
        .group_by(col(Character.campaign_id))
    ).all()
    for campaign_id, count in unmapped:
        campaign = by_id[campaign_id]
        items.append(
            Waiting(
                "commenters",
                campaign.slug,
                campaign.name,
                f"{count} note(s) by commenters not mapped to a character",
                links.referee_board(campaign.slug) + "#commenters",
            )
        )
    failing = session.exec(
        select(Character.campaign_id, sa.func.count(col(Blog.id)))
        .join(Blog, col(Blog.character_id) == Character.id)
        .where(
            col(Character.campaign_id).in_(ids),
            sa.or_(col(Blog.last_error).is_not(None), col(Blog.gone).is_(True)),
        )
        .group_by(col(Character.campaign_id))
    ).all()
    for campaign_id, count in failing:
        campaign = by_id[campaign_id]
        items.append(
            Waiting(
                "feeds",
                campaign.slug,
                campaign.name,
                f"{count} feed(s) failed at their last read",
                links.referee_board(campaign.slug) + "#roster",
            )
        )
    return items


def _failed_mail(session: Session, campaigns: list[Campaign]) -> list[Waiting]:
    if not campaigns:
        return []
    by_id = {c.id: c for c in campaigns}
    rows = session.exec(
        select(OutboxMessage.campaign_id, sa.func.count(col(OutboxMessage.id)))
        .where(col(OutboxMessage.campaign_id).in_(list(by_id)), OutboxMessage.status == "failed")
        .group_by(col(OutboxMessage.campaign_id))
    ).all()
    return [
        Waiting(
            "mail",
            by_id[campaign_id].slug,
            by_id[campaign_id].name,
            f"{count} mail(s) could not be delivered",
            links.referee_board(by_id[campaign_id].slug) + "outbox?status=failed",
        )
        for campaign_id, count in rows
        if campaign_id is not None
    ]


def _away(session: Session, user: User, campaigns: list[Campaign], refereeing: set[int], now):
    """Issue #30 item 3: "away until ..." for the player themselves, and for the referee
    each of their players who is away (one query)."""
    if not campaigns:
        return []
    by_id = {c.id: c for c in campaigns}
    rows = session.exec(
        select(Hiatus, User)
        .join(User, col(User.id) == Hiatus.user_id)
        .where(
            col(Hiatus.campaign_id).in_(by_id),
            col(Hiatus.ended_at).is_(None),
            col(Hiatus.starts_at) <= now,
            col(Hiatus.until) > now,
        )
        .order_by(col(Hiatus.until))
    ).all()
    items = []
    for hiatus, player in rows:
        campaign = by_id[hiatus.campaign_id]
        back = in_zone(hiatus.until, campaign.time_zone).date().isoformat()
        if player.id == user.id:
            text, path = f"You are marked away until {back}", links.away(campaign.slug)
        elif campaign.id in refereeing:
            text = f"{player.display_name} is away until {back}"
            path = links.activity(campaign.slug)
        else:
            continue
        # No time limit: an absence is news, not a deadline, so it sorts after them.
        items.append(Waiting("away", campaign.slug, campaign.name, text, path))
    return items
