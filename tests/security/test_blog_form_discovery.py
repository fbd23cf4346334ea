"""Issue #28 item 5: "The blog form holds web threads. 8 parallel POST /c/<slug>/me/blog
with a slow-drip address leave the site unanswered for 24 s, each POST taking 30 s. The
form has no rate limit."

- the form's feed discovery has a deadline of its own, PBP_DISCOVERY_SECONDS (10 s by
  default; 1 s here), shorter than a poll's;
- one account has at most one discovery in flight: a second one, from another tab or a
  script, is refused at once with the reason (another account's is not);
- the form is rate limited like the other content forms: the 21st POST in a minute is 429;
  its API twin (PUT /campaigns/<slug>/me/blog) too.

The slow blog is a real loopback server dripping a byte every 0.1 s (tests/security/
hostile_http.py); it gives up after 8 s, so on code without these limits the tests fail on
the elapsed time instead of hanging.
"""

from __future__ import annotations

import threading
import time
import uuid
from datetime import UTC, datetime

import pytest
import sqlalchemy as sa
from sqlmodel import Session

from pbp import create_app
from pbp.config import load_config
from pbp.models import AuditLog, User
from pbp.services.accounts import logins as accounts
from pbp.services.noteworthy import polling
from tests.factories import drop_committed_campaign, make_campaign, make_characters
from tests.feedserver import FeedServer
from tests.helpers import PASSWORD, Api, auth_for, post_form
from tests.security.hostile_http import SHAPES, DripServer

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
SLACK = 1.0
RSS = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n<rss version="2.0"><channel>'
    b"<title>Quick</title><link>http://quick.test/</link><description>d</description>"
    b"<item><title>One</title><guid>quick-1</guid><description>x</description></item>"
    b"</channel></rss>"
)


def _app(engine, tmp_path, seconds: float):
    """The app on the real engine (every request its own connection, as in production:
    the `app` fixture shares one connection, which cannot serve two requests at once)."""
    return create_app(
        {
            "TESTING": True,
            "INSTANCE_PATH": tmp_path / f"instance-{uuid.uuid4().hex[:6]}",
            "SECRET_KEY": "test-secret-key-" + "x" * 32,
            "DATABASE_URL": engine.url.render_as_string(hide_password=False),
            "ENGINE": engine,
            "PBP_ALLOW_PRIVATE_FEEDS": True,
            "PBP_BASE_URL": "http://pbp.test",
            "PBP_CLOCK": lambda: T0,
            "PBP_DISCOVERY_SECONDS": seconds,
        }
    )


@pytest.fixture
def players(engine):
    """A committed campaign whose Ada and Bram can log in: (slug, Ada's email, Bram's)."""
    with Session(engine, expire_on_commit=False) as session:
        campaign = make_campaign(session, name=f"Drip {uuid.uuid4().hex[:8]}")
        chars = make_characters(session, campaign, names=("Ada", "Bram"))
        emails = []
        for character in chars:
            user = session.get(User, character.user_id)
            user.password_hash = accounts.hash_password(PASSWORD)
            emails.append(user.email)
        session.commit()
        people = [c.user_id for c in chars]
    yield campaign.slug, *emails
    with Session(engine) as session:  # committed for real: what the test made goes
        session.execute(sa.delete(AuditLog).where(AuditLog.actor_id.in_(people)))
        session.commit()
    drop_committed_campaign(engine, campaign)


def _logged_in(app, email: str):
    client = app.test_client()
    assert post_form(client, "/login", {"email": email, "password": PASSWORD}).status_code == 302
    return client


def _choose(client, slug: str, url: str):
    started = time.monotonic()
    answer = post_form(client, f"/c/{slug}/me/blog", {"kind": "external", "url": url})
    return answer, time.monotonic() - started


def test_the_discovery_deadline_is_10_seconds_by_default(tmp_path):
    config = load_config(tmp_path, {"SECRET_KEY": "k" * 32})
    assert config["PBP_DISCOVERY_SECONDS"] == 10
    assert polling.discovery_fetcher_from_config(config).total_timeout == 10
    shorter = load_config(tmp_path, {"SECRET_KEY": "k" * 32, "PBP_FETCH_TOTAL_SECONDS": "4"})
    assert polling.discovery_fetcher_from_config(shorter).total_timeout == 4  # never longer


