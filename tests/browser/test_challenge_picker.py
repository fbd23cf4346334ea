"""The challenge picker in a real browser: the small inline script shows it only for a
Challenging mood, and the rules' refusals are shown with their reasons."""

import re

import pytest
from playwright.sync_api import expect
from sqlmodel import select

from pbp.models import Entry
from tests.helpers import log_in

pytestmark = pytest.mark.browser


def post_refused(page) -> str:
    """Submit the entry form; the answer must be the form again (422) with the reason
    beside it (the page's top repeats it)."""
    with page.expect_response(lambda r: r.request.method == "POST") as answer:
        page.get_by_role("button", name="Post entry").click()
    assert answer.value.status == 422
    return page.locator(".entry-form .error").inner_text()


def fill_entry(page, title: str) -> None:
    page.locator("#title").fill(title)
    page.locator("#body").fill("Words.")


def test_in_an_opening_turn_the_picker_is_disabled_with_the_reason(page, seed_game):
    game = seed_game(turn=1, opening_turns=2)
    log_in(page, game.emails["Ada"])
    page.goto(f"/c/{game.slug}/write")
    picker = page.locator("#challenge")
    expect(picker).to_be_hidden()
    page.locator("#mood").press_sequentially("Challenging")
    expect(picker).to_be_visible()
    expect(picker).to_have_js_property("disabled", True)
    expect(page.locator("#target")).to_have_count(0)
    reason = "No challenges are permitted in the first 2 turns of the game."
    expect(page.locator("#challenge-reason")).to_have_text(reason)
    fill_entry(page, "Too early")
    assert reason in post_refused(page)


def test_the_picker_follows_the_mood_and_a_second_challenge_is_refused(
    page, seed_game, live_server, shoot
):
    game = seed_game(turn=3)
    log_in(page, game.emails["Ada"])
    page.goto(f"/c/{game.slug}/write")
    mood, picker = page.locator("#mood"), page.locator("#challenge")
    expect(picker).to_be_hidden()
    mood.press_sequentially("Challenging")
    expect(picker).to_be_visible()
    expect(page.locator("#target")).to_be_enabled()
    mood.fill("")
    mood.press_sequentially("Calm")
    expect(picker).to_be_hidden()
    mood.fill("")
    mood.press_sequentially("Chal lenging")  # not the rules' "Challenging": no picker
    expect(picker).to_be_hidden()
    mood.fill("")
    mood.press_sequentially(" challenging!")  # the script reads the mood as the rules do
    expect(picker).to_be_visible()
    page.locator("#target").select_option(label="Bram")
    fill_entry(page, "Bram, at dawn")
    shoot(page, "write-challenge-picker")
    page.get_by_role("button", name="Post entry").click()
    expect(page.locator(".challenge-line")).to_contain_text("Challenge against Bram")

    page.goto(f"/c/{game.slug}/write")
    mood.press_sequentially("Challenging")
    expect(picker).to_have_js_property("disabled", True)
    already = re.compile(r"You have already challenged this turn")
    expect(page.locator("#challenge-reason")).to_have_text(already)
    fill_entry(page, "Cleo, too")
    assert already.search(post_refused(page))
    with live_server.session() as session:
        titles = session.exec(
            select(Entry.title).where(Entry.character_id == game.ids["Ada"])
        ).all()
    assert titles == ["Bram, at dawn"]
