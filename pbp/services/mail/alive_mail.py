"""The mail of keeping a game alive (issue #30): nudges before and after a deadline, the
referee's list of who has not posted, and a player's hiatus (away, back).

All go under the campaign's own turn-news preference: "events" in a Noteworthy game,
"forum" in a forum game (the only one a forum game's page offers), through the kinds'
entries in `preferences.PREFERENCE_OF`. Each is keyed so that queueing it twice queues
one letter.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlmodel import Session, col, select

from pbp import links
from pbp.models import Campaign, Character, Hiatus, Membership, OutboxMessage, User
from pbp.services.mail.preferences import PREFERENCE_OF, wants
from pbp.services.mail.queue import Letter, queue
from pbp.services.mail.settings import MailSettings


def kind(campaign: Campaign, base: str) -> str:
    """The outbox kind: a forum game's are named apart, for the forum's preference."""
    return base if campaign.ruleset == "noteworthy" else f"forum_{base}"


def _member(session: Session, campaign: Campaign, user_id: int) -> Membership | None:
    return session.exec(
        select(Membership).where(
            Membership.campaign_id == campaign.id, Membership.user_id == user_id
        )
    ).first()


def referees(session: Session, campaign: Campaign) -> list[tuple[Membership, User]]:
    rows = session.exec(
        select(Membership, User)
        .join(User, col(User.id) == Membership.user_id)
        .where(Membership.campaign_id == campaign.id, Membership.role == "referee")
        .order_by(col(Membership.id))
    ).all()
    return [(m, u) for m, u in rows]


def _queue(session, settings, campaign, base, key, to, membership, subject, context, now):
    letter_kind = kind(campaign, base)
    if membership is not None and not wants(membership, PREFERENCE_OF[letter_kind]):
        return None
    letter = Letter(
        kind=letter_kind,
        template=f"alive_{base}",
        dedupe_key=key,
        to=to,
        campaign=campaign,
        membership=membership,
        subject=subject,
        context=context,
    )
    return queue(session=session, settings=settings, letter=letter, now=now)


@dataclass(frozen=True)
class Due:
    """What the player still has to do: "an entry in turn 3", "2 posts by 9 March"."""

    label: str  # "turn 3", "the week to 9 March"
    deadline: datetime
    todo: str  # "post an entry", "post 2 times in a scene you play in"
    url: str


def queue_nudge(
    *,
    session: Session,
    settings: MailSettings,
    campaign: Campaign,
    key: str,
    player: User,
    characters: Sequence[Character],
    due: Due,
    overdue: bool,
    now: datetime,
) -> OutboxMessage | None:
    """A nudge to one player: before the deadline, or after it (`overdue`)."""
    names = ", ".join(c.name for c in characters)
    subject = (
        f"{due.label}: {names} has not posted, the deadline has passed"
        if overdue
        else f"{due.label}: {names} still has to {due.todo}"
    )
    return _queue(
        session, settings, campaign, "overdue" if overdue else "nudge", key, player,
        _member(session, campaign, player.id), subject,
        {"names": names, "due": due, "overdue": overdue}, now,
    )  # fmt: skip


@dataclass(frozen=True)
class Silent:
    name: str
    player: str
    turns_in_row: int


def queue_overdue_list(
    *,
    session: Session,
    settings: MailSettings,
    campaign: Campaign,
    key: str,
    due: Due,
    silent: Sequence[Silent],
    now: datetime,
) -> list[OutboxMessage]:
    """To the referees: who has not posted in `due`, and for how many turns in a row."""
    board = links.absolute(settings.base_url, links.activity(campaign.slug))
    sent = []
    for membership, user in referees(session, campaign):
        row = _queue(
            session, settings, campaign, "overdue_list", f"{key}:{user.id}", user, membership,
            f"{due.label}: {len(silent)} not posted", {"due": due, "silent": silent,
            "activity_url": board}, now,
        )  # fmt: skip
        if row is not None:
            sent.append(row)
    return sent


def queue_away(
    *,
    session: Session,
    settings: MailSettings,
    campaign: Campaign,
    player: User,
    hiatus: Hiatus,
    now: datetime,
) -> None:
    for membership, user in referees(session, campaign):
        _queue(
            session, settings, campaign, "away", f"away:{hiatus.id}:{user.id}", user,
            membership, f"{player.display_name} is away", {"player": player,
            "hiatus": hiatus}, now,
        )  # fmt: skip


def queue_back(
    *,
    session: Session,
    settings: MailSettings,
    campaign: Campaign,
    player: User,
    hiatus: Hiatus,
    now: datetime,
) -> None:
    for membership, user in referees(session, campaign):
        _queue(
            session, settings, campaign, "back", f"back:{hiatus.id}:{user.id}", user,
            membership, f"{player.display_name} is back", {"player": player,
            "hiatus": hiatus}, now,
        )  # fmt: skip
