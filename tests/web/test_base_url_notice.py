"""Issue #27 item 1: links in mail built on a PBP_BASE_URL that is not the site's address do
not open. The referee's dashboards (Noteworthy and forum) say so, once, in plain words; the
comparison is `pbp.web.base_url.mismatch`, a pure function."""

from __future__ import annotations

import pytest

from pbp.web.base_url import mismatch
from tests.factories import make_campaign


@pytest.mark.parametrize(
    ("base_url", "reached"),
    [
        ("http://127.0.0.1:5410", "http://127.0.0.1:5410/"),
        ("https://pbp.example.org", "http://pbp.example.org/"),  # TLS ends at the proxy
        ("https://pbp.example.org:443/", "https://PBP.example.org/"),
        ("http://pbp.example.org:80", "http://pbp.example.org/"),
    ],
)
def test_the_same_host_and_port_is_no_news(base_url, reached):
    assert mismatch(base_url, reached) is None


@pytest.mark.parametrize(
    ("base_url", "reached"),
    [
        ("http://127.0.0.1:5000", "http://127.0.0.1:5410/"),  # the issue: another port
        ("https://pbp.example.org", "http://192.168.1.20:8000/"),
        ("http://localhost:5000", "http://127.0.0.1:5000/"),
    ],
)
def test_another_host_or_port_is_said_plainly(base_url, reached):
    said = mismatch(base_url, reached)
    assert said == (
        f"Links in mail point to {base_url}; this page was reached at {reached.rstrip('/')}: "
        f"if players should use {reached.rstrip('/')}, set PBP_BASE_URL to it."
    )


def test_an_address_pbp_serve_chose_asks_for_pbp_base_url():
    said = mismatch("http://127.0.0.1:5410", "http://192.168.1.20:5410/", given=False)
    assert said is not None and said.endswith("set PBP_BASE_URL to the address players use.")


def test_both_dashboards_say_it_once_when_links_point_elsewhere(
    app, client, auth, db_session, game
):
    campaign, referee, _ = game
    forum_game = make_campaign(db_session, referee=referee, name="Docks", ruleset="one")
    db_session.commit()
    auth.login(referee)
    for slug in (campaign.slug, forum_game.slug):
        app.config["PBP_BASE_URL"] = "http://127.0.0.1:5000"  # the test client is localhost
        page = client.get(f"/c/{slug}/referee/").get_data(as_text=True)
        assert page.count("Links in mail point to") == 1
        assert (
            "Links in mail point to http://127.0.0.1:5000; this page was reached at "
            "http://localhost" in page
        )
        app.config["PBP_BASE_URL"] = "http://localhost"
        page = client.get(f"/c/{slug}/referee/").get_data(as_text=True)
        assert "Links in mail point to" not in page
