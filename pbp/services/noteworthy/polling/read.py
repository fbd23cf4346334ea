"""Reading a feed with something new: parse it, fetch its further pages and the comment
feeds worth fetching (which ones: polling.decide). A Reading comes out for the decider."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime

from adapters import FeedError, FeedFetcher, FeedState, FetchResult, FetchStatus, parse_feed
from adapters.base import ParsedFeed
from pbp.services.noteworthy.polling.decide import Job, Reading, comment_feeds, next_page


def read_changed(
    job: Job,
    result: FetchResult,
    fetcher: FeedFetcher,
    *,
    now: datetime,
    known_counts: Callable[[], Mapping[str, int | None]],
    renew: Callable[[], None],
) -> Reading:
    """`result`: new bytes (FetchStatus.OK). `known_counts`: the stored comment counts,
    read only if a document lists comment counts. `renew` is called before each further
    fetch (the pass's leases, polling.claims.Renewal). A feed or page that does not parse
    makes the whole feed not a feed; a comment feed that does not parse is skipped."""
    fetched, parsed = 1, 0
    try:
        page = _parse(result, job.kind)
        parsed += 1
        documents = [page]
        while (url := next_page(job, page, len(documents))) is not None:
            renew()
            extra = _fetch_extra(fetcher, url, now)
            fetched += 1
            if extra.status is not FetchStatus.OK:
                break
            page = _parse(extra, job.kind)
            parsed += 1
            documents.append(page)
    except FeedError as exc:
        return Reading(fetched=fetched, parsed=parsed, not_a_feed=exc.message)
    counts: dict[str, int | None] = {}
    for doc in list(documents):
        if not doc.comment_sources:  # nothing to compare: skip reading the stored counts
            continue
        for feed in comment_feeds(doc, known_counts()):
            renew()
            answer = _fetch_extra(fetcher, feed.url, now)
            fetched += 1
            if answer.status is not FetchStatus.OK:
                continue
            try:
                documents.append(_parse(answer, job.kind))
            except FeedError:
                continue
            parsed += 1
            if feed.entry_key:
                counts[feed.entry_key] = feed.count
    return Reading(tuple(documents), counts, fetched, parsed)


def read_pushed(body: bytes, headers: dict[str, str], kind: str | None) -> Reading:
    """A WebSub hub's delivery of a feed: fetched by the hub, parsed here."""
    try:
        return Reading((parse_feed(body, headers, kind),), fetched=0, parsed=1)
    except FeedError as exc:
        return Reading(fetched=0, parsed=0, not_a_feed=exc.message)


def _parse(result: FetchResult, kind: str | None) -> ParsedFeed:
    assert result.body is not None  # FetchStatus.OK: new bytes
    return parse_feed(result.body, result.headers, kind)


def _fetch_extra(fetcher: FeedFetcher, url: str, now: datetime) -> FetchResult:
    """Comment feeds and further pages: plain GETs, no stored validators."""
    return fetcher.fetch(FeedState(url=url), now)
