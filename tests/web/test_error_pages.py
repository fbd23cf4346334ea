"""Error pages say what happened and where to go, in words, with the right status; being
sent to the login page says why. The API keeps answering problem+json."""

from __future__ import annotations

import pytest

from tests.factories import make_campaign


def test_404_is_a_page_with_a_way_back(client):
    page = client.get("/no/such/page")
    assert page.status_code == 404
    html = page.get_data(as_text=True)
    assert "There is nothing here" in html and 'href="/"' in html
    assert "requested URL" not in html  # werkzeug's own wording


def test_unknown_campaign_names_it_and_keeps_the_nav_out(client):
    page = client.get("/c/nowhere/")
    assert page.status_code == 404
    assert "there is no campaign called" in page.get_data(as_text=True)


def test_403_says_why_and_offers_the_campaign(client, auth, db_session):
    referee = auth.create_user()
    campaign = make_campaign(db_session, referee=referee)
    db_session.commit()
    auth.login(auth.create_user())
    page = client.get(f"/c/{campaign.slug}/referee/")
    assert page.status_code == 403
    html = page.get_data(as_text=True)
    assert "This page is not yours to open" in html
    assert f'href="/c/{campaign.slug}/"' in html


def test_500_is_a_styled_page(app, client):
    app.config["PROPAGATE_EXCEPTIONS"] = False

    @app.get("/boom")
    def boom():
        raise RuntimeError("a bug")

    page = client.get("/boom")
    assert page.status_code == 500
    html = page.get_data(as_text=True)
    assert "Something went wrong on our side" in html and "a bug" not in html


def test_405_on_the_api_stays_problem_json(client):
    answer = client.delete("/api/v1/")
    assert answer.status_code in (404, 405)
    assert answer.content_type == "application/problem+json"


@pytest.mark.parametrize("path", ["/campaigns/new", "/account/tokens/"])
def test_login_redirect_says_why(client, path):
    answer = client.get(path, follow_redirects=True)
    html = answer.get_data(as_text=True)
    assert answer.request.path == "/login"
    assert "Log in to open that page" in html
