"""Each kind of mail: who receives it and what its template is given. Rendering and the
outbox row are `queue.queue`'s; the words are in `templates/mail/`.

Noteworthy: "the referee may describe the same event to all players, or may tailor
different events to specific PCs, as long as they all receive notification at the same
time" -- `queue_event_notifications` writes one row per character with the text meant for
that character only; the sender delivers the batch together.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sqlmodel import Session, col, select

from pbp import links
from pbp.errors import UserError
from pbp.markup import plain_text
from pbp.models import (
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
from pbp.services import icons
from pbp.services.mail import push
from pbp.services.mail.preferences import wants, wants_any
from pbp.services.mail.queue import (
    Guest,
    Letter,
    ReplyTo,
    queue,
    queue_all,
    queue_letter,
    rewrite_queued,
)
from pbp.services.mail.settings import MailSettings

NOTE_EXCERPT = 300  # characters of each note quoted in the mail


def turn_url(settings: MailSettings, campaign: Campaign, number: int) -> str:
    return links.absolute(settings.base_url, links.turn(campaign.slug, number))


def entry_url(settings: MailSettings, campaign: Campaign, character: Character, entry: Entry):
    """The entry's page on pbp (external entries have one too, with their notes)."""
    return links.absolute(settings.base_url, links.entry(campaign.slug, character.slug, entry.id))


def _members(session: Session, campaign_id: int, roles=("player",)):
    return session.exec(
        select(Membership, User)
        .join(User, col(User.id) == Membership.user_id)
        .where(Membership.campaign_id == campaign_id, col(Membership.role).in_(roles))
        .order_by(col(Membership.id))
    ).all()


def _owner(session: Session, character_id: int | None):
    """(character, user, membership) of a character's player, or None."""
    if character_id is None:
        return None
    return session.exec(
        select(Character, User, Membership)
        .join(User, col(User.id) == Character.user_id)
        .join(
            Membership,
            (col(Membership.user_id) == User.id)
            & (col(Membership.campaign_id) == Character.campaign_id),
        )
        .where(Character.id == character_id)
    ).first()


# -- turns ----------------------------------------------------------------------------------


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
    assert campaign is not None  # the turn's foreign key
    events = list(session.exec(select(Event).where(Event.turn_id == turn.id)))
    rows = session.exec(
        select(Character, User, Membership)
        .join(User, col(User.id) == Character.user_id)
        .join(
            Membership,
            (col(Membership.user_id) == User.id)
            & (col(Membership.campaign_id) == Character.campaign_id),
        )
        .where(Character.campaign_id == campaign.id)
        .order_by(col(Character.id))
    ).all()
    letters = []
    for character, user, membership in rows:
        text = event_text_for(events, character.id)
        if text is None or not wants_any(membership, "events"):
            continue
        letters.append(
            Letter(
                kind="event",
                template="event",
                dedupe_key=f"{event_batch_key(turn)}{character.id}",
                to=user,
                campaign=campaign,
                membership=membership,
                subject=f"Turn {turn.number}: a new event for {character.name}",
                context={
                    "character": character,
                    "turn": turn,
                    "event": text,
                    "turn_url": turn_url(settings, campaign, turn.number),
                },
            )
        )
    return queue_all(session=session, settings=settings, letters=letters, now=now)


def results_batch_key(turn: Turn) -> str:
    """The dedupe-key prefix of a turn's results mails: one sender batch."""
    return f"results:{turn.id}:"


def final_batch_key(campaign: Campaign) -> str:
    """The dedupe-key prefix of a campaign's final notices: one sender batch."""
    return f"final:{campaign.id}:"


def queue_turn_results(
    *, session: Session, settings: MailSettings, turn: Turn, summary: str, now: datetime
) -> list[OutboxMessage]:
    """The referee's results of a turn (text from the tally), to every player."""
    campaign = session.get(Campaign, turn.campaign_id)
    assert campaign is not None  # the turn's foreign key
    link = turn_url(settings, campaign, turn.number)
    letters = [
        Letter(
            kind="results",
            template="results",
            dedupe_key=f"{results_batch_key(turn)}{user.id}",
            to=user,
            campaign=campaign,
            membership=membership,
            subject=f"Turn {turn.number}: results",
            context={"turn": turn, "summary": summary, "turn_url": link},
        )
        for membership, user in _members(session, campaign.id)
        if wants_any(membership, "events")
    ]
    return queue_all(session=session, settings=settings, letters=letters, now=now)


