"""adapters.sanitize: the nh3 sanitizer every stored title and body goes through."""

from __future__ import annotations

import pytest

from adapters.sanitize import clean_html, clean_text, html_to_text, text_to_html

XSS = [
    ('<script>alert("x")</script><p>ok</p>', "<script"),
    ('<p onclick="steal()">ok</p>', "onclick"),
    ('<img src="x" onerror="steal()">', "onerror"),
    ('<iframe src="https://evil.example/"></iframe>', "<iframe"),
    ('<a href="javascript:alert(1)">x</a>', "javascript:"),
    ('<a href="  JaVaScRiPt:alert(1)">x</a>', "alert"),
    ('<a href="java&#x09;script:alert(1)">x</a>', "alert"),
    ('<img src="data:image/svg+xml;base64,PHN2Zz4=">', "data:"),
    ('<a href="data:text/html,<script>alert(1)</script>">x</a>', "data:"),
    ("<style>body{display:none}</style><p>ok</p>", "display"),
    ('<p style="position:fixed">ok</p>', "position"),
    ("<svg><script>alert(1)</script></svg>", "alert"),
    ('<form action="https://evil.example"><input name="pw"></form>', "<form"),
    ('<object data="x.swf"></object><embed src="x.swf">', "swf"),
    ('<meta http-equiv="refresh" content="0;url=https://evil.example">', "refresh"),
    ("<!-- <script>alert(1)</script> -->", "alert"),
]


@pytest.mark.parametrize(("dirty", "forbidden"), XSS)
def test_clean_html_removes_active_content(dirty: str, forbidden: str) -> None:
    assert forbidden.lower() not in clean_html(dirty).lower()


def test_clean_html_keeps_ordinary_formatting_and_marks_links() -> None:
    cleaned = clean_html('<p>I <em>challenge</em> <a href="https://b.example/">Bob</a></p>')
    assert "<em>challenge</em>" in cleaned
    assert 'href="https://b.example/"' in cleaned
    assert 'rel="nofollow noopener noreferrer ugc"' in cleaned


def test_clean_html_tolerates_nothing() -> None:
    assert clean_html(None) == ""
    assert clean_html("") == ""
    assert clean_html({"not": "text"}) == ""  # type: ignore[arg-type]


def test_clean_text_strips_tags_and_decodes_entities() -> None:
    assert clean_text("Tom &amp; Jerry <b>again</b>") == "Tom & Jerry again"
    assert clean_text("a < b and I <3 tea") == "a < b and I <3 tea"
    assert clean_text("  several\n  lines\t here ") == "several lines here"


def test_clean_text_does_not_let_double_escaped_markup_back_in() -> None:
    assert "<script" not in clean_text("&lt;script&gt;alert(1)&lt;/script&gt;Title")
    assert clean_text("&lt;script&gt;alert(1)&lt;/script&gt;Title") == "Title"


def test_clean_text_removes_control_characters() -> None:
    assert clean_text("bell\x07 and null\x00") == "bell and null"


def test_text_to_html_escapes_instead_of_interpreting() -> None:
    html = text_to_html("<script>alert(1)</script>\nline two\n\nsecond paragraph")
    assert "<script" not in html
    assert "&lt;script&gt;" in html
    assert html.count("<p>") == 2
    assert "<br>" in html


def test_html_to_text() -> None:
    assert html_to_text("<p>One</p><p>Two &amp; three</p>") == "OneTwo & three"
