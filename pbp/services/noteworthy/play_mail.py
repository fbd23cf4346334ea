"""The mails play itself causes: notes on a player's entries and challenges against their
character. Called by every path that stores entries and notes (the built-in blog, the API,
the poller) right after storing them, in the same transaction, so the mail is queued
exactly when the note or challenge commits (pbp.services.mail.outbox's outbox).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime

from sqlmodel import Session, col, select

from pbp.models import Campaign, Character, Entry, Note, OutboxMessage, Turn
from pbp.rules import noteworthy as nw
from pbp.services.mail import chat, notifications
from pbp.services.mail.settings import MailSettings
from pbp.services.noteworthy import tally as tally_service
from pbp.services.noteworthy.ids import row_id


def notes_arrived(
    *, session: Session, mail: MailSettings, notes: Iterable[Note], now: datetime
) -> list[OutboxMessage]:
    """One message per entry for the notes that just arrived on it (a poll pass that
    reads many comments on one entry sends one mail listing them). Only entries of the
    game: a blog's first read brings its older posts and their comments, which belong to
    no turn and are nobody's news."""
    by_entry: dict[int, list[Note]] = defaultdict(list)
    for note in notes:
        by_entry[note.entry_id].append(note)
    if not by_entry:
        return []
    entries = session.exec(
        select(Entry)
        .where(col(Entry.id).in_(by_entry), col(Entry.turn_id).is_not(None))
        .order_by(col(Entry.id))
    )
    queued = []
    for entry in entries:
        told, answered_owner = _replies_arrived(session, mail, entry, by_entry[entry.id], now)
        queued += told
        # The entry's player, told of a reply to their own note, is not told of it twice.
        rest = [n for n in by_entry[entry.id] if n.id not in answered_owner]
        row = notifications.queue_note_notification(
            session=session, settings=mail, entry=entry, notes=rest, now=now
        )
        queued += [row] if row is not None else []
    return queued


def _replies_arrived(
    session: Session, mail: MailSettings, entry: Entry, notes: list[Note], now: datetime
) -> tuple[list[OutboxMessage], set[int]]:
    """Issue #29 item 3: the author of each note answered is mailed, one mail per reply.
    Returns the mails queued, and the replies whose mail went to the entry's own player."""
    queued: list[OutboxMessage] = []
    to_owner: set[int] = set()
    for note in notes:
        if note.parent_note_id is None:
            continue
        row = notifications.queue_reply_notification(
            session=session, settings=mail, entry=entry, reply=note, now=now
        )
        if row is None:
            continue
        queued.append(row)
        parent = session.get(Note, note.parent_note_id)
        if parent is not None and parent.author_character_id == entry.character_id:
            to_owner.add(row_id(note.id))
    return queued, to_owner


def notes_credited(
    *, session: Session, mail: MailSettings, notes: Iterable[Note], now: datetime
) -> list[OutboxMessage]:
    """Tell each character's player of the notes read from a feed that just arrived in
    their name on another character's entry of the game, in at most one mail a day
    (pbp.services.mail.notifications.queue_credited_notes says why). Called by the poller
    only: a note written on pbp's own blog is written by its signed-in author, who needs no
    word of it."""
    credited = [n for n in notes if n.author_character_id is not None]
    if not credited:
        return []
    rows = session.exec(
        select(Entry, Character)
        .join(Character, col(Character.id) == Entry.character_id)
        .where(col(Entry.id).in_({n.entry_id for n in credited}), col(Entry.turn_id).is_not(None))
    )
    entries = {entry.id: (entry, on) for entry, on in rows}
    by_author: dict[int, list[tuple[Note, Entry, Character]]] = defaultdict(list)
    for note in credited:
        found = entries.get(note.entry_id)
        if found is not None and found[1].id != note.author_character_id:  # not their own blog
            assert note.author_character_id is not None  # see `credited`
            by_author[note.author_character_id].append((note, *found))
    queued = []
    for author_id in sorted(by_author):
        row = notifications.queue_credited_notes(
            session=session, settings=mail, character_id=author_id, notes=by_author[author_id],
            now=now,
        )  # fmt: skip
        queued += [row] if row is not None else []
    return queued


def entries_stored(
    *, session: Session, mail: MailSettings, entries: Iterable[Entry], now: datetime
) -> list[OutboxMessage]:
    """Mail the target of each entry that is now a valid, standing challenge of its open
    turn, as the tally reads it (Noteworthy: a challenge names one target). Once per entry:
    the same entry read again or edited queues nothing more. New entries of the game go
    to the campaign's chat channels too (issue #31), once each."""
    entries = list(entries)
    chat.entries_on_planet(session=session, settings=mail, entries=entries, now=now)
    by_turn: dict[int, set[int]] = defaultdict(set)
    for entry in entries:
        if entry.turn_id is not None and nw.is_challenging(entry.mood):
            by_turn[entry.turn_id].add(entry.id)
    queued = []
    for turn_id, entry_ids in by_turn.items():
        turn = session.get(Turn, turn_id)
        assert turn is not None  # by_turn holds the entries' turn ids
        campaign = session.get(Campaign, turn.campaign_id)
        assert campaign is not None  # the turn's foreign key
        challenges = tally_service.live_challenges(session=session, campaign=campaign, turn=turn)
        for challenge in challenges:
            if challenge.entry_id not in entry_ids or not challenge.live:
                continue
            if challenge.target_id is None:  # ambiguous: waits for the referee's ruling
                continue
            made_by = session.get(Entry, challenge.entry_id)
            if made_by is None:  # the tally read it in this transaction
                continue
            row = notifications.queue_challenge_notification(
                session=session,
                settings=mail,
                entry=made_by,
                target_id=row_id(challenge.target_id),
                now=now,
            )
            queued += [row] if row is not None else []
            queued += notifications.queue_challenge_news(
                session=session,
                settings=mail,
                entry=made_by,
                target_id=row_id(challenge.target_id),
                now=now,
            )
    return queued
