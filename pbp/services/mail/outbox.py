"""Outgoing mail: who wants what, the rendered message, and the outbox row that carries it.

Every message is an `OutboxMessage` row written in the caller's transaction (a
transactional outbox): the turn change and its notifications commit together or not at
all, and `pbp.services.mail.send` delivers committed rows. A row holds the complete
message (subject, both bodies, From, Date, Message-ID, List-Unsubscribe), so a retry after
a crash sends byte-for-byte the same mail, recognisably the same by its Message-ID.

Noteworthy: "the referee may describe the same event to all players, or may tailor
different events to specific PCs, as long as they all receive notification at the same
time" -- `queue_event_notifications` writes one row per character with the text meant for
that character only; the sender delivers the batch together.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import datetime, time, timedelta
from email.utils import format_datetime, make_msgid, parseaddr
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import jinja2
import sqlalchemy as sa
from itsdangerous import BadSignature, URLSafeSerializer
from markupsafe import Markup, escape
from sqlmodel import Session, select

from pbp import ROOT, links
from pbp.errors import NotFound, UserError
from pbp.markup import plain_text
from pbp.models import (
    OUTBOX_STATUSES,
    Campaign,
    Character,
    Entry,
    Event,
    Invite,
    Membership,
    Note,
    OutboxMessage,
    Turn,
    User,
)

TEMPLATES = ROOT / "templates" / "mail"

# Preference keys (Membership.notify) and their defaults: a missing key means the default.
PREFERENCES = {
    "events": True,
    "digest": False,
    "notes_on_mine": True,
    "challenges": True,
    "forum": True,
}
PREFERENCE_LABELS = {
    "forum": "new posts in scenes you watch",
    "events": "new events and turn news",
    "digest": "the daily digest of new entries and notes",
    "notes_on_mine": "notes on your entries",
    "challenges": "challenges against your character",
}
# Message kind -> the preference that governs it; kinds not listed are always sent
# (invites and password resets answer something the person just did).
PREFERENCE_OF = {
    "event": "events",
    "results": "events",
    "final": "events",
    "digest": "digest",
    "note": "notes_on_mine",
    "challenge": "challenges",
}
SUBJECT_MAX = 400  # OutboxMessage.subject
_UNSAFE_HEADER_CHARS = re.compile(r"[\x00-\x1f\x7f\u2028\u2029\x85]+")


@dataclass(frozen=True)
class MailSettings:
    """What rendering needs from the configuration; a plain value so services stay
    Flask-free and the scheduler can build one from `app.config`."""

    base_url: str
    secret_key: str
    mail_from: str

    @classmethod
    def from_config(cls, config: Mapping) -> MailSettings:
        return cls(config["PBP_BASE_URL"].rstrip("/"), config["SECRET_KEY"], config["MAIL_FROM"])

    @property
    def domain(self) -> str:
        return parseaddr(self.mail_from)[1].rpartition("@")[2] or "pbp.invalid"


# -- preferences ----------------------------------------------------------------------------


def wants(membership: Membership, preference: str) -> bool:
    return bool((membership.notify or {}).get(preference, PREFERENCES[preference]))


def preferences(membership: Membership) -> dict[str, bool]:
    return {key: wants(membership, key) for key in PREFERENCES}


def set_preference(*, session: Session, membership: Membership, preference: str, on: bool) -> None:
    if preference not in PREFERENCES:
        raise UserError(f"there is no kind of email called {preference!r}")
    # A new dict, so SQLAlchemy sees the JSON column change.
    membership.notify = {**(membership.notify or {}), preference: bool(on)}
    session.add(membership)
    session.flush()


def save_preferences(
    *, session: Session, membership: Membership, chosen: Collection[str]
) -> dict[str, bool]:
    """The preferences page's form: every kind of mail on if it is in `chosen`, off if
    not (an unchecked box is simply absent from a form). Returns the new preferences."""
    unknown = sorted(set(chosen) - set(PREFERENCES))
    if unknown:
        raise UserError(f"there is no kind of email called {unknown[0]!r}")
    membership.notify = {**(membership.notify or {}), **{k: k in chosen for k in PREFERENCES}}
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
        raise UserError("this unsubscribe link is damaged or was not made by this site") from exc
    membership = session.get(Membership, membership_id)
    if membership is None or preference not in PREFERENCES:
        raise NotFound("this unsubscribe link belongs to a membership that no longer exists")
    user = session.get(User, membership.user_id)
    campaign = session.get(Campaign, membership.campaign_id)
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


# -- rendering ------------------------------------------------------------------------------


def header_text(value: str, limit: int = SUBJECT_MAX) -> str:
    """One line for a header: line breaks and control characters become spaces, so a
    character called "Ada\\r\\nBcc: x" cannot add a header."""
    line = " ".join(_UNSAFE_HEADER_CHARS.sub(" ", value or "").split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _nl2br(text: str) -> Markup:
    """Paragraphs and line breaks of plain text, escaped, as HTML."""
    paragraphs = re.split(r"\n\s*\n", (text or "").replace("\r\n", "\n").strip())
    html = (escape(p).replace("\n", Markup("<br>\n")) for p in paragraphs if p.strip())
    return Markup("\n").join(Markup("<p>{}</p>").format(p) for p in html)


def _web_url(url: str | None) -> str:
    """Links from feeds go into mail only when they are web links (no javascript:)."""
    if url and urlsplit(url).scheme in ("http", "https"):
        return url
    return ""


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        # HTML parts escape everything; plain-text parts must not (no "&amp;" in mail).
        autoescape=jinja2.select_autoescape(enabled_extensions=("html",), default=False),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["nl2br"] = _nl2br
    env.filters["web_url"] = _web_url
    env.filters["oneline"] = lambda v: header_text(str(v), 10_000)
    return env


_ENV = _environment()


def render(template: str, **context) -> tuple[str, str]:
    """The plain-text and HTML bodies of `templates/mail/<template>.{txt,html}`."""
    text = _ENV.get_template(f"{template}.txt").render(**context)
    html = _ENV.get_template(f"{template}.html").render(**context)
    return text, html


def turn_url(settings: MailSettings, campaign: Campaign, number: int) -> str:
    return links.absolute(settings.base_url, links.turn(campaign.slug, number))


# -- queueing -------------------------------------------------------------------------------


def _by_key(session: Session, dedupe_key: str) -> OutboxMessage | None:
    return session.exec(select(OutboxMessage).where(OutboxMessage.dedupe_key == dedupe_key)).first()


def queue_message(
    *,
    session: Session,
    settings: MailSettings,
    kind: str,
    dedupe_key: str,
    recipient: str,
    subject: str,
    text: str,
    html: str | None = None,
    campaign_id: int | None = None,
    headers: Mapping[str, str] | None = None,
    now: datetime,
) -> OutboxMessage:
    """Write one message into the caller's transaction, or return the one already queued
    under `dedupe_key` (a retried change queues nothing twice). The Message-ID and Date are
    fixed here, so every delivery attempt sends the same message."""
    existing = _by_key(session, dedupe_key)
    if existing is not None:
        return existing
    fixed = {
        "From": settings.mail_from,
        "Date": format_datetime(now),
        "Auto-Submitted": "auto-generated",
    }
    fixed.update({name: header_text(value, 2000) for name, value in (headers or {}).items()})
    row = OutboxMessage(
        campaign_id=campaign_id,
        kind=kind,
        dedupe_key=dedupe_key,
        message_id=make_msgid(idstring=kind, domain=settings.domain),
        recipient=recipient,
        subject=header_text(subject),
        body_text=text,
        body_html=html,
        headers=fixed,
        status="queued",
        next_attempt_at=now,
        created_at=now,
    )
    try:
        with session.begin_nested():
            session.add(row)
    except sa.exc.IntegrityError:
        # Another transaction queued the same change between our check and our insert.
        existing = _by_key(session, dedupe_key)
        if existing is None:
            raise
        return existing
    return row


def _list_headers(
    settings: MailSettings, campaign: Campaign, membership: Membership | None, kind: str
) -> dict[str, str]:
    host = urlsplit(settings.base_url).hostname or settings.domain
    headers = {"List-Id": f"<{campaign.slug}.{host}>"}
    preference = PREFERENCE_OF.get(kind)
    if membership is not None and preference:
        # RFC 8058: a one-click POST to this URL unsubscribes, no confirmation page.
        headers["List-Unsubscribe"] = f"<{unsubscribe_url(settings, membership, preference)}>"
        headers["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"
    return headers


def _queue_templated(
    *,
    session: Session,
    settings: MailSettings,
    kind: str,
    template: str,
    dedupe_key: str,
    user: User | _Guest,
    campaign: Campaign,
    membership: Membership | None,
    subject: str,
    now: datetime,
    **context,
) -> OutboxMessage:
    preference = PREFERENCE_OF.get(kind)
    unsubscribe = None
    if membership is not None and preference:
        unsubscribe = unsubscribe_url(settings, membership, preference)
    text, html = render(
        template,
        campaign=campaign,
        user=user,
        base_url=settings.base_url,
        campaign_url=links.absolute(settings.base_url, links.campaign(campaign.slug)),
        unsubscribe_url=unsubscribe,
        unsubscribe_label=PREFERENCE_LABELS.get(preference or "", ""),
        **context,
    )
    return queue_message(
        session=session,
        settings=settings,
        kind=kind,
        dedupe_key=dedupe_key,
        recipient=user.email,
        subject=f"[{campaign.name}] {subject}",
        text=text,
        html=html,
        campaign_id=campaign.id,
        headers=_list_headers(settings, campaign, membership, kind),
        now=now,
    )


def _members(session: Session, campaign_id: int, roles=("player",)):
    return session.exec(
        select(Membership, User)
        .join(User, User.id == Membership.user_id)
        .where(Membership.campaign_id == campaign_id, Membership.role.in_(roles))
        .order_by(Membership.id)
    ).all()


@dataclass(frozen=True)
class EventText:
    """The event as one character reads it: the general text and/or their own part."""

    general: str | None
    personal: str | None


def event_text_for(events: list[Event], character_id: int) -> EventText | None:
    """Noteworthy tailoring: "replacement" instead of the general text, "addition" after
    it, otherwise the general text; None when the referee wrote nothing for them."""
    general = next((e.text for e in events if e.character_id is None and e.text.strip()), None)
    own = next((e for e in events if e.character_id == character_id), None)
    if own is not None and own.mode == "replacement":
        return EventText(None, own.text)
    personal = own.text if own is not None else None
    if general is None and personal is None:
        return None
    return EventText(general, personal)


def event_batch_key(turn: Turn) -> str:
    """The dedupe-key prefix shared by all of a turn's event mails: one sender batch."""
    return f"event:{turn.id}:"


