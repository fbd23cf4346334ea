"""Webmention (W3C), issue #31 item 4: pbp's entry pages receive mentions, and its
built-in blog sends them.

Receiving. Anyone may POST `source` and `target` to the endpoint pbp advertises
(pbp.web.webmention). `receive` checks only what needs no fetch (both are web addresses,
the target is one of pbp's entry pages, the source is not the target) and stores the
mention as pending; `verify_received`, a scheduler job, fetches the source through the
SSRF-guarded fetcher and checks that it links to the target. A verified mention is a note
on the entry, read from the source's microformats2 (h-entry, p-author). It is credited as
notes read from other blogs are (pbp.services.noteworthy.commenters): the source's address
is its verified identity, so it counts for a character when the referee mapped that
address, or a player declared it or an address it lies under (their site: a post at
`https://bram.example/2026/reply` is under `https://bram.example`). A mention whose source
no longer links (or is gone, 410) removes its note.

Sending. When a built-in entry is stored with links in it, `queue_links` queues one mention
per linked page, in the same transaction; `send_queued`, a scheduler job, discovers each
target's endpoint and POSTs the entry's page as the source, both through the SSRF-guarded
fetcher.
"""

from __future__ import annotations

import re
from datetime import datetime
from urllib.parse import urlsplit

from sqlmodel import Session, col, select

from adapters.base import FeedNote
from adapters.errors import FeedError
from adapters.fetch import Fetcher
from adapters.fetch_types import Document
from adapters.sanitize import text_to_html
from adapters.webmention import (
    discover_endpoint,
    is_web_url,
    links_to,
    read_source,
    without_fragment,
)
from pbp import links
from pbp.errors import Malformed, NotFound
from pbp.models import Campaign, Character, Entry, Note, ReceivedMention, SentMention
from pbp.models.webmention import MENTION_URL
from pbp.services import campaigns, lookups
from pbp.services.mail.settings import MailSettings
from pbp.services.noteworthy import commenters, play_mail
from pbp.services.noteworthy.ingest import upsert_note

ENTRY_PATH = re.compile(r"/c/([^/]+)/([^/]+)/(\d+)")
BATCH = 20  # mentions one job run handles
SEND_ATTEMPTS = 3


def _checked_url(value: str, what: str) -> str:
    value = (value or "").strip()
    if not value or len(value) > MENTION_URL or not is_web_url(value):
        raise Malformed(
            f"the {what} must be an http(s) address of at most {MENTION_URL} characters"
        )
    return value


def entry_of_target(*, session: Session, base_url: str, target: str) -> Entry:
    """The entry whose page `target` is: pbp's own address, /c/<campaign>/<character>/<id>."""
    base = urlsplit(base_url)
    parts = urlsplit(target)
    path = parts.path
    prefix = base.path.rstrip("/")
    if parts.netloc.lower() != base.netloc.lower() or not path.startswith(prefix + "/"):
        raise Malformed("the target is not a page of this pbp")
    found = ENTRY_PATH.fullmatch(path[len(prefix) :].rstrip("/"))
    if found is None:
        raise Malformed("the target is not an entry's page: pbp takes mentions of entries")
    slug, character_slug, entry_id = found.groups()
    campaign = campaigns.get_campaign(session=session, slug=slug)
    row = lookups.get_entry(session=session, campaign=campaign, entry_id=int(entry_id))
    if row.author.slug != character_slug:
        raise NotFound("there is no such entry")
    return row.entry


def receive(
    *, session: Session, base_url: str, source: str, target: str, now: datetime
) -> ReceivedMention:
    """Store a Webmention to verify later (W3C: "receivers SHOULD queue and process
    asynchronously"). A source equal to the target is refused, as is a target that is not
    an entry of pbp. Sent again, the mention is verified again."""
    source = _checked_url(source, "source")
    target = _checked_url(target, "target")
    if without_fragment(source) == without_fragment(target):
        raise Malformed("the source is the target: a page cannot mention itself")
    entry = entry_of_target(session=session, base_url=base_url, target=target)
    row = session.exec(
        select(ReceivedMention).where(
            ReceivedMention.entry_id == entry.id, ReceivedMention.source == source
        )
    ).first()
    if row is None:
        row = ReceivedMention(entry_id=entry.id, source=source, target=target, received_at=now)
    row.status, row.reason, row.target, row.received_at = "pending", None, target, now
    session.add(row)
    session.flush()
    return row


def credited_character(*, session: Session, campaign_id: int, source: str) -> int | None:
    """The character whose verified identity the source's address is, or lies under."""
    aliases = commenters.standing_aliases(session=session, campaign_id=campaign_id)
    key = commenters.identity_key("uri", source)
    while key:
        if ("uri", key) in aliases:
            return aliases[("uri", key)]
        if "/" not in key:
            return None
        key = key.rsplit("/", 1)[0]
    return None


def verify_received(
    *, session: Session, fetcher: Fetcher, now: datetime, mail: MailSettings | None
) -> int:
    """The job: verify pending mentions, each fetch with no transaction open, each result
    committed on its own. Returns how many were handled."""
    pending = session.exec(
        select(ReceivedMention.id, ReceivedMention.source, ReceivedMention.target)
        .where(ReceivedMention.status == "pending")
        .order_by(col(ReceivedMention.id))
        .limit(BATCH)
    ).all()
    session.commit()
    for mention_id, source, target in pending:
        try:
            document = fetcher.request(source, headers={"Accept": "text/html, */*;q=0.5"})
        except FeedError as exc:
            _refuse(session, mention_id, f"the source could not be read: {exc}"[:500])
            continue
        if document.status == 410:
            _refuse(session, mention_id, "the source is gone (410): its note is removed")
        elif document.status != 200:
            _refuse(session, mention_id, f"the source answered HTTP {document.status}")
        else:
            page = read_source(document)
            if not links_to(page, target):
                _refuse(session, mention_id, "the source does not link to the target")
            else:
                _verified(session, mention_id, source, page, now, mail)
        session.commit()
    return len(pending)


