"""Issue #16, item 10 (a security regression test kept here, beside the Chromium
fixtures it needs): an image in player content cannot make readers' browsers call another
site (which learns who read what, and when).

The "remote" site is tests/feedserver.py on another loopback port (another origin); it
counts requests, so the test sees whether the browser fetched the image.
"""

from __future__ import annotations

import pytest
from sqlmodel import select

from pbp.models import Character
from pbp.models import utcnow as now
from pbp.services.noteworthy import hosted_blog
from tests.feedserver import FeedServer

pytestmark = pytest.mark.browser
PIXEL = (
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00"
    b"\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00"
    b"\x00\x00\x00IEND\xaeB`\x82"
)


@pytest.fixture
def tracker():
    with FeedServer() as server:
        server.add("/pixel.png", body=PIXEL, content_type="image/png")
        yield server


def _entry_with_image(live_server, slug: str, url: str) -> str:
    with live_server.session() as session:
        ada = session.exec(select(Character).where(Character.name == "Ada")).all()[-1]
        entry = hosted_blog.store_entry(
            session=session,
            character=ada,
            title="A postcard",
            body_markdown=f"Look at this.\n\n![a harbour]({url})",
            mood="calm",
            now=now(),
        )
        session.commit()
        return f"/c/{slug}/{ada.slug}/{entry.id}"


def _open(new_page, path: str) -> None:
    viewer = new_page()
    viewer.goto(path)
    viewer.wait_for_load_state("networkidle")
    viewer.context.close()


def test_an_image_from_another_site_is_not_fetched(
    live_server, new_page, seed_game, tracker, monkeypatch
):
    game = seed_game(("Ada", "Bram"))
    path = _entry_with_image(live_server, game.slug, tracker.url("/pixel.png"))
    monkeypatch.setitem(live_server.app.config, "PBP_BLOCK_REMOTE_IMAGES", True)
    _open(new_page, path)
    _open(new_page, f"/c/{game.slug}/")
    assert tracker.count("/pixel.png") == 0


def test_with_the_setting_off_the_image_loads(
    live_server, new_page, seed_game, tracker, monkeypatch
):
    """The control: the same page does fetch it when remote images are allowed."""
    game = seed_game(("Ada", "Bram"))
    path = _entry_with_image(live_server, game.slug, tracker.url("/pixel.png"))
    monkeypatch.setitem(live_server.app.config, "PBP_BLOCK_REMOTE_IMAGES", False)
    _open(new_page, path)
    assert tracker.count("/pixel.png") == 1
