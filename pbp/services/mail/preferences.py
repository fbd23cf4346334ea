"""Who wants which mail, and the signed one-click links that turn a kind of mail off."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from itsdangerous import BadSignature, URLSafeSerializer
from sqlmodel import Session

from pbp import links
from pbp.errors import Malformed, NotFound, UserError
from pbp.models import Campaign, Membership, User
from pbp.services.mail.settings import MailSettings

# Preference keys (Membership.notify) and their defaults: a missing key means the default.
PREFERENCES = {
    "events": True,
    "digest": False,
    "notes_on_mine": True,
    "notes_as_mine": True,
    "replies_to_mine": True,
    "challenges": True,
    # Off unless asked for: a mail to every other player at each challenge (issue #31 item 3).
    "judging": False,
    "forum": True,
    "mentions": True,
}
PREFERENCE_LABELS = {
    "forum": "new posts in scenes you watch",
    "events": "new events and turn news",
    "digest": "the daily digest of new entries and notes",
    "notes_on_mine": "notes on your entries",
    "notes_as_mine": "notes read from other blogs as yours, with how pbp read them",
    "replies_to_mine": "replies to your notes",
    "challenges": "challenges against your character",
    "judging": "challenges between other characters, which yours may support or oppose",
    "mentions": "your character named with @ in an entry, note, post or event",
}
# Which preferences each kind of campaign has a use for (issue #27 item 10: a Noteworthy
# member was offered mail about forum scenes it has none of).
FORUM_PREFERENCES = ("forum", "mentions")
NOTEWORTHY_PREFERENCES = tuple(k for k in PREFERENCES if k != "forum")
# Message kind -> the preference that governs it; kinds not listed are always sent
# (invites and password resets answer something the person just did).
PREFERENCE_OF = {
    "event": "events",
    "results": "events",
    "final": "events",
    "waiting": "events",  # to the referee: a scheduled turn waits for them
    "digest": "digest",
    "note": "notes_on_mine",
    "credited": "notes_as_mine",
    "reply": "replies_to_mine",
    "challenge": "challenges",
    "mention": "mentions",
    # Keeping a game alive (pbp.services.mail.alive_mail): turn news, the forum's own
    # preference in a forum game.
    **{base: "events" for base in ("nudge", "overdue", "overdue_list", "away", "back")},
    **{f"forum_{base}": "forum" for base in ("nudge", "overdue", "overdue_list", "away", "back")},
    "challenge_news": "judging",
}


# Issue #31 item 1: each kind can also be pushed to the member's devices, chosen apart
# from its mail under the key "push:<kind>", off until they turn it on.
CHANNELS = ("mail", "push")


def channel_key(preference: str, channel: str = "mail") -> str:
    return preference if channel == "mail" else f"{channel}:{preference}"


def wants(membership: Membership, preference: str, channel: str = "mail") -> bool:
    default = PREFERENCES[preference] if channel == "mail" else False
    return bool((membership.notify or {}).get(channel_key(preference, channel), default))


def wants_any(membership: Membership, preference: str) -> bool:
    """Whether any channel carries this kind to them: worth composing the notification."""
    return any(wants(membership, preference, channel) for channel in CHANNELS)


def push_preferences(membership: Membership) -> dict[str, bool]:
    return {key: wants(membership, key, "push") for key in PREFERENCES}


def preferences(membership: Membership) -> dict[str, bool]:
    return {key: wants(membership, key) for key in PREFERENCES}


def set_preference(*, session: Session, membership: Membership, preference: str, on: bool) -> None:
    if preference not in PREFERENCES:
        raise UserError(f"there is no kind of email called {preference!r}")
    # A new dict, so SQLAlchemy sees the JSON column change.
    membership.notify = {**(membership.notify or {}), preference: bool(on)}
    session.add(membership)
    session.flush()


def offered(campaign: Campaign) -> dict[str, str]:
    """The preferences the campaign's page offers, with their labels: the mail a
    Noteworthy game sends, or a forum game's."""
    keys = NOTEWORTHY_PREFERENCES if campaign.ruleset == "noteworthy" else FORUM_PREFERENCES
    return {key: PREFERENCE_LABELS[key] for key in PREFERENCE_LABELS if key in keys}


def save_preferences(
    *,
    session: Session,
    membership: Membership,
    chosen: Collection[str],
    keys: Collection[str] | None = None,
) -> dict[str, bool]:
    """The preferences page's form: every kind of mail in `keys` on if it is in `chosen`,
    off if not (an unchecked box is simply absent from a form); the others are kept.
    `keys` defaults to what the campaign's page offers (`offered`); the API sends them
    all. Returns the new preferences."""
    every = {channel_key(k, c) for k in PREFERENCES for c in CHANNELS}
    unknown = sorted(set(chosen) - every)
    if unknown:
        raise UserError(f"there is no kind of email called {unknown[0]!r}")
    if keys is None:
        campaign = session.get(Campaign, membership.campaign_id)
        kinds = offered(campaign) if campaign is not None else PREFERENCES
        keys = [channel_key(k, c) for k in kinds for c in CHANNELS]
    membership.notify = {**(membership.notify or {}), **{k: k in chosen for k in keys}}
    session.add(membership)
    session.flush()
    return preferences(membership)


# -- unsubscribe tokens -----------------------------------------------------------------------


def _serializer(secret_key: str) -> URLSafeSerializer:
    return URLSafeSerializer(secret_key, salt="pbp.mail.unsubscribe")


def unsubscribe_token(*, secret_key: str, membership_id: int, preference: str) -> str:
    """Signed, not timed: an unsubscribe link in a months-old mail must still work."""
    return _serializer(secret_key).dumps([membership_id, preference])


def unsubscribe_url(settings: MailSettings, membership: Membership, preference: str) -> str:
    token = unsubscribe_token(
        secret_key=settings.secret_key, membership_id=membership.id, preference=preference
    )
    return links.absolute(settings.base_url, links.unsubscribe(token))


@dataclass
class Subscription:
    membership: Membership
    user: User
    campaign: Campaign
    preference: str
    label: str
    on: bool


def read_unsubscribe(*, session: Session, secret_key: str, token: str) -> Subscription:
    """What a token refers to, for the confirmation page; changes nothing."""
    try:
        membership_id, preference = _serializer(secret_key).loads(token)
    except (BadSignature, ValueError, TypeError) as exc:
        raise Malformed("this unsubscribe link is damaged or was not made by this site") from exc
    membership = session.get(Membership, membership_id)
    if membership is None or preference not in PREFERENCES:
        raise NotFound("this unsubscribe link belongs to a membership that no longer exists")
    user = session.get(User, membership.user_id)
    assert user is not None  # the membership's foreign key
    campaign = session.get(Campaign, membership.campaign_id)
    assert campaign is not None  # the membership's foreign key
    label = PREFERENCE_LABELS[preference]
    on = wants(membership, preference)
    return Subscription(membership, user, campaign, preference, label, on)


def apply_unsubscribe(
    *, session: Session, secret_key: str, token: str, subscribe: bool = False
) -> Subscription:
    """Turn one kind of mail off (or back on); repeating it is harmless (RFC 8058 clients
    may POST more than once)."""
    sub = read_unsubscribe(session=session, secret_key=secret_key, token=token)
    set_preference(
        session=session, membership=sub.membership, preference=sub.preference, on=subscribe
    )
    sub.on = subscribe
    return sub
