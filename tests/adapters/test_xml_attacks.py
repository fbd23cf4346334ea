"""XML attacks: entity expansion bombs and external entities.

The issue asked to rely on feedparser's DOCTYPE stripping and prove it. The proof found a gap
(test_feedparser_alone_expands_a_quadratic_blowup), so parse_feed strips DTDs itself first
(adapters.xmlguard); these tests hold both to bounded time and memory and no file or network
access.
"""

from __future__ import annotations

import io
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import feedparser
import pytest

from adapters import parse_feed
from adapters.base import ParsedFeed
from adapters.xmlguard import escape_undefined_entities, strip_doctype
from tests.feedserver import FeedServer

ITEM = b'<rss version="2.0"><channel><title>t</title><item><guid>g</guid><title>%s</title>'
ITEM += b"<description>%s</description></item></channel></rss>"

LAUGHS = (
    b"""<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
"""
    + ITEM % (b"&lol9;", b"&lol9;")
)


def quadratic(entity_size: int, references: int) -> bytes:
    return (
        b'<?xml version="1.0"?>\n<!DOCTYPE rss [\n<!ENTITY a "'
        + b"a" * entity_size
        + b'">\n]>\n'
        + ITEM % (b"x", b"&a;" * references)
    )


def measured(call: Callable[[], ParsedFeed]) -> tuple[ParsedFeed, float, int]:
    """(result, seconds, peak traced bytes). Time and memory come from separate runs, as
    tracemalloc slows parsing several times over."""
    started = time.perf_counter()
    result = call()
    seconds = time.perf_counter() - started
    tracemalloc.start()
    try:
        call()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return result, seconds, peak


def text_of(feed: ParsedFeed) -> str:
    return " ".join(e.title + " " + e.body_html for e in feed.entries)


@pytest.mark.parametrize("one_line", [False, True], ids=["multiline", "one-line"])
def test_billion_laughs_is_not_expanded(one_line: bool) -> None:
    body = LAUGHS.replace(b"\n", b"") if one_line else LAUGHS
    feed, seconds, peak = measured(lambda: parse_feed(body, {}))
    assert seconds < 2
    assert peak < 30 * 2**20
    assert "lollol" not in text_of(feed)
    assert len(text_of(feed)) < 100
    assert "doctype_removed" in [w.code for w in feed.warnings]


@pytest.mark.parametrize("one_line", [False, True], ids=["multiline", "one-line"])
def test_quadratic_blowup_is_not_expanded(one_line: bool) -> None:
    body = quadratic(100_000, 10_000)  # would expand to 1 GB
    if one_line:
        body = body.replace(b"\n", b"")
    feed, seconds, peak = measured(lambda: parse_feed(body, {}))
    assert seconds < 5
    assert peak < 60 * 2**20
    assert "aaaa" not in text_of(feed)
    assert len(text_of(feed)) < 10 * len(body)


def test_feedparser_alone_expands_a_quadratic_blowup() -> None:
    """Why adapters.xmlguard exists: feedparser keeps "safe-looking" entity declarations,
    and its fallback parser expands them (19 kB in → 10 MB out here; the 10 MiB body cap
    would allow gigabytes)."""
    body = quadratic(10_000, 1_000)
    raw = feedparser.parse(io.BytesIO(body))
    assert len(raw.entries[0].summary) == 10_000_000
    assert len(text_of(parse_feed(body, {}))) < 10_000


