"""WebSub (W3C Recommendation): blogs whose feed names a hub are pushed to pbp, not polled.

How a subscription lives (pbp.models.websub.WebSubSubscription):
1. A poll reads a feed that names a hub (`<link rel="hub">` in the feed, or the HTTP
   `Link` header) and its topic (`rel="self"`, else the feed's address): `note_hub` keeps
   a `wanted` row with a random secret of its own.
2. The scheduler's `maintain` sends the hub `hub.mode=subscribe` with the callback
   `PBP_BASE_URL/websub/<id>/<token>`, the secret and the lease asked for, through the
   fetcher's SSRF-guarded path (the hub is named by a player's feed), with no transaction
   open. The token is the subscription's own, 256 random bits: the topic is public and the
   ids are sequential, so without it anyone could answer for the hub (issue #28 item 2).
3. The hub checks the intent with a GET to the callback (`verify`): the challenge is
   echoed only for a request pbp sent and has not yet seen verified, for its mode and
   topic, within VERIFY_WAIT of sending it; the lease it grants is recorded, bounded to
   LEASE_MIN..LEASE_MAX. A denial counts only as the answer to such a request.
4. Each delivery (`receive`) is checked against `X-Hub-Signature` (an HMAC of the body with
   the secret), counted against the blog's bounds (push_limits: whoever runs the hub,
   maybe the player) and then stored by the poller's own path (polling.store_pushed).
5. `maintain` renews a lease before it ends (at RENEW_AT of it), asks again when one ran
   out, and unsubscribes rows whose blog changed feed or went away (`feed_changed`).

While a subscription is active the poller still reads the feed, every PUSHED_INTERVAL, in
case deliveries are lost.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

import requests.utils
import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from adapters import FeedError, Fetcher
from adapters.base import ParsedFeed
from adapters.common import safe_url
from pbp.db import writing
from pbp.errors import NotFound
from pbp.models import Blog, WebSubSubscription
from pbp.services.noteworthy import push_limits
from pbp.services.noteworthy.push_limits import PushLimits

log = logging.getLogger("pbp.websub")

LEASE = timedelta(days=10)  # asked for; the hub decides (hub.lease_seconds in its GET)
# What pbp records of the lease a hub grants: no lease ending in 2121 (pbp would never
# renew) nor one so short that pbp would ask again every minute.
LEASE_MIN, LEASE_MAX = timedelta(hours=1), LEASE
# A hub that says it stopped pushing an active subscription (a denial pbp did not ask
# for): the blog is polled, and the hub asked again after this long.
ASK_AGAIN_AFTER = timedelta(days=1)
RENEW_AT = 0.8  # of the granted lease: renew with a fifth of it left
VERIFY_WAIT = timedelta(hours=1)  # a request the hub has not verified by then is sent again
MAX_BACKOFF = timedelta(days=1)
MAX_UNSUBSCRIBE_TRIES = 5
PUSHED_INTERVAL = timedelta(hours=6)  # how often a pushed feed is still polled
SIGNATURE_METHODS = {
    "sha1": hashlib.sha1,
    "sha256": hashlib.sha256,
    "sha384": hashlib.sha384,
    "sha512": hashlib.sha512,
}
LIVE = ("wanted", "pending", "active")

Sub = WebSubSubscription


def callback_url(base_url: str, subscription_id: int, token: str) -> str:
    return f"{base_url.rstrip('/')}/websub/{subscription_id}/{token}"


def _found(session: Session, subscription_id: int, token: str) -> WebSubSubscription:
    """The subscription whose callback address this is: its id and its token."""
    row = session.get(Sub, subscription_id)
    if row is None or not hmac.compare_digest(row.callback_token.encode(), token.encode()):
        raise NotFound("no such subscription")
    return row


# --- discovery (inside the poll's transaction: no I/O) ---------------------------------------


def hub_and_topic(
    parsed: ParsedFeed, headers: dict[str, str], feed_url: str
) -> tuple[str, str] | None:
    """The hub and topic a fetched feed names; None when it names no hub. The HTTP `Link`
    header comes first, then the feed's own links (WebSub 4: the headers are the
    publisher's first means; the W3C implementation report's test 104 checks the order);
    without a `rel="self"` the topic is the feed's address."""
    linked: dict[str, str | None] = {}
    for link in requests.utils.parse_header_links(headers.get("link", "")) if headers else ():
        for rel in (link.get("rel") or "").split():
            linked.setdefault(rel.lower(), safe_url(link.get("url")))
    if hub := linked.get("hub"):
        return hub, linked.get("self") or parsed.self_url or feed_url
    if parsed.hub_url:
        return parsed.hub_url, parsed.self_url or feed_url
    return None


