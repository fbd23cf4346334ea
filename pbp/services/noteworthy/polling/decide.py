"""What a poll means for a blog: the pipeline's pure decider (issue #32 item 5).

No database, no clock, no I/O: a blog's stored state (`Job`), what the fetch found
(`FetchResult`) and what reading a changed feed brought (`Reading`) go in; a `Decision` comes
out, which `store` carries out:

- NOTHING_NEW: a 304 or the same bytes from the stored address. Only the poll record is
  written, batched with other feeds' (most polls);
- READ: new bytes: parse them, fetch further pages and comment feeds (`read`), then decide
  again (`after_read`);
- RECORD: nothing to store but the poll record (a failure, a feed that moved, not a feed);
- STORE: these documents' entries and notes, with the poll record, then mail the players
  concerned about what they bring;
- NOTHING: nothing to write (a WebSub delivery that is not a feed).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum

from adapters import FeedState, FetchResult, FetchStatus
from adapters.base import ParsedFeed, comment_feed_due, normalize_identifier
from adapters.schedule import apply_ttl
from pbp.services import audit_actions as lines
from pbp.services.noteworthy.websub import PUSHED_INTERVAL

DEFAULT_INTERVAL = timedelta(minutes=15)
DEADLINE_INTERVAL = timedelta(minutes=5)  # in the last hour before a turn's deadline
MAX_PAGES = 5  # Blogger paging on a blog's first poll
MAX_COMMENT_FEEDS = 50  # per blog per poll
ERROR_CHARS = 2000  # of a failure's message kept on the blog

# Decision, PollRecord and Validators are made for every feed a pass polls, most of them on
# its event loop: plain (not frozen) dataclasses, whose __init__ costs a fifth of a frozen
# one's. Nothing changes them once made.


@dataclass(frozen=True, slots=True)
class Job:
    """A blog as a poll finds it: what fetching and deciding need, read before the fetch."""

    blog_id: int
    campaign_id: int
    feed_url: str
    state: FeedState
    first_poll: bool
    kind: str | None
    deadline: datetime | None  # the campaign's open turn's
    pushed_until: datetime | None = None  # a WebSub hub pushes this feed until then
    hubs: frozenset[tuple[str, str]] = frozenset()  # its WebSub (hub, topic) pairs
    had_error: bool = False  # the last poll failed: a new failure is no news to the referee


@dataclass(frozen=True, slots=True)
class Reading:
    """What reading a feed brought: its documents (the feed, further pages, comment feeds),
    the comment counts of the entries whose comment feeds were read, and how many documents
    were fetched and parsed. `not_a_feed`: the message when the feed or a page of it did not
    parse (nothing of it is stored then)."""

    documents: tuple[ParsedFeed, ...] = ()
    comment_counts: Mapping[str, int | None] = field(default_factory=dict)
    fetched: int = 1
    parsed: int = 0
    not_a_feed: str | None = None


@dataclass(slots=True)
class Validators:
    """What the next poll's conditional request needs (adapters.fetch_types.FeedState)."""

    etag: str | None
    last_modified: str | None
    content_hash: str | None
    last_unconditional_at: datetime | None


@dataclass(slots=True)
class PollRecord:
    """What a poll writes on its blog: when, when next, its health, and on a success the
    validators (a failure keeps the stored ones: `validators` None). Writing it releases
    the poll's lease."""

    blog_id: int
    polled_at: datetime
    next_poll_at: datetime
    failure_count: int
    validators: Validators | None = None
    error: str | None = None
    gone: bool = False
    moved_to: str | None = None  # the blog's new feed address


#: An audit line for the referee (pbp.services.audit_actions); the store gives it the
#: blog's id.
Audit = lines.FeedMoved | lines.FeedAlert


class Action(StrEnum):
    NOTHING_NEW = "nothing_new"
    READ = "read"
    RECORD = "record"
    STORE = "store"
    NOTHING = "nothing"


@dataclass(slots=True)
class Decision:
    """What to do about one fetched (or pushed) feed; see the module's docstring. `status`
    and `error` are the poll's outcome (PollOutcome); `hub_document`: the feed whose WebSub
    hub to note; `comment_counts`: the stored comment count to set per entry key; `mail`:
    mail the players concerned about what the stored documents bring."""

    action: Action
    status: str
    error: str | None = None
    record: PollRecord | None = None
    audits: tuple[Audit, ...] = ()
    documents: tuple[ParsedFeed, ...] = ()
    hub_document: ParsedFeed | None = None
    hub_headers: dict[str, str] = field(default_factory=dict)  # its answer's (a Link hub)
    comment_counts: Mapping[str, int | None] = field(default_factory=dict)
    mail: bool = False


@dataclass(frozen=True, slots=True)
class CommentFeed:
    """A comment feed worth fetching. `entry_key`: the entry whose stored comment count
    becomes `count` once it is read (None: the site's comment feed, for no one entry)."""

    entry_key: str | None
    url: str
    count: int | None


def poll_interval(job: Job, now: datetime) -> timedelta:
    """Poll more often in the last hour before the open turn's deadline; a feed a WebSub
    hub pushes only every few hours, in case deliveries are lost."""
    if job.pushed_until and job.pushed_until > now:
        return PUSHED_INTERVAL
    if job.deadline and now <= job.deadline <= now + timedelta(hours=1):
        return DEADLINE_INTERVAL
    return DEFAULT_INTERVAL


