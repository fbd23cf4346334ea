"""Issue #29 item 3: a reply through the entry page's own "Reply" link, and a thread six
replies deep that still reads on a 320 px phone (indentation stops at three levels)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from playwright.sync_api import expect
from sqlmodel import select

from pbp.models import Character, Note, utcnow
from pbp.services.noteworthy import hosted_blog
from tests.helpers import log_in, no_horizontal_scroll

pytestmark = pytest.mark.browser
PHONE = 320
WIDTHS = """() => Array.from(document.querySelectorAll('li.note .body')).map(
    b => Math.round(b.getBoundingClientRect().width))"""


def test_a_deep_thread_reads_on_a_320_px_phone(new_page, live_server, seed_game, shoot):
    game = seed_game(("Ada", "Bram", "Cleo"), turn=1)
    with live_server.session() as session:
        ada, bram = (session.get(Character, game.ids[n]) for n in ("Ada", "Bram"))
        now = utcnow()
        entry = hosted_blog.store_entry(
            session=session,
            character=ada,
            title="The ball",
            body_markdown="Who danced with whom.",
            mood="Calm",
            now=now,
        )
        parent = None
        for depth in range(6):
            parent = hosted_blog.store_note(
                session=session,
                entry=entry,
                author=(bram, ada)[depth % 2],
                body_markdown=f"Level {depth}: a sentence long enough to wrap on a phone.",
                now=now + timedelta(minutes=depth + 1),
                reply_to=parent,
            )
        session.commit()
        url = f"/c/{game.slug}/{ada.slug}/{entry.id}"
        first = session.exec(select(Note).where(Note.entry_id == entry.id)).first()
        assert first is not None
        first_id = first.id
    page = new_page(width=PHONE, height=900)
    log_in(page, game.emails["Cleo"])
    page.goto(url)
    no_horizontal_scroll(page, PHONE)
    widths = page.evaluate(WIDTHS)
    assert len(widths) == 6
    # Levels 3, 4 and 5 sit at the same indentation: no narrower than level 3.
    assert widths[3] == widths[4] == widths[5] < widths[0]
    assert widths[5] >= 220, f"the deepest reply is {widths[5]} px wide at {PHONE} px"
    shoot(page, f"thread-{PHONE}")
    # Reply to the first note with the page's own link and form.
    page.locator(f"#note-{first_id} .note-actions a").click()
    expect(page.locator("#note-form")).to_contain_text("Replying to")
    page.fill("#note-body", "Cleo answers the first note.")
    page.get_by_role("button", name="Post reply").click()
    expect(page.locator("li.note.depth-1").filter(has_text="Cleo answers")).to_be_visible()
