"""Turn what a feed (or the built-in blog form) says into Entry and Note rows.

Built-in entries and external feed entries take this same path into the same tables, so
the tally has exactly one code path. Everything one feed teaches is written in the
caller's transaction: a crash mid-poll loses nothing already committed and the next run,
matching rows by identity, duplicates nothing.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import NamedTuple

from sqlmodel import Session, col, select

from adapters.base import FeedEntry, FeedNote, ParsedFeed, normalize_identifier
from adapters.sanitize import clean_html, clean_text
from pbp import content_version
from pbp.markup import plain_text, without_quotes
from pbp.models import Blog, Entry, EntryRevision, Note, Turn
from pbp.rules.noteworthy import normalize_mood, read_stance
from pbp.services.noteworthy import commenters

FUTURE_TOLERANCE = timedelta(hours=1)
NOTE_DATE_TOLERANCE = timedelta(minutes=5)

FLAG_NO_DATE = "no publication date: dated when first seen"
FLAG_FUTURE_DATE = "dated in the future: dated when first seen"
FLAG_BACKDATED = "backdated: first seen after its turn closed"
FLAG_NO_TURN = "published when no turn was open"
FLAG_NOTE_DATED_LATE = (
    "dated more than 5 minutes after it was first seen: read at its first-seen time"
)


@dataclass
class IngestReport:
    new_entries: int = 0
    changed_entries: int = 0
    new_notes: int = 0
    changed_notes: int = 0
    unmatched_notes: int = 0
    # New entries past `max_new` (a WebSub delivery's bound, pbp.services.noteworthy.
    # push_limits): not stored.
    refused_entries: int = 0
    warnings: list[str] = field(default_factory=list)
    # The rows themselves, for the mails they cause (pbp.services.noteworthy.play_mail): entries new
    # or changed, notes new.
    stored_entries: list[Entry] = field(default_factory=list, repr=False)
    arrived_notes: list[Note] = field(default_factory=list, repr=False)

    def add(self, other: IngestReport) -> None:
        for name in ("new_entries", "changed_entries", "new_notes", "changed_notes"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.unmatched_notes += other.unmatched_notes
        self.refused_entries += other.refused_entries
        self.warnings.extend(other.warnings)
        self.stored_entries.extend(other.stored_entries)
        self.arrived_notes.extend(other.arrived_notes)


def content_hash(*parts: str | None) -> str:
    return hashlib.sha256("\x1f".join(p or "" for p in parts).encode()).hexdigest()


class TurnSpan(NamedTuple):
    """When a turn was open: what placing an entry in its turn needs of the turn's row."""

    id: int
    opened_at: datetime
    closed_at: datetime | None


def turns_of(*, session: Session, campaign_id: int) -> list[TurnSpan]:
    rows = session.exec(
        select(Turn.id, Turn.opened_at, Turn.closed_at)
        .where(Turn.campaign_id == campaign_id)
        .order_by(col(Turn.number))
    )
    turns = [TurnSpan(*row) for row in rows]
    content_version.known_turns(
        session, campaign_id=campaign_id, turn_ids=[turn.id for turn in turns]
    )
    return turns


def turn_at(turns: list[TurnSpan], moment: datetime) -> TurnSpan | None:
    """The turn open at `moment` (Noteworthy: an entry belongs to the turn it was posted in)."""
    for turn in reversed(turns):
        if turn.opened_at <= moment and (turn.closed_at is None or moment < turn.closed_at):
            return turn
    return None


def dating(published: datetime | None, now: datetime) -> tuple[datetime, list[str]]:
    """When an item counts as published: its own date unless missing or in the future,
    in which case the moment pbp first saw it (flagged for the referee)."""
    if published is None:
        return now, [FLAG_NO_DATE]
    if published > now + FUTURE_TOLERANCE:
        return now, [FLAG_FUTURE_DATE]
    return published, []


def place_in_turn(
    turns: list[TurnSpan], published: datetime, now: datetime
) -> tuple[int | None, list[str]]:
    turn = turn_at(turns, published)
    if turn is None:
        return None, [FLAG_NO_TURN]
    if turn.closed_at is not None and turn.closed_at <= now:
        return turn.id, [FLAG_BACKDATED]
    return turn.id, []