def note_hub(
    *,
    session: Session,
    blog: Blog,
    parsed: ParsedFeed,
    headers: dict[str, str],
    now: datetime,
    noted: frozenset[tuple[str, str]] | None = None,
) -> WebSubSubscription | None:
    """Keep a subscription wanted for the hub and topic the blog's feed names (idempotent:
    nothing changes while they stay the same). Another hub or topic replaces the old
    subscription, which is cancelled, and so is one whose feed names no hub any more. A
    hub's refusal is respected for that hub and topic.

    `noted`: the blog's (hub, topic) pairs as `for_polling` read them before the fetch. When
    the feed names one of them, or names none and there were none, nothing changes and
    nothing is read: the common case of every changed feed a poll pass stores."""
    if blog.id is None:
        return None
    found = hub_and_topic(parsed, headers, blog.feed_url or "")
    if noted is not None and (found in noted if found is not None else not noted):
        return None
    rows = session.exec(
        select(Sub).where(Sub.blog_id == blog.id, col(Sub.state).in_((*LIVE, "denied")))
    ).all()
    for row in rows:
        if found is not None and (row.hub_url, row.topic_url) == found:
            return row
    for row in rows:
        _cancel(row, now)
        session.add(row)
    if found is None:
        return None
    hub, topic = found
    sub = Sub(
        blog_id=blog.id,
        hub_url=hub[:2000],
        topic_url=topic[:2000],
        secret=secrets.token_hex(32),
        state="wanted",
        next_attempt_at=now,
    )
    session.add(sub)
    return sub


def feed_changed(*, session: Session, blog_id: int, now: datetime) -> None:
    """The blog reads another feed (or none): its subscriptions are cancelled; `maintain`
    tells the hub. Called in the transaction that changes the blog."""
    rows = session.exec(select(Sub).where(Sub.blog_id == blog_id, col(Sub.state).in_(LIVE))).all()
    for row in rows:
        _cancel(row, now)
        session.add(row)


def _cancel(row: WebSubSubscription, now: datetime) -> None:
    if row.state in ("pending", "active"):
        row.state, row.next_attempt_at, row.failure_count = "unsubscribing", now, 0
    elif row.state == "wanted":
        row.state = "ended"  # never asked for: nothing to tell the hub


# --- the hub's verification of intent ------------------------------------------------------


def verify(
    *,
    session: Session,
    subscription_id: int,
    token: str,
    mode: str,
    topic: str,
    challenge: str,
    lease_seconds: str | None,
    reason: str | None,
    now: datetime,
) -> str:
    """The hub asks whether pbp really wants `mode` for `topic` (WebSub 5.3): the answer
    is the challenge, echoed, or NotFound (a 404) when pbp did not ask for that (issue #28
    item 2): the callback's token must be the subscription's, and pbp must have sent that
    request (`_intent`), not yet seen verified, less than VERIFY_WAIT ago. A subscription's
    granted lease is recorded, within LEASE_MIN..LEASE_MAX. A denial (5.2) is final only
    as the answer to a subscription request pbp sent (`_denied`).

    Its transaction is a writer from the start (pbp.db.writing): on SQLite one that read
    first could not write after a concurrent commit (the upkeep's, say)."""
    with writing():
        row = _found(session, subscription_id, token)
        if row.topic_url != topic:
            raise NotFound("no such subscription")
        answer = _verify(row, mode, challenge, lease_seconds, reason, now)
        session.add(row)
        return answer


