"""Markdown for the built-in blog and the forum: rendered, then sanitized with nh3.

Python-Markdown's time grows with the square of the input on some shapes (20,000 "[" took
38 s: every "[" scans the rest of its paragraph for the "]" that would close a link), and
it spends a fixed, not small, time on every line, nested level and inline element. So a
text is checked before it is rendered (`check_shape`): the shapes that blow up are bounded
and refused with a reason the writer can act on. Together with the length limits
(pbp.limits) this keeps the worst text at the limit to a fraction of a second
(tests/bench/test_bench_markup.py prints the worst shapes found).
"""

from __future__ import annotations

import re
from html import escape as html_escape

import markdown

from adapters.sanitize import clean_html, clean_text
from pbp.errors import UserError

EXTENSIONS = ["extra", "sane_lists", "nl2br"]

MAX_LINES = 1000  # each line costs a pass of every block processor
MAX_MARKUP = 2000  # * _ ` [ ] \ : each may start an inline element
MAX_TAGS = 3000  # < and &: raw HTML and entities (a stored entry, edited, is HTML)
MAX_UNCLOSED = 50  # "<" with no ">" before the next "<": each is parsed to the end
MAX_ABBREVIATIONS = 50  # "*[ABBR]: ..." lines: each is looked for in the whole text
MAX_NESTING = 8  # quote and list markers opening one line (deeper overflowed the stack)
MAX_OPENINGS = 2000  # quote and list markers opening lines, in the whole text
MAX_INDENT = 64  # columns of leading space: each 4 may be one more nested list
MAX_DEFINITIONS = 50  # ": " lines in one paragraph: each nests inside the one before
MAX_BRACKET_SCAN = 50_000  # characters read looking for the "]" or ")" that closes a link

_MARKUP = re.compile(r"[*_`\[\]\\]")
_TAGS = re.compile(r"[<&]")
_NESTING = re.compile(r"(?:[ \t]*(?:>|[-*+](?=[ \t])|\d{1,9}[.)](?=[ \t])))+")
_MARKER = re.compile(r">|[-*+](?=[ \t])|\d{1,9}[.)](?=[ \t])")
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
_UNCLOSED = re.compile(r"<[^<>]*(?=<|$)")
_ABBREVIATION = re.compile(r"^ {0,3}\*\[", re.MULTILINE)
_DEFINITION = re.compile(r"^ {0,3}:[ \t]", re.MULTILINE)


class TooIntricate(UserError):
    """A text whose shape would take too long to render."""

    def __init__(self, reason: str) -> None:
        super().__init__(
            f"This text is too intricate to show quickly: {reason}. "
            "Your text is not saved yet: simplify it and send it again."
        )


def render_markdown(text: str) -> str:
    # Sanitize after rendering: Markdown passes raw HTML through, and links may carry
    # javascript: URLs; nh3 removes both.
    text = text or ""
    check_shape(text)
    try:
        html = markdown.markdown(text, extensions=EXTENSIONS, output_format="html")
    except RecursionError as exc:  # a nesting check_shape does not know yet: never a 500
        raise TooIntricate("it nests too deep") from exc
    return clean_html(html)


def check_shape(text: str) -> None:
    """Refuse (TooIntricate) a text with a shape Python-Markdown renders slowly."""
    lines = text.count("\n") + 1
    if lines > MAX_LINES:
        raise TooIntricate(f"it has {lines:,} lines, and at most {MAX_LINES:,} are shown")
    markup = len(_MARKUP.findall(text))
    if markup > MAX_MARKUP:
        raise TooIntricate(
            f"it has {markup:,} of the characters * _ ` [ ] \\ (at most {MAX_MARKUP:,})"
        )
    tags = len(_TAGS.findall(text))
    if tags > MAX_TAGS:
        raise TooIntricate(f"it has {tags:,} of the characters < and & (at most {MAX_TAGS:,})")
    unclosed = len(_UNCLOSED.findall(text))
    if unclosed > MAX_UNCLOSED:
        raise TooIntricate(
            f'it has {unclosed} "<" that no ">" closes (at most {MAX_UNCLOSED}); '
            "write &lt; for a < that is not a tag"
        )
    abbreviations = len(_ABBREVIATION.findall(text))
    if abbreviations > MAX_ABBREVIATIONS:
        raise TooIntricate(
            f"it defines {abbreviations} abbreviations (at most {MAX_ABBREVIATIONS})"
        )
    openings = sum(_check_line(line) for line in text.split("\n"))
    if openings > MAX_OPENINGS:
        raise TooIntricate(
            f"its lines open {openings:,} quotes and list items (at most {MAX_OPENINGS:,})"
        )
    blocks = _BLANK_LINE.split(text)
    definitions = max(len(_DEFINITION.findall(block)) for block in blocks)
    if definitions > MAX_DEFINITIONS:
        raise TooIntricate(
            f'a paragraph has {definitions} definition lines (": "); at most '
            f"{MAX_DEFINITIONS}: leave a blank line between definitions"
        )
    scanned = sum(_bracket_scan(block) for block in blocks)
    if scanned > MAX_BRACKET_SCAN:
        raise TooIntricate(
            'its "[" and "(" open links that close far away or never; '
            'write \\[ for a "[" that opens no link'
        )


def _check_line(line: str) -> int:
    """The quote and list markers opening *line*; TooIntricate if nested too deep."""
    indent = len(line.expandtabs(4)) - len(line.expandtabs(4).lstrip(" "))
    if indent > MAX_INDENT:
        raise TooIntricate(f"a line is indented {indent} columns (at most {MAX_INDENT})")
    opening = _NESTING.match(line)
    depth = len(_MARKER.findall(opening.group())) if opening else 0
    if depth > MAX_NESTING:
        raise TooIntricate(f"a line opens {depth} nested quotes or lists (at most {MAX_NESTING})")
    return depth