class Known(NamedTuple):
    """A stored entry as a feed item is matched against it: its id and content digest."""

    id: int
    content_hash: str


class EntryIndex:
    """A blog's entries by identity and by URL, loaded once per feed: ids and digests only.
    A weeks-long game's blog holds dozens of long entries and a changed feed usually brings
    one new one, so an entry's row is read only when it changes (`row`)."""

    def __init__(self, session: Session, blog: Blog):
        self.session = session
        self.by_source: dict[str, Known] = {}
        self.by_url: dict[str, Known] = {}
        # The rows this feed added or changed, kept here: the session's identity map holds
        # a flushed row only weakly, and reading a dropped one back costs a query.
        self.rows: dict[int, Entry] = {}
        columns = select(Entry.id, Entry.source_id, Entry.url, Entry.content_hash)
        for entry_id, source_id, url, digest in session.exec(
            columns.where(Entry.blog_id == blog.id)
        ):
            self._index(Known(entry_id, digest), source_id, url)

    def _index(self, known: Known, source_id: str, url: str | None) -> None:
        self.by_source[source_id] = known
        url = normalize_identifier(url)
        if url:
            self.by_url[url] = known

    def remember(self, entry: Entry) -> None:
        """A row this feed added or changed."""
        assert entry.id is not None  # flushed
        self.rows[entry.id] = entry
        self._index(Known(entry.id, entry.content_hash), entry.source_id, entry.url)

    def row(self, known: Known) -> Entry:
        entry = self.rows.get(known.id) or self.session.get(Entry, known.id)
        assert entry is not None  # indexed in this transaction
        return entry

    def find(self, identity: str, url: str | None) -> Known | None:
        # A guid that appears or vanishes between fetches must not duplicate the entry.
        return self.by_source.get(identity) or (self.by_url.get(url) if url else None)

    def parent_of(self, note: FeedNote) -> Known | None:
        if note.normalized_parent_id:
            entry = self.by_source.get("guid:" + note.normalized_parent_id) or self.by_url.get(
                note.normalized_parent_id
            )
            if entry:
                return entry
        url = note.normalized_parent_url
        if url:
            return self.by_url.get(url) or self.by_source.get("link:" + url)
        return None


def _revision(entry: Entry, now: datetime) -> EntryRevision:
    return EntryRevision(
        entry_id=entry.id,
        seen_at=now,
        title=entry.title,
        body_html=entry.body_html,
        body_source=entry.body_source,
        mood_raw=entry.mood_raw,
        mood=entry.mood,
        content_hash=entry.content_hash,
    )


def upsert_entry(
    *,
    session: Session,
    blog: Blog,
    item: FeedEntry,
    turns: list[TurnSpan],
    index: EntryIndex,
    now: datetime,
) -> str:
    """Insert or update one entry; returns "new", "changed" or "same".

    Every version is kept as an EntryRevision (the first included), so the rules can see
    when the mood changed: a change away from Challenging is a withdrawal at the moment
    pbp saw it. An entry of pbp's own blog keeps the Markdown it was rendered from
    (`item.body_source`) for its edit page; a feed's entry has none.
    """
    title, body, mood_raw, digest = _cleaned(item)
    known = index.find(item.identity_key, item.normalized_url)
    if known is not None:
        if known.content_hash == digest:
            return "same"
        entry = index.row(known)
        entry.title, entry.body_html, entry.content_hash = title, body, digest
        entry.body_source = item.body_source
        entry.mood_raw, entry.mood = mood_raw, normalize_mood(mood_raw)
        entry.updated_at = item.updated or now
        session.add(entry)
        session.flush()
        session.add(_revision(entry, now))
        index.remember(entry)
        return "changed"
    entry = _new_entry(blog, item, turns, now, title, body, mood_raw, digest)
    session.add(entry)
    session.flush()
    session.add(_revision(entry, now))
    index.remember(entry)
    return "new"


