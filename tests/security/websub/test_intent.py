"""Issue #28 item 2: anyone could answer a WebSub verification of intent.

The callback `GET /websub/<id>` took `hub.mode=subscribe|denied` with any lease for any
pending or active subscription; the topic is public and the ids are sequential. So an
anonymous request could set a lease ending in 2121 (pbp never renewed, and polled 6 h
apart), turn push off for good with `denied`, or cause a 500 with a lease of 10^20 s.

These tests stand where an attacker stands: they know the topic and the id, and try the
address pbp used to give hubs. The hub's own answers go to the address pbp gives it
(read from the hub's request), so they hold whatever its shape.
"""

from __future__ import annotations

import urllib.error
import urllib.request
from datetime import timedelta
from urllib.parse import urlencode, urlsplit

import pytest
from sqlmodel import Session

from pbp.models import WebSubSubscription, utcnow
from pbp.services.noteworthy import dashboard, polling, websub
from tests.services.test_websub import subscribed, subscription

pytestmark = pytest.mark.db

CENTURY = str(100 * 365 * 86400)


def get(url: str, **params: str) -> tuple[int, bytes]:
    """A GET over real HTTP, as a hub or anybody else sends it."""
    query = urlencode({f"hub.{k}": v for k, v in params.items()})
    try:
        with urllib.request.urlopen(f"{url}?{query}", timeout=10) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def guessed(live, sub_id: int) -> list[str]:
    """The addresses an attacker can try: the one pbp gave hubs before the fix, and the
    new shape with a token they do not have."""
    base = live.config["PBP_BASE_URL"]
    return [f"{base}/websub/{sub_id}", f"{base}/websub/{sub_id}/{'A' * 43}"]


def pending(engine, live, fetcher, hub, blog, now=None) -> tuple[WebSubSubscription, str]:
    """A subscription pbp asked for and the hub has not verified yet; its callback."""
    hub.verify = False
    now = now or utcnow()
    polling.poll_blog(engine=engine, blog_id=blog.id, fetcher=fetcher, now=now)
    websub.maintain(engine=engine, fetcher=fetcher, base_url=live.config["PBP_BASE_URL"], now=now)
    sub = subscription(engine, blog.id)
    assert sub.state == "pending"
    return sub, hub.requests[-1]["hub.callback"]


def test_an_anonymous_verification_cannot_set_the_lease(engine, live, fetcher, hub, game):
    campaign, blog, topic = game
    sub = subscribed(engine, live, fetcher, hub, blog, topic)

    for url in guessed(live, sub.id):
        status, body = get(url, mode="subscribe", topic=topic, challenge="c", lease_seconds=CENTURY)
        assert status in (404, 410) and body != b"c", url

    after = subscription(engine, blog.id)
    assert (after.expires_at, after.renew_at) == (sub.expires_at, sub.renew_at)


@pytest.mark.parametrize("state", ["pending", "active"])
def test_an_anonymous_denial_does_not_turn_push_off(engine, live, fetcher, hub, game, state):
    campaign, blog, topic = game
    if state == "active":
        sub = subscribed(engine, live, fetcher, hub, blog, topic)
    else:
        sub, _callback = pending(engine, live, fetcher, hub, blog)

    for url in guessed(live, sub.id):
        status, _ = get(url, mode="denied", topic=topic, reason="nobody asked")
        assert status in (404, 410), url

    after = subscription(engine, blog.id)
    assert after.state == state and after.last_error is None


def test_a_verification_is_answered_once_for_the_request_pbp_sent(engine, live, fetcher, hub, game):
    """The hub's own callback address, replayed once pbp has seen the request verified,
    sets nothing: pbp has no request out."""
    campaign, blog, topic = game
    sub = subscribed(engine, live, fetcher, hub, blog, topic)
    callback = hub.verified(topic)[-1].callback

    status, body = get(callback, mode="subscribe", topic=topic, challenge="c", lease_seconds="7200")

    assert status == 404 and body != b"c"
    assert subscription(engine, blog.id).expires_at == sub.expires_at


