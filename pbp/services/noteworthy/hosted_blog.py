"""The built-in blog: entries and notes written on pbp's own pages.

They go through pbp.services.noteworthy.ingest exactly like external feed items, so the tally
never knows where an entry came from.
"""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlmodel import Session, select

from adapters.base import FeedEntry, FeedNote, ParsedFeed, fallback_key
from adapters.sanitize import clean_html
from pbp import limits
from pbp.errors import Forbidden, UserError
from pbp.limits import check_length
from pbp.models import Blog, Character, Entry, Note
from pbp.services.mail.outbox import MailSettings
from pbp.services.noteworthy import play_mail
from pbp.services.noteworthy.ingest import (
    EntryIndex,
    ingest_parsed,
    turns_of,
    upsert_entry,
    upsert_note,
)
from pbp.services.rendering import rendered

STANCE_MARKERS = {"support": "Support.", "oppose": "Oppose.", "none": ""}


def blog_of(*, session: Session, character: Character) -> Blog:
    return session.exec(select(Blog).where(Blog.character_id == character.id)).one()


def builtin_blog(*, session: Session, character: Character) -> Blog:
    blog = blog_of(session=session, character=character)
    if blog.kind != "builtin":
        raise UserError(f"{character.name} blogs elsewhere; post there and pbp will read it")
    return blog


def _feed_entry(source_id: str, title: str, body_html: str, mood: str | None, now):
    return FeedEntry(
        source_id=source_id,
        url=None,
        title=title,
        author=None,
        published=now,
        updated=now,
        body_html=body_html,
        raw_mood=mood,
        mood_source="field",
        fallback_key=fallback_key(title, now),
    )


def post_entry(
    *,
    session: Session,
    character: Character,
    title: str,
    body_markdown: str,
    mood: str | None,
    now: datetime,
    mail: MailSettings | None = None,
) -> Entry:
    """Post an entry; with `mail`, a challenge it makes is mailed to its target (the
    pages and the API pass it; fixtures that only build a game leave it out)."""
    if not (title or "").strip():
        raise UserError("an entry needs a title")
    if not (mood or "").strip():
        raise UserError('every entry needs a "Current mood:" (Noteworthy)')
    check_length(title, limits.ENTRY_TITLE, "an entry's title")
    html = rendered(session=session, text=body_markdown)
    blog = builtin_blog(session=session, character=character)
    source_id = f"urn:pbp:entry:{uuid.uuid4()}"
    parsed = ParsedFeed(
        kind="builtin",
        title=character.name,
        site_url=None,
        entries=(_feed_entry(source_id, title, html, mood, now),),
    )
    report = ingest_parsed(
        session=session, blog=blog, parsed=parsed, now=now, campaign_id=character.campaign_id
    )
    if mail is not None:
        play_mail.entries_stored(session=session, mail=mail, entries=report.stored_entries, now=now)
    return session.exec(
        select(Entry).where(Entry.blog_id == blog.id, Entry.source_id == "guid:" + source_id)
    ).one()


def edit_entry(
    *,
    session: Session,
    entry: Entry,
    editor: Character,
    title: str,
    body_markdown: str = "",
    mood: str | None,
    now: datetime,
    mail: MailSettings | None = None,
    kept_html: str | None = None,
) -> str:
    """Edit a built-in entry (kept as a revision); returns "changed" or "same". An edit
    that makes the entry a challenge mails the target, as a new entry would.

    `kept_html` keeps a stored body as it is instead of rendering `body_markdown`: a
    withdrawal changes only the mood, and its stored HTML need not pass the Markdown checks
    a typed text does."""
    if entry.character_id != editor.id:
        raise Forbidden("only the entry's author can edit it")
    check_length(title, limits.ENTRY_TITLE, "an entry's title")
    if kept_html is None:
        html = rendered(session=session, text=body_markdown)
    else:
        html = clean_html(kept_html)
    blog = builtin_blog(session=session, character=editor)
    source_id = entry.source_id.removeprefix("guid:")
    item = _feed_entry(source_id, title, html, mood, now)
    turns = turns_of(session=session, campaign_id=editor.campaign_id)
    outcome = upsert_entry(
        session=session, blog=blog, item=item, turns=turns, index=EntryIndex(session, blog), now=now
    )
    if mail is not None and outcome != "same":
        play_mail.entries_stored(session=session, mail=mail, entries=[entry], now=now)
    return outcome


def post_note(
    *,
    session: Session,
    entry: Entry,
    author: Character,
    body_markdown: str,
    now: datetime,
    stance: str | None = None,
    fate: str | None = None,
    mail: MailSettings | None = None,
) -> Note:
    """A note in the writer's character's persona. A stance picked on the form is written
    as an explicit marker, so it reads the same way as a marker typed in a comment. With
    `mail`, the entry's player is told (not when it is their own note)."""
    marker = STANCE_MARKERS.get(stance or "none", "")
    text = f"{marker}\n\n{body_markdown}".strip() if marker else body_markdown
    if not text.strip():
        raise UserError("a note needs some text")
    check_length(body_markdown, limits.NOTE_BODY, "a note")
    check_length((fate or "").strip(), limits.FATE, "the fate you wish")
    html = rendered(session=session, text=text)
    source_id = f"urn:pbp:note:{uuid.uuid4()}"
    item = FeedNote(
        source_id=source_id,
        url=None,
        parent_source_id=None,
        parent_url=None,
        author_name=author.name,
        author_uri=None,
        published=now,
        updated=now,
        body_html=html,
        title="",
        fallback_key=source_id,
    )
    # A logged-in writer is known: no alias lookup.
    upsert_note(session=session, entry=entry, item=item, author_id=author.id, now=now)
    note = session.exec(
        select(Note).where(Note.entry_id == entry.id, Note.source_id == "guid:" + source_id)
    ).one()
    if fate and fate.strip():
        note.fate_text = fate.strip()
        session.add(note)
    session.flush()
    if mail is not None:
        play_mail.notes_arrived(session=session, mail=mail, notes=[note], now=now)
    return note
