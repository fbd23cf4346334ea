"""Issue #33 item 5: axe-core finds nothing on the pages a group uses, at a desk's and a
phone's width, in the light and the dark palette; the pages reflow at 320 px; the small
controls are at least 24 x 24 px; the skip link is the first thing the keyboard reaches.
(The colour pairs' contrast is checked without a browser: tests/web/test_palette.py.)"""

from __future__ import annotations

import io
import re
from datetime import timedelta

import pytest
from PIL import Image
from playwright.sync_api import expect

from pbp.models import Character, utcnow
from pbp.services.noteworthy import hosted_blog
from tests.browser.axe import audit_widths
from tests.helpers import log_in
from tests.web.test_palette import contrast

pytestmark = pytest.mark.browser
REFLOW = 320


@pytest.fixture
def group(seed_game, live_server, new_page):
    """Turn 4 of a Noteworthy game (history with standings), an entry with a note, and a
    Noir campaign the same referee runs with a scene holding a roll; the referee's and
    Cleo's player's pages, logged in."""
    game = seed_game(("Ada Lovelace-Byron", "Bram", "Cleo", "Dov", "Eli"), turn=4)
    with live_server.session() as session:
        ada, cleo = (session.get(Character, game.ids[n]) for n in ("Ada Lovelace-Byron", "Cleo"))
        entry = hosted_blog.store_entry(
            session=session, character=ada, title="The lantern goes out",
            body_markdown="Target: Bram\n\nBram was on the quay.", mood="Challenging",
            now=utcnow() - timedelta(minutes=5),
        )  # fmt: skip
        hosted_blog.store_note(
            session=session, entry=entry, author=cleo, body_markdown="I saw him too.",
            stance="support", fate=None, now=utcnow(),
        )  # fmt: skip
        session.commit()
        game.entry_url = f"/c/{game.slug}/{ada.slug}/{entry.id}"
    ref, player = new_page(width=1280), new_page(width=1280)
    log_in(ref, game.referee_email)
    log_in(player, game.emails["Cleo"])
    ref.on("dialog", lambda dialog: dialog.accept())
    ref.goto("/campaigns/new")
    ref.get_by_label("Name", exact=True).fill(f"Water Street {game.slug}")
    ref.get_by_label("Noir", exact=True).check()
    ref.get_by_role("button", name="Create and referee it").click()
    game.noir = ref.url.split("/c/")[1].split("/")[0]
    ref.goto(f"/c/{game.noir}/forum/new")
    ref.get_by_label("Title of the scene").fill("Rain on Water Street")
    ref.get_by_label("Your post, in Markdown").fill(
        "Rain.\n/roll noir difficulty skill=7 # the tail"
    )
    ref.get_by_role("button", name="Post", exact=True).click()
    expect(ref.get_by_text("Roll #1")).to_be_visible()
    game.scene = "/" + ref.url.split("#")[0].split("/", 3)[3]
    # An icon, so the write page has its icon picker.
    player.goto(f"/c/{game.slug}/me/icons")
    player.locator("#pic-cleo").set_input_files(
        {"name": "lamp.png", "mimeType": "image/png", "buffer": _png()}
    )
    player.locator("#kw-cleo").fill("lamp")
    player.locator("#alt-cleo").fill("A lamp in the rain")
    player.get_by_role("button", name="Add the icon").click()
    expect(player.locator(".icon-list .keyword")).to_have_text("lamp")
    return game, ref, player


def _png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (120, 120), (200, 120, 40)).save(out, "PNG")
    return out.getvalue()


