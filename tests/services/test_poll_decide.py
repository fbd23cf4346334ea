"""The polling pipeline's pure decider (pbp.services.noteworthy.polling.decide, issue #32 item
5): plain values in, a Decision out; no database, no clock, no network.

The fetch results are the real classification's (adapters.classify) of answers built here,
so each case is what the decider sees of that answer in a pass.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from adapters.base import FeedEntry, ParsedFeed
from adapters.classify import classify, content_hash, failed, start
from adapters.errors import BlockedURL, FeedUnreachable
from adapters.fetch_types import Document, FeedState, FetchResult, FetchStatus
from pbp.services.audit_actions import FeedAlert, FeedMoved
from pbp.services.noteworthy.polling.decide import (
    DEADLINE_INTERVAL,
    DEFAULT_INTERVAL,
    MAX_COMMENT_FEEDS,
    MAX_PAGES,
    Action,
    CommentFeed,
    Job,
    Reading,
    Validators,
    after_fetch,
    after_push,
    after_read,
    comment_feeds,
    entry_key,
    next_page,
    poll_interval,
)
from pbp.services.noteworthy.polling.store import record_values
from pbp.services.noteworthy.websub import PUSHED_INTERVAL

NOW = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
URL = "https://blog.example/feed.xml"
NEW_URL = "https://blog.example.org/feed.xml"
OLD_BODY = b"<rss><channel><title>A blog</title></channel></rss>"
NEW_BODY = b"<rss><channel><title>A blog, one more entry</title></channel></rss>"


def job(**changes) -> Job:
    """A blog polled before (ETag "v1", the old body's hash), no turn deadline near."""
    state = FeedState(
        URL,
        etag='"v1"',
        content_hash=content_hash(OLD_BODY),
        last_unconditional_at=NOW - timedelta(hours=1),
    )
    made = Job(
        blog_id=7,
        campaign_id=3,
        feed_url=URL,
        state=state,
        first_poll=False,
        kind=None,
        deadline=None,
    )
    return replace(made, **changes)


def answer(
    polled: Job,
    status: int,
    body: bytes = b"",
    headers: dict[str, str] | None = None,
    moved_to: str | None = None,
) -> FetchResult:
    """What a fetcher makes of this HTTP answer to the blog's conditional request."""
    _, base, unconditional = start(polled.state, NOW)
    document = Document(URL, moved_to or URL, moved_to, status, headers or {}, body)
    return classify(base, document, unconditional, DEFAULT_INTERVAL)


def broke(polled: Job, error: Exception) -> FetchResult:
    """What a fetcher makes of a request that raised `error`."""
    _, base, _ = start(polled.state, NOW)
    return failed(base, error, DEFAULT_INTERVAL)


def entry(n: int, *, comments: str | None = None, count: int | None = None) -> FeedEntry:
    return FeedEntry(
        source_id=f"tag:blog.example,2024:{n}",
        url=f"https://blog.example/{n}.html",
        title=f"Entry {n}",
        author=None,
        published=NOW,
        updated=None,
        body_html="<p>Played.</p>",
        raw_mood=None,
        mood_source=None,
        fallback_key=str(n),
        comment_feed_url=comments,
        comment_count=count,
    )


def feed(*entries: FeedEntry, **info) -> ParsedFeed:
    return ParsedFeed(kind="generic", title="A blog", site_url="https://blog.example/",
                      entries=entries, **info)  # fmt: skip


def comment_feed() -> ParsedFeed:
    return ParsedFeed(kind="generic", title="Comments", site_url=None, is_comment_feed=True)


def key(n: int) -> str:
    made = entry(n)
    return entry_key(made.url, made.source_id)


# --- nothing new ----------------------------------------------------------------------------


def test_a_304_from_the_stored_address_is_nothing_new_the_poll_record_only() -> None:
    polled = job()
    result = answer(polled, 304, headers={"etag": '"v1"'})
    decision = after_fetch(polled, result, NOW)
    assert decision.action is Action.NOTHING_NEW
    assert (decision.status, decision.error) == ("not_modified", None)
    assert (decision.audits, decision.documents, decision.mail) == ((), (), False)
    record = decision.record
    assert record is not None
    assert (record.blog_id, record.polled_at, record.failure_count) == (7, NOW, 0)
    assert record.next_poll_at == result.next_poll_at > NOW
    assert record.validators == Validators(
        '"v1"', None, content_hash(OLD_BODY), NOW - timedelta(hours=1)
    )
    assert (record.error, record.gone, record.moved_to) == (None, False, None)


def test_the_same_bytes_again_are_nothing_new_with_the_new_validators() -> None:
    polled = job()
    result = answer(polled, 200, OLD_BODY, headers={"etag": '"v2"'})
    decision = after_fetch(polled, result, NOW)
    assert decision.action is Action.NOTHING_NEW and decision.status == "unchanged_bytes"
    assert decision.record is not None and decision.record.validators is not None
    assert decision.record.validators.etag == '"v2"'


def test_a_nothing_new_record_sets_what_a_success_sets_and_releases_the_lease() -> None:
    decision = after_fetch(job(had_error=True), answer(job(), 304), NOW)
    assert decision.record is not None
    values = record_values(decision.record)
    assert values == {
        "last_polled_at": NOW,
        "next_poll_at": decision.record.next_poll_at,
        "failure_count": 0,
        "etag": '"v1"',
        "last_modified": None,
        "content_hash": content_hash(OLD_BODY),
        "last_unconditional_at": NOW - timedelta(hours=1),
        "last_success_at": NOW,
        "last_error": None,
        "gone": False,
        "lease_owner": None,
        "lease_until": None,
    }


# --- something new --------------------------------------------------------------------------


def test_new_bytes_are_read_before_anything_is_written() -> None:
    polled = job()
    decision = after_fetch(polled, answer(polled, 200, NEW_BODY), NOW)
    assert (decision.action, decision.status, decision.record) == (Action.READ, "ok", None)


def test_a_changed_feed_stores_its_documents_notes_its_hub_and_mails() -> None:
    polled = job()
    result = answer(polled, 200, NEW_BODY, headers={"etag": '"v2"', "link": "<h>; rel=hub"})
    main = feed(entry(1), entry(2, comments="https://blog.example/2/comments", count=4))
    reading = Reading((main, comment_feed()), {key(2): 4}, fetched=2, parsed=2)
    decision = after_read(polled, result, reading, NOW)
    assert decision.action is Action.STORE and decision.status == "ok"
    assert decision.documents == (main, comment_feed())
    assert decision.hub_document is main and decision.hub_headers == result.headers
    assert decision.comment_counts == {key(2): 4}
    assert decision.mail and decision.error is None and decision.audits == ()
    record = decision.record
    assert record is not None and record.validators is not None
    assert record.validators.etag == '"v2"'
    assert record.validators.content_hash == content_hash(NEW_BODY)
    assert record.next_poll_at == result.next_poll_at and record.failure_count == 0


def test_an_rss_ttl_pushes_the_next_poll_back() -> None:
    polled = job()
    result = answer(polled, 200, NEW_BODY)
    assert result.next_poll_at < NOW + timedelta(hours=2)
    reading = Reading((feed(entry(1), ttl_minutes=120),), parsed=1)
    decision = after_read(polled, result, reading, NOW)
    assert decision.record is not None
    assert decision.record.next_poll_at == NOW + timedelta(hours=2)


def test_a_comment_feed_first_notes_no_hub() -> None:
    polled = job()
    reading = Reading((comment_feed(),), parsed=1)
    decision = after_read(polled, answer(polled, 200, NEW_BODY), reading, NOW)
    assert decision.action is Action.STORE and decision.hub_document is None


def test_a_feed_that_does_not_parse_is_a_failure_the_fetch_could_not_see() -> None:
    polled = job()
    reading = Reading(fetched=1, parsed=0, not_a_feed="This address is a web page, not a feed.")
    decision = after_read(polled, answer(polled, 200, NEW_BODY), reading, NOW)
    assert decision.action is Action.RECORD
    assert decision.status == "not_a_feed"
    assert decision.error == "This address is a web page, not a feed."
    assert decision.audits == () and decision.documents == () and not decision.mail
    record = decision.record
    assert record is not None
    # The stored validators stay (the same bytes are parsed again next time).
    assert record.validators is None and record.failure_count == 1
    assert record.error == decision.error and not record.gone
    assert "etag" not in record_values(record)


# --- moves, failures, the referee's alerts --------------------------------------------------


def test_a_permanent_redirect_with_nothing_new_is_recorded_at_the_new_address() -> None:
    polled = job()
    decision = after_fetch(polled, answer(polled, 304, moved_to=NEW_URL), NOW)
    assert decision.action is Action.RECORD and decision.status == "not_modified"
    assert decision.audits == (FeedMoved(old=URL, new=NEW_URL),)
    assert decision.record is not None and decision.record.moved_to == NEW_URL
    assert decision.record.validators is not None  # a success at the new address
    assert record_values(decision.record)["feed_url"] == NEW_URL


def test_a_permanent_redirect_with_new_entries_stores_them_and_moves() -> None:
    polled = job()
    result = answer(polled, 200, NEW_BODY, moved_to=NEW_URL)
    assert after_fetch(polled, result, NOW).action is Action.READ
    decision = after_read(polled, result, Reading((feed(entry(1)),), parsed=1), NOW)
    assert decision.action is Action.STORE
    assert decision.audits == (FeedMoved(old=URL, new=NEW_URL),)


def test_a_redirect_back_to_the_stored_address_is_no_move() -> None:
    polled = job()
    decision = after_fetch(polled, answer(polled, 304, moved_to=URL), NOW)
    assert decision.action is Action.NOTHING_NEW and decision.audits == ()


@pytest.mark.parametrize("had_error", [False, True])
def test_a_gone_feed_is_always_told_to_the_referee(had_error: bool) -> None:
    polled = job(had_error=had_error)
    decision = after_fetch(polled, answer(polled, 410), NOW)
    assert decision.action is Action.RECORD and decision.status == "gone"
    assert decision.error is not None and decision.error.startswith("The feed is gone")
    assert decision.audits == (FeedAlert(reason=decision.error),)
    assert decision.record is not None and decision.record.gone
    assert record_values(decision.record)["gone"] is True


@pytest.mark.parametrize(
    ("failures_before", "had_error", "told"),
    [(0, False, False), (1, False, False), (2, False, True), (2, True, False), (5, True, False)],
)
def test_a_plain_failure_is_told_on_its_third_time_in_a_row_once(
    failures_before: int, had_error: bool, told: bool
) -> None:
    polled = job(had_error=had_error)
    polled = replace(polled, state=replace(polled.state, failure_count=failures_before))
    decision = after_fetch(polled, answer(polled, 500), NOW)
    assert decision.action is Action.RECORD and decision.status == "failed"
    assert decision.error == "The server answered HTTP 500; retrying with back-off."
    assert bool(decision.audits) is told
    record = decision.record
    assert record is not None and record.validators is None
    assert record.failure_count == failures_before + 1
    assert record.next_poll_at >= NOW + DEFAULT_INTERVAL  # backing off


def test_a_refused_address_is_told_at_once() -> None:
    polled = job()
    decision = after_fetch(polled, broke(polled, BlockedURL("Private address.")), NOW)
    assert decision.status == FetchStatus.BLOCKED.value
    assert decision.audits == (FeedAlert(reason="Private address."),)


def test_a_failures_message_is_kept_on_the_blog_up_to_2000_characters() -> None:
    polled = job()
    long = "The server said: " + "x" * 5000
    decision = after_fetch(polled, broke(polled, FeedUnreachable(long)), NOW)
    assert decision.error == long  # the outcome and the audit line keep it whole
    assert decision.record is not None and decision.record.error == long[:2000]


# --- WebSub pushes --------------------------------------------------------------------------


def test_a_push_is_stored_without_a_poll_record() -> None:
    main = feed(entry(1))
    decision = after_push(Reading((main,), fetched=0, parsed=1))
    assert (decision.action, decision.status) == (Action.STORE, "pushed")
    assert decision.documents == (main,) and decision.mail
    assert decision.record is None and decision.hub_document is None


def test_a_push_that_is_not_a_feed_writes_nothing() -> None:
    decision = after_push(Reading(fetched=0, parsed=0, not_a_feed="Not a feed."))
    assert (decision.action, decision.status, decision.error) == (
        Action.NOTHING,
        "not_a_feed",
        "Not a feed.",
    )
    assert decision.record is None and decision.documents == ()


# --- what to read: comment feeds, further pages ---------------------------------------------


def test_comment_feeds_are_read_for_new_and_changed_counts_only() -> None:
    main = feed(
        entry(1, comments="https://blog.example/1/c", count=3),  # count as stored
        entry(2, comments="https://blog.example/2/c", count=5),  # was 4
        entry(3, comments="https://blog.example/3/c", count=None),  # the feed does not say
        entry(4, comments="https://blog.example/4/c", count=1),  # a new entry
        entry(5, count=2),  # a count but no comment feed of its own
    )
    known = {key(1): 3, key(2): 4, key(3): 7, key(5): 1}
    assert comment_feeds(main, known) == [
        CommentFeed(key(2), "https://blog.example/2/c", 5),
        CommentFeed(key(3), "https://blog.example/3/c", None),
        CommentFeed(key(4), "https://blog.example/4/c", 1),
    ]


def test_the_sites_comment_feed_when_only_entries_without_their_own_changed() -> None:
    main = feed(entry(1, count=2), entry(2, count=0), site_comments_url="https://blog.example/c")
    assert comment_feeds(main, {key(1): 1, key(2): 0}) == [
        CommentFeed(None, "https://blog.example/c", None)
    ]
    assert comment_feeds(main, {key(1): 2, key(2): 0}) == []


def test_at_most_fifty_comment_feeds_a_poll() -> None:
    main = feed(*(entry(n, comments=f"https://blog.example/{n}/c") for n in range(80)))
    wanted = comment_feeds(main, {})
    assert len(wanted) == MAX_COMMENT_FEEDS == 50
    assert wanted[0].url == "https://blog.example/0/c"


def test_further_pages_on_a_first_poll_only_and_at_most_five() -> None:
    page = feed(entry(1), next_page_url="https://blog.example/feed?page=2")
    assert next_page(job(first_poll=True), page, 1) == "https://blog.example/feed?page=2"
    assert next_page(job(first_poll=True), page, MAX_PAGES - 1) is not None
    assert next_page(job(first_poll=True), page, MAX_PAGES) is None
    assert next_page(job(first_poll=False), page, 1) is None
    assert next_page(job(first_poll=True), feed(entry(1)), 1) is None


# --- when to poll ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "interval"),
    [
        ({}, DEFAULT_INTERVAL),
        ({"deadline": NOW + timedelta(minutes=30)}, DEADLINE_INTERVAL),
        ({"deadline": NOW + timedelta(hours=2)}, DEFAULT_INTERVAL),
        ({"deadline": NOW - timedelta(minutes=1)}, DEFAULT_INTERVAL),
        ({"pushed_until": NOW + timedelta(days=1)}, PUSHED_INTERVAL),
        ({"pushed_until": NOW - timedelta(seconds=1)}, DEFAULT_INTERVAL),
        (
            {"pushed_until": NOW + timedelta(days=1), "deadline": NOW + timedelta(minutes=30)},
            PUSHED_INTERVAL,
        ),
    ],
)
def test_the_interval_near_a_deadline_and_while_a_hub_pushes(changes, interval) -> None:
    assert poll_interval(job(**changes), NOW) == interval
