"""``parse_feed``: fetched bytes + response headers → ParsedFeed (plain data).

feedparser only ever gets bytes in a BytesIO (a string could make it open a URL or a file).
Its "bozo" diagnostics become FeedWarnings: a feed that is malformed but recoverable is still
ingested, and the referee sees why its text may look odd.
"""

from __future__ import annotations

import io
import xml.sax
from collections.abc import Mapping

import feedparser

from adapters.base import FeedWarning, ParsedFeed
from adapters.common import get
from adapters.detect import adapter_for, detect_kind
from adapters.errors import FeedTooComplex, NotAFeed
from adapters.isolate import TOO_COMPLEX, parse_in_child
from adapters.jsonfeed import looks_like_json, parse_json_feed
from adapters.xmlguard import (
    complexity_refusal,
    escape_undefined_entities,
    inline_safe,
    strip_doctype,
)

_HTML_START = (b"<!doctype html", b"<html")


def _bozo_warning(parsed: feedparser.FeedParserDict) -> FeedWarning | None:
    exc = get(parsed, "bozo_exception")
    if not get(parsed, "bozo") or exc is None:
        return None
    if isinstance(exc, feedparser.CharacterEncodingOverride | feedparser.CharacterEncodingUnknown):
        return FeedWarning(
            "charset",
            f"The feed's declared character set was wrong; it was read as "
            f"{get(parsed, 'encoding') or 'unknown'} ({exc}). Accents may look odd.",
        )
    if isinstance(exc, feedparser.NonXMLContentType):
        return FeedWarning("content_type", f"The feed is served with a non-XML type ({exc}).")
    if isinstance(exc, xml.sax.SAXException | feedparser.UndeclaredNamespace):
        return FeedWarning(
            "malformed_xml",
            f"The feed is not well-formed XML ({exc}); it was recovered, but some text may "
            "be missing or garbled. The blog's feed template needs fixing.",
        )
    return FeedWarning("malformed", f"The feed has a problem: {exc}.")


def _not_a_feed(body: bytes, content_type: str) -> NotAFeed:
    start = body.lstrip()[:200].lower()
    if "html" in content_type or start.startswith(_HTML_START):
        return NotAFeed(
            "This address serves a web page, not a feed. Give the blog's feed address, or its "
            "home page address so the feed can be discovered."
        )
    return NotAFeed("This address does not serve an RSS, Atom or JSON feed.")


def parse_with_feedparser(
    body: bytes, headers: Mapping[str, str]
) -> tuple[object, list[FeedWarning]]:
    """Run feedparser safely on *body*; returns (result, warnings)."""
    warnings: list[FeedWarning] = []
    body, stripped = strip_doctype(body)
    if stripped:
        warnings.append(
            FeedWarning("doctype_removed", "The feed's DOCTYPE/DTD was removed before parsing.")
        )
    body, escaped = escape_undefined_entities(body)
    if escaped:
        warnings.append(
            FeedWarning(
                "undefined_entities",
                f"The feed uses {escaped} undefined entity reference(s) such as &nbsp; (not "
                "valid XML); they were kept as text.",
            )
        )
    # sanitize_html=False: nh3 (adapters.sanitize) cleans every title and body afterwards, and
    # feedparser's own sanitizer was ~45% of parse time in measurements.
    parsed = feedparser.parse(io.BytesIO(body), response_headers=dict(headers), sanitize_html=False)
    bozo = _bozo_warning(parsed)
    if bozo:
        warnings.append(bozo)
    return parsed, warnings


def parse_feed(
    body: bytes,
    headers: Mapping[str, str] | None = None,
    kind: str | None = None,
    *,
    isolated: bool = False,
) -> ParsedFeed:
    """Parse a feed document. *kind* is the referee's dialect override (``None``: detect).

    *headers* are the HTTP response headers (``content-type`` charset matters; a
    ``content-location`` header is used as the base for relative links). Raises NotAFeed for
    HTML pages and garbage, UnknownDialect for a bad *kind*, FeedTooComplex for markup that
    would cost too much to parse (see adapters.isolate; *isolated* is set there, in the
    child process that parses heavy documents).
    """
    headers = {k.lower(): v for k, v in (headers or {}).items()}
    content_type = headers.get("content-type", "")
    if not body or not body.strip():
        raise NotAFeed("The feed address returned an empty document.")
    warnings: list[FeedWarning] = []
    if looks_like_json(body, content_type):
        parsed = parse_json_feed(body)
    elif not isolated and not inline_safe(body):
        if body.lstrip()[:20].lower().startswith(_HTML_START):
            raise _not_a_feed(body, content_type)  # a big home page: no child for that
        reason = complexity_refusal(body)
        if reason:
            raise FeedTooComplex(TOO_COMPLEX.format(reason=reason))
        return parse_in_child(body, headers, kind)
    else:
        parsed, warnings = parse_with_feedparser(body, headers)
        if not get(parsed, "version") and not get(parsed, "entries"):
            raise _not_a_feed(body, content_type)
    adapter = adapter_for(kind) if kind else adapter_for(detect_kind(parsed))
    info = adapter.feed_info(parsed)
    if adapter.is_comment_feed(parsed):
        return ParsedFeed(
            kind=adapter.name,
            notes=tuple(adapter.notes(parsed)),
            is_comment_feed=True,
            warnings=tuple(warnings),
            **info,
        )
    entries, skipped = adapter.entries(parsed)
    return ParsedFeed(
        kind=adapter.name,
        entries=tuple(entries),
        skipped_private=skipped,
        warnings=tuple(warnings),
        **info,
    )
