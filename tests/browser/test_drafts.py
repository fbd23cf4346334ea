"""Drafts that survive, in Chromium (issue #29 item 5; "Done when" step 5: "B's
half-written entry survives logging out and in"). The autosave script (pbp/static/drafts.js,
under pbp's CSP: the `new_page` fixture fails on any violation) saves the write form on the
server every 10 s while it changes, and once more when the page is left."""

from __future__ import annotations

import time

import pytest
from playwright.sync_api import expect
from sqlmodel import select

from pbp.models import Campaign, SavedDraft
from tests.helpers import log_in

pytestmark = pytest.mark.browser

AUTOSAVE_MS = 30_000  # the script saves every 10 s; a busy machine may be slower


def _drafts(live_server, slug: str) -> list[SavedDraft]:
    """The drafts kept in this test's campaign (the live server's database is shared)."""
    with live_server.session() as session:
        query = select(SavedDraft).join(Campaign).where(Campaign.slug == slug)
        return list(session.exec(query).all())


def test_a_half_written_entry_survives_logging_out_and_in(page, seed_game, live_server, shoot):
    game = seed_game(("Ada", "Bram"), turn=1)
    log_in(page, game.emails["Bram"])
    page.goto(f"/c/{game.slug}/write")
    page.locator("#title").fill("Half a letter")
    page.locator("#mood").fill("Wistful")
    page.locator("#body").press_sequentially("Dear Ada, I have not yet found the words to")

    with page.expect_response(
        lambda r: r.request.method == "POST" and "/drafts/entry" in r.url, timeout=AUTOSAVE_MS
    ) as saved:
        pass  # nothing pressed: the script saves by itself
    assert saved.value.status == 204
    assert saved.value.request.headers.get("x-draft-autosave") == "1"
    expect(page.locator("[data-draft-status]")).to_contain_text("Draft saved at")

    page.get_by_role("button", name="Log out").click()
    expect(page.get_by_role("button", name="Log out")).to_have_count(0)
    log_in(page, game.emails["Bram"])
    page.goto(f"/c/{game.slug}/write")
    expect(page.locator("#title")).to_have_value("Half a letter")
    expect(page.locator("#mood")).to_have_value("Wistful")
    expect(page.locator("#body")).to_have_value("Dear Ada, I have not yet found the words to")
    expect(page.locator("[data-draft-status]")).to_contain_text("Your draft, saved")
    shoot(page, "draft-restored")

    page.locator("#body").press_sequentially(" say this.")
    page.get_by_role("button", name="Post entry").click()
    expect(page.locator("h1")).to_contain_text("Half a letter")
    assert _drafts(live_server, game.slug) == []  # posting deleted it, in the same transaction
    page.goto(f"/c/{game.slug}/write")
    expect(page.locator("#body")).to_have_value("")


def test_leaving_the_page_saves_what_was_typed_since_the_last_save(page, seed_game, live_server):
    """A closed tab, or a link followed, 3 s after the last save: the script saves once
    more as the page goes (a keepalive request)."""
    game = seed_game(("Ada", "Bram"), turn=1)
    log_in(page, game.emails["Ada"])
    page.goto(f"/c/{game.slug}/write")
    page.locator("#title").fill("Quick")
    page.locator("#body").fill("Typed just before leaving.")
    page.goto("/")
    deadline = time.monotonic() + 15
    while not _drafts(live_server, game.slug) and time.monotonic() < deadline:
        time.sleep(0.2)
    (draft,) = _drafts(live_server, game.slug)
    assert draft.fields["body"] == "Typed just before leaving."
    page.goto(f"/c/{game.slug}/write")
    expect(page.locator("#body")).to_have_value("Typed just before leaving.")