def queue_event_notifications(
    *, session: Session, settings: MailSettings, turn: Turn, now: datetime
) -> list[OutboxMessage]:
    """One message per player character whose player wants events, each carrying only
    the text meant for that character. Call it in the transaction that opens the turn."""
    campaign = session.get(Campaign, turn.campaign_id)
    events = list(session.exec(select(Event).where(Event.turn_id == turn.id)))
    rows = session.exec(
        select(Character, User, Membership)
        .join(User, User.id == Character.user_id)
        .join(
            Membership,
            (Membership.user_id == User.id) & (Membership.campaign_id == Character.campaign_id),
        )
        .where(Character.campaign_id == campaign.id)
        .order_by(Character.id)
    ).all()
    queued = []
    for character, user, membership in rows:
        text = event_text_for(events, character.id)
        if text is None or not wants(membership, "events"):
            continue
        link = turn_url(settings, campaign, turn.number)
        queued.append(
            _queue_templated(
                session=session,
                settings=settings,
                kind="event",
                template="event",
                dedupe_key=f"{event_batch_key(turn)}{character.id}",
                user=user,
                campaign=campaign,
                membership=membership,
                subject=f"Turn {turn.number}: a new event for {character.name}",
                now=now,
                character=character,
                turn=turn,
                event=text,
                turn_url=link,
            )
        )
    return queued


