"""What a member's calendar lists (issue #30 item 4): the deadlines of the turns of their
Noteworthy campaigns, and the next turn's opening when the campaign's cadence schedules it.

Secrecy: a calendar is a way out of pbp like mail and the Atom feeds, read by apps that
sync it to phones and share it with others. So it carries only what anyone reads on the
turn pages: the campaign's name, the turn's number, its deadline and its link. Never an
event's text, tailored or not, a character, a standing, a whisper: the items below are
built from those facts alone (tests/security/test_calendar_secrets.py plants markers).

Which turns: the open turn, and every turn whose deadline is less than KEEP_PAST ago. A
calendar app deletes an event that leaves the feed, so a deadline stays in the member's
calendar a while after its turn closed instead of vanishing as it closes.

The next turn's opening: on a daily or hourly cadence the scheduler closes the open turn
at its deadline and, when nothing waits for a ruling and the referee has the event ready,
opens the next at once (pbp.services.noteworthy.cadence.advance). So the opening is listed
at the open turn's deadline, with that "when". Whether the referee has queued the event
is theirs to tell, so it is listed either way. On a manual cadence the referee opens
turns by hand (the scheduler only if they queued the event), and a closed turn waits for
the referee: no time is known, nothing is listed.

SEQUENCE: the turn's own counter of deadline moves (`Turn.deadline_sequence`, raised by
the model whenever `Turn.deadline` changes, whichever service changes it: pbp.models.
noteworthy). The opening's time is the open turn's deadline, so it shares the counter.
Chosen over a table of (event, time last served, sequence) kept up as feeds are read:
that writes on every read of every feed, and a counter written in the transaction that
moves the deadline is one integer and cannot miss a move.

UIDs name the turn's row (or the campaign's row and the turn's number, for a turn not
opened yet) and the site's host: they never change while the event is the same.

Forum campaigns: nothing in them has a date to come (scenes, posts and rolls have none),
so the calendar lists nothing of them.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from urllib.parse import urlsplit

import sqlalchemy as sa
from sqlmodel import Session, col, select

from pbp import links
from pbp.models import Campaign, Membership, Turn, User
from pbp.services.ics import Item

KEEP_PAST = timedelta(days=90)


def items(*, session: Session, user: User, base_url: str, now: datetime) -> list[Item]:
    """The calendar's events for `user`, soonest first."""
    host = urlsplit(base_url).hostname or "localhost"
    rows = session.exec(
        select(Campaign, Turn)
        .join(Membership, col(Membership.campaign_id) == Campaign.id)
        .join(Turn, col(Turn.campaign_id) == Campaign.id)
        .where(
            Membership.user_id == user.id,
            Campaign.ruleset == "noteworthy",
            col(Turn.deadline).is_not(None),
            sa.or_(col(Turn.status) == "open", col(Turn.deadline) >= now - KEEP_PAST),
        )
        .order_by(col(Turn.deadline), col(Turn.id))
    ).all()
    found: list[Item] = []
    for campaign, turn in rows:
        found.append(_deadline(campaign, turn, host, base_url))
        if turn.status == "open" and _scheduled(campaign):
            found.append(_opening(campaign, turn, host, base_url))
    return found


def _deadline(campaign: Campaign, turn: Turn, host: str, base_url: str) -> Item:
    assert turn.deadline is not None  # the query's condition
    return Item(
        uid=f"pbp-turn-{turn.id}-deadline@{host}",
        start=turn.deadline,
        sequence=turn.deadline_sequence,
        summary=f"{campaign.name}: turn {turn.number} closes",
        description=f"The deadline of turn {turn.number} of {campaign.name}.",
        url=links.absolute(base_url, links.turn(campaign.slug, turn.number)),
    )


def _opening(campaign: Campaign, turn: Turn, host: str, base_url: str) -> Item:
    assert turn.deadline is not None
    following = turn.number + 1
    return Item(
        uid=f"pbp-campaign-{campaign.id}-turn-{following}-opens@{host}",
        start=turn.deadline,
        sequence=turn.deadline_sequence,
        summary=f"{campaign.name}: turn {following} opens",
        description=(
            f"{campaign.name} runs on a schedule: turn {following} opens when turn "
            f"{turn.number} closes, if nothing waits for a ruling and the referee has "
            "its event ready."
        ),
        url=links.absolute(base_url, links.turns(campaign.slug)),
    )


def _scheduled(campaign: Campaign) -> bool:
    """Whether the cadence closes turns on its own (daily or every N hours)."""
    cadence = (campaign.settings or {}).get("cadence") or {}
    return cadence.get("kind", "manual") != "manual"
