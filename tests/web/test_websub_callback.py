"""The WebSub callback as a public endpoint (no CSRF token, rate limited, size capped), and
the roster's "push" or "poll" per feed. The hub's whole exchange is in
tests/services/test_websub.py."""

from datetime import timedelta

from pbp.models import WebSubSubscription
from pbp.services.noteworthy import blog_settings
from tests.conftest import make_test_app
from tests.web.conftest import T0


def test_a_hub_needs_no_csrf_token(client):
    # Not the CSRF refusal (400): the callback answers for itself, here "no such".
    assert client.post("/websub/999999/t", data=b"<feed/>").status_code == 404
    assert client.get("/websub/999999/t?hub.mode=subscribe&hub.challenge=x").status_code == 404


def test_deliveries_are_rate_limited(engine, connection, database_url, tmp_path):
    app = make_test_app(
        engine, connection, database_url, tmp_path / "i", PBP_WEBSUB_LIMIT="2 per minute"
    )
    client = app.test_client()
    statuses = [client.post("/websub/999999/t", data=b"<feed/>").status_code for _ in range(3)]
    assert statuses == [404, 404, 429]


def test_verifications_are_rate_limited(engine, connection, database_url, tmp_path):
    """Anyone can send the verification GET; each one reads the database."""
    app = make_test_app(
        engine, connection, database_url, tmp_path / "i", PBP_WEBSUB_LIMIT="2 per minute"
    )
    client = app.test_client()
    query = "/websub/999999/t?hub.mode=subscribe&hub.challenge=x"
    assert [client.get(query).status_code for _ in range(3)] == [404, 404, 429]


def test_a_delivery_over_the_size_cap_is_refused(engine, connection, database_url, tmp_path):
    app = make_test_app(engine, connection, database_url, tmp_path / "i", MAX_CONTENT_LENGTH=1000)
    answer = app.test_client().post("/websub/1/t", data=b"x" * 2000)
    assert answer.status_code == 413


def test_the_roster_shows_push_or_poll_with_the_last_delivery(client, auth, game, db_session):
    campaign, referee, chars = game
    pushed, polled = (
        blog_settings.blog_of(session=db_session, character=c) for c in (chars[0], chars[1])
    )
    for blog, path in ((pushed, "ada"), (polled, "bram")):
        blog.kind, blog.feed_url = "external", f"https://{path}.example/feed/"
        db_session.add(blog)
    polled.last_success_at = T0 - timedelta(minutes=7)
    db_session.flush()
    db_session.add(
        WebSubSubscription(
            blog_id=pushed.id,
            hub_url="https://hub.example/",
            topic_url=pushed.feed_url,
            secret="s" * 64,
            state="active",
            expires_at=T0 + timedelta(days=5),
            last_delivery_at=T0 - timedelta(minutes=2),
        )
    )
    db_session.commit()
    auth.login(referee)

    page = client.get(f"/c/{campaign.slug}/referee/").get_data(as_text=True)

    def row(feed: str) -> str:
        start = page.index(feed)
        return page[start : page.index("</tr>", start)]

    ada, bram = row("https://ada.example/feed/"), row("https://bram.example/feed/")
    shown = 'last delivery <time datetime="%Y-%m-%dT%H:%M:%S+00:00">%Y-%m-%d %H:%M UTC</time>'
    assert ">push</span>" in ada and ">poll</span>" not in ada
    assert (T0 - timedelta(minutes=2)).strftime(shown) in ada
    assert ">poll</span>" in bram
    assert (T0 - timedelta(minutes=7)).strftime(shown) in bram