def queue_turn_results(
    *, session: Session, settings: MailSettings, turn: Turn, summary: str, now: datetime
) -> list[OutboxMessage]:
    """The referee's results of a turn (text from the tally), to every player."""
    campaign = session.get(Campaign, turn.campaign_id)
    link = turn_url(settings, campaign, turn.number)
    return [
        _queue_templated(
            session=session,
            settings=settings,
            kind="results",
            template="results",
            dedupe_key=f"results:{turn.id}:{user.id}",
            user=user,
            campaign=campaign,
            membership=membership,
            subject=f"Turn {turn.number}: results",
            now=now,
            turn=turn,
            summary=summary,
            turn_url=link,
        )
        for membership, user in _members(session, campaign.id)
        if wants(membership, "events")
    ]


def queue_final_notice(
    *, session: Session, settings: MailSettings, campaign: Campaign, text: str, now: datetime
) -> list[OutboxMessage]:
    """The end of the game, to players and referees alike."""
    return [
        _queue_templated(
            session=session,
            settings=settings,
            kind="final",
            template="final",
            dedupe_key=f"final:{campaign.id}:{user.id}",
            user=user,
            campaign=campaign,
            membership=membership,
            subject="The game is over",
            now=now,
            text=text,
        )
        for membership, user in _members(session, campaign.id, roles=("player", "referee"))
        if wants(membership, "events")
    ]