def _verify(row: WebSubSubscription, mode, challenge, lease_seconds, reason, now) -> str:
    intent = _intent(row, now)
    if mode == "denied":
        return _denied(row, intent, reason, now)
    if not challenge:
        raise NotFound("a verification needs hub.challenge")
    if mode != intent:
        raise NotFound("pbp sent no such request")
    if mode == "subscribe" and row.blog_id is not None:
        lease = granted_lease(lease_seconds)
        row.state, row.verified_at, row.requested_at = "active", now, None
        row.expires_at, row.renew_at = now + lease, now + lease * RENEW_AT
        row.next_attempt_at, row.failure_count, row.last_error = None, 0, None
        return challenge
    if mode == "unsubscribe":
        row.state, row.next_attempt_at, row.requested_at = "ended", None, None
        return challenge
    raise NotFound("no such subscription")


def _intent(row: WebSubSubscription, now: datetime) -> str | None:
    """The request pbp sent the hub and has not seen verified yet: "subscribe" (a first
    request, or a renewal of an active subscription), "unsubscribe", or None. `requested_at`
    is set when a request is sent and cleared when it is verified; after VERIFY_WAIT the
    upkeep sends it again."""
    if row.requested_at is None or row.requested_at < now - VERIFY_WAIT:
        return None
    return {
        "pending": "subscribe",
        "active": "subscribe",
        "unsubscribe_pending": "unsubscribe",
    }.get(row.state)


def _denied(row: WebSubSubscription, intent: str | None, reason: str | None, now) -> str:
    """A denial answering pbp's subscription request is final for this hub and topic. One
    that answers nothing (the subscription is active, no request is out) may still be the
    hub's word that it stopped pushing: the blog is polled again and the roster says why,
    and pbp asks the hub again after ASK_AGAIN_AFTER. Any other is refused (404)."""
    said = (reason or "").strip()[:1000]
    if intent == "subscribe":
        row.state, row.last_error = "denied", (said or "the hub refused")
        row.next_attempt_at, row.requested_at = None, None
        return ""
    if row.state == "active":
        row.state, row.next_attempt_at = "wanted", now + ASK_AGAIN_AFTER
        row.expires_at = row.renew_at = None
        row.last_error = "the hub said it stopped pushing" + (f" ({said})" if said else "")
        return ""
    raise NotFound("pbp sent no such request")


def granted_lease(value: str | None) -> timedelta:
    """The lease a hub granted (`hub.lease_seconds`), within LEASE_MIN..LEASE_MAX; the
    lease asked for when it gave none that reads as a number."""
    try:
        seconds = int((value or "").strip())
    except ValueError:  # not a number, or more than 4,300 digits
        return LEASE
    if seconds <= 0:
        return LEASE
    # Bounded as a number first: timedelta overflows past 999,999,999 days.
    seconds = min(seconds, int(LEASE_MAX.total_seconds()))
    return max(timedelta(seconds=seconds), LEASE_MIN)


# --- deliveries ---------------------------------------------------------------------------


def signature_ok(secret: str, body: bytes, header: str | None) -> bool:
    """`X-Hub-Signature: method=hexdigest`, the HMAC of the body with the secret (WebSub 8);
    sha1, sha256, sha384 or sha512."""
    method, _, digest = (header or "").strip().partition("=")
    algorithm = SIGNATURE_METHODS.get(method.strip().lower())
    if algorithm is None or not digest:
        return False
    expected = hmac.new(secret.encode(), body, algorithm).hexdigest()
    return hmac.compare_digest(expected, digest.strip().lower())


@dataclass(frozen=True)
class Delivery:
    """What became of one delivery: `stored`, or `refused` / `limited` / `ignored` /
    `retry` with the reason. `limited`: over the blog's bounds, try again in
    `retry_after` seconds. `refused_entries`: new entries past the bounds, not stored."""

    outcome: str
    reason: str | None = None
    new_entries: int = 0
    refused_entries: int = 0
    retry_after: int | None = None