def pages_of(game) -> list[tuple[str, str]]:
    s, n = game.slug, game.noir
    return [
        ("player", "/"),
        ("player", f"/c/{s}/"),
        ("player", game.entry_url),
        ("player", f"/c/{s}/write"),
        ("player", f"/c/{s}/history"),
        ("player", f"/c/{s}/turns/1"),
        ("player", f"/c/{s}/search?q=lantern"),
        ("player", f"/c/{s}/me/icons"),
        ("player", "/account/tokens/"),
        ("player", "/api/v1/docs"),
        ("ref", f"/c/{s}/referee/"),
        ("ref", f"/c/{s}/characters/"),
        ("ref", f"/c/{s}/invites"),
        ("ref", "/campaigns/new"),
        ("ref", f"/c/{n}/forum/"),
        ("ref", game.scene),
        ("ref", f"/c/{n}/forum/fairness"),
    ]


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_page_passes_axe_and_reflows_at_320_px(group, new_page, scheme):
    """axe-core at 1280 and 390 px finds nothing; at 320 px nothing scrolls sideways (a
    wide table may scroll inside its own focusable region, never the page)."""
    game, ref, player = group
    visitor = new_page(width=1280)
    found, wide = [], []
    for page in (ref, player, visitor):
        page.emulate_media(color_scheme=scheme)
    walk = [(visitor, "/login")] + [
        (ref if who == "ref" else player, url) for who, url in pages_of(game)
    ]
    for page, url in walk:
        page.goto(url)
        found += audit_widths(page)
        page.set_viewport_size({"width": REFLOW, "height": 800})
        scroll = page.evaluate("document.scrollingElement.scrollWidth")
        if scroll > REFLOW:
            wide.append(f"{url}: {scroll} px")
        page.set_viewport_size({"width": 1280, "height": 900})
    said = ["axe-core found:", *found, f"wider than {REFLOW} px:", *wide]
    assert (found, wide) == ([], []), "\n".join(said)


def test_small_controls_are_at_least_24_px(group, new_page):
    """Support/Oppose, the forum's choices, the roll links and dice, the icon picker."""
    game, ref, player = group
    for page in (ref, player):
        page.set_viewport_size({"width": 390, "height": 800})
    checks = [
        (player, game.entry_url, "input[name=stance]"),
        (player, f"/c/{game.slug}/write", "#icon"),
        (
            ref,
            game.scene,
            ".roll > a, .die, .post-form input[type=radio], .post-form input[type=checkbox]",
        ),
    ]
    small = []
    for page, url, selector in checks:
        page.goto(url)
        boxes = page.locator(selector)
        assert boxes.count(), (url, selector)
        for n in range(boxes.count()):
            box = boxes.nth(n).bounding_box()
            if box["width"] < 24 or box["height"] < 24:
                small.append(f"{url} {selector} #{n}: {box['width']:.0f} x {box['height']:.0f}")
    assert small == []


RING = """() => { const s = getComputedStyle(document.activeElement);
    const bar = getComputedStyle(document.querySelector('header.site'));
    return [s.outlineStyle, s.outlineWidth, s.outlineColor, bar.backgroundColor]; }"""


def _hex(rgb: str) -> str:
    return "#" + "".join(f"{int(c):02x}" for c in re.findall(r"\d+", rgb)[:3])


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_skip_link_comes_first_and_rings_show_on_the_header(page, seed_game, scheme):
    game = seed_game(turn=1)
    page.emulate_media(color_scheme=scheme)
    log_in(page, game.emails["Ada"])
    page.goto(f"/c/{game.slug}/write")
    page.keyboard.press("Tab")
    focused = page.locator(":focus")
    expect(focused).to_have_text("Skip to content")
    box = focused.bounding_box()
    assert box["y"] >= 0 and box["height"] >= 24, box  # shown when focused
    page.keyboard.press("Enter")
    page.keyboard.press("Tab")
    assert page.evaluate("document.querySelector('main').contains(document.activeElement)")
    # Back on the header: the brand link's focus ring against the dark bar.
    page.goto(f"/c/{game.slug}/write")
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    expect(focused).to_have_text("pbp")
    style, width, ring, bar = page.evaluate(RING)
    assert style == "solid" and float(width.rstrip("px")) >= 2, (style, width)
    assert contrast(_hex(ring), _hex(bar)) >= 3, (ring, bar)
