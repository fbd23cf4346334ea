"""Read the "Current mood:" line from the top of an entry body.

Noteworthy: "Each blog entry you post must have a 'Current mood:' line beneath the title."
Blogs without a mood field (WordPress, Blogger, Jekyll, Hugo, Mastodon) write that line as the
first line of the body, in plain text or HTML: ``<b>Current mood:</b> challenging<br>``,
``<p>Current Mood: Challenging</p>``, ``Mood: curious``. Only the first line counts (a quoted
"mood:" further down is prose), and the line is removed from the displayed body because the
site shows the mood separately.
"""

from __future__ import annotations

import html
import re

from adapters.sanitize import clean_text

MAX_MOOD_LENGTH = 100

_LABEL = re.compile(r"^\s*(?:current\s+)?mood\s*:\s*(?P<value>.*?)\s*$", re.IGNORECASE | re.DOTALL)
_LABEL_ONLY = re.compile(r"^\s*(?:current\s+)?mood\s*:\s*$", re.IGNORECASE)
_BLANK_LINE = re.compile(r"[ \t\r]*\n")
_TOKEN = re.compile(
    r"<!--.*?-->|<(script|style)\b.*?</\1\s*>|<[^>]*>|[^<]+", re.DOTALL | re.IGNORECASE
)
_TAG = re.compile(r"<\s*(/)?\s*([a-zA-Z][a-zA-Z0-9]*)")
_LEADING_BREAKS = re.compile(r"^(?:\s|<br\s*/?>|&nbsp;)+", re.IGNORECASE)
_LEADING_EMPTY_BLOCKS = re.compile(r"^\s*(?:<(p|div)>(?:\s|<br\s*/?>)*</\1>\s*)+", re.IGNORECASE)
_BLOCKS = frozenset(
    {"p", "div", "h1", "h2", "h3", "h4", "h5", "h6", "li", "ul", "ol", "blockquote", "pre"}
    | {"section", "article", "header", "footer", "table", "tr", "td", "th", "dl", "dt", "dd"}
    | {"figure", "hr"}
)
_SCAN_LIMIT = 4000


def _first_line(body: str) -> tuple[str, int, list[tuple[str, int, int]], str | None] | None:
    """Find the first visible line of *body*.

    Returns (line text, index where the line ends in *body*, block tags opened before the
    text, the block tag whose closing ended the line) or None if nothing visible comes first.
    """
    texts: list[str] = []
    open_blocks: list[tuple[str, int, int]] = []
    seen_text = False
    for m in _TOKEN.finditer(body, 0, min(len(body), _SCAN_LIMIT)):
        token = m.group()
        if token.startswith("<!--") or m.group(1):
            continue  # comments and script/style contents are not visible text
        if token.startswith("<"):
            tag = _TAG.match(token)
            if not tag:
                continue
            closing, name = bool(tag.group(1)), tag.group(2).lower()
            if name == "br":
                if seen_text:
                    return "".join(texts), m.end(), open_blocks, None
            elif name in _BLOCKS:
                if seen_text:
                    if closing:
                        return "".join(texts), m.end(), open_blocks, name
                    return "".join(texts), m.start(), open_blocks, None
                if not closing:
                    open_blocks.append((name, m.start(), m.end()))
            continue
        if not seen_text and not token.strip():
            continue
        seen_text = True
        start = 0
        while True:
            newline = token.find("\n", start)
            if newline < 0:
                texts.append(html.unescape(token[start:]))
                break
            texts.append(html.unescape(token[start:newline]))
            joined = "".join(texts)
            blank_line_follows = _BLANK_LINE.match(token, newline + 1) is not None
            if joined.strip() and (blank_line_follows or not _LABEL_ONLY.match(joined)):
                return joined, m.start() + newline, open_blocks, None
            texts.append(" ")
            start = newline + 1
    if seen_text and len(body) <= _SCAN_LIMIT:
        return "".join(texts), len(body), open_blocks, None
    return None


def extract_mood(body_html: str) -> tuple[str | None, str]:
    """Return (mood, body without the mood line); (None, body unchanged) if there is none."""
    if not body_html or "mood" not in body_html[:_SCAN_LIMIT].lower():
        return None, body_html
    found = _first_line(body_html)
    if found is None:
        return None, body_html
    line, end, open_blocks, closed_block = found
    label = _LABEL.match(line)
    if not label:
        return None, body_html
    mood = clean_text(label.group("value"))
    if not mood or len(mood) > MAX_MOOD_LENGTH:
        return None, body_html
    if closed_block and open_blocks and open_blocks[-1][0] == closed_block:
        open_blocks = open_blocks[:-1]  # the whole block was the mood line
    kept = "".join(body_html[start:stop] for _, start, stop in open_blocks)
    rest = _LEADING_BREAKS.sub("", body_html[end:])
    remainder = _LEADING_EMPTY_BLOCKS.sub("", kept + rest)
    return mood, remainder
