"""The pages' one declared path (pbp.web.actions): every POST view is declared, a form sent
twice with its one-time token acts once, and a refused form comes back as it was typed."""

from __future__ import annotations

import re

from sqlmodel import select

from pbp.models import Character, OutboxMessage
from pbp.web import actions

TOKEN = "a-one-time-form-token-0001"


def test_every_view_that_takes_a_post_is_declared(app):
    """Issue #32: "A test walks the URL map and fails on a POST view that is not declared
    this way." The API's operations have their own declared path (pbp.api.registry)."""
    undeclared = sorted(
        rule.endpoint
        for rule in app.url_map.iter_rules()
        if "POST" in (rule.methods or ())
        and not rule.endpoint.startswith("api.")
        and rule.endpoint not in actions.DECLARED
        and rule.endpoint not in actions.UNDECLARED
    )
    assert undeclared == []


def test_every_declared_page_names_a_view_that_exists(app):
    for declared in actions.DECLARED.values():
        if isinstance(declared.page, str) and "." in declared.page:
            assert declared.page in app.view_functions, declared


def test_a_double_click_adds_one_character(client, auth, game, db_session):
    """Issue #27 item 2: "A replay of the same token returns the first result and creates
    nothing." Two presses of "Add character" send the same form, token included."""
    campaign, referee, _ = game
    auth.login(referee)
    form = {"name": "Gus", "aliases": "", "feed_url": "", "form_token": TOKEN}
    first = auth.post(f"/c/{campaign.slug}/referee/characters", form)
    second = auth.post(f"/c/{campaign.slug}/referee/characters", form)
    assert first.status_code == second.status_code == 302
    assert second.headers["Location"] == first.headers["Location"]
    assert second.headers.get("Form-Replayed") == "true"
    named = db_session.exec(
        select(Character).where(Character.campaign_id == campaign.id, Character.name == "Gus")
    ).all()
    assert len(named) == 1
    page = client.get(first.headers["Location"]).get_data(as_text=True)
    assert "Gus joins the roster." in page and "was not sent twice" in page


def test_a_double_click_mails_one_reminder(client, auth, game, db_session):
    campaign, referee, _ = game
    base = f"/c/{campaign.slug}/referee"
    auth.login(referee)
    auth.post(base + "/event", {"text": "The ball.", "expected_number": "1"})
    before = len(db_session.exec(select(OutboxMessage)).all())
    form = {"form_token": TOKEN}
    assert auth.post(base + "/remind", form).status_code == 302
    sent = len(db_session.exec(select(OutboxMessage)).all()) - before
    assert sent > 0
    assert auth.post(base + "/remind", form).status_code == 302
    assert len(db_session.exec(select(OutboxMessage)).all()) - before == sent


def test_a_form_sent_without_its_token_is_refused_as_typed(client, auth, game, db_session):
    campaign, referee, _ = game
    auth.login(referee)
    page = auth.post(
        f"/c/{campaign.slug}/referee/characters",
        {"name": "Hal", "aliases": "the hand", "form_token": ""},
    )
    text = page.get_data(as_text=True)
    assert page.status_code == 422 and "one-time token" in text
    assert 'name="name" required value="Hal"' in text
    assert 'name="aliases" value="the hand"' in text
    # The page carries a fresh token, so sending it again works.
    assert re.search(r'name="form_token" value="[\w-]{20,}"', text)
    assert not db_session.exec(select(Character).where(Character.name == "Hal")).all()


def test_a_token_sent_again_with_other_words_is_refused_not_replayed(client, auth, game):
    """The back button restores a sent form with its token; changed and sent again, it is
    neither replayed as the first nor lost: it comes back to be sent as a new form."""
    campaign, referee, _ = game
    auth.login(referee)
    url = f"/c/{campaign.slug}/referee/characters"
    assert auth.post(url, {"name": "Ivo", "form_token": TOKEN}).status_code == 302
    page = auth.post(url, {"name": "Jan", "form_token": TOKEN})
    assert page.status_code == 422 and 'value="Jan"' in page.get_data(as_text=True)
    assert auth.post(url, {"name": "Jan"}).status_code == 302  # a fresh token: added


def test_a_refused_event_keeps_its_text_and_says_why(client, auth, game):
    """Issue #27 item 5: "Referee forms lose what was typed." A refused event comes back
    with 422, the reason beside the form and every field as typed."""
    campaign, referee, (ada, *_) = game
    auth.login(referee)
    page = auth.post(
        f"/c/{campaign.slug}/referee/event",
        {
            "text": "The ball begins.",
            "expected_number": "1",
            "deadline_hours": "soon",
            f"tailor_{ada.id}": "Ada's mask slips.",
            f"mode_{ada.id}": "replacement",
        },
    )
    text = page.get_data(as_text=True)
    assert page.status_code == 422
    assert "deadline hours must be a whole number" in text
    assert 'rows="5" required>The ball begins.</textarea>' in text
    assert 'name="deadline_hours" inputmode="numeric" size="4" value="soon"' in text
    assert "Ada&#39;s mask slips.</textarea>" in text
    assert '<option value="replacement" selected>' in text


def test_the_event_form_refuses_an_empty_event_before_its_confirmation(client, auth, game):
    """Issue #27 item 5: "An empty event is refused before the confirmation, not after it."
    The browser checks `required` before the submit event runs the confirmation script."""
    campaign, referee, _ = game
    auth.login(referee)
    board = client.get(f"/c/{campaign.slug}/referee/").get_data(as_text=True)
    assert re.search(r'<textarea id="event-text" name="text" rows="5" required>', board)
    page = auth.post(f"/c/{campaign.slug}/referee/event", {"text": "", "expected_number": "1"})
    assert page.status_code == 422


def test_refused_settings_keep_every_field_as_typed(client, auth, game):
    campaign, referee, _ = game
    auth.login(referee)
    page = auth.post(
        f"/c/{campaign.slug}/referee/settings",
        {
            "opening_turns": "one",
            "fair_interval_hours": "12",
            "cadence": "daily",
            "cadence_at": "20:00",
            "custom_moods": "Scheming = Plot",
            "time_zone": "Europe/Stockholm",
        },
    )
    text = page.get_data(as_text=True)
    assert page.status_code == 422 and "opening turns must be a whole number" in text
    assert 'name="opening_turns" inputmode="numeric" value="one"' in text
    assert 'name="fair_interval_hours" inputmode="numeric" value="12"' in text
    assert '<option value="daily" selected>' in text
    assert 'value="20:00"' in text
    assert "Scheming = Plot</textarea>" in text
    assert "<option selected>Europe/Stockholm</option>" in text


def test_a_visitor_posting_a_declared_form_goes_to_the_login_page(client, game):
    campaign, _, _ = game
    from tests.helpers import post_form

    page = post_form(client, f"/c/{campaign.slug}/referee/characters", {"name": "Kit"})
    assert page.status_code == 302 and "/login" in page.headers["Location"]