def _owner(session: Session, character_id: int | None):
    """(character, user, membership) of a character's player, or None."""
    if character_id is None:
        return None
    return session.exec(
        select(Character, User, Membership)
        .join(User, User.id == Character.user_id)
        .join(
            Membership,
            (Membership.user_id == User.id) & (Membership.campaign_id == Character.campaign_id),
        )
        .where(Character.id == character_id)
    ).first()


def entry_url(settings: MailSettings, campaign: Campaign, character: Character, entry: Entry):
    """The entry's page on pbp (external entries have one too, with their notes)."""
    return links.absolute(settings.base_url, links.entry(campaign.slug, character.slug, entry.id))


NOTE_EXCERPT = 300  # characters of each note quoted in the mail


def queue_note_notification(
    *, session: Session, settings: MailSettings, entry: Entry, notes: list[Note], now: datetime
) -> OutboxMessage | None:
    """Tell an entry's player about the notes that just arrived on it, in one message (a
    poll pass that reads twenty comments sends one mail, not twenty). Their own notes are
    left out; nothing is sent when none remain or they switched these mails off. Keyed by
    the first note: a note is new only once, so it is in exactly one message."""
    owner = _owner(session, entry.character_id)
    others = [n for n in notes if n.author_character_id != entry.character_id]
    if owner is None or not others:
        return None
    character, user, membership = owner
    if not wants(membership, "notes_on_mine"):
        return None
    campaign = session.get(Campaign, character.campaign_id)
    ids = {n.author_character_id for n in others if n.author_character_id}
    names = dict(
        session.exec(select(Character.id, Character.name).where(Character.id.in_(ids))).all()
    )
    items = []
    for note in sorted(others, key=lambda n: n.id):
        author = names.get(note.author_character_id) or note.author_name or "someone"
        text = " ".join(plain_text(note.body_html or "").split())
        if len(text) > NOTE_EXCERPT:
            text = text[: NOTE_EXCERPT - 1] + "…"
        items.append((author, text))
    authors = sorted({a for a, _ in items})
    subject = (
        f"{authors[0]} left a note on {character.name}'s entry"
        if len(items) == 1
        else f"{len(items)} notes on {character.name}'s entry"
    )
    return _queue_templated(
        session=session,
        settings=settings,
        kind="note",
        template="note",
        dedupe_key=f"note:{min(n.id for n in others)}",
        user=user,
        campaign=campaign,
        membership=membership,
        subject=subject,
        now=now,
        character=character,
        entry=entry,
        notes=items,
        entry_page=entry_url(settings, campaign, character, entry),
    )


