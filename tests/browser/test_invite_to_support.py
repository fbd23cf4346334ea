"""The whole loop in a real browser: the referee sets up a game and invites two players;
one signs up and challenges with a mood, the other signs up and notes Support; the planet
counts it."""

import re

import pytest
from playwright.sync_api import expect

from pbp.services import campaigns
from tests.helpers import PASSWORD, log_in, make_account

pytestmark = pytest.mark.browser


def make_invite(page, slug: str, character: str) -> str:
    page.goto(f"/c/{slug}/invites")
    page.locator("#role").select_option("player")
    page.locator("#character").select_option(label=character)
    page.get_by_role("button", name="Create the invite link").click()
    link = page.locator("#invite-link").input_value()
    assert re.search(r"/invite/\S+$", link), link
    return link


def sign_up(page, link: str, name: str, email: str) -> None:
    page.goto(link)
    page.locator("#display_name").fill(name)
    page.locator("#email").fill(email)
    page.locator("#password").fill(PASSWORD)
    page.locator("#confirm").fill(PASSWORD)
    page.get_by_role("button", name="Create my account and join").click()
    expect(page.locator(".flash", has_text="Welcome to")).to_be_visible()


def test_invite_sign_up_challenge_and_support_show_on_the_planet(live_server, new_page, shoot):
    with live_server.session() as session:
        referee = make_account(session, "Referee")
        session.commit()
    ref = new_page()
    log_in(ref, referee.email)

    ref.goto("/campaigns/new")
    name = f"Harbour Lights {referee.id}"
    ref.locator("#name").fill(name)
    ref.get_by_role("button", name="Create and referee it").click()
    expect(ref.locator("h1")).to_contain_text(name)
    slug = campaigns.slugify(name)
    for character in ("Ada", "Bram", "Cleo"):
        ref.locator("#new-name").fill(character)
        ref.get_by_role("button", name="Add character").click()
        expect(ref.locator(".flash", has_text=f"{character} joins the roster")).to_be_visible()
    ref.locator("#opening").fill("0")  # no opening turns: turn 1 may have challenges
    ref.get_by_role("button", name="Save settings").click()
    expect(ref.locator(".flash", has_text="Settings saved")).to_be_visible()
    ref.locator("#event-text").fill("A ship without lights drifts into the harbour.")
    # Posting an event asks for confirmation (static/confirm.js); Playwright would dismiss it.
    ref.once("dialog", lambda dialog: dialog.accept())
    ref.get_by_role("button", name=re.compile("Post the event and open turn 1")).click()
    expect(ref.locator(".flash", has_text="Turn 1 is open")).to_be_visible()
    shoot(ref, "referee-dashboard")
    ada_link = make_invite(ref, slug, "Ada")
    shoot(ref, "invite-created")
    bram_link = make_invite(ref, slug, "Bram")

    ada = new_page()
    ada.goto(ada_link)
    shoot(ada, "invite-sign-up")
    sign_up(ada, ada_link, "Ada's player", f"ada{referee.id}@invited.test")
    ada.get_by_role("link", name="Write an entry as Ada").click()
    ada.locator("#title").fill("The lantern goes out")
    ada.locator("#mood").fill("Challenging")
    expect(ada.locator("#challenge")).to_be_visible()
    ada.locator("#target").select_option(label="Cleo")
    ada.locator("#body").fill("Cleo was on the quay when the lantern went out.")
    shoot(ada, "write-entry")
    ada.get_by_role("button", name="Post entry").click()
    expect(ada.locator(".flash", has_text="Entry posted")).to_be_visible()
    expect(ada.locator(".mood")).to_contain_text("Challenging")
    entry_url = ada.url

    bram = new_page()
    sign_up(bram, bram_link, "Bram's player", f"bram{referee.id}@invited.test")
    bram.get_by_role("link", name="The lantern goes out").click()
    assert bram.url == entry_url
    bram.get_by_label("Support").check()
    bram.locator("#note-body").fill("I saw her too. Support.")
    bram.get_by_role("button", name="Post note").click()
    expect(bram.locator(".flash", has_text="Note posted")).to_be_visible()
    expect(bram.locator(".challenge-line .count.support")).to_have_text("1 support")
    shoot(bram, "entry-with-note")

    bram.goto(f"/c/{slug}/")
    expect(bram.locator(".challenge-line .count.support")).to_have_text("1 support")
    shoot(bram, "planet")
