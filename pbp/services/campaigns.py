"""Campaigns, members and characters: creation and the reads the pages need."""

from __future__ import annotations

import re
import unicodedata
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session, col, select

from pbp import rules
from pbp.errors import Conflict, Forbidden, NotFound, UserError
from pbp.models import Blog, Campaign, Character, Membership, User
from pbp.services.forum import seeds

RULESETS = tuple(rules.RULESETS)
# Page names under /c/<campaign>/ that a character's blog would otherwise hide.
RESERVED_SLUGS = {
    *("forum", "rolls", "sheets", "referee", "write", "me", "history", "invites"),
    *("turns", "characters", "tables", "gm"),
}
# Each ruleset as the new-campaign page and every heading name it: (name, one line).
RULESET_NAMES = {
    "noteworthy": (
        "Noteworthy",
        "Every player blogs in character; challenges are settled by the notes others leave. "
        "Played on blogs, in turns.",
    ),
    "one": (
        "ONE",
        "A simple, generic role-playing engine: stats, skills and a d10 roll. Played in forum "
        "scenes with dice on the server.",
    ),
    "noir": (
        "Noir",
        "Swedish hard-boiled crime: skill rolls on exploding d10s. Played in forum scenes with "
        "dice on the server.",
    ),
    "sex-and-violence": (
        "Sex & Violence",
        "Gangsters settle scores with playing cards: suits for fields, bids and wounds. "
        "Played in forum scenes at card tables.",
    ),
    "one-can-have-her": (
        "One Can Have Her",
        "A game noir: rivals for one woman's favour, with cards and rat notes. Played in forum "
        "scenes at card tables.",
    ),
}
NOTEWORTHY_DEFAULTS: dict[str, Any] = {
    "opening_turns": 2,
    "fair_interval_hours": None,
    "custom_moods": {},
}


def slugify(text: str) -> str:
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")
    return slug[:80] or "x"


def create_user(*, session: Session, email: str, display_name: str) -> User:
    email = email.strip().lower()
    if "@" not in email:
        raise UserError(f"{email!r} is not an email address")
    if session.exec(select(User).where(User.email == email)).first():
        raise Conflict(f"there is already an account for {email}")
    user = User(email=email, display_name=display_name.strip() or email)
    session.add(user)
    session.flush()
    return user


def create_campaign(
    *,
    session: Session,
    referee: User,
    name: str,
    ruleset: str = "noteworthy",
    settings=None,
    now: datetime | None = None,
) -> Campaign:
    """A new campaign refereed by `referee`. A forum campaign gets its secret dice seed now,
    so the seed's commitment is public before any roll (issue #35 item 1). `now`: the
    clock; None takes the model's default (the current time)."""
    if ruleset not in RULESETS:
        raise UserError(f"unknown ruleset {ruleset!r}; choose one of {', '.join(RULESETS)}")
    if not name.strip():
        raise UserError("a campaign needs a name")
    slug = slugify(name)
    if session.exec(select(Campaign).where(Campaign.slug == slug)).first():
        raise Conflict(f"a campaign called {slug!r} exists already; choose another name")
    merged = dict(NOTEWORTHY_DEFAULTS) if ruleset == "noteworthy" else {}
    merged.update(settings or {})
    campaign = Campaign(slug=slug, name=name.strip(), ruleset=ruleset, settings=merged)
    if now is not None:
        campaign.created_at = now
    session.add(campaign)
    session.flush()
    session.add(Membership(campaign_id=campaign.id, user_id=referee.id, role="referee"))
    if ruleset in seeds.FORUM_RULESETS:
        session.add(seeds.new_secret(campaign=campaign, now=campaign.created_at))
    session.flush()
    return campaign