def _new_entry(
    blog: Blog,
    item: FeedEntry,
    turns: list[TurnSpan],
    now: datetime,
    title: str,
    body: str,
    mood_raw: str | None,
    digest: str,
) -> Entry:
    """A new entry's row, not yet added (`upsert_entry`'s words on the fields hold)."""
    published, flags = dating(item.published, now)
    turn_id, turn_flags = place_in_turn(turns, published, now)
    return Entry(
        blog_id=blog.id,
        character_id=blog.character_id,
        turn_id=turn_id,
        source_id=item.identity_key[:1000],
        url=item.url,
        title=title,
        body_html=body,
        body_source=item.body_source,
        mood_raw=mood_raw,
        mood=normalize_mood(mood_raw),
        published_at=published,
        updated_at=item.updated,
        first_seen_at=now,
        content_hash=digest,
        # comment_count stays unknown until the polling has read the comment feed.
        comments_url=item.comment_feed_url,
        flags=flags + turn_flags,
    )


def _cleaned(item: FeedEntry) -> tuple[str, str, str | None, str]:
    """An item's title, body and mood as stored, and their digest."""
    title = clean_text(item.title)[:1000]
    body = clean_html(item.body_html)
    mood_raw = clean_text(item.raw_mood)[:200] or None
    return title, body, mood_raw, content_hash(title, body, mood_raw)


def all_new_and_apart(items: list[FeedEntry], index: EntryIndex) -> bool:
    """Whether every item is new to the blog and none could be found through another one
    once stored (no shared identity or address, no identity cut to the column's length):
    then `upsert_entry` would store each as new whatever the order, and `store_new` may
    store them all with one flush."""
    keys: set[str] = set()
    urls: set[str] = set()
    for item in items:
        key, url = item.identity_key, item.normalized_url
        if len(key) > 1000 or key in keys or (url and url in urls):
            return False
        if index.find(key, url) is not None:
            return False
        keys.add(key)
        if url:
            urls.add(url)
    return True


def store_new(
    *,
    session: Session,
    blog: Blog,
    items: list[FeedEntry],
    turns: list[TurnSpan],
    index: EntryIndex,
    now: datetime,
) -> list[Entry]:
    """`upsert_entry` for items that `all_new_and_apart` passed: the same rows, with one
    flush for all of them instead of one each (a flush was most of a changed feed's
    store, issue #34). Their revisions are flushed with what follows."""
    entries = [_new_entry(blog, item, turns, now, *_cleaned(item)) for item in items]
    session.add_all(entries)
    session.flush()
    for entry in entries:
        session.add(_revision(entry, now))
        index.remember(entry)
    return entries


class AuthorMap:
    """Commenter identities -> characters: only verified ones, a profile address the
    referee mapped or the player declared (pbp.services.noteworthy.commenters). A display name is
    anyone's to type, so a name alone credits no one (issue #16): such a note waits, and
    the dashboard lists it as an unverified author."""

    def __init__(self, session: Session, campaign_id: int):
        self.aliases = commenters.standing_aliases(session=session, campaign_id=campaign_id)

    def character_for(self, name: str | None, uri: str | None, email_hash: str | None):
        for kind, value in (("uri", uri), ("email_hash", email_hash)):
            key = commenters.identity_key(kind, value)
            if key and (kind, key) in self.aliases:
                return self.aliases[(kind, key)]
        return None


def note_dating(published: datetime | None, now: datetime) -> tuple[datetime, list[str]]:
    """When a note counts as written. A commenter dates their own note, so a date more
    than NOTE_DATE_TOLERANCE after pbp first saw it (a note placed after a deadline it
    beat, or after the last word) is read at its first-seen time, and flagged."""
    if published is None:
        return now, [FLAG_NO_DATE]
    if published > now + NOTE_DATE_TOLERANCE:
        return now, [FLAG_NOTE_DATED_LATE]
    return published, []


def note_stance(body_html: str, *, reply: bool) -> str:
    """The stance a note carries, read when it arrives. A reply to another note takes a
    position only by a marker of its own (docs/rules-notes.md, issue #29 item 3): the note
    it quotes is left out, and it inherits nothing from the note it answers. Noteworthy
    counts each PC's notes that "note clear support or opposition to the challenge"; a
    quoted "Support." is the quoted writer's position, not the replier's."""
    text = plain_text(without_quotes(body_html) if reply else body_html)
    return read_stance(text).stance.value