def receive(
    *,
    engine: Engine,
    subscription_id: int,
    token: str,
    body: bytes,
    headers: dict[str, str],
    now: datetime,
    mail=None,
    limits: PushLimits | None = None,
) -> Delivery:
    """A hub's delivery of the topic's new content. A missing or wrong signature is refused
    (logged, body ignored); one over the blog's bounds is `limited` (push_limits.admit);
    otherwise the body is parsed and stored as a poll's feed is (polling.store_pushed),
    with at most the new entries the bounds leave (push_limits.DayBudget). The subscription
    is read in a short transaction of its own and none is open while the body is parsed."""
    from pbp.services.noteworthy import polling  # polling imports this module for the push interval

    limits = limits or PushLimits()
    with Session(engine) as session:
        row = _found(session, subscription_id, token)
        secret, state, blog_id = row.secret, row.state, row.blog_id
    lowered = {k.lower(): v for k, v in headers.items()}
    if not signature_ok(secret, body, lowered.get("x-hub-signature")):
        reason = "missing signature" if not lowered.get("x-hub-signature") else "bad signature"
        log.warning("websub %s: delivery refused: %s", subscription_id, reason)
        return Delivery("refused", reason)
    if state != "active" or blog_id is None:
        log.info("websub %s: delivery ignored: subscription %s", subscription_id, state)
        return Delivery("ignored", f"subscription {state}")
    refusal = push_limits.admit(
        engine=engine, subscription_id=subscription_id, blog_id=blog_id, size=len(body),
        now=now, limits=limits,
    )  # fmt: skip
    if refusal is not None and refusal.retry_after is None:
        return Delivery("ignored", refusal.reason)
    if refusal is not None:
        return Delivery("limited", refusal.reason, retry_after=refusal.retry_after)
    budget = push_limits.DayBudget(subscription_id, blog_id, limits, now)
    try:
        outcome = polling.store_pushed(
            engine=engine, blog_id=blog_id, body=body, headers=lowered, now=now, mail=mail,
            budget=budget,
        )  # fmt: skip
    except sa.exc.IntegrityError:
        # On PostgreSQL a poll of the same feed may store the same new entry at the same
        # moment: one of the two inserts loses. The hub is asked to send it again.
        log.warning("websub %s: delivery raced a poll; asking the hub to retry", subscription_id)
        return Delivery("retry", "stored by a poll at the same moment")
    with writing(), Session(engine) as session:
        session.execute(
            sa.update(Sub).where(col(Sub.id) == subscription_id).values(last_delivery_at=now)
        )
        session.commit()
    if outcome.error:
        log.warning("websub %s: delivery not stored: %s", subscription_id, outcome.error)
        return Delivery("ignored", outcome.error)
    report = outcome.report
    return Delivery(
        "stored", new_entries=report.new_entries, refused_entries=report.refused_entries
    )


# --- what the poller and the roster need --------------------------------------------------


def for_polling(
    *, session: Session, blog_ids: list[int]
) -> tuple[dict[int, datetime], dict[int, frozenset[tuple[str, str]]]]:
    """What a poll pass needs of these blogs' subscriptions, in one query for the batch:
    when each pushed feed's granted lease ends, and the (hub, topic) pairs of the
    subscriptions `note_hub` keeps (live or refused), so storing a changed feed whose hub is
    unchanged reads none."""
    if not blog_ids:
        return {}, {}
    # Five columns: past sqlmodel's typed select(), so SQLAlchemy's own.
    columns = (Sub.blog_id, Sub.state, Sub.expires_at, Sub.hub_url, Sub.topic_url)
    rows = session.execute(
        sa.select(*(col(c) for c in columns)).where(
            col(Sub.blog_id).in_(blog_ids), col(Sub.state).in_((*LIVE, "denied"))
        )
    )
    pushed: dict[int, datetime] = {}
    pairs: dict[int, set[tuple[str, str]]] = {}
    for blog_id, state, expires, hub, topic in rows:
        if state == "active" and expires is not None:
            pushed[blog_id] = expires
        pairs.setdefault(blog_id, set()).add((hub, topic))
    return pushed, {blog_id: frozenset(found) for blog_id, found in pairs.items()}