def queue_challenge_notification(
    *,
    session: Session,
    settings: MailSettings,
    entry: Entry,
    target_id: int,
    now: datetime,
) -> OutboxMessage | None:
    """Tell the target's player that the character who wrote `entry` challenges theirs.
    Keyed by the entry and its target: reading or editing the same entry again sends
    nothing more, but a target named later (an edit, the referee's ruling) is told."""
    owner = _owner(session, target_id)
    if owner is None:
        return None
    character, user, membership = owner
    if not wants(membership, "challenges"):
        return None
    challenger = session.get(Character, entry.character_id)
    turn = session.get(Turn, entry.turn_id)
    campaign = session.get(Campaign, character.campaign_id)
    return _queue_templated(
        session=session,
        settings=settings,
        kind="challenge",
        template="challenge",
        dedupe_key=f"challenge:entry:{entry.id}:{target_id}",
        user=user,
        campaign=campaign,
        membership=membership,
        subject=f"{challenger.name} challenges {character.name}",
        now=now,
        character=character,
        challenger=challenger,
        entry=entry,
        entry_page=entry_url(settings, campaign, challenger, entry),
        turn_url=turn_url(settings, campaign, turn.number),
    )


def digest_window(campaign: Campaign, now: datetime) -> tuple[datetime, datetime, str]:
    """Yesterday in the campaign's time zone: (start, end, day). The digest for a day is
    due from midnight on and keyed by the day, so an hourly job sends it exactly once."""
    try:
        zone = ZoneInfo(campaign.time_zone)
    except (ZoneInfoNotFoundError, ValueError):
        zone = ZoneInfo("UTC")
    day = now.astimezone(zone).date() - timedelta(days=1)
    start = datetime.combine(day, time(), zone)
    end = datetime.combine(day + timedelta(days=1), time(), zone)
    return start, end, day.isoformat()


def queue_digests(
    *, session: Session, settings: MailSettings, campaign: Campaign, now: datetime
) -> list[OutboxMessage]:
    """Yesterday's new entries and notes, to each member who asked for the digest."""
    start, end, day = digest_window(campaign, now)
    members = [(m, u) for m, u in _members(session, campaign.id, ("player", "referee"))]
    members = [(m, u) for m, u in members if wants(m, "digest")]
    if not members:
        return []
    names = dict(
        session.exec(
            select(Character.id, Character.name).where(Character.campaign_id == campaign.id)
        ).all()
    )
    entries = list(
        session.exec(
            select(Entry)
            .where(Entry.character_id.in_(names), Entry.first_seen_at >= start)
            .where(Entry.first_seen_at < end)
            .order_by(Entry.first_seen_at, Entry.id)
        )
    )
    notes = session.exec(
        select(Note, Entry)
        .join(Entry, Entry.id == Note.entry_id)
        .where(Entry.character_id.in_(names), Note.first_seen_at >= start)
        .where(Note.first_seen_at < end)
        .order_by(Note.first_seen_at, Note.id)
    ).all()
    if not entries and not notes:
        return []
    entry_items = [(names[e.character_id], e) for e in entries]
    note_items = [
        (names.get(n.author_character_id) or n.author_name or "someone", names[e.character_id], e)
        for n, e in notes
    ]
    return [
        _queue_templated(
            session=session,
            settings=settings,
            kind="digest",
            template="digest",
            dedupe_key=f"digest:{campaign.id}:{user.id}:{day}",
            user=user,
            campaign=campaign,
            membership=membership,
            subject=f"Digest for {day}",
            now=now,
            day=day,
            entries=entry_items,
            notes=note_items,
        )
        for membership, user in members
    ]


@dataclass(frozen=True)
class _Guest:
    """An invitee: an address without an account yet."""

    email: str
    display_name: str


