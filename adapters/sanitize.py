"""The one HTML sanitizer the whole app uses (nh3, i.e. Rust's ammonia).

Everything that came from outside (feed titles and bodies, notes, built-in blog posts) passes
through here before it is stored, so templates can trust stored HTML and autoescape stored text.
Feed content marked text/plain is never sanitized by feedparser, so it is escaped here instead
of being trusted.

It lives in adapters (which import nothing from pbp) because the adapters clean feed text with
it; pbp imports it from here for notes, blog posts and exports.
"""

from __future__ import annotations

import html
import re

import nh3

#: Links in player content may point to web pages and mail addresses, nothing else: no
#: ``javascript:``, no ``data:`` (which can smuggle HTML or SVG with scripts), no custom schemes.
URL_SCHEMES = frozenset({"http", "https", "mailto"})

#: Player content is user-generated: search engines should not credit it, and a linked page
#: must not get a handle on our window.
LINK_REL = "nofollow noopener noreferrer ugc"

#: ammonia's default tag set (no script, style, iframe, object, embed, form or svg); event
#: handler and style attributes are never allowed.
ALLOWED_TAGS = frozenset(nh3.ALLOWED_TAGS)

_html_cleaner = nh3.Cleaner(
    tags=set(ALLOWED_TAGS),
    url_schemes=set(URL_SCHEMES),
    link_rel=LINK_REL,
    strip_comments=True,
)
_text_cleaner = nh3.Cleaner(tags=set(), strip_comments=True)

_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_WHITESPACE = re.compile(r"\s+")
_BLANK_LINES = re.compile(r"\n\s*\n+")


def clean_html(value: str | None) -> str:
    """Return *value* as safe HTML: allowed tags only, no scripts, handlers or unsafe URLs.

    Anything that is not a string (feedparser gives dicts for odd elements) is no content.

    The output is balanced HTML (nh3 parses like a browser), so fragments can be concatenated
    into templates with ``|safe``.
    """
    if not value or not isinstance(value, str):
        return ""
    return _html_cleaner.clean(_CONTROL_CHARS.sub("", value)).strip()


def clean_text(value: str | None) -> str:
    """Return *value* as one line of plain text with all markup removed.

    For titles, names and moods. The result is text, not HTML: templates must autoescape it.
    Entities are decoded, then the text is stripped again until stable, so a double-escaped
    ``&lt;script&gt;`` cannot come back as a tag.
    """
    if not value or not isinstance(value, str):
        return ""
    text = _CONTROL_CHARS.sub("", value)
    for _ in range(3):
        stripped = html.unescape(_text_cleaner.clean(text))
        if stripped == text:
            break
        text = stripped
    return _WHITESPACE.sub(" ", text).strip()


def text_to_html(value: str | None) -> str:
    """Turn plain text into safe HTML paragraphs (for content typed text/plain).

    The text is escaped, not interpreted: ``<script>`` in plain text is shown, never run.
    Blank lines separate paragraphs; single newlines become ``<br>``.
    """
    if not value or not isinstance(value, str):
        return ""
    text = _CONTROL_CHARS.sub("", value).replace("\r\n", "\n").replace("\r", "\n").strip()
    paragraphs = [p.strip() for p in _BLANK_LINES.split(text) if p.strip()]
    parts = ["<p>" + html.escape(p, quote=False).replace("\n", "<br>") + "</p>" for p in paragraphs]
    return clean_html("".join(parts))


def html_to_text(value: str | None) -> str:
    """Return the visible text of an HTML fragment, whitespace collapsed (for excerpts)."""
    return clean_text(value)


def _local_images_only(tag: str, attribute: str, value: str) -> str | None:
    local = value.startswith("/") and not value.startswith("//")
    if tag == "img" and attribute in ("src", "srcset") and not local:
        return None  # a remote image: the reader's client would call another site
    return value


_local_images_cleaner = nh3.Cleaner(
    tags=set(ALLOWED_TAGS),
    url_schemes=set(URL_SCHEMES),
    link_rel=LINK_REL,
    strip_comments=True,
    attribute_filter=_local_images_only,
)


def without_remote_images(value: str | None) -> str:
    """Stored (already clean) HTML with every image from another site left without its
    source (its alt text stays), for places no Content-Security-Policy protects: the
    Atom feeds pbp serves, read in feed readers (PBP_BLOCK_REMOTE_IMAGES)."""
    if not value or "<img" not in value:
        return value or ""
    return _local_images_cleaner.clean(value).strip()