@dataclass(frozen=True)
class DeliveryMode:
    mode: str  # "push" or "poll"
    last_delivery_at: datetime | None  # the last push, or the last poll that read the feed
    # Why a feed that names a hub is polled: what the hub said, or what went wrong.
    why_polled: str | None = None
    # The blog's hub sent more than its bounds allow (issue #28 item 4): when it was last
    # refused, why, and how many deliveries or entries were refused that day.
    refused: Refused | None = None


@dataclass(frozen=True)
class Refused:
    at: datetime
    reason: str
    that_day: int | None  # refusals on the day of the last (None: no longer counted)


def delivery_modes(*, session: Session, blogs: list[Blog]) -> dict[int, DeliveryMode]:
    """ "push" or "poll" per external blog, with the time of its last delivery, why a feed
    that names a hub is polled, and the last refusal of its hub's deliveries. A lease that
    ran out stops counting as push at the next upkeep (`maintain`, every minute)."""
    external = [b for b in blogs if b.kind == "external" and b.id is not None]
    if not external:
        return {}
    rows = session.exec(
        select(Sub)
        .where(
            col(Sub.blog_id).in_([b.id for b in external]),
            sa.or_(col(Sub.state).in_((*LIVE, "denied")), col(Sub.last_refused_at).is_not(None)),
        )
        .order_by(col(Sub.id))
    ).all()
    pushed: dict[int, datetime | None] = {}
    why: dict[int, str] = {}
    refused: dict[int, Refused] = {}
    for row in rows:  # oldest first: a blog's newest subscription has the last word
        assert row.blog_id is not None  # selected by blog
        if row.state == "active":
            pushed[row.blog_id] = row.last_delivery_at
        elif row.state in (*LIVE, "denied") and row.last_error:
            why[row.blog_id] = row.last_error
        if row.last_refused_at and row.last_refusal:
            last = refused.get(row.blog_id)
            if last is None or last.at < row.last_refused_at:
                same_day = push_limits.day_of(row.last_refused_at) == row.usage_day
                refused[row.blog_id] = Refused(
                    row.last_refused_at, row.last_refusal, row.day_refused if same_day else None
                )
    return {
        blog.id: DeliveryMode("push", pushed[blog.id], refused=refused.get(blog.id))
        if blog.id in pushed
        else DeliveryMode(
            "poll", blog.last_success_at, why.get(blog.id), refused=refused.get(blog.id)
        )
        for blog in external
    }


# --- the scheduler's job: subscribe, renew, expire, unsubscribe ----------------------------


@dataclass(frozen=True)
class _Request:
    id: int
    mode: str
    hub_url: str
    topic_url: str
    secret: str
    token: str


def maintain(
    *,
    engine: Engine,
    fetcher: Fetcher,
    base_url: str,
    now: datetime,
    lease: timedelta = LEASE,
) -> dict[int, str]:
    """One round of subscription upkeep; returns {subscription id: what happened}. The
    requests to hubs run with no transaction open; each result is written after."""
    requests_due = _due_requests(engine, now)
    results = {}
    for request in requests_due:
        data = {
            "hub.mode": request.mode,
            "hub.topic": request.topic_url,
            "hub.callback": callback_url(base_url, request.id, request.token),
        }
        if request.mode == "subscribe":
            data["hub.secret"] = request.secret
            data["hub.lease_seconds"] = str(int(lease.total_seconds()))
        error = _send(fetcher, request.hub_url, data)
        _record(engine, request, error, now)
        results[request.id] = f"{request.mode}: {error or 'requested'}"
    return results