def test_a_dripping_blog_is_given_up_at_the_forms_deadline(engine, tmp_path, players):
    slug, ada, _ = players
    app = _app(engine, tmp_path, seconds=1.0)
    head, drip = SHAPES["length-drip"]
    with DripServer(head, drip) as server:
        answer, seconds = _choose(_logged_in(app, ada), slug, server.url())
    print(f"\nthe blog form answered after {seconds:.2f} s")
    assert seconds < 1.0 + SLACK
    assert answer.status_code == 422
    text = answer.get_data(as_text=True)
    assert "took longer than 1 s" in text and server.url() in text  # the address as typed


def test_a_second_discovery_of_one_account_is_refused_at_once(engine, tmp_path, players):
    slug, ada, bram = players
    app = _app(engine, tmp_path, seconds=4.0)
    first_tab, second_tab = _logged_in(app, ada), _logged_in(app, ada)
    neighbour = _logged_in(app, bram)
    head, drip = SHAPES["length-drip"]
    done: dict = {}
    with DripServer(head, drip) as slow, FeedServer() as quick:
        fast_feed = quick.add("/bram.xml", body=RSS, content_type="application/rss+xml")
        thread = threading.Thread(
            target=lambda: done.update(first=_choose(first_tab, slug, slow.url())), daemon=True
        )
        thread.start()
        deadline = time.monotonic() + 5
        while slow.requests == 0 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert slow.requests == 1, "the first discovery never fetched the slow blog"
        second, second_seconds = _choose(second_tab, slug, slow.url("/other"))
        bram_answer, _ = _choose(neighbour, slug, fast_feed)
        thread.join(20)
    print(f"\nthe second discovery was answered after {second_seconds:.2f} s")
    assert second_seconds < SLACK
    assert second.status_code == 409
    text = second.get_data(as_text=True)
    assert "already looking for your blog" in text and slow.url("/other") in text
    assert slow.requests == 1  # the second address was never fetched
    assert bram_answer.status_code == 302  # another account's discovery goes ahead
    first, first_seconds = done["first"]
    assert first.status_code == 422 and first_seconds < 4.0 + SLACK
    # The slot is free again once the first discovery ended.
    again, _ = _choose(second_tab, slug, fast_feed.replace("bram", "none"))
    assert "already looking" not in again.get_data(as_text=True)


def test_the_21st_blog_form_in_a_minute_is_429(app_with, db_session):
    app = app_with()
    auth = auth_for(app.test_client(), db_session)
    campaign = make_campaign(db_session)
    (ada,) = make_characters(db_session, campaign, names=("Ada",))
    user = db_session.get(User, ada.user_id)
    user.password_hash = accounts.hash_password(PASSWORD)
    db_session.commit()
    auth.login(user)
    url = f"/c/{campaign.slug}/me/blog"
    statuses = [auth.post(url, {"kind": "builtin"}).status_code for _ in range(21)]
    assert statuses == [302] * 20 + [429]
    assert "posting faster than pbp allows" in auth.post(url, {"kind": "builtin"}).get_data(
        as_text=True
    )


def test_the_api_twin_is_rate_limited_too(app_with, world):
    api = Api(app_with().test_client())
    path = f"/campaigns/{world.slug}/me/blog"
    statuses = [
        api.put(path, token=world.tokens["player"], json={"kind": "builtin"}).status_code
        for _ in range(21)
    ]
    assert statuses == [200] * 20 + [429]


def test_the_api_twin_gives_up_at_the_same_deadline(app_with, world):
    api = Api(app_with(PBP_DISCOVERY_SECONDS=1.0).test_client())
    head, drip = SHAPES["length-drip"]
    with DripServer(head, drip) as server:
        started = time.monotonic()
        answer = api.put(
            f"/campaigns/{world.slug}/me/blog",
            token=world.tokens["player"],
            json={"kind": "external", "url": server.url()},
        )
        seconds = time.monotonic() - started
    assert seconds < 1.0 + SLACK
    assert answer.status_code == 422 and "took longer than 1 s" in answer.get_json()["detail"]