def _bracket_scan(block: str) -> int:
    """How many characters the link matcher reads in one paragraph: from each "[" to its
    "]" (or the paragraph's end), and from each "](" to its ")"."""
    total, brackets, parens = 0, [], []
    i, end = 0, len(block)
    while i < end:
        char = block[i]
        if char == "\\":
            i += 2
            continue
        if char == "[":
            brackets.append(i)
        elif char == "]" and brackets:
            total += i - brackets.pop()
            if i + 1 < end and block[i + 1] == "(":
                parens.append(i + 1)
                i += 1
        elif char == ")" and parens:
            total += i - parens.pop()
        i += 1
    return total + sum(end - start for start in (*brackets, *parens))


_BREAKS = re.compile(r"(?i)<br\s*/?>|</(p|div|li|h[1-6]|blockquote|pre|tr)>")


def plain_text(html_fragment: str | None) -> str:
    """Visible text of stored HTML, one line per paragraph or line break.

    The rules read markers line by line ("Stance: support" on its own line, "Target:
    NAME"), so line structure must survive; `sanitize.html_to_text` folds it away.
    """
    marked = _BREAKS.sub("\n", html_fragment or "")
    lines = (clean_text(line) for line in marked.split("\n"))
    return "\n".join(line for line in lines if line)


_INNER_QUOTE = re.compile(
    r"<blockquote\b[^>]*>(?:(?!<blockquote\b).)*?</blockquote>", re.IGNORECASE | re.DOTALL
)


def without_quotes(html_fragment: str | None) -> str:
    """Sanitized HTML with its quoted passages (``<blockquote>``, nested ones included) left
    out: a reply's own words, without the note it quotes (issue #29 item 3). Innermost
    quotes go first, so a quote inside a quote cannot leave its outer end behind."""
    html = html_fragment or ""
    while True:
        shorter = _INNER_QUOTE.sub("", html)
        if shorter == html:
            return html
        html = shorter


# -- mentions (issue #29 item 4) ---------------------------------------------------------------

# A tag, its quoted attribute values read whole: a ">" inside one ends no tag.
_TAG = re.compile(r"""(<(?:[^>"']|"[^"]*"|'[^']*')*>)""")
_TAG_NAME = re.compile(r"^</?\s*([a-zA-Z0-9]+)")
# Text inside these is left as written: a mention in code is code, and a link in a link is
# not HTML.
_NO_MENTIONS = frozenset({"a", "code", "pre"})


def mention_key(name: str) -> str:
    """How a name is compared after "@": case and runs of spaces do not matter."""
    return " ".join(name.split()).lower()


def link_mentions(html: str, targets: dict[str, str]) -> tuple[str, list[str]]:
    """Sanitized HTML with each ``@Name`` (a key of `targets`, by `mention_key`) made a link
    to its address, and the keys found, in order, once each.

    Only text outside ``<a>``, ``<code>`` and ``<pre>`` counts. An "@" right after a letter
    or digit (an address, "ada@home") mentions no one, nor does a name followed by a letter
    or digit ("@Adam" is not "@Ada"); the longest name wins ("@Lady Vance" over "@Lady").
    The input is clean_html's output, whose text holds no raw "<" or ">", the link is built
    here from escaped parts, and what comes out is sanitized again: no markup can come in
    through a name, nor through text that only looks like a tag."""
    if "@" not in html or not targets:
        return html, []
    keys = sorted(targets, key=len, reverse=True)
    found: list[str] = []
    parts = _TAG.split(html)
    depth = 0
    for index, part in enumerate(parts):
        if index % 2:  # a tag
            tag = _TAG_NAME.match(part)
            if tag and tag.group(1).lower() in _NO_MENTIONS and not part.endswith("/>"):
                depth += -1 if part.startswith("</") else 1
            continue
        if depth <= 0 and "@" in part:
            parts[index] = _link_text(part, keys, targets, found)
    if not found:
        return html, found
    return clean_html("".join(parts)), found


def _link_text(text: str, keys: list[str], targets: dict[str, str], found: list[str]) -> str:
    out, start = [], 0
    at = text.find("@")
    while at != -1:
        key = _name_at(text, at + 1, keys) if at == 0 or not text[at - 1].isalnum() else None
        if key is None:
            at = text.find("@", at + 1)
            continue
        end = _end_of(text, at + 1, key)
        shown = text[at:end]
        href = html_escape(targets[key], quote=True)
        out.append(text[start:at])
        out.append(f'<a href="{href}">{shown}</a>')
        if key not in found:
            found.append(key)
        start = end
        at = text.find("@", end)
    out.append(text[start:])
    return "".join(out)


def _name_at(text: str, begin: int, keys: list[str]) -> str | None:
    for key in keys:
        end = _end_of(text, begin, key)
        if end and (end == len(text) or not text[end].isalnum()):
            return key
    return None


def _end_of(text: str, begin: int, key: str) -> int:
    """Where `key` ends in `text` read from `begin` (spaces flexible, case ignored); 0 if it
    is not there. The text is escaped HTML: "&amp;" in it stands for "&" in a name."""
    i = begin
    words = key.split(" ")
    for n, word in enumerate(words):
        if n:
            j = i
            while j < len(text) and text[j] in " \t\n":
                j += 1
            if j == i:
                return 0
            i = j
        escaped = html_escape(word, quote=False)
        chunk = text[i : i + len(escaped)]
        if chunk.lower() != escaped:
            return 0
        i += len(escaped)
    return i
