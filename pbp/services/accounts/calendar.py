"""Each person's secret calendar address (issue #30 item 4): made, replaced and revoked on
/account/calendar (and through the API), read by calendar apps at /calendar/<secret>.ics.

The address is a capability, as an API token is: whoever has it reads the feed, with no
login, and its owner revokes it as they revoke a token. Revoking deletes it; making a new
address replaces its secret, so the old one answers 404 from that moment. The feed lists
only public facts of the owner's campaigns (pbp.services.noteworthy.calendar); why the
secret is kept as it is rather than hashed is in pbp.models.calendar.
"""

from __future__ import annotations

import re
import secrets
from datetime import datetime
from urllib.parse import urlsplit

import sqlalchemy as sa
from sqlmodel import Session, col, select

from pbp import links
from pbp.errors import Conflict, NotFound
from pbp.models import CalendarFeed, User
from pbp.services import ics
from pbp.services.noteworthy import calendar as deadlines

_SHAPE = re.compile(r"[A-Za-z0-9_-]{20,64}")  # what token_urlsafe makes, with room


def calendar_address(*, session: Session, user: User) -> CalendarFeed | None:
    """The person's live calendar address, or None when they have none."""
    return session.exec(select(CalendarFeed).where(CalendarFeed.user_id == user.id)).first()


def address_url(feed: CalendarFeed, *, base_url: str) -> str:
    """The whole address to give a calendar app."""
    return links.absolute(base_url, links.calendar_feed(feed.secret))


def make_address(*, session: Session, user: User, now: datetime) -> CalendarFeed:
    """A new secret calendar address for the person; the old one, if any, stops working."""
    secret = secrets.token_urlsafe(32)
    feed = calendar_address(session=session, user=user)
    if feed is None:
        feed = CalendarFeed(user_id=user.id, secret=secret, created_at=now)
    feed.secret, feed.created_at = secret, now
    try:
        with session.begin_nested():  # a savepoint: only this change is undone on a race
            session.add(feed)
    except sa.exc.IntegrityError as exc:  # another request made one for them at this moment
        raise Conflict(
            "your calendar address was changed from elsewhere at the same moment: "
            "reload the page to see it"
        ) from exc
    return feed


def revoke_address(*, session: Session, user: User) -> bool:
    """Revoke the person's calendar address (False: they had none): it answers 404 at once."""
    feed = calendar_address(session=session, user=user)
    if feed is None:
        return False
    session.delete(feed)
    session.flush()
    return True


def calendar_text(*, session: Session, secret: str, base_url: str, now: datetime) -> bytes:
    """The iCalendar feed at the secret address: the deadlines of its owner's campaigns."""
    owner = None
    if _SHAPE.fullmatch(secret):
        owner = session.exec(
            select(User)
            .join(CalendarFeed, col(CalendarFeed.user_id) == User.id)
            .where(CalendarFeed.secret == secret)
        ).first()
    if owner is None:
        raise NotFound(
            "no calendar has this address: it was revoked or replaced by a new one. "
            f"Its owner finds the current address at {links.calendar_page()}"
        )
    host = urlsplit(base_url).hostname or "localhost"
    items = deadlines.items(session=session, user=owner, base_url=base_url, now=now)
    return ics.calendar(items, name=f"pbp deadlines ({host})", now=now)
