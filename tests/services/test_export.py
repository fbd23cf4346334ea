"""The JSON export and the static HTML archive: complete, scoped, escaped, and the archive's
links all resolve inside the zip (it must open from disk with no server)."""

from __future__ import annotations

import io
import json
import posixpath
import zipfile
from html.parser import HTMLParser
from urllib.parse import unquote, urlsplit

import pytest

from pbp.services import export
from tests.services.noteworthy.test_history import count_selects, grow, play_campaign

BASE = "https://pbp.test"


@pytest.fixture
def game(db_session):
    return play_campaign(db_session)


# --- JSON -------------------------------------------------------------------------------


def test_export_is_json_and_holds_every_table(db_session, game):
    data = export.export_campaign(session=db_session, campaign=game.campaign)
    assert json.loads(json.dumps(data)) == data  # JSON-able with no custom encoder
    assert data["format"] == "pbp-campaign" and data["version"] == 1
    assert data["campaign"]["slug"] == game.campaign.slug
    counts = {k: len(v) for k, v in data.items() if isinstance(v, list)}
    assert counts == {
        "members": 7,
        "characters": 6,
        "blogs": 6,
        "author_aliases": 0,
        "turns": 3,
        "events": 4,
        "entries": 5,
        "notes": 4,
        "challenges": 2,
        "rulings": 0,
        "audit_log": 7,  # 3 events, 2 closes, 2 resolutions
    }
    assert {m["role"] for m in data["members"]} == {"referee", "player"}


def test_export_keeps_what_was_private_during_play(db_session, game):
    data = export.export_campaign(session=db_session, campaign=game.campaign)
    (tailored,) = [e for e in data["events"] if e["character_id"] is not None]
    assert tailored["mode"] == "addition" and tailored["text"] == "You saw <b>Bram</b> there."
    assert tailored["character_id"] == game.chars["ada"].id
    turn_one = data["turns"][0]
    assert turn_one["result"]["eliminated"] == [game.chars["bram"].id]
    assert turn_one["start_standings"] == {str(c.id): "active" for c in game.chars.values()}
    duel = next(c for c in data["challenges"] if c["entry_id"] == game.entries["duel"].id)
    assert duel["outcome"] == "challenger" and duel["consequence"].startswith("Bram is exiled")
    entry = next(e for e in data["entries"] if e["id"] == game.entries["duel"].id)
    assert entry["revisions"][0]["mood_raw"] == "Challenging"
    assert entry["published_at"] == "2026-06-01T10:00:00+00:00"
    fate = next(n for n in data["notes"] if n["fate_text"])
    assert fate["author_character_id"] == game.chars["fay"].id


def test_export_leaves_out_addresses_and_polling_internals(db_session, game):
    data = export.export_campaign(session=db_session, campaign=game.campaign)
    text = json.dumps(data)
    assert "@example.test" not in text and "password" not in text
    assert set(data["blogs"][0]) == set(export.BLOG_FIELDS)


def test_export_holds_only_this_campaign(db_session, game):
    other = play_campaign(db_session, name="Another Night")
    data = export.export_campaign(session=db_session, campaign=game.campaign)
    theirs = {c.id for c in other.chars.values()}
    assert not theirs & {c["id"] for c in data["characters"]}
    assert not {e.id for e in other.entries.values()} & {e["id"] for e in data["entries"]}
    assert all(n["entry_id"] in {e["id"] for e in data["entries"]} for n in data["notes"])
    assert {a["campaign_id"] for a in data["audit_log"]} == {game.campaign.id}


def test_export_reads_one_query_per_table_whatever_the_size(db_session, engine, game):
    with count_selects(engine) as small:
        export.export_campaign(session=db_session, campaign=game.campaign)
    grow(db_session, game)
    with count_selects(engine) as big:
        data = export.export_campaign(session=db_session, campaign=game.campaign)
    assert len(data["turns"]) == 6
    assert len(small) == len(big) == len(export.EXPORT_TABLES)


# --- the archive: a link checker that can fail ---------------------------------------------