def upsert_note(
    *,
    session: Session,
    entry: Entry | Known,
    item: FeedNote,
    author_id: int | None,
    now: datetime,
    parent_note_id: int | None = None,
) -> str:
    """Insert or update one note; the stance is read when the note arrives (or changes).
    `parent_note_id`: the note it answers, on the same entry; a stored note whose parent
    was not known when it arrived (the parent came later) is linked to it now."""
    identity = item.identity_key[:1000]
    body = clean_html(item.body_html)
    author_name = clean_text(item.author_name)[:200]
    existing = session.exec(
        select(Note).where(Note.entry_id == entry.id, Note.source_id == identity)
    ).first()
    if existing is not None:
        linked = existing.parent_note_id is None and parent_note_id is not None
        if existing.body_html == body and not linked:
            return "same"
        if linked:
            existing.parent_note_id = parent_note_id
        existing.body_html = body
        existing.stance = note_stance(body, reply=existing.parent_note_id is not None)
        session.add(existing)
        return "changed"
    published, flags = note_dating(item.published, now)
    session.add(
        Note(
            entry_id=entry.id,
            source_id=identity,
            author_character_id=author_id,
            author_name=author_name,
            author_uri=item.author_uri,
            body_html=body,
            published_at=published,
            first_seen_at=now,
            stance=note_stance(body, reply=parent_note_id is not None),
            flags=flags,
            parent_note_id=parent_note_id,
        )
    )
    return "new"


def ingest_parsed(
    *,
    session: Session,
    blog: Blog,
    parsed: ParsedFeed,
    now: datetime,
    campaign_id: int,
    max_new: int | None = None,
) -> IngestReport:
    """Store everything one parsed document says. Entries missing from this fetch are
    kept: a feed is a window onto the blog, not the whole of it.

    `max_new`: at most that many new entries are stored, the first in the document's order
    (a feed lists the newest first); the others are counted in `refused_entries` (issue #28
    item 4: a WebSub delivery's bound). Changes to stored entries are not bounded here."""
    report = IngestReport(warnings=[w.message for w in parsed.warnings])
    index = EntryIndex(session, blog)
    arrived: list[tuple[int, str]] = []  # new notes: (entry id, source id)
    if parsed.entries:
        # The turns place new entries only: an unchanged feed page has none.
        new = any(index.find(i.identity_key, i.normalized_url) is None for i in parsed.entries)
        turns = turns_of(session=session, campaign_id=campaign_id) if new else []
        seen: set[str] = set()
        items = list(parsed.entries)
        if max_new is None and all_new_and_apart(items, index):
            stored = store_new(
                session=session, blog=blog, items=items, turns=turns, index=index, now=now
            )
            report.new_entries += len(stored)
            report.stored_entries += stored
            items = []  # all stored
        for item in items:
            if item.identity_key in seen:
                report.warnings.append(
                    f"the feed repeats the id {item.identity_key}; kept the first"
                )
                continue
            seen.add(item.identity_key)
            if (
                max_new is not None
                and report.new_entries >= max_new
                and index.find(item.identity_key, item.normalized_url) is None
            ):
                report.refused_entries += 1
                continue
            outcome = upsert_entry(
                session=session, blog=blog, item=item, turns=turns, index=index, now=now
            )
            report.new_entries += outcome == "new"
            report.changed_entries += outcome == "changed"
            if outcome != "same":
                known = index.find(item.identity_key, item.normalized_url)
                assert known is not None  # just stored
                report.stored_entries.append(index.row(known))
    if parsed.notes:
        authors = AuthorMap(session, campaign_id)
        pending = _answered_first(parsed.notes)
        patient = True
        while pending:
            # A reply waits for the comment it answers when the document brings that comment
            # too: another pass, while passes store something; then one that waits no more.
            waiting = _store_notes(
                session, blog, index, pending, authors, now, report, arrived, patient
            )
            if len(waiting) == len(pending):
                if not patient:
                    report.unmatched_notes += len(waiting)
                    break
                patient = False
            pending = waiting
    session.flush()
    report.arrived_notes = _notes_by_identity(session, arrived)
    return report


