"""Icons and search in Chromium (issue #33 items 1-2): a player uploads an icon, whispers
with it in a forum scene, and finds the whisper by search; another player finds nothing,
the whisper's recipient finds it.

The picture is a PNG Pillow draws here, chosen through the page's file input; the icon is
served by pbp (the Content-Security-Policy allows images from pbp only, and the fixture
fails the test on any CSP violation).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest
from playwright.sync_api import expect

from pbp.models import Thread, utcnow
from pbp.services import campaigns
from pbp.services.forum import posts
from pbp.services.forum.drafts import Draft
from pbp.services.mail.settings import MailSettings
from tests.browser.conftest import LiveServer
from tests.helpers import log_in, make_account
from tests.services.icons.pictures import picture

pytestmark = pytest.mark.browser

RARE = "quillwort"  # a word nothing else in the campaign says
WHISPER = f"Bram, the {RARE} by the well hides the key."
ALT = "Ada with a lantern, smiling"


@dataclass
class Scene:
    slug: str
    url: str
    emails: dict[str, str] = field(default_factory=dict)  # player's name -> email


def _forum_scene(live_server: LiveServer) -> Scene:
    """A committed Noir campaign with three players, each playing a character of their
    own name, and a scene the referee opened."""
    with live_server.session() as session:
        referee = make_account(session, "Gail")
        campaign = campaigns.create_campaign(
            session=session, referee=referee, name="Icon Noir", ruleset="noir"
        )
        emails = {}
        for name in ("Ada", "Bram", "Cleo"):
            player = make_account(session, name)
            campaigns.add_character(session=session, campaign=campaign, name=name, user=player)
            emails[name] = player.email
        opening = posts.create_thread(
            session=session,
            campaign=campaign,
            author=referee,
            title="Fog at the well",
            draft=Draft(body="The fog comes in from the harbour."),
            mail=MailSettings(live_server.url, "x" * 32, "pbp <pbp@pbp.test>"),
            now=utcnow(),
        )
        thread = session.get(Thread, opening.thread_id)
        session.commit()
        return Scene(campaign.slug, f"/c/{campaign.slug}/forum/t/{thread.id}", emails)


def _search(page, slug: str, words: str) -> object:
    page.goto(f"/c/{slug}/")
    page.get_by_role("link", name="Search", exact=True).first.click()
    page.get_by_label("Words").fill(words)
    page.get_by_role("button", name="Search", exact=True).click()
    return page.get_by_role("region", name="Results")


def _log_out(page) -> None:
    page.get_by_role("button", name="Log out").click()


def test_an_icon_on_a_whisper_found_by_its_readers_only(
    page, live_server, tmp_path, shoot: Callable
):
    scene = _forum_scene(live_server)
    # Ada uploads two pictures as icons of her character: the first is her default, so
    # the post below shows the lantern only if her pick is kept.
    log_in(page, scene.emails["Ada"])
    page.goto(f"/c/{scene.slug}/")
    page.get_by_role("link", name="Icons", exact=True).first.click()
    for keyword, alt, color in (("plain", "Ada, plain", "navy"), ("lantern", ALT, "orange")):
        drawn = tmp_path / f"{keyword}.png"
        drawn.write_bytes(picture("PNG", size=(240, 160), color=color))
        page.get_by_label("Picture").set_input_files(drawn)
        page.get_by_label("Keyword").fill(keyword)
        page.get_by_label("What it shows (alt text)").fill(alt)
        page.get_by_role("button", name="Add the icon").click()
        expect(page.get_by_role("img", name=alt)).to_be_visible()
    shoot(page, "icons-uploaded")

    # She whispers to Bram with it.
    page.goto(scene.url)
    page.get_by_label("Icon", exact=True).select_option(label="Ada: lantern")
    page.get_by_label("A whisper: only the people named and the GM").check()
    page.get_by_label("Bram", exact=True).check()
    page.get_by_label("Your post, in Markdown").fill(WHISPER)
    page.get_by_role("button", name="Post", exact=True).click()
    post = page.locator("article.post", has_text=RARE)
    expect(post).to_have_count(1)
    face = post.locator("img.icon")
    expect(face).to_have_attribute("alt", ALT)
    src = face.get_attribute("src")
    assert src and re.fullmatch(r"/icons/\d+-[0-9a-f]{16}\.png", src), src
    # The picture is drawn, not a broken image: the browser decoded it at 100 x 100.
    assert face.evaluate("img => [img.complete, img.naturalWidth]") == [True, 100]
    shoot(page, "icons-whisper")

    # pbp serves it as a PNG, to be kept for a year under this address.
    served = page.request.get(src)
    assert served.status == 200
    assert served.headers["content-type"] == "image/png"
    caching = served.headers["cache-control"]
    assert "immutable" in caching and "max-age=31536000" in caching, caching
    assert served.body().startswith(b"\x89PNG\r\n\x1a\n")

    # Ada finds her whisper, the rare word highlighted, linked to the post.
    results = _search(page, scene.slug, RARE)
    expect(results.locator("article.hit")).to_have_count(1)
    expect(results.locator(".snippet mark")).to_have_text([RARE])
    link = results.locator("article.hit h2 a")
    assert (link.get_attribute("href") or "").startswith(scene.url + "#post-")
    shoot(page, "search-as-author")
    _log_out(page)

    # Cleo, whom the whisper does not name, finds nothing: not even that it exists.
    log_in(page, scene.emails["Cleo"])
    results = _search(page, scene.slug, RARE)
    expect(results).to_have_attribute("data-hits", "0")
    expect(results).to_contain_text("Nothing you can read here has all of these words")
    expect(page.get_by_text(RARE)).to_have_count(0)
    page.goto(scene.url)
    expect(page.get_by_text("The fog comes in from the harbour.")).to_be_visible()
    expect(page.get_by_role("img", name=ALT)).to_have_count(0)
    shoot(page, "search-as-another-player")
    _log_out(page)

    # Bram, whom it names, finds it.
    log_in(page, scene.emails["Bram"])
    results = _search(page, scene.slug, RARE)
    expect(results.locator("article.hit")).to_have_count(1)
    expect(results.locator(".snippet mark")).to_have_text([RARE])