def add_character(
    *,
    session: Session,
    campaign: Campaign,
    name: str,
    user: User | None = None,
    feed_url: str | None = None,
    aliases: list[str] | None = None,
    profile: str = "",
) -> Character:
    """Add a character with its blog: built-in, or external when a feed URL is given."""
    name = name.strip()
    if not name:
        raise UserError("a character needs a name")
    slug = slugify(name)
    if slug in RESERVED_SLUGS:
        raise UserError(f"{name!r} is a word pbp's pages use; give the character another name")
    taken = session.exec(
        select(Character).where(Character.campaign_id == campaign.id, Character.slug == slug)
    ).first()
    if taken:
        raise Conflict(f"{name!r} is already a character in {campaign.name}")
    character = Character(
        campaign_id=campaign.id,
        user_id=user.id if user else None,
        name=name,
        slug=slug,
        aliases=list(aliases or []),
        profile=profile,
    )
    session.add(character)
    session.flush()
    if user is not None and not membership(session=session, campaign=campaign, user=user):
        session.add(Membership(campaign_id=campaign.id, user_id=user.id, role="player"))
    kind = "external" if feed_url else "builtin"
    session.add(Blog(character_id=character.id, kind=kind, feed_url=feed_url))
    session.flush()
    return character


def membership(*, session: Session, campaign: Campaign, user: User) -> Membership | None:
    return session.exec(
        select(Membership).where(
            Membership.campaign_id == campaign.id, Membership.user_id == user.id
        )
    ).first()


def allowed(member: Membership | None, role: str) -> bool:
    """The one role test: "member" is any membership, "referee" and "player" their own. The
    services' checks below and the pages' (pbp.web.access) both ask it."""
    if member is None:
        return False
    return role == "member" or member.role == role


def require_member(
    *, session: Session, campaign: Campaign, user: User | None, doing: str = "do this"
) -> Membership:
    """The user's membership whatever the role, or Forbidden."""
    member = membership(session=session, campaign=campaign, user=user) if user else None
    if member is None or not allowed(member, "member"):
        raise Forbidden(f"only a member of {campaign.name} can {doing}")
    return member


def require_referee(
    *, session: Session, campaign: Campaign, user: User | None, doing: str = "do this"
) -> Membership:
    """The referee's membership, or Forbidden: every referee action checks it itself, so a
    caller (page, API, script) that forgot cannot act in someone else's game."""
    member = membership(session=session, campaign=campaign, user=user) if user else None
    if member is None or not allowed(member, "referee"):
        raise Forbidden(f"only the referee of {campaign.name} can {doing}")
    return member


def get_campaign(*, session: Session, slug: str) -> Campaign:
    campaign = session.exec(select(Campaign).where(Campaign.slug == slug)).first()
    if campaign is None:
        raise NotFound(f"there is no campaign called {slug!r}")
    return campaign


def character_by_slug(*, session: Session, campaign: Campaign, slug: str) -> Character:
    character = session.exec(
        select(Character).where(Character.campaign_id == campaign.id, Character.slug == slug)
    ).first()
    if character is None:
        raise NotFound(f"there is no character {slug!r} in {campaign.name}")
    return character


_VERSION = sa.select(col(Campaign.id), col(Campaign.content_version)).where(
    col(Campaign.slug) == sa.bindparam("slug")
)


def content_version(*, connection: sa.Connection, slug: str) -> tuple[int, int]:
    """(id, content version) of the campaign `slug`: what a cached page is keyed by. One
    prepared statement on a plain connection: a page served from the cache needs no more."""
    row = connection.execute(_VERSION, {"slug": slug}).first()
    if row is None:
        raise NotFound(f"there is no campaign called {slug!r}")
    return row.id, row.content_version


def list_campaigns(*, session: Session) -> list[Campaign]:
    return list(session.exec(select(Campaign).order_by(col(Campaign.created_at).desc())))


def characters(*, session: Session, campaign: Campaign) -> list[Character]:
    return list(
        session.exec(
            select(Character).where(Character.campaign_id == campaign.id).order_by(Character.name)
        )
    )
