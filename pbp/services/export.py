"""A campaign to keep: every table as JSON for the referee, and a static HTML archive.

A finished campaign is a story people keep, so the archive is plain files that open from
disk with no server: relative links only, the stylesheet shipped beside the pages, no
JavaScript. Both read a fixed number of queries whatever the campaign's size (one per
table). The JSON is the referee's: it holds tailored events, rulings and the audit log,
but no email addresses, password hashes, invite links or feed-polling internals.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from urllib.parse import urljoin, urlsplit

import nh3
from sqlmodel import Session, col, select

from adapters.sanitize import ALLOWED_TAGS, LINK_REL, URL_SCHEMES
from pbp import ROOT, links, templating
from pbp.models import (
    AuditLog,
    AuthorAlias,
    Blog,
    Campaign,
    Challenge,
    Character,
    Entry,
    EntryRevision,
    Event,
    Membership,
    Note,
    Ruling,
    Turn,
    User,
)
from pbp.services import icons
from pbp.services.noteworthy import note_counts
from pbp.services.noteworthy.history import History, TurnLine, build_history
from pbp.services.noteworthy.note_counts import NoteCount
from pbp.services.noteworthy.svg_chart import standings_chart
from pbp.templating import web_url

FORMAT, VERSION = "pbp-campaign", 1
#: What a blog is in the story; ETags, leases, poll times and errors are plumbing.
BLOG_FIELDS = (
    "id",
    "character_id",
    "kind",
    "feed_url",
    "home_url",
    "adapter_kind",
    "gone",
    "created_at",
)
MEMBER_FIELDS = ("id", "user_id", "role", "created_at")
EXPORT_TABLES = (
    "members",
    "characters",
    "blogs",
    "author_aliases",
    "turns",
    "events",
    "entries",
    "revisions",
    "notes",
    "challenges",
    "rulings",
    "audit_log",
)
ARCHIVE_TABLES = ("characters", "blogs", "turns", "events", "entries", "notes", "challenges")
STATIC_CSS = ROOT / "pbp" / "static" / "pbp.css"
ARCHIVE_CSS = ROOT / "pbp" / "static" / "archive.css"


def _queries(campaign_id: int) -> dict:
    """One SELECT per table, each scoped to the campaign and in a stable order."""
    mine = Character.campaign_id == campaign_id
    of_turns = Turn.campaign_id == campaign_id
    return {
        "members": select(Membership, User.display_name)
        .join(User, col(User.id) == Membership.user_id)
        .where(Membership.campaign_id == campaign_id)
        .order_by(col(Membership.id)),
        "characters": select(Character).where(mine).order_by(col(Character.id)),
        "blogs": select(Blog)
        .join(Character, col(Character.id) == Blog.character_id)
        .where(mine)
        .order_by(col(Blog.id)),
        "author_aliases": select(AuthorAlias)
        .where(AuthorAlias.campaign_id == campaign_id)
        .order_by(col(AuthorAlias.id)),
        "turns": select(Turn).where(of_turns).order_by(col(Turn.number)),
        "events": select(Event)
        .join(Turn, col(Turn.id) == Event.turn_id)
        .where(of_turns)
        .order_by(col(Turn.number), col(Event.id)),
        "entries": select(Entry)
        .join(Character, col(Character.id) == Entry.character_id)
        .where(mine)
        .order_by(col(Entry.published_at), col(Entry.id)),
        "revisions": select(EntryRevision)
        .join(Entry, col(Entry.id) == EntryRevision.entry_id)
        .join(Character, col(Character.id) == Entry.character_id)
        .where(mine)
        .order_by(col(EntryRevision.seen_at), col(EntryRevision.id)),
        "notes": select(Note)
        .join(Entry, col(Entry.id) == Note.entry_id)
        .join(Character, col(Character.id) == Entry.character_id)
        .where(mine)
        .order_by(col(Note.published_at), col(Note.id)),
        "challenges": select(Challenge)
        .join(Turn, col(Turn.id) == Challenge.turn_id)
        .where(of_turns)
        .order_by(col(Challenge.made_at), col(Challenge.id)),
        "rulings": select(Ruling)
        .where(Ruling.campaign_id == campaign_id)
        .order_by(col(Ruling.created_at), col(Ruling.id)),
        "audit_log": select(AuditLog)
        .where(AuditLog.campaign_id == campaign_id)
        .order_by(col(AuditLog.created_at), col(AuditLog.id)),
    }


def _load(session: Session, campaign: Campaign, tables) -> dict[str, list]:
    queries = _queries(campaign.id)
    return {name: list(session.exec(queries[name]).all()) for name in tables}


# --- JSON ------------------------------------------------------------------------------


def _value(value):
    return value.isoformat() if isinstance(value, datetime) else value


def _row(obj, fields=None) -> dict:
    data = obj.model_dump()
    return {k: _value(v) for k, v in data.items() if fields is None or k in fields}


#: Anything shaped like an email address, wherever it sits in an audit detail.
EMAIL_SHAPED = re.compile(r"[^\s@<>\"'(),;:]+@[^\s@<>\"'(),;:]+\.[^\s@<>\"'(),;:]+")
WITHHELD = "(address withheld)"


def _without_addresses(value):
    """An audit detail with every email address replaced: the log records invites to an
    address (and may record more later), and the export promises none (issue #16)."""
    if isinstance(value, str):
        return EMAIL_SHAPED.sub(WITHHELD, value)
    if isinstance(value, dict):
        return {k: _without_addresses(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_addresses(v) for v in value]
    return value


def _audit_row(entry: AuditLog) -> dict:
    row = _row(entry)
    row["detail"] = _without_addresses(row["detail"])
    return row


def export_campaign(*, session: Session, campaign: Campaign) -> dict:
    """Every table of the campaign as JSON-able data (one query per table)."""
    rows = _load(session, campaign, EXPORT_TABLES)
    revisions = defaultdict(list)
    for revision in rows["revisions"]:
        revisions[revision.entry_id].append(_row(revision))
    return {
        "format": FORMAT,
        "version": VERSION,
        "campaign": _row(campaign),
        "members": [
            {**_row(m, MEMBER_FIELDS), "display_name": name} for m, name in rows["members"]
        ],
        "characters": [_row(c) for c in rows["characters"]],
        "blogs": [_row(b, BLOG_FIELDS) for b in rows["blogs"]],
        "author_aliases": [_row(a) for a in rows["author_aliases"]],
        "turns": [_row(t) for t in rows["turns"]],
        "events": [_row(e) for e in rows["events"]],
        "entries": [{**_row(e), "revisions": revisions[e.id]} for e in rows["entries"]],
        "notes": [_row(n) for n in rows["notes"]],
        "challenges": [_row(c) for c in rows["challenges"]],
        "rulings": [_row(r) for r in rows["rulings"]],
        "audit_log": [_audit_row(a) for a in rows["audit_log"]],
    }


# --- the static archive -----------------------------------------------------------------


@dataclass
class ArchivedNote:
    note: Note
    author: str
    body_html: str
    count: NoteCount | None = None  # how it counted, from its resolved turn's result
    icon: icons.IconView | None = None  # issue #33 item 1: picked, or the default


@dataclass
class ArchivedEntry:
    entry: Entry
    author: Character
    turn_number: int | None
    body_html: str
    url: str | None  # the original post, when it lives on the web
    notes: list[ArchivedNote] = field(default_factory=list)
    icon: icons.IconView | None = None  # issue #33 item 1: picked, or the default


@dataclass
class ArchivedTurn:
    line: TurnLine
    events: list[tuple[Event, Character | None]]
    entries: list[ArchivedEntry]


def _localizer(base: str | None):
    """An nh3 attribute filter: links in stored HTML made absolute against the page they
    came from, because a relative link has nothing to point at inside the archive."""

    def rewrite(_tag: str, attribute: str, value: str) -> str | None:
        if attribute not in ("href", "src", "cite"):
            return value
        try:
            if urlsplit(value).scheme:
                return value  # http, https or mailto: the sanitizer allowed nothing else
            if value.startswith("//"):
                return "https:" + value
            return web_url(urljoin(base, value)) if base else None
        except ValueError:
            return None

    return rewrite


def localize_html(html: str, base: str | None) -> str:
    """Stored (already sanitized) HTML with every relative link resolved or removed."""
    return nh3.clean(
        html,
        tags=set(ALLOWED_TAGS),
        url_schemes=set(URL_SCHEMES),
        link_rel=LINK_REL,
        attribute_filter=_localizer(base),
    )


def _entry_base(entry: Entry, author: Character, campaign: Campaign, base_url: str | None):
    if web_url(entry.url):
        return entry.url
    if base_url:
        return links.absolute(base_url, links.entry(campaign.slug, author.slug, entry.id))
    return None


def turn_path(number: int) -> str:
    return f"turns/turn-{number}.html"


def blog_path(character) -> str:
    return f"blogs/{character.slug}.html"


@dataclass
class Archive:
    """Everything the archive's templates show."""

    campaign: Campaign
    history: History
    characters: list[Character]
    blogs: dict[int, Blog]
    turns: list[ArchivedTurn]
    entries_by_author: dict[int, list[ArchivedEntry]]
    chart: str
    # The icons the pages show, by id: written into the archive as icons/<id>.png.
    pictures: dict[int, bytes] = field(default_factory=dict)

    def turn_path(self, number: int) -> str:
        return turn_path(number)

    def blog_path(self, character) -> str:
        return blog_path(character)


def gather_archive(*, session: Session, campaign: Campaign, base_url: str | None = None) -> Archive:
    """The archive's content in one query per table."""
    rows = _load(session, campaign, ARCHIVE_TABLES)
    characters = {c.id: c for c in rows["characters"]}
    history = build_history(rows["characters"], rows["turns"], rows["challenges"])
    number_of = {t.id: t.number for t in rows["turns"]}
    entries, bases = {}, {}
    for e in rows["entries"]:
        if e.hidden_at is not None:
            continue  # hidden by its author (hidden_entries): not part of the story kept
        author = characters[e.character_id]
        bases[e.id] = _entry_base(e, author, campaign, base_url)
        entries[e.id] = ArchivedEntry(
            entry=e,
            author=author,
            turn_number=number_of.get(e.turn_id),
            body_html=localize_html(e.body_html, bases[e.id]),
            url=web_url(e.url),
        )
    counts: dict[object, NoteCount] = {}
    for turn in rows["turns"]:
        counts |= note_counts.of_turn_result(turn.result if turn.status == "resolved" else None)
    for note in rows["notes"]:
        if note.entry_id not in entries:
            continue  # on a hidden entry
        mapped = characters.get(note.author_character_id)
        author = mapped.name if mapped else f"{note.author_name or 'anonymous'} (unmapped)"
        body = localize_html(note.body_html, bases[note.entry_id])
        archived = ArchivedNote(note, author, body, counts.get(note.id))
        entries[note.entry_id].notes.append(archived)
    events = defaultdict(list)
    for event in rows["events"]:
        events[event.turn_id].append((event, characters.get(event.character_id)))
    by_turn, by_author = defaultdict(list), defaultdict(list)
    for item in entries.values():
        by_turn[item.turn_number].append(item)
        by_author[item.author.id].append(item)
    pictures = _icons(session, entries.values())
    lines = {line.number: line for line in history.turns}
    turns = [ArchivedTurn(lines[t.number], events[t.id], by_turn[t.number]) for t in rows["turns"]]
    return Archive(
        campaign=campaign,
        history=history,
        characters=[characters[p.id] for p in history.characters],
        blogs={b.character_id: b for b in rows["blogs"]},
        turns=turns,
        entries_by_author=by_author,
        chart=standings_chart(history, title=f"Standings of {campaign.name}"),
        pictures=pictures,
    )


def _icons(session: Session, entries) -> dict[int, bytes]:
    """Set each kept entry's and note's icon (issue #33 item 1); the pictures they use."""
    entries = list(entries)
    pairs = [(e.entry.character_id, e.entry.icon_id) for e in entries]
    pairs += [(n.note.author_character_id, n.note.icon_id) for e in entries for n in e.notes]
    faces = icons.shown(session=session, pairs=pairs)
    for item in entries:
        item.icon = faces.get((item.entry.character_id, item.entry.icon_id))
        for n in item.notes:
            n.icon = faces.get((n.note.author_character_id, n.note.icon_id))
    return icons.pictures(session=session, icon_ids={f.id for f in faces.values()})


def render_pages(archive: Archive) -> dict[str, str]:
    """Path inside the archive -> HTML page."""
    env = templating.environment()
    common = {"a": archive, "campaign": archive.campaign, "history": archive.history}
    pages = {"index.html": env.get_template("archive/index.html").render(root="", **common)}
    turns = archive.turns
    for i, turn in enumerate(turns):
        pages[turn_path(turn.line.number)] = env.get_template("archive/turn.html").render(
            root="../",
            turn=turn,
            previous=turns[i - 1].line.number if i > 0 else None,
            next=turns[i + 1].line.number if i + 1 < len(turns) else None,
            **common,
        )
    for character in archive.characters:
        pages[blog_path(character)] = env.get_template("archive/blog.html").render(
            root="../",
            character=character,
            blog=archive.blogs.get(character.id),
            home_url=web_url(getattr(archive.blogs.get(character.id), "home_url", None)),
            entries=archive.entries_by_author.get(character.id, []),
            **common,
        )
    return pages


def _stamp(archive: Archive) -> tuple:
    """Files dated at the campaign's last turn change: the same campaign gives the same
    bytes, and the dates mean something when unpacked."""
    moments: list[datetime | None] = [archive.campaign.created_at]
    for turn in archive.turns:
        moments += [turn.line.opened_at, turn.line.resolved_at]
    latest = max(m for m in moments if m is not None)
    return max(latest.timetuple()[:6], (1980, 1, 1, 0, 0, 0))


def archive_zip(*, session: Session, campaign: Campaign, base_url: str | None = None) -> bytes:
    """The campaign as a zip of static HTML pages under a folder named after it.

    `base_url` (the site's address) keeps relative links inside built-in entries
    pointing at the live site; without it they become plain text.
    """
    archive = gather_archive(session=session, campaign=campaign, base_url=base_url)
    files = render_pages(archive)
    files["style.css"] = STATIC_CSS.read_text() + "\n" + ARCHIVE_CSS.read_text()
    stamp, buffer = _stamp(archive), io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(files, key=lambda p: (p != "index.html", p)):
            info = zipfile.ZipInfo(f"{campaign.slug}/{path}", date_time=stamp)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, files[path].encode("utf-8"))
        for icon_id, png in sorted(archive.pictures.items()):
            info = zipfile.ZipInfo(f"{campaign.slug}/icons/{icon_id}.png", date_time=stamp)
            info.external_attr = 0o644 << 16
            zf.writestr(info, png)  # stored: a PNG is compressed already
    return buffer.getvalue()