class _Page(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("href", "src") and value is not None:
                self.links.append(value)
            if name == "id" and value:
                self.ids.add(value)


def read_zip(data: bytes) -> dict[str, str]:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        assert zf.testzip() is None
        return {name: zf.read(name).decode("utf-8") for name in zf.namelist()}


def broken_links(files: dict[str, str]) -> list[str]:
    """Every local link in every page that has no file, or no anchor, inside the zip."""
    pages = {}
    for name, text in files.items():
        if name.endswith(".html"):
            pages[name] = _Page()
            pages[name].feed(text)
    broken = []
    for name, page in pages.items():
        for link in page.links:
            parts = urlsplit(link)
            if parts.scheme in ("http", "https", "mailto"):
                continue
            if parts.scheme or parts.netloc or link.startswith("/"):
                broken.append(f"{name}: {link} (not a relative link)")
                continue
            target = name
            if parts.path:
                target = posixpath.normpath(
                    posixpath.join(posixpath.dirname(name), unquote(parts.path))
                )
            if target not in files:
                broken.append(f"{name}: {link} (no file {target})")
            elif parts.fragment and parts.fragment not in pages.get(target, _Page()).ids:
                broken.append(f"{name}: {link} (no #{parts.fragment} in {target})")
    return broken


def test_link_checker_finds_missing_files_anchors_and_absolute_paths():
    files = {
        "a/index.html": '<a href="blogs/x.html#entry-1">x</a><a href="gone.html">g</a>'
        '<a href="/c/slug/">abs</a><a href="#top">top</a><link href="style.css">',
        "a/blogs/x.html": '<p id="entry-2"></p><a href="../index.html">up</a>',
        "a/style.css": "",
    }
    assert broken_links(files) == [
        "a/index.html: blogs/x.html#entry-1 (no #entry-1 in a/blogs/x.html)",
        "a/index.html: gone.html (no file a/gone.html)",
        "a/index.html: /c/slug/ (not a relative link)",
        "a/index.html: #top (no #top in a/index.html)",
    ]


# --- the archive ---------------------------------------------------------------------------


@pytest.fixture
def archive(db_session, game):
    return read_zip(export.archive_zip(session=db_session, campaign=game.campaign, base_url=BASE))


def test_archive_has_a_page_per_turn_and_per_blog(game, archive):
    root = game.campaign.slug + "/"
    slugs = sorted(c.slug for c in game.chars.values())
    assert sorted(archive) == sorted(
        [root + "index.html", root + "style.css"]
        + [f"{root}turns/turn-{n}.html" for n in (1, 2, 3)]
        + [f"{root}blogs/{s}.html" for s in slugs]
    )
    assert archive[root + "style.css"].startswith("/* A quiet noir look")


def test_every_local_link_in_the_archive_resolves(archive):
    assert broken_links(archive) == []
    index = archive[next(n for n in archive if n.endswith("/index.html"))]
    assert 'href="turns/turn-1.html"' in index and 'href="style.css"' in index


def test_archive_escapes_names_and_never_carries_scripts(game, archive):
    for name, text in archive.items():
        assert "<script" not in text.lower(), name
    index = archive[game.campaign.slug + "/index.html"]
    assert "&lt;script&gt;alert(" in index
    blog = archive[f"{game.campaign.slug}/blogs/{game.chars['fay'].slug}.html"]
    assert "<h1>&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; Fay</h1>" in blog
    ada = archive[f"{game.campaign.slug}/blogs/ada.html"]
    assert "Desired fate: Bram sails &lt;i&gt;away&lt;/i&gt;." in ada


def test_turn_page_tells_the_event_tally_and_entries(game, archive):
    page = archive[game.campaign.slug + "/turns/turn-1.html"]
    assert "<p>A body in the canal.</p><p>Nobody saw a thing.</p>" in page
    assert "For Ada only, added to the general text" in page
    assert "You saw &lt;b&gt;Bram&lt;/b&gt; there." in page  # the event is plain text
    assert "Ada won (2 for, 1 against)" in page
    assert "<em>Bram is exiled &lt;b&gt;forever&lt;/b&gt;.</em>" in page
    duel = game.entries["duel"]
    assert f'id="entry-{duel.id}"' in page
    assert f'href="../blogs/ada.html#entry-{duel.id}"' in page
    assert 'href="turn-2.html" rel="next"' in page
    assert "<strong>Cleo</strong> challenged" in archive[game.campaign.slug + "/turns/turn-2.html"]
    assert "was not resolved" in archive[game.campaign.slug + "/turns/turn-3.html"]


def test_relative_links_in_entries_point_at_the_live_site(game, archive):
    page = archive[f"{game.campaign.slug}/blogs/bram.html"]
    reply = game.entries["reply"]
    assert f'href="{BASE}/c/{game.campaign.slug}/bram/map.html"' in page
    assert f'href="{BASE}/docks"' in page and 'href="https://example.com/x"' in page
    assert f"turn-1.html#entry-{reply.id}" in page


def test_archive_opens_with_the_referees_final_notice(db_session, game):
    game.campaign.settings = {**game.campaign.settings, "final_notice": "Ada <rules>.\n\nThe end."}
    files = read_zip(export.archive_zip(session=db_session, campaign=game.campaign))
    index = files[game.campaign.slug + "/index.html"]
    assert "<p>Ada &lt;rules&gt;.</p><p>The end.</p>" in index


def test_entries_outside_any_turn_stay_on_their_blog(game, archive):
    prologue = game.entries["prologue"]
    assert prologue.turn_id is None
    page = archive[f"{game.campaign.slug}/blogs/eli.html"]
    assert f'<a href="#entry-{prologue.id}">outside any turn</a>' in page
    turn_pages = [text for name, text in archive.items() if "/turns/" in name]
    assert not any(f'id="entry-{prologue.id}"' in text for text in turn_pages)


def test_without_a_site_address_relative_links_become_text(db_session, game):
    files = read_zip(export.archive_zip(session=db_session, campaign=game.campaign))
    page = files[f"{game.campaign.slug}/blogs/bram.html"]
    assert "map.html" not in page and "my map" in page
    assert 'href="https://example.com/x"' in page
    assert broken_links(files) == []


def test_archive_is_the_same_bytes_twice_and_shows_the_chart(db_session, game, archive):
    again = export.archive_zip(session=db_session, campaign=game.campaign, base_url=BASE)
    assert read_zip(again) == archive
    first = export.archive_zip(session=db_session, campaign=game.campaign, base_url=BASE)
    assert first == again
    assert 'role="img"' in archive[game.campaign.slug + "/index.html"]


def test_archive_reads_a_fixed_number_of_queries(db_session, engine, game):
    with count_selects(engine) as small:
        export.archive_zip(session=db_session, campaign=game.campaign)
    grow(db_session, game)
    with count_selects(engine) as big:
        files = read_zip(export.archive_zip(session=db_session, campaign=game.campaign))
    assert len([n for n in files if "/turns/" in n]) == 6
    # One per table, and one for the icons beside entries and notes (issue #33 item 1;
    # none has a picture here, so no query reads pictures).
    assert len(small) == len(big) == len(export.ARCHIVE_TABLES) + 1
    assert broken_links(files) == []