def test_a_verification_long_after_the_request_is_refused(engine, live, fetcher, hub, game):
    campaign, blog, topic = game
    sent = utcnow() - websub.VERIFY_WAIT - timedelta(minutes=1)
    sub, callback = pending(engine, live, fetcher, hub, blog, now=sent)

    status, _ = get(callback, mode="subscribe", topic=topic, challenge="c", lease_seconds="7200")

    assert status == 404
    assert subscription(engine, blog.id).state == "pending"


def test_a_verification_must_be_for_the_mode_pbp_asked(engine, live, fetcher, hub, game):
    campaign, blog, topic = game
    sub, callback = pending(engine, live, fetcher, hub, blog)
    status, _ = get(callback, mode="unsubscribe", topic=topic, challenge="c")
    assert status == 404
    assert subscription(engine, blog.id).state == "pending"


def test_a_huge_lease_is_bounded_not_a_500(engine, live, fetcher, hub, game):
    """A lease of 10^20 s overflowed timedelta: a 500."""
    campaign, blog, topic = game
    sub, callback = pending(engine, live, fetcher, hub, blog)

    status, body = get(
        callback, mode="subscribe", topic=topic, challenge="c", lease_seconds=str(10**20)
    )

    assert (status, body) == (200, b"c")
    sub = subscription(engine, blog.id)
    assert sub.state == "active"
    assert sub.expires_at - sub.verified_at == websub.LEASE_MAX == timedelta(days=10)


@pytest.mark.parametrize(
    ("granted", "recorded"),
    [
        ("60", timedelta(hours=1)),  # renewed every minute otherwise
        ("7200", timedelta(hours=2)),
        (CENTURY, timedelta(days=10)),
        (str(10**20), timedelta(days=10)),
        ("9" * 5000, websub.LEASE),  # past int()'s digit limit: as asked
        ("0", websub.LEASE),
        ("soon", websub.LEASE),
    ],
)
def test_a_granted_lease_is_recorded_within_bounds(granted, recorded):
    assert websub.granted_lease(granted) == recorded


def test_an_unasked_denial_from_the_hub_keeps_polling_and_says_why(
    engine, live, fetcher, hub, game
):
    """`denied` ends push for good only as the hub's answer to a request pbp sent. Sent to
    an active subscription's own address, the blog is polled again and the roster says
    why; pbp asks the hub again later."""
    campaign, blog, topic = game
    subscribed(engine, live, fetcher, hub, blog, topic)
    callback = hub.verified(topic)[-1].callback

    status, _ = get(callback, mode="denied", topic=topic, reason="quota exceeded")

    assert status == 200
    after = subscription(engine, blog.id)
    assert after.state == "wanted" and after.next_attempt_at > utcnow() + timedelta(hours=23)
    with Session(engine) as session:
        pushed, _hubs = websub.for_polling(session=session, blog_ids=[blog.id])
        assert pushed == {}  # polled at the usual pace again
        (row,) = [
            r
            for r in dashboard.dashboard(session=session, campaign=campaign).roster
            if r.blog.id == blog.id
        ]
    assert row.delivery.mode == "poll"
    assert row.delivery.why_polled == "the hub said it stopped pushing (quota exceeded)"


def test_the_callback_address_carries_an_unguessable_token(engine, live, fetcher, hub, game):
    campaign, blog, topic = game
    sub = subscribed(engine, live, fetcher, hub, blog, topic)
    callback = urlsplit(hub.requests[-1]["hub.callback"]).path
    assert callback == f"/websub/{sub.id}/{sub.callback_token}"
    assert len(sub.callback_token) >= 43  # 256 bits, URL-safe base64
    others = {websub_token() for _ in range(20)}
    assert len(others) == 20


def websub_token() -> str:
    from pbp.models.websub import callback_token

    return callback_token()


def test_the_old_callback_address_is_gone(engine, live, fetcher, hub, game):
    """WebSub 7: a hub may drop a subscription whose delivery is answered 410."""
    campaign, blog, topic = game
    sub = subscribed(engine, live, fetcher, hub, blog, topic)
    old = f"{live.config['PBP_BASE_URL']}/websub/{sub.id}"
    client = live.test_client()
    assert client.post(urlsplit(old).path, data=b"<feed/>").status_code == 410
    assert client.get(urlsplit(old).path).status_code == 410
    assert subscription(engine, blog.id).state == "active"