def queue_final_notice(
    *, session: Session, settings: MailSettings, campaign: Campaign, text: str, now: datetime
) -> list[OutboxMessage]:
    """The end of the game, to players and referees alike."""
    letters = [
        Letter(
            kind="final",
            template="final",
            dedupe_key=f"{final_batch_key(campaign)}{user.id}",
            to=user,
            campaign=campaign,
            membership=membership,
            subject="The game is over",
            context={"text": text},
        )
        for membership, user in _members(session, campaign.id, roles=("player", "referee"))
        if wants_any(membership, "events")
    ]
    return queue_all(session=session, settings=settings, letters=letters, now=now)


def queue_turn_waiting(
    *,
    session: Session,
    settings: MailSettings,
    campaign: Campaign,
    turn: Turn,
    reason: str,
    now: datetime,
) -> list[OutboxMessage]:
    """To the referees: the schedule stopped at this turn and waits for them (a flag to
    rule, or no event queued). Once per turn, as the dashboard's note is."""
    link = links.absolute(settings.base_url, links.referee_board(campaign.slug))
    letters = [
        Letter(
            kind="waiting",
            template="waiting",
            dedupe_key=f"waiting:{turn.id}:{user.id}",
            to=user,
            campaign=campaign,
            membership=membership,
            subject=f"Turn {turn.number} waits for you",
            context={"turn": turn, "reason": reason, "board_url": link},
        )
        for membership, user in _members(session, campaign.id, roles=("referee",))
        if wants_any(membership, "events")
    ]
    return queue_all(session=session, settings=settings, letters=letters, now=now)


def queue_reminder(
    *,
    session: Session,
    settings: MailSettings,
    campaign: Campaign,
    turn: Turn,
    character: Character,
    player: User,
    now: datetime,
    once_per_turn: bool = False,
) -> OutboxMessage:
    """The referee's nudge to a player whose character has no entry in this turn yet
    (Noteworthy: "In a turn, you post at least one in-character entry"). One per
    character, turn and hour, however often the button is pressed; the schedule's
    (`once_per_turn`) one per character and turn."""
    when = "schedule" if once_per_turn else f"{now:%Y%m%d%H}"
    letter = Letter(
        kind="reminder",
        template="reminder",
        dedupe_key=f"remind:{turn.id}:{character.id}:{when}",
        to=player,
        campaign=campaign,
        subject=f"Turn {turn.number}: your entry is awaited",
        context={
            "turn": turn,
            "character": character,
            "write_url": links.absolute(settings.base_url, links.write(campaign.slug)),
            "turn_url": turn_url(settings, campaign, turn.number),
        },
    )
    # Always mailed (the referee asked); pushed too to a player who has turn news pushed.
    owner = _owner(session, character.id)
    if owner is not None and wants(owner[2], "events", "push"):
        pushed = replace(letter, membership=owner[2])
        push.queue_pushes(session=session, settings=settings, letter=pushed, now=now)
    return queue(session=session, settings=settings, letter=letter, now=now)


# -- entries and notes ----------------------------------------------------------------------