def _due_requests(engine: Engine, now: datetime) -> list[_Request]:
    """Moves rows whose time came (a lease ended, a verification never came, a blog went
    away), then lists the requests to send."""
    due = sa.or_(col(Sub.next_attempt_at).is_(None), col(Sub.next_attempt_at) <= now)
    with writing(), Session(engine) as session:
        for row in session.exec(
            select(Sub).where(col(Sub.state).in_(LIVE), col(Sub.blog_id).is_(None))
        ):
            _cancel(row, now)  # its blog was deleted
            session.add(row)
        expired = select(Sub).where(Sub.state == "active", col(Sub.expires_at) <= now)
        for row in session.exec(expired):
            log.info("websub %s: lease ended; subscribing again", row.id)
            row.state, row.next_attempt_at = "wanted", now
            session.add(row)
        unverified = select(Sub).where(
            Sub.state == "pending", col(Sub.requested_at) <= now - VERIFY_WAIT
        )
        for row in session.exec(unverified):
            row.state, row.last_error = "wanted", "the hub never verified the subscription"
            session.add(row)
        waited = select(Sub).where(
            Sub.state == "unsubscribe_pending", col(Sub.requested_at) <= now - VERIFY_WAIT
        )
        for row in session.exec(waited):
            row.state = "ended"  # the hub never checked: nothing more pbp can do
            session.add(row)
        session.commit()
        subscribe = select(Sub).where(
            due,
            sa.or_(
                col(Sub.state) == "wanted",
                sa.and_(col(Sub.state) == "active", col(Sub.renew_at) <= now),
            ),
        )
        unsubscribe = select(Sub).where(due, Sub.state == "unsubscribing")
        found = []
        for row in session.exec(subscribe.order_by(col(Sub.id))):
            found.append(_request(row, "subscribe"))
            # Before the request: a hub may verify before it even answers it.
            row.state = "pending" if row.state == "wanted" else row.state
            _requested(session, row, now)
        for row in session.exec(unsubscribe.order_by(col(Sub.id))):
            found.append(_request(row, "unsubscribe"))
            row.state = "unsubscribe_pending"
            _requested(session, row, now)
        session.commit()
    return found


def _request(row: WebSubSubscription, mode: str) -> _Request:
    return _Request(row.id, mode, row.hub_url, row.topic_url, row.secret, row.callback_token)


def _send(fetcher: Fetcher, hub_url: str, data: dict[str, str]) -> str | None:
    """None when the hub accepted the request (2xx, 202 by the spec), else the reason."""
    try:
        answer = fetcher.post_form(hub_url, data)
    except FeedError as exc:
        return exc.message
    if 200 <= answer.status < 300:
        return None
    text = answer.body[:300].decode("utf-8", "replace").strip()
    return f"the hub answered HTTP {answer.status}" + (f": {text}" if text else "")


def _requested(session: Session, row: WebSubSubscription, now: datetime) -> None:
    # Until the hub verifies (a renewal stays active meanwhile): not sent again. The hub's
    # verification is accepted until then (`_intent`).
    row.requested_at, row.next_attempt_at = now, now + VERIFY_WAIT
    session.add(row)


def _record(engine: Engine, request: _Request, error: str | None, now: datetime) -> None:
    """A refused request is tried again later, backing off; the verification that follows
    an accepted one is `verify`'s to record."""
    with writing(), Session(engine) as session:
        row = session.get(Sub, request.id)
        if row is None:
            return
        if error is None:
            # One statement, so a verification that raced ahead (and may have recorded a
            # denial) is not overwritten by what this session read before it.
            session.execute(
                sa.update(Sub)
                .where(
                    col(Sub.id) == row.id, col(Sub.state).in_(("pending", "unsubscribe_pending"))
                )
                .values(failure_count=0, last_error=None)
            )
        else:
            log.warning("websub %s: %s refused: %s", request.id, request.mode, error)
            row.failure_count += 1
            row.last_error = error[:2000]
            row.next_attempt_at = now + min(timedelta(minutes=2**row.failure_count), MAX_BACKOFF)
            if row.state == "pending":
                row.state = "wanted"
            elif row.state == "unsubscribe_pending":
                gave_up = row.failure_count >= MAX_UNSUBSCRIBE_TRIES
                row.state = "ended" if gave_up else "unsubscribing"
        session.add(row)
        session.commit()