def nothing_new(job: Job, result: FetchResult) -> bool:
    """A 304 or identical bytes from the stored address: nothing to parse or audit."""
    unchanged = result.status in (FetchStatus.NOT_MODIFIED, FetchStatus.UNCHANGED)
    return unchanged and result.moved_to in (None, job.feed_url)


def after_fetch(job: Job, result: FetchResult, now: datetime) -> Decision:
    """NOTHING_NEW, READ (new bytes), or RECORD (a failure, or a move with nothing new)."""
    status = result.status.value
    if nothing_new(job, result):
        record = _success(job, result, now, result.next_poll_at, moved_to=None)
        return Decision(Action.NOTHING_NEW, status, record=record)
    if result.status is FetchStatus.OK:
        return Decision(Action.READ, status)
    return after_read(job, result, Reading(), now)


def after_read(job: Job, result: FetchResult, reading: Reading, now: datetime) -> Decision:
    """STORE what the feed's documents bring, or RECORD the poll alone (a failure, a move
    with nothing new, a feed that does not parse)."""
    moved_to = result.moved_to if result.moved_to and result.moved_to != job.feed_url else None
    audits: list[Audit] = [lines.FeedMoved(old=job.feed_url, new=moved_to)] if moved_to else []
    status = result.status.value if reading.not_a_feed is None else "not_a_feed"
    error = reading.not_a_feed
    if error is None and result.failed:
        error = result.reason
    if error:
        gone = result.status is FetchStatus.GONE
        if (result.alert and not job.had_error) or gone:
            audits.append(lines.FeedAlert(reason=error))
        record = PollRecord(
            blog_id=job.blog_id,
            polled_at=now,
            next_poll_at=result.next_poll_at,
            # A feed that does not parse is a failure the fetch could not see.
            failure_count=result.failure_count + (status == "not_a_feed"),
            error=error[:ERROR_CHARS],
            gone=gone,
            moved_to=moved_to,
        )
        return Decision(Action.RECORD, status, error, record, tuple(audits))
    documents = reading.documents
    next_poll_at = result.next_poll_at
    for doc in documents:  # an RSS <ttl>, known only once parsed, can push the next poll back
        next_poll_at = apply_ttl(next_poll_at, now, doc.ttl_minutes)
    record = _success(job, result, now, next_poll_at, moved_to)
    if not documents:
        return Decision(Action.RECORD, status, error, record, tuple(audits))
    main = documents[0]
    return Decision(
        Action.STORE,
        status,
        error,
        record,
        tuple(audits),
        documents,
        hub_document=None if main.is_comment_feed else main,
        hub_headers=result.headers,
        comment_counts=reading.comment_counts,
        mail=True,
    )


def after_push(reading: Reading) -> Decision:
    """A WebSub hub's delivery: STORE it, or NOTHING if it is not a feed. No poll record:
    the next poll still compares with what it last fetched."""
    if reading.not_a_feed is not None:
        return Decision(Action.NOTHING, "not_a_feed", reading.not_a_feed)
    return Decision(Action.STORE, "pushed", documents=reading.documents, mail=True)


def _success(
    job: Job, result: FetchResult, now: datetime, next_poll_at: datetime, moved_to: str | None
) -> PollRecord:
    return PollRecord(
        blog_id=job.blog_id,
        polled_at=now,
        next_poll_at=next_poll_at,
        failure_count=result.failure_count,
        validators=Validators(
            result.etag, result.last_modified, result.content_hash, result.last_unconditional_at
        ),
        moved_to=moved_to,
    )


def next_page(job: Job, page: ParsedFeed, pages: int) -> str | None:
    """The further page to fetch after `page`, the `pages`-th read: Blogger's paging, on a
    blog's first poll only, at most MAX_PAGES pages."""
    if job.first_poll and page.next_page_url and pages < MAX_PAGES:
        return page.next_page_url
    return None


def entry_key(url: str | None, source_id: str | None) -> str:
    """How an entry is matched between a parsed feed and the database."""
    return normalize_identifier(url) or "guid:" + (normalize_identifier(source_id) or "")


def stored_key(url: str | None, source_id: str) -> str:
    """`entry_key` of a stored entry (its source id is stored normalized)."""
    return normalize_identifier(url) or source_id


def comment_feeds(parsed: ParsedFeed, known_counts: Mapping[str, int | None]) -> list[CommentFeed]:
    """The comment feeds worth fetching: an entry's whose count changed or is unknown; else,
    if some count changed, the site's comment feed. At most MAX_COMMENT_FEEDS."""
    wanted = []
    for source in parsed.comment_sources:
        key = entry_key(source.entry_url, source.entry_source_id)
        if comment_feed_due(source, known_counts.get(key)):
            assert source.feed_url is not None  # comment_feed_due: no feed, not due
            wanted.append(CommentFeed(key, source.feed_url, source.count))
    if (
        not wanted
        and parsed.site_comments_url
        and any(
            known_counts.get(entry_key(s.entry_url, s.entry_source_id)) != s.count
            for s in parsed.comment_sources
        )
    ):
        wanted.append(CommentFeed(None, parsed.site_comments_url, None))
    return wanted[:MAX_COMMENT_FEEDS]