def _excerpt(note: Note) -> str:
    """The note's text on one line, cut at NOTE_EXCERPT characters."""
    text = " ".join(plain_text(note.body_html or "").split())
    return text if len(text) <= NOTE_EXCERPT else text[: NOTE_EXCERPT - 1] + "…"


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
    if not wants_any(membership, "notes_on_mine"):
        return None
    campaign = session.get(Campaign, character.campaign_id)
    assert campaign is not None  # the character's foreign key
    ids = {n.author_character_id for n in others if n.author_character_id}
    names: dict[int | None, str] = dict(
        session.exec(select(Character.id, Character.name).where(col(Character.id).in_(ids))).all()
    )
    items, faces = [], []
    shown = icons.shown(session=session, pairs=((n.author_character_id, n.icon_id) for n in others))
    for note in sorted(others, key=lambda n: n.id):
        author = names.get(note.author_character_id) or note.author_name or "someone"
        items.append((author, _excerpt(note)))
        # Each note's icon (issue #33 item 1), for the HTML part.
        face = shown.get((note.author_character_id, note.icon_id))
        faces.append((links.absolute(settings.base_url, face.path), face.alt) if face else None)
    authors = sorted({a for a, _ in items})
    subject = (
        f"{authors[0]} left a note on {character.name}'s entry"
        if len(items) == 1
        else f"{len(items)} notes on {character.name}'s entry"
    )
    letter = Letter(
        kind="note",
        template="note",
        dedupe_key=f"note:{min(n.id for n in others)}",
        to=user,
        campaign=campaign,
        membership=membership,
        subject=subject,
        context={
            "character": character,
            "entry": entry,
            "notes": items,
            "note_icons": faces,
            "entry_page": entry_url(settings, campaign, character, entry),
        },
        reply=ReplyTo(entry_id=entry.id),
    )
    return queue_letter(session=session, settings=settings, letter=letter, now=now)


def queue_reply_notification(
    *, session: Session, settings: MailSettings, entry: Entry, reply: Note, now: datetime
) -> OutboxMessage | None:
    """Tell the player of the note `reply` answers that it was answered (issue #29 item 3),
    under their "replies_to_mine" preference. Nobody is told of their own reply, of a reply
    to a note pbp has not credited to a character, or of one on an entry its author hid
    (they can no longer read it). Keyed by the reply: a note is new only once."""
    if reply.parent_note_id is None or entry.hidden_at is not None:
        return None
    parent = session.get(Note, reply.parent_note_id)
    if parent is None or parent.author_character_id in (None, reply.author_character_id):
        return None
    owner = _owner(session, parent.author_character_id)
    if owner is None:
        return None
    character, user, membership = owner
    if not wants(membership, "replies_to_mine"):
        return None
    campaign = session.get(Campaign, character.campaign_id)
    assert campaign is not None  # the character's foreign key
    on = session.get(Character, entry.character_id)
    assert on is not None  # the entry's foreign key
    replier = (
        session.get(Character, reply.author_character_id) if reply.author_character_id else None
    )
    name = replier.name if replier is not None else reply.author_name or "someone"
    page = links.note(campaign.slug, on.slug, entry.id, reply.id)
    letter = Letter(
        kind="reply",
        template="reply",
        dedupe_key=f"reply:{reply.id}",
        to=user,
        campaign=campaign,
        membership=membership,
        subject=f"{name} replied to {character.name}'s note",
        context={
            "character": character,
            "entry": entry,
            "replier": name,
            "text": _excerpt(reply),
            "parent_text": _excerpt(parent),
            "note_page": links.absolute(settings.base_url, page),
        },
    )
    return queue(session=session, settings=settings, letter=letter, now=now)


# How a note's stored stance reads in the mail that tells its author (queue_credited_notes).
READ_AS = {
    "support": "support",
    "oppose": "opposition",
    "ambiguous": "both ways: the referee will rule",
    "none": "no position",
}