def _refuse(session: Session, mention_id: int, reason: str) -> None:
    """Refused: and a note it made before is removed (the source changed or went)."""
    row = session.get(ReceivedMention, mention_id)
    if row is None:
        return
    if row.note_id is not None:
        note = session.get(Note, row.note_id)
        if note is not None:
            session.delete(note)
        row.note_id = None
    row.status, row.reason = "refused", reason
    session.add(row)
    session.commit()


def _verified(session, mention_id: int, source: str, page, now: datetime, mail) -> None:
    row = session.get(ReceivedMention, mention_id)
    entry = session.get(Entry, row.entry_id) if row is not None else None
    character = session.get(Character, entry.character_id) if entry is not None else None
    if row is None or entry is None or character is None:
        return
    host = urlsplit(source).hostname or source
    body = text_to_html(page.content or f"Mentioned on {host}")
    body += f'<p class="muted">Via <a href="{_attr(source)}">{_attr(host)}</a></p>'
    item = FeedNote(
        source_id=f"webmention:{source}",
        url=source,
        parent_source_id=None,
        parent_url=None,
        author_name=page.author_name or host,
        author_uri=source,
        published=now,
        updated=now,
        body_html=body,
        title="",
        fallback_key=f"webmention:{source}",
    )
    author = credited_character(session=session, campaign_id=character.campaign_id, source=source)
    outcome = upsert_note(session=session, entry=entry, item=item, author_id=author, now=now)
    session.flush()
    note = session.exec(
        select(Note).where(Note.entry_id == entry.id, Note.source_id == item.identity_key[:1000])
    ).one()
    row.note_id, row.status, row.reason, row.verified_at = note.id, "verified", None, now
    session.add(row)
    if outcome == "new" and mail is not None:
        play_mail.notes_arrived(session=session, mail=mail, notes=[note], now=now)


def _attr(value: str) -> str:
    return value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")


# -- sending --------------------------------------------------------------------------------


def queue_links(*, session: Session, entry: Entry, base_url: str, now: datetime) -> int:
    """One mention to send per page the entry links to (not pbp's own pages); in the
    transaction that stores the entry. A link already queued or sent is not queued again."""
    own = urlsplit(base_url).netloc.lower()
    page = read_source(Document("", base_url, None, 200, {}, (entry.body_html or "").encode()))
    targets = sorted(
        url
        for url in page.links
        if is_web_url(url) and len(url) <= MENTION_URL and urlsplit(url).netloc.lower() != own
    )
    known = set(
        session.exec(select(SentMention.target).where(SentMention.entry_id == entry.id)).all()
    )
    for target in targets:
        if target not in known:
            session.add(SentMention(entry_id=entry.id, target=target, created_at=now))
    session.flush()
    return len(set(targets) - known)


def send_queued(*, session: Session, fetcher: Fetcher, base_url: str, now: datetime) -> int:
    """The job: send queued mentions (discover, then POST), each with no transaction open
    while it talks to the target. Returns how many were tried."""
    rows = session.exec(
        select(SentMention, Entry, Character, Campaign)
        .join(Entry, col(Entry.id) == SentMention.entry_id)
        .join(Character, col(Character.id) == Entry.character_id)
        .join(Campaign, col(Campaign.id) == Character.campaign_id)
        .where(SentMention.status == "queued", col(Entry.hidden_at).is_(None))
        .order_by(col(SentMention.id))
        .limit(BATCH)
    ).all()
    work = [
        (m.id, m.target, links.absolute(base_url, links.entry(c.slug, ch.slug, e.id)))
        for m, e, ch, c in rows
    ]
    session.commit()
    for mention_id, target, source in work:
        status, endpoint, reason = _send_one(fetcher, source, target)
        row = session.get(SentMention, mention_id)
        if row is None:
            continue
        row.attempts += 1
        row.endpoint, row.reason = endpoint, reason
        if status == "failed" and row.attempts < SEND_ATTEMPTS:
            status = "queued"  # tried again at the next run
        row.status = status
        row.sent_at = now if status == "sent" else None
        session.add(row)
        session.commit()
    return len(work)


def _send_one(fetcher: Fetcher, source: str, target: str) -> tuple[str, str | None, str | None]:
    """(status, endpoint, reason) of one mention."""
    try:
        document = fetcher.request(target, headers={"Accept": "text/html, */*;q=0.5"})
        endpoint = discover_endpoint(document) if document.status == 200 else None
        if endpoint is None:
            return "no_endpoint", None, None
        if not is_web_url(endpoint):
            return "failed", None, "the endpoint is not an http(s) address"
        answer = fetcher.post_form(endpoint, {"source": source, "target": target})
    except FeedError as exc:
        return "failed", None, str(exc)[:500]
    if 200 <= answer.status < 300:
        return "sent", endpoint, None
    return "failed", endpoint, f"the endpoint answered HTTP {answer.status}"


def webmention_pass(app) -> None:
    """The scheduler's job: verify the mentions received, send the ones queued (the app's
    fetcher: the poller's SSRF policy, timeouts and per-host limit)."""
    from pbp.db import database, writing
    from pbp.models import utcnow
    from pbp.services.noteworthy import polling

    settings = MailSettings.from_config(app.config)
    fetcher = polling.app_fetcher(app)
    with writing(), database(app).session_factory() as session:
        verify_received(session=session, fetcher=fetcher, now=utcnow(), mail=settings)
        send_queued(session=session, fetcher=fetcher, base_url=settings.base_url, now=utcnow())
