"""A place a group lives in, in Chromium on a real install (issue #29 "Done when"):

1. Ada posts an entry, and a note on Bram's.
2. Bram's home page shows "1 new" beside the campaign (what he has not seen since his last
   visit: Ada's entry; a note on his own entry is news too), and the planet jumps to it.
3. Bram replies to Ada's note, naming Cleo with "@Cleo": Ada gets the reply mail, Cleo
   the mention mail, each once.

Step 4's whisper (a whisper mentioning a third character mails nobody else) is proved for
every audience in tests/services/test_mentions.py and by the secrecy walk
(tests/security/test_secret_markers.py); step 5 (a half-written entry survives logging out
and in) is tests/browser/test_drafts.py.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from playwright.sync_api import expect
from sqlmodel import select

from pbp.models import Campaign, Character, OutboxMessage, utcnow
from pbp.services.noteworthy import hosted_blog
from tests.helpers import log_in

pytestmark = pytest.mark.browser


def _mails(live_server, slug: str, kind: str) -> list[OutboxMessage]:
    with live_server.session() as session:
        campaign = session.exec(select(Campaign).where(Campaign.slug == slug)).one()
        query = select(OutboxMessage).where(
            OutboxMessage.campaign_id == campaign.id, OutboxMessage.kind == kind
        )
        return list(session.exec(query).all())


def test_what_is_new_a_reply_and_a_mention(page, seed_game, live_server, shoot):
    game = seed_game(("Ada", "Bram", "Cleo"), turn=1)
    with live_server.session() as session:
        bram = session.get(Character, game.ids["Bram"])
        entry = hosted_blog.store_entry(
            session=session, character=bram, title="Bram's letter", body_markdown="Hello all.",
            mood="Calm", now=utcnow() - timedelta(minutes=30),
        )  # fmt: skip
        session.commit()
        bram_entry = f"/c/{game.slug}/bram/{entry.id}"
    # Bram has seen his campaign's planet: what follows is new to him.
    log_in(page, game.emails["Bram"])
    page.goto(f"/c/{game.slug}/")
    page.get_by_role("button", name="Log out").click()

    # 1. Ada posts an entry, and a note on Bram's.
    log_in(page, game.emails["Ada"])
    page.goto(f"/c/{game.slug}/write")
    page.locator("#title").fill("Ada's news")
    page.locator("#mood").fill("Cheerful")
    page.locator("#body").fill("The harbour is open again.")
    page.get_by_role("button", name="Post entry").click()
    expect(page.locator("h1")).to_contain_text("Ada's news")
    page.goto(bram_entry)
    page.locator("#note-body").fill("What a fine letter.")
    page.get_by_role("button", name="Post note").click()
    expect(page.locator(".note")).to_contain_text(["What a fine letter."])
    page.get_by_role("button", name="Log out").click()

    # 2. Bram's board says what is new, and the planet jumps to it.
    log_in(page, game.emails["Bram"])
    page.goto("/")
    expect(page.locator(".news").first).to_contain_text("new")
    shoot(page, "journey-board-new")
    page.goto(f"/c/{game.slug}/")
    jump = page.get_by_role("link", name="Jump to the first unread")
    expect(jump).to_be_visible()
    target = jump.get_attribute("href")
    assert target and target.startswith("#")
    jump.click()
    expect(page.locator(target)).to_contain_text("Ada's news")

    # 3. Bram replies to Ada's note and names Cleo.
    page.goto(bram_entry)
    page.locator(".note .note-actions a").first.click()
    page.locator("#note-body").fill("Thank you, Ada. @Cleo, will you come?")
    page.get_by_role("button", name="Post reply").click()
    expect(page.locator(".note.depth-1")).to_contain_text("will you come?")
    expect(page.locator(".note.depth-1 a", has_text="@Cleo")).to_have_count(1)
    shoot(page, "journey-reply")

    replies = _mails(live_server, game.slug, "reply")
    assert [m.recipient for m in replies] == [game.emails["Ada"]]
    mentions = _mails(live_server, game.slug, "mention")
    assert [m.recipient for m in mentions] == [game.emails["Cleo"]]