def queue_invite(
    *,
    session: Session,
    settings: MailSettings,
    invite: Invite,
    url: str,
    now: datetime,
    resend: str = "",
) -> OutboxMessage:
    """The invitation mail; `url` carries the signed invite (made by the invite service).
    A re-send names itself in `resend` (a new dedupe key: a second mail, once)."""
    if not invite.email:
        raise UserError("this invite has no email address to send it to")
    campaign = session.get(Campaign, invite.campaign_id)
    inviter = session.get(User, invite.created_by) if invite.created_by else None
    guest = _Guest(email=invite.email, display_name=invite.email)
    return _queue_templated(
        session=session,
        settings=settings,
        kind="invite",
        template="invite",
        dedupe_key=f"invite:{invite.id}{':' + resend if resend else ''}",
        user=guest,
        campaign=campaign,
        membership=None,
        subject="You are invited to play",
        now=now,
        invite=invite,
        inviter=inviter.display_name if inviter else "The referee",
        url=url,
    )


def queue_password_reset(
    *, session: Session, settings: MailSettings, user: User, url: str, now: datetime
) -> OutboxMessage:
    """A password-reset link; keyed by the link, so each request sends one mail."""
    digest = hashlib.sha256(url.encode()).hexdigest()[:24]
    text, html = render("password_reset", user=user, url=url, base_url=settings.base_url)
    return queue_message(
        session=session,
        settings=settings,
        kind="password_reset",
        dedupe_key=f"password_reset:{user.id}:{digest}",
        recipient=user.email,
        subject="pbp: reset your password",
        text=text,
        html=html,
        now=now,
    )


def queue_signup_confirmation(
    *, session: Session, settings: MailSettings, user: User, url: str, now: datetime
) -> OutboxMessage:
    """The link that makes an open sign-up's account work; keyed by the link, so a
    re-send (a new link) is a second mail and a retried request is not."""
    digest = hashlib.sha256(url.encode()).hexdigest()[:24]
    text, html = render("signup_confirmation", user=user, url=url, base_url=settings.base_url)
    return queue_message(
        session=session,
        settings=settings,
        kind="signup_confirmation",
        dedupe_key=f"signup_confirmation:{user.id}:{digest}",
        recipient=user.email,
        subject="pbp: confirm your address",
        text=text,
        html=html,
        now=now,
    )


def queue_all_digests(
    *, session: Session, settings: MailSettings, now: datetime
) -> list[OutboxMessage]:
    """Digests for every running campaign; safe to call hourly (keyed by day)."""
    running = session.exec(select(Campaign).where(Campaign.status == "running")).all()
    queued = []
    for campaign in running:
        queued += queue_digests(session=session, settings=settings, campaign=campaign, now=now)
    return queued


def queue_daily_digests(app) -> int:
    """The scheduler's job: queue due digests and commit (the sweep sends them)."""
    from pbp.db import database, writing
    from pbp.models import utcnow

    with writing(), database(app).session_factory() as session:
        settings = MailSettings.from_config(app.config)
        queued = queue_all_digests(session=session, settings=settings, now=utcnow())
        session.commit()
    return len(queued)


# -- what the referee sees ------------------------------------------------------------------


def outbox_counts(*, session: Session, campaign_id: int) -> dict[str, int]:
    """Messages per state for one campaign (every state present, zero when none)."""
    counts = dict.fromkeys(OUTBOX_STATUSES, 0)
    rows = session.exec(
        select(OutboxMessage.status, sa.func.count())
        .where(OutboxMessage.campaign_id == campaign_id)
        .group_by(OutboxMessage.status)
    ).all()
    counts.update({status: n for status, n in rows})
    return counts


def outbox_messages(
    *, session: Session, campaign_id: int, status: str | None = None, limit: int = 100
) -> list[OutboxMessage]:
    """The newest messages of a campaign, for the referee's outbox page."""
    query = select(OutboxMessage).where(OutboxMessage.campaign_id == campaign_id)
    if status is not None:
        query = query.where(OutboxMessage.status == status)
    return list(session.exec(query.order_by(OutboxMessage.id.desc()).limit(limit)))