def test_external_file_entity_is_not_read(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET-MARKER-7f3a")
    body = (
        f'<?xml version="1.0"?>\n<!DOCTYPE rss [\n<!ENTITY xxe SYSTEM "{secret.as_uri()}">\n]>\n'
    ).encode() + ITEM % (b"A&xxe;B", b"C&xxe;D")
    for variant in (body, body.replace(b"\n", b"")):
        feed = parse_feed(variant, {})
        assert "SECRET-MARKER" not in text_of(feed)
        assert feed.entries[0].title == "A&xxe;B"


def test_external_entities_and_dtds_make_no_network_request(feed_server: FeedServer) -> None:
    feed_server.add("/evil.dtd", body=b'<!ENTITY x "PWNED">', content_type="application/xml-dtd")
    feed_server.add("/entity", body=b"PWNED", content_type="text/plain")
    dtd, entity = feed_server.url("/evil.dtd"), feed_server.url("/entity")
    attacks = [
        f'<!DOCTYPE rss [<!ENTITY net SYSTEM "{entity}">]>',
        f'<!DOCTYPE rss [\n<!ENTITY net SYSTEM "{entity}">\n]>',
        f'<!DOCTYPE rss SYSTEM "{dtd}">',
        f'<!DOCTYPE rss PUBLIC "-//EVIL//DTD" "{dtd}">',
        f'<!DOCTYPE rss [<!ENTITY % p SYSTEM "{dtd}"> %p;]>',
    ]
    for doctype in attacks:
        body = f'<?xml version="1.0"?>\n{doctype}\n'.encode() + ITEM % (b"T&net;", b"&x;")
        feed = parse_feed(body, {})
        assert "PWNED" not in text_of(feed)
    assert feed_server.total_requests == 0


# --- the guard itself ----------------------------------------------------------------------


def test_strip_doctype_leaves_ordinary_feeds_untouched() -> None:
    body = b'<?xml version="1.0"?><!-- hi --><?xml-stylesheet href="a.css"?><rss/>'
    assert strip_doctype(body) == (body, False)


def test_strip_doctype_handles_quotes_comments_and_brackets() -> None:
    body = (
        b'<?xml version="1.0"?>\n<!-- keep -->\n'
        b"<!DOCTYPE rss [ <!ENTITY a \"x>]y\"> <!-- ]> --> <!ENTITY b '>'> ]>\n<rss>&a;</rss>"
    )
    stripped, changed = strip_doctype(body)
    assert changed
    assert stripped == b'<?xml version="1.0"?>\n<!-- keep -->\n\n<rss>&a;</rss>'


def test_strip_doctype_in_utf16() -> None:
    text = '<?xml version="1.0" encoding="utf-16"?><!DOCTYPE r [<!ENTITY a "b">]><rss>é</rss>'
    stripped, changed = strip_doctype(text.encode("utf-16"))
    assert changed
    assert stripped.decode("utf-16") == '<?xml version="1.0" encoding="utf-16"?><rss>é</rss>'


@pytest.mark.parametrize(
    "prefix",
    [b"\xef\xbb\xbf", b"Warning: headers already sent\n", b"<!-- <b>bold</b> -->\n", b"< junk "],
    ids=["utf8-bom", "junk-text", "comment-with-tags", "stray-lt"],
)
def test_doctype_after_a_prefix_is_still_removed(prefix: bytes) -> None:
    body = prefix + quadratic(100_000, 1_000)
    stripped, changed = strip_doctype(body)
    assert changed
    assert b"<!ENTITY" not in stripped
    assert stripped.startswith(prefix)
    assert "aaaa" not in text_of(parse_feed(body, {}))


def test_stray_entity_declaration_is_removed() -> None:
    body = b'<?xml version="1.0"?>\n<!ENTITY a "boom">\n<rss>&a;</rss>'
    assert strip_doctype(body) == (b'<?xml version="1.0"?>\n\n<rss>&a;</rss>', True)


def test_doctype_text_inside_content_is_left_alone() -> None:
    body = b"<rss><item><description><![CDATA[<!DOCTYPE html>]]></description></item></rss>"
    assert strip_doctype(body) == (body, False)


def test_unterminated_doctype_swallows_the_rest() -> None:
    assert strip_doctype(b"<!DOCTYPE rss [ <!ENTITY a 'x'> <rss>")[0] == b""


def test_escape_undefined_entities_skips_cdata_and_comments() -> None:
    body = b"<a>&nbsp;&amp;&lt;&#233;<![CDATA[&nbsp;]]><!-- &nbsp; -->&lol9;</a>"
    escaped, count = escape_undefined_entities(body)
    assert count == 2
    assert escaped == b"<a>&amp;nbsp;&amp;&lt;&#233;<![CDATA[&nbsp;]]><!-- &nbsp; -->&amp;lol9;</a>"