def queue_credited_notes(
    *,
    session: Session,
    settings: MailSettings,
    character_id: int,
    notes: list[tuple[Note, Entry, Character]],
    now: datetime,
) -> OutboxMessage | None:
    """Tell a player which notes read from other blogs now count as their character's,
    and how each was read: (note, the entry it is on, that entry's character).

    A note on someone else's blog is credited by its commenter's profile address, and that
    blog's owner can edit what its comments say (a self-hosted WordPress lets them type
    any address): the player whose name a note carries is the one who can tell it is not
    theirs, and the referee can then rule its author. It also confirms what pbp read.

    At most one such mail a character a (UTC) day (issue #28 item 4: a player running
    their blog's WebSub hub sent one per delivery). The day's mail lists every note credited
    until a sender takes it; notes credited after that go into the next day's, which waits
    for that day. Each note is listed in exactly one mail (`Note.credit_mail_id`), so a
    retried change queues nothing twice."""
    owner = _owner(session, character_id)
    if owner is None or not notes:
        return None
    character, user, membership = owner
    if not wants_any(membership, "notes_as_mine"):
        return None
    campaign = session.get(Campaign, character.campaign_id)
    assert campaign is not None  # the character's foreign key
    fresh = [found for found in notes if found[0].credit_mail_id is None]
    if not fresh:  # all told already
        return session.get(OutboxMessage, min(n.credit_mail_id or 0 for n, _, _ in notes))
    if wants(membership, "notes_as_mine", "push"):  # issue #31: pushed as they arrive
        key = f"credited-push:{character.id}:{min(n.id for n, _, _ in fresh)}"
        letter = _CreditedMail(settings, campaign, character, user, membership, key)
        push.queue_pushes(session=session, settings=settings, letter=letter.letter(fresh), now=now)
    if not wants(membership, "notes_as_mine"):
        return None
    today = day = now.astimezone(UTC).date()
    while True:
        key = f"credited:{character.id}:{day.isoformat()}"
        mail = _CreditedMail(settings, campaign, character, user, membership, key)
        # Locked: two deliveries crediting the same character rewrite it one after the other.
        row = session.exec(
            select(OutboxMessage).where(OutboxMessage.dedupe_key == key).with_for_update()
        ).first()
        if row is None:
            send_at = None if day == today else datetime.combine(day, time(), UTC)
            row = queue(
                session=session,
                settings=settings,
                letter=mail.letter(fresh),
                now=now,
                send_at=send_at,
            )
            if not _credited_in(session, row, character.id):  # ours, not a concurrent one's
                break
        if row.status == "queued":
            items = _credited_in(session, row, character.id) + fresh
            if rewrite_queued(
                session=session, settings=settings, row=row, letter=mail.letter(items)
            ):
                break
        day += timedelta(days=1)  # taken by a sender already: the next day's mail
    for note, _, _ in fresh:
        note.credit_mail_id = row.id
        session.add(note)
    return row


def _credited_in(
    session: Session, row: OutboxMessage, character_id: int
) -> list[tuple[Note, Entry, Character]]:
    """The notes a "counts as yours" mail lists already."""
    return [
        (note, entry, on)
        for note, entry, on in session.exec(
            select(Note, Entry, Character)
            .join(Entry, col(Entry.id) == Note.entry_id)
            .join(Character, col(Character.id) == Entry.character_id)
            .where(Note.author_character_id == character_id, Note.credit_mail_id == row.id)
        )
    ]


