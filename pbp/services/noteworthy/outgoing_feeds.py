"""What pbp's own Atom feeds contain: built-in blogs, their notes, the campaign, events."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from markupsafe import escape
from sqlmodel import Session, col, select

from pbp import links
from pbp.models import Campaign, Character, Entry, Event, Note, Turn

LIMIT = 50
# An entry its author hid, and the notes on it, leave the feeds (hidden_entries).
SHOWN = col(Entry.hidden_at).is_(None)


@dataclass
class FeedItem:
    kind: str  # "entry" | "note" | "event"
    id: int
    title: str
    html: str
    published: datetime
    updated: datetime
    author: str
    mood: str | None = None
    link_path: str = ""
    in_reply_to: int | None = None  # an entry id, or a note's for a reply (RFC 4685)
    in_reply_to_kind: str = "entry"  # "note" for a reply to a note (issue #29 item 3)
    in_reply_to_path: str = ""  # the page of what it answers

    @property
    def content_html(self) -> str:
        """The body, with the mood as a "Current mood:" line so any reader shows it."""
        if not self.mood:
            return self.html
        return f"<p><b>Current mood:</b> {escape(self.mood)}</p>{self.html}"


def _entry_item(campaign: Campaign, entry: Entry, author: Character) -> FeedItem:
    published = entry.published_at or entry.first_seen_at
    return FeedItem(
        kind="entry",
        id=entry.id,
        title=entry.title or "(untitled)",
        html=entry.body_html,
        published=published,
        updated=entry.updated_at or published,
        author=author.name,
        mood=entry.mood_raw,
        link_path=links.entry(campaign.slug, author.slug, entry.id),
    )


def blog_entries(*, session: Session, campaign: Campaign, character: Character) -> list[FeedItem]:
    rows = session.exec(
        select(Entry)
        .where(Entry.character_id == character.id, SHOWN)
        .order_by(col(Entry.published_at).desc(), col(Entry.id).desc())
        .limit(LIMIT)
    )
    return [_entry_item(campaign, e, character) for e in rows]


def blog_notes(*, session: Session, campaign: Campaign, character: Character) -> list[FeedItem]:
    rows = session.exec(
        select(Note, Character)
        .join(Entry, col(Entry.id) == Note.entry_id)
        .outerjoin(Character, col(Character.id) == Note.author_character_id)
        .where(Entry.character_id == character.id, SHOWN)
        .order_by(col(Note.published_at).desc(), col(Note.id).desc())
        .limit(LIMIT)
    )
    items = []
    for note, author in rows:
        published = note.published_at or note.first_seen_at
        items.append(
            FeedItem(
                kind="note",
                id=note.id,
                title=f"Note by {author.name if author else note.author_name}",
                html=note.body_html,
                published=published,
                updated=published,
                author=author.name if author else note.author_name,
                link_path=links.note(campaign.slug, character.slug, note.entry_id, note.id),
                **_answers(campaign, character, note),
            )
        )
    return items


def _answers(campaign: Campaign, character: Character, note: Note) -> dict:
    """RFC 4685's thr:in-reply-to of a note: the note it answers, else its entry."""
    if note.parent_note_id is not None:
        path = links.note(campaign.slug, character.slug, note.entry_id, note.parent_note_id)
        return {
            "in_reply_to": note.parent_note_id,
            "in_reply_to_kind": "note",
            "in_reply_to_path": path,
        }
    path = links.entry(campaign.slug, character.slug, note.entry_id)
    return {"in_reply_to": note.entry_id, "in_reply_to_path": path}


def event_items(*, session: Session, campaign: Campaign) -> list[FeedItem]:
    """The referee's general events (tailored texts are private to their characters)."""
    rows = session.exec(
        select(Event, Turn)
        .join(Turn, col(Turn.id) == Event.turn_id)
        .where(Turn.campaign_id == campaign.id, Event.mode == "all")
        .order_by(col(Turn.number).desc())
        .limit(LIMIT)
    )
    return [
        FeedItem(
            kind="event",
            id=event.id,
            title=f"Turn {turn.number}",
            html=_paragraphs(event.text),
            published=event.created_at,
            updated=event.created_at,
            author="The referee",
            link_path=links.turn(campaign.slug, turn.number),
        )
        for event, turn in rows
    ]


def campaign_items(*, session: Session, campaign: Campaign) -> list[FeedItem]:
    rows = session.exec(
        select(Entry, Character)
        .join(Character, col(Character.id) == Entry.character_id)
        .where(Character.campaign_id == campaign.id, SHOWN)
        .order_by(col(Entry.published_at).desc(), col(Entry.id).desc())
        .limit(LIMIT)
    )
    items = [_entry_item(campaign, e, c) for e, c in rows]
    items += event_items(session=session, campaign=campaign)
    return sorted(items, key=lambda i: i.published, reverse=True)[:LIMIT]


def _paragraphs(text: str) -> str:
    return "".join(f"<p>{escape(p.strip())}</p>" for p in text.split("\n\n") if p.strip())
