"""Issue #28 item 4: a player who runs their own WebSub hub.

pbp gives the subscription's secret to the hub the feed names, so a player whose feed names
their own hub signs deliveries at will: 20 deliveries of just under 1 MiB added 11,000
entries (59 MB) in 16 s. Each blog is now bounded (pbp.services.noteworthy.push_limits):
deliveries per subscription per minute, new entries per delivery and per day (the rest
refused and the referee told), bytes per day.

`hub` here is the player's own: it signs with the secret pbp gave it, as a real one does.
"""

from __future__ import annotations

import hashlib
import hmac

import pytest
from sqlmodel import Session, col, func, select

from pbp.models import AuditLog, Entry, utcnow
from pbp.services.noteworthy import dashboard, polling, websub
from tests.services.test_websub import atom, subscribed, subscription, titles
from tests.websubhub import WebSubHub

pytestmark = pytest.mark.db


def feed(base: str, hub: str, topic: str, names: list[str], pad: int = 0) -> bytes:
    """An Atom feed of one entry per name (its id made of the name), naming the hub;
    `pad` bytes of text in the first entry."""
    items = "".join(
        f"<entry><id>{base}/e/{name.replace(' ', '-')}</id><title>{name}</title>"
        "<updated>2026-07-01T09:00:00Z</updated>"
        f"<content type='text'>{name} wrote. {'x' * (pad if n == 0 else 0)}</content></entry>"
        for n, name in enumerate(names)
    )
    return (
        '<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom">'
        f"<title>Marsh</title><id>{base}/</id><updated>2026-07-01T09:00:00Z</updated>"
        f'<link rel="hub" href="{hub}"/><link rel="self" href="{topic}"/>{items}</feed>'
    ).encode()


def push(hub, server, topic, names, pad=0) -> int:
    (answer,) = hub.publish(topic, feed(server.base_url, hub.url, topic, names, pad))
    return answer[1]


def count_entries(engine, blog_id) -> int:
    with Session(engine) as session:
        return session.exec(select(func.count()).where(Entry.blog_id == blog_id)).one()


def refusals_logged(engine, campaign_id) -> list[dict]:
    with Session(engine) as session:
        return list(
            session.exec(
                select(AuditLog.detail).where(
                    AuditLog.campaign_id == campaign_id, AuditLog.action == "websub_refused"
                )
            )
        )


def roster_row(engine, campaign, blog_id):
    with Session(engine) as session:
        board = dashboard.dashboard(session=session, campaign=campaign)
        (row,) = [r for r in board.roster if r.blog.id == blog_id]
        return row


def test_a_hub_may_deliver_six_times_a_minute(engine, live, fetcher, hub, game, server):
    campaign, blog, topic = game
    subscribed(engine, live, fetcher, hub, blog, topic)

    statuses = [push(hub, server, topic, [f"Push {n}"]) for n in range(9)]

    assert statuses == [202] * 6 + [429] * 3
    assert titles(engine, blog.id) == {"Arrival"} | {f"Push {n}" for n in range(6)}
    sub = subscription(engine, blog.id)
    body = feed(server.base_url, hub.url, topic, ["Once more"])
    signature = "sha256=" + hmac.new(sub.secret.encode(), body, hashlib.sha256).hexdigest()
    answer = live.test_client().post(
        f"/websub/{sub.id}/{sub.callback_token}", data=body, headers={"X-Hub-Signature": signature}
    )
    assert answer.status_code == 429 and 1 <= int(answer.headers["Retry-After"]) <= 61
    refused = roster_row(engine, campaign, blog.id).delivery.refused
    assert refused.reason == "more than 6 deliveries in a minute" and refused.that_day == 4


def test_a_delivery_stores_fifty_new_entries_and_the_referee_is_told(
    engine, live, fetcher, hub, game, server
):
    campaign, blog, topic = game
    subscribed(engine, live, fetcher, hub, blog, topic)

    status = push(hub, server, topic, [f"Flood {n}" for n in range(60)])

    assert status == 202
    # The first fifty in the feed's order (a feed lists the newest first).
    assert titles(engine, blog.id) == {"Arrival"} | {f"Flood {n}" for n in range(50)}
    refused = roster_row(engine, campaign, blog.id).delivery.refused
    assert refused.reason == "10 new entries not stored: more than 50 new entries at once"
    assert refusals_logged(engine, campaign.id) == [{"blog_id": blog.id, "reason": refused.reason}]


def test_a_blog_stores_two_hundred_new_entries_a_day_whichever_hub(
    engine, live, fetcher, hub, game, server
):
    campaign, blog, topic = game
    subscribed(engine, live, fetcher, hub, blog, topic)

    statuses = [push(hub, server, topic, [f"Day {d}.{n}" for n in range(50)]) for d in range(5)]

    assert statuses == [202] * 5
    assert count_entries(engine, blog.id) == 1 + 200
    assert "Day 4.0" not in titles(engine, blog.id)

    # Naming another hub (a new subscription) starts no new day.
    with WebSubHub(max_lease_seconds=7200) as second:
        server.add(
            "/feed/",
            body=atom(server.base_url, ["Arrival"], second.url, topic),  # nothing new
            content_type="application/atom+xml",
        )
        polling.poll_blog(engine=engine, blog_id=blog.id, fetcher=fetcher, now=utcnow())
        base_url = live.config["PBP_BASE_URL"]
        websub.maintain(engine=engine, fetcher=fetcher, base_url=base_url, now=utcnow())
        assert second.wait_for(lambda: second.verified(topic))
        assert subscription(engine, blog.id).hub_url == second.url
        assert push(second, server, topic, ["Elsewhere"]) == 202
    assert "Elsewhere" not in titles(engine, blog.id)
    assert count_entries(engine, blog.id) == 1 + 200
    refused = roster_row(engine, campaign, blog.id).delivery.refused
    assert refused.reason == "1 new entry not stored: more than 200 new entries in a day"
    assert len(refusals_logged(engine, campaign.id)) == 1  # once a day, not once a refusal


def test_a_blogs_deliveries_are_bounded_in_bytes_a_day(
    engine, live, fetcher, hub, game, server, monkeypatch
):
    monkeypatch.setitem(live.config, "PBP_WEBSUB_BYTES_PER_DAY", 100_000)
    campaign, blog, topic = game
    subscribed(engine, live, fetcher, hub, blog, topic)

    statuses = [push(hub, server, topic, [f"Big {n}"], pad=40_000) for n in range(3)]

    assert statuses == [202, 202, 429]
    assert "Big 2" not in titles(engine, blog.id)
    with Session(engine) as session:
        used = session.exec(
            select(func.sum(websub.Sub.day_bytes)).where(col(websub.Sub.blog_id) == blog.id)
        ).one()
    assert 80_000 < used <= 100_000
    refused = roster_row(engine, campaign, blog.id).delivery.refused
    assert refused.reason == "more than 0.0954 MiB of deliveries in a day"