@dataclass(frozen=True)
class _CreditedMail:
    """The "counts as yours" mail of one character and day, for the notes it lists."""

    settings: MailSettings
    campaign: Campaign
    character: Character
    user: User
    membership: Membership
    key: str

    def letter(self, notes: list[tuple[Note, Entry, Character]]) -> Letter:
        settings, campaign, character = self.settings, self.campaign, self.character
        items = []
        for note, entry, on in sorted(notes, key=lambda found: found[0].id):
            items.append(
                {
                    "on": on.name,
                    "title": entry.title,
                    "read_as": READ_AS.get(note.stance, note.stance),
                    "text": _excerpt(note),
                    "page": entry_url(settings, campaign, on, entry),
                }
            )
        subject = (
            f"Your note on {items[0]['on']}'s entry counts as {character.name}'s"
            if len(items) == 1
            else f"{len(items)} notes count as {character.name}'s"
        )
        return Letter(
            kind="credited",
            template="credited",
            dedupe_key=self.key,
            to=self.user,
            campaign=campaign,
            membership=self.membership,
            subject=subject,
            context={"character": character, "notes": items},
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
    if not wants_any(membership, "challenges"):
        return None
    challenger = session.get(Character, entry.character_id)
    assert challenger is not None  # the entry's foreign key
    turn = session.get(Turn, entry.turn_id)
    assert turn is not None  # a challenge is made in a turn
    campaign = session.get(Campaign, character.campaign_id)
    assert campaign is not None  # the character's foreign key
    letter = Letter(
        kind="challenge",
        template="challenge",
        dedupe_key=f"challenge:entry:{entry.id}:{target_id}",
        to=user,
        campaign=campaign,
        membership=membership,
        subject=f"{challenger.name} challenges {character.name}",
        context={
            "character": character,
            "challenger": challenger,
            "entry": entry,
            "entry_page": entry_url(settings, campaign, challenger, entry),
            "turn_url": turn_url(settings, campaign, turn.number),
        },
        reply=ReplyTo(entry_id=entry.id),
    )
    return queue_letter(session=session, settings=settings, letter=letter, now=now)


def queue_challenge_news(
    *,
    session: Session,
    settings: MailSettings,
    entry: Entry,
    target_id: int,
    now: datetime,
) -> list[OutboxMessage]:
    """Tell the other active characters' players of a challenge they may judge (Noteworthy:
    "Each PC still in the game (except the challenger and target) may ... note clear
    support or opposition to the challenge"), for those who asked for it ("judging"). A
    reply to the mail is a note on the entry (issue #31 item 3), checked as the note form's.
    Once per entry and player."""
    challenger = session.get(Character, entry.character_id)
    target = session.get(Character, target_id)
    turn = session.get(Turn, entry.turn_id)
    assert challenger is not None and turn is not None  # the entry's keys; a challenge's turn
    campaign = session.get(Campaign, challenger.campaign_id)
    assert campaign is not None  # the character's foreign key
    rows = session.exec(
        select(Character, User, Membership)
        .join(User, col(User.id) == Character.user_id)
        .join(
            Membership,
            (col(Membership.user_id) == User.id)
            & (col(Membership.campaign_id) == Character.campaign_id),
        )
        .where(Character.campaign_id == campaign.id, Character.status == "active")
        .where(col(Character.id).not_in((challenger.id, target_id)))
        .order_by(col(Character.id))
    ).all()
    letters = [
        Letter(
            kind="challenge_news",
            template="challenge_news",
            dedupe_key=f"challenge-news:{entry.id}:{user.id}",
            to=user,
            campaign=campaign,
            membership=membership,
            subject=f"{challenger.name} challenges {target.name if target else 'someone'}",
            context={
                "character": character,
                "challenger": challenger,
                "target": target,
                "entry": entry,
                "entry_page": entry_url(settings, campaign, challenger, entry),
                "turn_url": turn_url(settings, campaign, turn.number),
            },
            reply=ReplyTo(entry_id=entry.id),
        )
        for character, user, membership in rows
        if membership.role == "player" and wants(membership, "judging")
    ]
    return queue_all(session=session, settings=settings, letters=letters, now=now)


# -- the daily digest -----------------------------------------------------------------------


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
    members = [(m, u) for m, u in members if wants_any(m, "digest")]
    if not members:
        return []
    names: dict[int | None, str] = dict(
        session.exec(
            select(Character.id, Character.name).where(Character.campaign_id == campaign.id)
        ).all()
    )
    entries = list(
        session.exec(
            select(Entry)
            .where(col(Entry.character_id).in_(names), Entry.first_seen_at >= start)
            .where(col(Entry.hidden_at).is_(None))  # hidden by its author: nobody's news
            .where(Entry.first_seen_at < end)
            .order_by(col(Entry.first_seen_at), col(Entry.id))
        )
    )
    notes = session.exec(
        select(Note, Entry)
        .join(Entry, col(Entry.id) == Note.entry_id)
        .where(col(Entry.character_id).in_(names), Note.first_seen_at >= start)
        .where(col(Entry.hidden_at).is_(None))
        .where(Note.first_seen_at < end)
        .order_by(col(Note.first_seen_at), col(Note.id))
    ).all()
    if not entries and not notes:
        return []
    entry_items = [(names[e.character_id], e) for e in entries]
    note_items = [
        (names.get(n.author_character_id) or n.author_name or "someone", names[e.character_id], e)
        for n, e in notes
    ]
    letters = [
        Letter(
            kind="digest",
            template="digest",
            dedupe_key=f"digest:{campaign.id}:{user.id}:{day}",
            to=user,
            campaign=campaign,
            membership=membership,
            subject=f"Digest for {day}",
            context={"day": day, "entries": entry_items, "notes": note_items},
        )
        for membership, user in members
    ]
    return queue_all(session=session, settings=settings, letters=letters, now=now)


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


# -- accounts: answers to something the person just did ---------------------------------------


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
    assert campaign is not None  # the invitation's foreign key
    inviter = session.get(User, invite.created_by) if invite.created_by else None
    letter = Letter(
        kind="invite",
        template="invite",
        dedupe_key=f"invite:{invite.id}{':' + resend if resend else ''}",
        to=Guest(email=invite.email, display_name=invite.email),
        campaign=campaign,
        subject="You are invited to play",
        context={
            "invite": invite,
            "inviter": inviter.display_name if inviter else "The referee",
            "url": url,
        },
    )
    return queue(session=session, settings=settings, letter=letter, now=now)


def _link_key(url: str) -> str:
    return hashlib.sha256(url.encode()).hexdigest()[:24]


def queue_password_reset(
    *, session: Session, settings: MailSettings, user: User, url: str, now: datetime
) -> OutboxMessage:
    """A password-reset link; keyed by the link, so each request sends one mail."""
    letter = Letter(
        kind="password_reset",
        template="password_reset",
        dedupe_key=f"password_reset:{user.id}:{_link_key(url)}",
        to=user,
        subject="pbp: reset your password",
        context={"url": url},
    )
    return queue(session=session, settings=settings, letter=letter, now=now)


def queue_signup_confirmation(
    *,
    session: Session,
    settings: MailSettings,
    user: User,
    url: str,
    now: datetime,
    name: str | None = None,
) -> OutboxMessage:
    """The link that makes an open sign-up's account work; keyed by the link, so a
    re-send (a new link) is a second mail and a retried request is not. `name` is the
    one typed on the sign-up form that asked for this link (the account takes it)."""
    letter = Letter(
        kind="signup_confirmation",
        template="signup_confirmation",
        dedupe_key=f"signup_confirmation:{user.id}:{_link_key(url)}",
        to=Guest(email=user.email, display_name=name or user.display_name),
        subject="pbp: confirm your address",
        context={"url": url},
    )
    return queue(session=session, settings=settings, letter=letter, now=now)


def queue_signup_existing(
    *, session: Session, settings: MailSettings, user: User, now: datetime
) -> OutboxMessage:
    """Issue #28 item 6: someone signed up with an address that has an account. The page
    says "check your mail" as for a new address; this mail tells the owner. Keyed by the
    hour, so repeated sign-ups cannot flood the owner's mailbox."""
    letter = Letter(
        kind="signup_existing",
        template="signup_existing",
        dedupe_key=f"signup_existing:{user.id}:{now:%Y-%m-%dT%H}",
        to=user,
        subject="pbp: someone tried to sign up with your address",
        context={
            "login_url": links.absolute(settings.base_url, links.login()),
            "reset_url": links.absolute(settings.base_url, links.reset_request()),
        },
    )
    return queue(session=session, settings=settings, letter=letter, now=now)


def queue_login_failures(
    *, session: Session, settings: MailSettings, user: User, failures: int, now: datetime
) -> OutboxMessage:
    """Issue #28 item 8: wrong passwords keep coming for the account; the caller mails
    once per window (pbp.services.accounts.backoff), keyed here by the time it did."""
    letter = Letter(
        kind="login_failures",
        template="login_failures",
        dedupe_key=f"login_failures:{user.id}:{int(now.timestamp())}",
        to=user,
        subject="pbp: wrong passwords for your account",
        context={
            "failures": failures,
            "reset_url": links.absolute(settings.base_url, links.reset_request()),
        },
    )
    return queue(session=session, settings=settings, letter=letter, now=now)