def _store_notes(
    session: Session,
    blog: Blog,
    index: EntryIndex,
    notes: list[FeedNote],
    authors: AuthorMap,
    now: datetime,
    report: IngestReport,
    arrived: list[tuple[int, str]],
    patient: bool,
) -> list[FeedNote]:
    """Store the notes whose entry is known; return the others, and (`patient`) the replies
    to a comment among `notes`, which this pass stores first."""
    waiting = []
    answered = _answered_notes(session, blog, index, notes)
    coming = {note.identity_key[:1000] for note in notes} if patient else set()
    for note in notes:
        key = _answer_key(index, note)
        answers = ("guid:" + key)[:1000] if key else None
        if answers in coming and answers not in answered and answers != note.identity_key:
            waiting.append(note)
            continue
        parent, parent_note_id = _placed(index, answered, note)
        if parent is None:
            waiting.append(note)
            continue
        outcome = upsert_note(
            session=session,
            entry=parent,
            item=note,
            author_id=authors.character_for(clean_text(note.author_name), note.author_uri, None),
            now=now,
            parent_note_id=parent_note_id,
        )
        report.new_notes += outcome == "new"
        report.changed_notes += outcome == "changed"
        if outcome == "new":
            arrived.append((parent.id, note.identity_key[:1000]))
    return waiting


def _reply_key(note: FeedNote) -> str | None:
    return note.normalized_reply_to


def _answered_first(notes: tuple[FeedNote, ...] | list[FeedNote]) -> list[FeedNote]:
    """Comments on the entry first, then the replies oldest first (a feed lists the newest
    first): a reply's parent is then stored before it whenever both are in the document."""
    plain = [n for n in notes if _reply_key(n) is None]
    replies = [n for n in notes if _reply_key(n) is not None]
    return plain + list(reversed(replies))


class _Placed(NamedTuple):
    entry: Known | None
    parent_note_id: int | None


def _answer_key(index: EntryIndex, note: FeedNote) -> str | None:
    """The id of the comment `note` answers: the adapter's reply id (Blogger's related link,
    WordPress's Atom), else an RFC 4685 ``thr:in-reply-to`` that names no entry of this blog
    but may name a comment (as pbp's own comment feed does)."""
    key = _reply_key(note)
    if key is None and index.parent_of(note) is None:
        key = note.normalized_parent_id
    return key


def _answered_notes(
    session: Session, blog: Blog, index: EntryIndex, notes: list[FeedNote]
) -> dict[str, tuple[int, int]]:
    """This blog's stored notes that `notes` answer, by identity: (note id, entry id). One
    query for a whole document, none when no comment in it answers another."""
    keys = {("guid:" + k)[:1000] for n in notes if (k := _answer_key(index, n))}
    if not keys:
        return {}
    rows = session.exec(
        select(Note.source_id, Note.id, Note.entry_id)
        .join(Entry, col(Entry.id) == Note.entry_id)
        .where(Entry.blog_id == blog.id, col(Note.source_id).in_(keys))
    )
    return {source_id: (note_id, entry_id) for source_id, note_id, entry_id in rows}


def _placed(index: EntryIndex, answered: dict[str, tuple[int, int]], note: FeedNote) -> _Placed:
    """The entry a comment is on and the comment it answers (issue #29 item 3: threads
    read from external comment feeds), found among this blog's stored notes by the id the
    feed gives it (`_answer_key`). A reply whose parent pbp has not read yet stands on the
    entry; a later read links it (upsert_note)."""
    entry = index.parent_of(note)
    key = _answer_key(index, note)
    found = answered.get(("guid:" + key)[:1000]) if key else None
    if found is None:
        return _Placed(entry, None)
    note_id, entry_id = found
    if entry is not None and entry.id != entry_id:
        return _Placed(entry, None)  # a reply stays on its own entry's thread
    if entry is None:
        entry = next((k for k in index.by_source.values() if k.id == entry_id), None)
    return _Placed(entry, note_id if entry is not None else None)


def _notes_by_identity(session: Session, keys: list[tuple[int, str]]) -> list[Note]:
    """The stored notes for (entry id, source id) pairs, read back after the flush."""
    if not keys:
        return []
    wanted = set(keys)
    rows = session.exec(
        select(Note).where(
            col(Note.entry_id).in_({e for e, _ in keys}),
            col(Note.source_id).in_({k for _, k in keys}),
        )
    )
    return [n for n in rows if (n.entry_id, n.source_id) in wanted]
