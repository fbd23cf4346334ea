"""A phone-sized screen (375 px: nothing scrolls sideways), the keyboard alone, and a
label for every field."""

import pytest
from playwright.sync_api import expect

from pbp.models import Character, utcnow
from pbp.services.noteworthy import hosted_blog
from tests.helpers import UNLABELLED_FIELDS, log_in, no_horizontal_scroll

pytestmark = pytest.mark.browser
PHONE = 375
LONG_WORD = "https://ada.example.net/" + "unbroken" * 20  # must wrap, not widen the page


@pytest.fixture
def challenged(seed_game, live_server):
    """Turn 3: Ada challenges Bram and Cleo supports, both quoting a long unbroken address."""
    game = seed_game(turn=3)
    with live_server.session() as session:
        ada, cleo = (session.get(Character, game.ids[n]) for n in ("Ada", "Cleo"))
        entry = hosted_blog.store_entry(
            session=session,
            character=ada,
            title="Bram knows where the ledger is, and he will not say so at the inquest",
            body_markdown=f"Target: Bram\n\nThe ledger was at {LONG_WORD} all along.",
            mood="Challenging",
            now=utcnow(),
        )
        hosted_blog.store_note(
            session=session,
            entry=entry,
            author=cleo,
            body_markdown=f"He lied to me as well: {LONG_WORD}",
            stance="support",
            fate="Bram leaves town at dawn.",
            now=utcnow(),
        )
        session.commit()
    game.entry_url = f"/c/{game.slug}/{ada.slug}/{entry.id}"
    return game


def test_phone_screens_do_not_scroll_sideways(new_page, challenged, shoot):
    page = new_page(width=PHONE, height=740)
    log_in(page, challenged.emails["Bram"])
    pages = {
        "planet": f"/c/{challenged.slug}/",
        "entry": challenged.entry_url,
        "write": f"/c/{challenged.slug}/write",
        "character": f"/c/{challenged.slug}/ada/",
        "my-blog": f"/c/{challenged.slug}/me/blog",
    }
    for name, url in pages.items():
        page.goto(url)
        no_horizontal_scroll(page, PHONE)
        shoot(page, f"phone-{name}")
    page.goto(f"/c/{challenged.slug}/")
    expect(page.locator(".challenge-line .count.support")).to_have_text("1 support")


def test_the_entry_form_works_with_the_keyboard_alone(page, seed_game):
    game = seed_game(turn=3)
    log_in(page, game.emails["Ada"])
    page.goto(f"/c/{game.slug}/write")
    for _ in range(40):
        if page.evaluate("document.activeElement.id") == "title":
            break
        page.keyboard.press("Tab")
    focused = page.locator(":focus")
    expect(focused).to_have_id("title")
    page.keyboard.type("By the keyboard")
    page.keyboard.press("Tab")
    expect(focused).to_have_id("mood")
    page.keyboard.type("Challenging")
    page.keyboard.press("Tab")
    expect(focused).to_have_id("target")
    page.keyboard.press("ArrowDown")  # the first target, in name order: Bram
    page.keyboard.press("Tab")
    expect(focused).to_have_id("body")
    page.keyboard.type("Typed, never clicked.")
    page.keyboard.press("Tab")
    expect(focused).to_have_text("Preview (saves nothing)")
    page.keyboard.press("Tab")
    expect(focused).to_have_text("Post entry")
    page.keyboard.press("Enter")
    expect(page.locator(".flash", has_text="Entry posted")).to_be_visible()
    expect(page.locator(".challenge-line")).to_contain_text("Challenge against Bram")


def test_every_field_has_a_label(new_page, challenged, live_server):
    visitor = new_page()
    player = new_page()
    referee = new_page()
    log_in(player, challenged.emails["Cleo"])
    log_in(referee, challenged.referee_email)
    slug = challenged.slug
    checks = [
        (visitor, "/login"),
        (visitor, f"/c/{slug}/"),
        (player, f"/c/{slug}/"),
        (player, f"/c/{slug}/write"),
        (player, challenged.entry_url),
        (player, f"/c/{slug}/ada/"),
        (player, f"/c/{slug}/me/blog"),
        (referee, "/campaigns/new"),
        (referee, f"/c/{slug}/invites"),
        (referee, f"/c/{slug}/referee/"),
    ]
    missing = {}
    for page, url in checks:
        page.goto(url)
        assert page.locator("input, select, textarea").count(), url
        unlabelled = page.evaluate(UNLABELLED_FIELDS)
        if unlabelled:
            missing[url] = unlabelled
    assert missing == {}
