"""The built-in blog: entries and notes written on pbp's own pages.

A player's actions are `write_entry`, `edit_entry`, `withdraw_entry` and `post_note` (and
hiding an entry, pbp.services.noteworthy.hidden_entries): each
holds every check of its action (who may, what the rules allow now, how long a text may
be), renders with no transaction open, checks again, stores and queues the mail it causes.
The pages and the API call them and only translate inputs and outputs.

The `store_*` functions below them are the storage step alone, with no play checks: what a
feed reader does with an item already written (fixtures and the demo build games with
them). Stored items go through pbp.services.noteworthy.ingest exactly like external feed
items, so the tally never knows where an entry came from.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from sqlmodel import Session, select

from adapters.base import FeedEntry, FeedNote, ParsedFeed, fallback_key
from adapters.sanitize import clean_html
from pbp import limits, links
from pbp.errors import Conflict, Forbidden, NotFound, UserError
from pbp.limits import check_length
from pbp.models import Blog, Campaign, Character, Entry, Note, User
from pbp.rules import noteworthy as nw
from pbp.services import icons, lookups, mentions, saved_drafts
from pbp.services.mail.settings import MailSettings
from pbp.services.noteworthy import note_threads, play, play_mail, webmentions
from pbp.services.noteworthy.ids import row_id
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


def _feed_entry(
    source_id: str, title: str, body_html: str, mood: str | None, now, source: str | None
):
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
        body_source=source,
    )


# -- a player's actions ---------------------------------------------------------------------


def entry_at(
    *, session: Session, campaign: Campaign, character_slug: str, entry_id: int
) -> tuple[Character, Entry]:
    """The entry `entry_id` of the character `character_slug` (a page's address), or
    NotFound."""
    row = lookups.get_entry(session=session, campaign=campaign, entry_id=entry_id)
    if row.author.slug != character_slug:
        raise NotFound("there is no such entry")
    return row.author, row.entry


def _write_checks(
    session: Session, actor: User | None, campaign: Campaign, mood: str, target_id: int | None
) -> tuple[Character, str | None]:
    """The writer's character and the challenge's target name, checked."""
    character = play.player_character(session=session, campaign=campaign, user=actor)
    builtin_blog(session=session, character=character)
    turn = play.open_turn(session=session, campaign=campaign)
    option = play.challenge_option(
        session=session, campaign=campaign, character=character, turn=turn
    )
    target = play.chosen_target(option, mood, "" if target_id is None else str(target_id))
    return character, target


def write_entry(
    *,
    session: Session,
    actor: User | None,
    campaign: Campaign,
    title: str,
    mood: str,
    body: str,
    target_id: int | None = None,
    icon_id: int | None = None,
    now: datetime,
    mail: MailSettings | None,
) -> Entry:
    """A player writes an entry on their character's built-in blog.

    A "Challenging" mood needs `target_id`, one of the targets `play.challenge_option`
    lists (Noteworthy: no challenges in the opening turns, one a turn, only by an active
    PC); it becomes the entry's "Target:" line, which the rules read first. A challenge
    made is mailed to its target."""
    title, mood, body = title.strip(), mood.strip(), body.strip()
    check_length(body, limits.ENTRY_BODY, "an entry")
    _check_heading(title, mood)
    _, target = _write_checks(session, actor, campaign, mood, target_id)
    # The picker's "Target:" line is part of the source: editing the entry keeps its target.
    source = play.with_target(body, mood, target)
    book = mentions.book_for(session=session, campaign=campaign)
    done = mentions.render_with_mentions(session=session, text=source, book=book)
    # The render ended the transaction: the checks that guard the write run again.
    character, checked = _write_checks(session, actor, campaign, mood, target_id)
    if checked != target:
        raise Conflict("the character you challenge changed name while you wrote: send again")
    # Issue #33 item 1: one of the writer's character's icons; none: the default.
    picked = icons.picked(session=session, character_id=character.id, icon_id=icon_id)
    entry = _store_entry_html(
        session=session,
        character=character,
        title=title,
        html=done.html,
        source=source,
        mood=mood,
        now=now,
        mail=mail,
    )
    _mail_entry_mentions(session, mail, campaign, character, entry, done, now)
    # Posted: the saved draft of the form goes in the same transaction (issue #29 item 5).
    saved_drafts.discard(session=session, user=actor, campaign=campaign, form="entry")
    if picked is not None:
        entry.icon_id = picked
        session.add(entry)
        session.flush()
    return entry


def own_entry(
    *, session: Session, actor: User | None, campaign: Campaign, entry_id: int, refusal: str = ""
) -> tuple[Character, Entry]:
    """The actor's character and their entry `entry_id`; Forbidden for anyone else's.
    An entry its author hid (pbp.services.noteworthy.hidden_entries) is refused: it takes
    no more edits, withdrawal or hiding."""
    character = play.player_character(session=session, campaign=campaign, user=actor)
    row = lookups.get_entry(session=session, campaign=campaign, entry_id=entry_id)
    if row.entry.character_id != character.id:
        raise Forbidden(refusal or "only the entry's author can edit it")
    if row.entry.hidden_at is not None:
        raise UserError("you hid this entry: it can no longer be changed")
    return character, row.entry


@dataclass(frozen=True)
class EditForm:
    """What the edit page starts from: the writer's character, the entry and its text."""

    character: Character
    entry: Entry
    text: str
    # False for an entry written before pbp kept the Markdown (issue #27 item 6): `text` is
    # then the stored HTML, shown as it is (Markdown passes HTML through, so saving it
    # unchanged keeps the entry as it was).
    markdown: bool


def edit_form(
    *, session: Session, actor: User | None, campaign: Campaign, entry_id: int
) -> EditForm:
    """The edit page of the actor's own entry: the Markdown they typed, not the HTML it
    became. An entry read from a feed is refused: its source is the blog it came from."""
    character, entry = own_entry(session=session, actor=actor, campaign=campaign, entry_id=entry_id)
    if not editable(session=session, entry=entry):
        raise UserError(
            "this entry was read from your blog's feed: edit it on your blog, "
            "and pbp reads the change at its next poll"
        )
    if entry.body_source is not None:
        return EditForm(character, entry, entry.body_source, markdown=True)
    return EditForm(character, entry, entry.body_html, markdown=False)


def editable(*, session: Session, entry: Entry) -> bool:
    """Whether pbp can edit `entry`: one written on pbp's own blog, which its character
    still keeps there (a feed's entries are edited on their blog)."""
    blog = session.get(Blog, entry.blog_id)
    return blog is not None and blog.kind == "builtin" and entry.url is None


def _edit_checks(
    session: Session, actor: User | None, campaign: Campaign, entry_id: int, mood: str
) -> tuple[Character, Entry]:
    character, entry = own_entry(session=session, actor=actor, campaign=campaign, entry_id=entry_id)
    if nw.is_challenging(mood) and entry.mood != nw.CHALLENGING:
        # Editing to Challenging makes a challenge at the edit's time: the same checks.
        turn = play.open_turn(session=session, campaign=campaign)
        option = play.challenge_option(
            session=session, campaign=campaign, character=character, turn=turn
        )
        if not option.allowed:
            raise UserError(option.reason)
    return character, entry


def edit_entry(
    *,
    session: Session,
    actor: User | None,
    campaign: Campaign,
    entry_id: int,
    title: str,
    mood: str,
    body: str,
    now: datetime,
    mail: MailSettings | None,
) -> str:
    """A player edits their entry; the earlier version is kept (the rules read mood
    changes). Returns "changed" or "same"."""
    check_length(body, limits.ENTRY_BODY, "an entry")
    check_length(title, limits.ENTRY_TITLE, "an entry's title")
    _edit_checks(session, actor, campaign, entry_id, mood)
    book = mentions.book_for(session=session, campaign=campaign)
    done = mentions.render_with_mentions(session=session, text=body, book=book)
    character, entry = _edit_checks(session, actor, campaign, entry_id, mood)
    outcome = _store_edit_html(
        session=session,
        entry=entry,
        editor=character,
        title=title,
        html=done.html,
        source=body,
        mood=mood,
        now=now,
        mail=mail,
    )
    # Keyed by the entry: a player named before the edit is not mailed again.
    _mail_entry_mentions(session, mail, campaign, character, entry, done, now)
    return outcome


def withdraw_entry(
    *,
    session: Session,
    actor: User | None,
    campaign: Campaign,
    entry_id: int,
    now: datetime,
    mail: MailSettings | None,
) -> str:
    """Noteworthy: "You may withdraw your challenge before the end of a turn, but that
    still counts as your challenge for that turn." Recorded as a mood revision; the body
    is kept as stored (no render)."""
    character, entry = own_entry(
        session=session,
        actor=actor,
        campaign=campaign,
        entry_id=entry_id,
        refusal="only the challenger can withdraw a challenge",
    )
    if entry.mood != nw.CHALLENGING:
        raise UserError("this entry is not a challenge")
    latest = lookups.latest_revision(session=session, entry=entry)
    return _store_edit_html(
        session=session,
        entry=entry,
        editor=character,
        title=entry.title,
        html=clean_html(play.markdown_source(latest)),
        source=entry.body_source,
        mood=play.WITHDRAWN_MOOD,
        now=now,
        mail=mail,
    )


def _note_checks(
    session: Session,
    actor: User | None,
    campaign: Campaign,
    entry_id: int,
    stance: str,
    now: datetime,
    reply_to: int | None = None,
) -> tuple[Character, Entry]:
    character = play.player_character(session=session, campaign=campaign, user=actor)
    entry = lookups.get_entry(session=session, campaign=campaign, entry_id=entry_id).entry
    if reply_to is not None:
        note_threads.parent_note(session=session, entry=entry, note_id=reply_to)
    turn = play.open_turn(session=session, campaign=campaign)
    refusal = play.note_refusal(entry=entry, turn=turn)
    if refusal:
        raise UserError(refusal)
    if stance != "none":
        why = play.stance_refusal(
            session=session,
            campaign=campaign,
            character=character,
            entry=entry,
            turn=turn,
            now=now,
        )
        if why:
            raise UserError(why)
    return character, entry


def post_note(
    *,
    session: Session,
    actor: User | None,
    campaign: Campaign,
    entry_id: int,
    body: str,
    stance: str = "none",
    fate: str | None = None,
    reply_to: int | None = None,
    icon_id: int | None = None,
    now: datetime,
    mail: MailSettings | None,
) -> Note:
    """A player leaves a note as their character, with a position if they may take one.

    Noteworthy: notes are permitted only on the current turn's entries; the challenger,
    the target and outsiders cannot support or oppose, except in the final, where the
    outsiders vote with a note on the entry of a finalist and the finalists cannot
    (play.note_refusal, play.stance_refusal). The entry's player is mailed.

    `reply_to`: the note of the same entry it answers (issue #29 item 3). A reply is a
    note like any other for the rules, and takes a position only by its own marker (the
    stance chosen here writes one); its parent's author is mailed too."""
    if stance not in STANCE_MARKERS:
        raise UserError("a position is Support, Oppose or No position")
    text = _note_text(body, stance, fate)
    _note_checks(session, actor, campaign, entry_id, stance, now, reply_to)
    book = mentions.book_for(session=session, campaign=campaign)
    done = mentions.render_with_mentions(session=session, text=text, book=book)
    character, entry = _note_checks(session, actor, campaign, entry_id, stance, now, reply_to)
    note = _store_note_html(
        session=session,
        entry=entry,
        author=character,
        html=done.html,
        fate=fate,
        now=now,
        mail=mail,
        parent_note_id=reply_to,
    )
    picked = icons.picked(session=session, character_id=character.id, icon_id=icon_id)
    if picked is not None:
        note.icon_id = picked
        session.add(note)
        session.flush()
    _mail_note_mentions(session, mail, campaign, character, entry, note, done, now)
    saved_drafts.discard(
        session=session, user=actor, campaign=campaign, form="note", target_id=entry_id
    )
    return note


# -- storage, with no play checks ----------------------------------------------------------


def store_entry(
    *,
    session: Session,
    character: Character,
    title: str,
    body_markdown: str,
    mood: str | None,
    now: datetime,
    mail: MailSettings | None = None,
) -> Entry:
    """Store an entry as written, with no play checks (see the module's note); with
    `mail`, a challenge it makes is mailed to its target."""
    _check_heading(title, mood)
    html = rendered(session=session, text=body_markdown)
    return _store_entry_html(
        session=session,
        character=character,
        title=title,
        html=html,
        source=body_markdown,
        mood=mood,
        now=now,
        mail=mail,
    )


def _check_heading(title: str, mood: str | None) -> None:
    if not (title or "").strip():
        raise UserError("an entry needs a title")
    if not (mood or "").strip():
        raise UserError('every entry needs a "Current mood:" (Noteworthy)')
    check_length(title, limits.ENTRY_TITLE, "an entry's title")


def _store_entry_html(
    *,
    session: Session,
    character: Character,
    title: str,
    html: str,
    source: str | None,
    mood: str | None,
    now: datetime,
    mail: MailSettings | None,
) -> Entry:
    blog = builtin_blog(session=session, character=character)
    source_id = f"urn:pbp:entry:{uuid.uuid4()}"
    parsed = ParsedFeed(
        kind="builtin",
        title=character.name,
        site_url=None,
        entries=(_feed_entry(source_id, title, html, mood, now, source),),
    )
    report = ingest_parsed(
        session=session, blog=blog, parsed=parsed, now=now, campaign_id=character.campaign_id
    )
    if mail is not None:
        play_mail.entries_stored(session=session, mail=mail, entries=report.stored_entries, now=now)
    entry = session.exec(
        select(Entry).where(Entry.blog_id == blog.id, Entry.source_id == "guid:" + source_id)
    ).one()
    if mail is not None:  # issue #31 item 4: the pages it links to are told, by a job
        webmentions.queue_links(session=session, entry=entry, base_url=mail.base_url, now=now)
    return entry


def _store_edit_html(
    *,
    session: Session,
    entry: Entry,
    editor: Character,
    title: str,
    html: str,
    source: str | None,
    mood: str | None,
    now: datetime,
    mail: MailSettings | None,
) -> str:
    if entry.character_id != editor.id:
        raise Forbidden("only the entry's author can edit it")
    blog = builtin_blog(session=session, character=editor)
    source_id = entry.source_id.removeprefix("guid:")
    item = _feed_entry(source_id, title, html, mood, now, source)
    turns = turns_of(session=session, campaign_id=editor.campaign_id)
    outcome = upsert_entry(
        session=session, blog=blog, item=item, turns=turns, index=EntryIndex(session, blog), now=now
    )
    if mail is not None and outcome != "same":
        play_mail.entries_stored(session=session, mail=mail, entries=[entry], now=now)
        session.refresh(entry)
        webmentions.queue_links(session=session, entry=entry, base_url=mail.base_url, now=now)
    return outcome


def store_note(
    *,
    session: Session,
    entry: Entry,
    author: Character,
    body_markdown: str,
    now: datetime,
    stance: str | None = None,
    fate: str | None = None,
    mail: MailSettings | None = None,
    reply_to: Note | None = None,
) -> Note:
    """Store a note in the writer's character's persona, with no play checks (a note as a
    feed brings it, whenever it arrives). A stance picked on the form is written as an
    explicit marker, so it reads the same way as a marker typed in a comment. With `mail`,
    the entry's player is told (not when it is their own note). `reply_to`: the note of
    `entry` it answers."""
    text = _note_text(body_markdown, stance, fate)
    html = rendered(session=session, text=text)
    return _store_note_html(
        session=session,
        entry=entry,
        author=author,
        html=html,
        fate=fate,
        now=now,
        mail=mail,
        parent_note_id=None if reply_to is None else reply_to.id,
    )


def _note_text(body_markdown: str, stance: str | None, fate: str | None) -> str:
    """The note as stored: the chosen position as a marker line first, unless the text
    already reads as that position (issue #27 item 4: "Oppose. He lied." chosen as Oppose
    shows "Oppose." once)."""
    marker = STANCE_MARKERS.get(stance or "none", "")
    if marker and nw.read_stance(body_markdown).stance.value == stance:
        marker = ""
    text = f"{marker}\n\n{body_markdown}".strip() if marker else body_markdown
    if not text.strip():
        raise UserError("a note needs some text")
    check_length(body_markdown, limits.NOTE_BODY, "a note")
    check_length((fate or "").strip(), limits.FATE, "the fate you wish")
    return text


def _store_note_html(
    *,
    session: Session,
    entry: Entry,
    author: Character,
    html: str,
    fate: str | None,
    now: datetime,
    mail: MailSettings | None,
    parent_note_id: int | None = None,
) -> Note:
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
    upsert_note(
        session=session,
        entry=entry,
        item=item,
        author_id=author.id,
        now=now,
        parent_note_id=parent_note_id,
    )
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


# -- mentions (issue #29 item 4) -----------------------------------------------------------


def _mail_entry_mentions(
    session: Session,
    mail: MailSettings | None,
    campaign: Campaign,
    author: Character,
    entry: Entry,
    done: mentions.Rendered,
    now: datetime,
) -> None:
    """The players of the characters an entry names with "@" are mailed, once per entry.
    Every member reads an entry as it is posted (a hidden one takes no edits)."""
    if mail is None or not done.mentioned or entry.hidden_at is not None:
        return
    item = mentions.Item(
        key=f"entry:{entry.id}",
        what="an entry",
        title=entry.title,
        path=links.entry(campaign.slug, author.slug, row_id(entry.id)),
        html=done.html,
        by=author.name,
    )
    mentions.queue_mentions(
        session=session,
        settings=mail,
        campaign=campaign,
        item=item,
        mentioned=done.mentioned,
        author_user_id=author.user_id,
        may_read=mentions.everyone,
        now=now,
    )


def _mail_note_mentions(
    session: Session,
    mail: MailSettings | None,
    campaign: Campaign,
    author: Character,
    entry: Entry,
    note: Note,
    done: mentions.Rendered,
    now: datetime,
) -> None:
    """As `_mail_entry_mentions`, for a note (notes are taken only on shown entries)."""
    if mail is None or not done.mentioned:
        return
    on = session.get(Character, entry.character_id)
    assert on is not None  # the entry's foreign key
    item = mentions.Item(
        key=f"note:{note.id}",
        what="a note",
        title=entry.title,
        path=links.note(campaign.slug, on.slug, row_id(entry.id), row_id(note.id)),
        html=done.html,
        by=author.name,
    )
    mentions.queue_mentions(
        session=session,
        settings=mail,
        campaign=campaign,
        item=item,
        mentioned=done.mentioned,
        author_user_id=author.user_id,
        may_read=mentions.everyone,
        now=now,
    )
