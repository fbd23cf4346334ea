"""Remove the DOCTYPE (and any internal DTD subset) before feedparser sees a document.

feedparser strips most DOCTYPEs itself, but measurement showed two gaps (see
tests/adapters/test_xml_attacks.py): it re-inserts "safe-looking" entity declarations, so a
quadratic blowup (one 100 kB entity referenced 30,000 times) made its fallback parser build a
3 GB string; and an internal subset written on one line slips past its line-anchored regexes
and reaches expat, which takes seconds to give up. Feeds have no legitimate use for a DTD, so
we drop it.

Without a DTD, a reference like ``&lol9;`` or ``&nbsp;`` is undefined: expat stops, and
feedparser re-parses the whole document with its slow regex-based fallback (about 10 µs per
reference, so a 10 MiB file of references would take a minute). ``escape_undefined_entities``
turns them into text (``&amp;nbsp;``) outside CDATA and comments, so the fast strict parser
succeeds; HTML bodies still render ``&nbsp;`` as intended.

``inline_safe`` says whether a document has little enough markup to be parsed in the
poller's own process; heavier ones are parsed in a limited child (adapters.isolate).
"""

from __future__ import annotations

import re

_ENTITY_OR_LITERAL = re.compile(rb"<!\[CDATA\[.*?\]\]>|<!--.*?-->|&([A-Za-z_][\w.-]*);", re.DOTALL)
_XML_ENTITIES = frozenset({b"amp", b"lt", b"gt", b"quot", b"apos"})
_DECLARATION = re.compile(rb"<!(?:doctype|entity)", re.IGNORECASE)

_WIDE_BOMS = (
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\xfe\xff", "utf-16-be"),
    (b"\xff\xfe", "utf-16-le"),
)
_WIDE_PATTERNS = (
    (b"\x00\x00\x00<", "utf-32-be"),
    (b"<\x00\x00\x00", "utf-32-le"),
    (b"\x00<\x00?", "utf-16-be"),
    (b"<\x00?\x00", "utf-16-le"),
)


def _wide_codec(data: bytes) -> tuple[str, int] | None:
    """The UTF-16/32 codec of *data* and its BOM length, or None for ASCII-compatible data."""
    for bom, codec in _WIDE_BOMS:
        if data.startswith(bom):
            return codec, len(bom)
    for pattern, codec in _WIDE_PATTERNS:
        if data.startswith(pattern):
            return codec, 0
    return None


def _doctype_end(text: str, start: int) -> int:
    """Index just past the DOCTYPE starting at *start*, honouring quotes, comments, ``[...]``."""
    n = len(text)
    k = start + len("<!DOCTYPE")
    depth = 0
    quote = ""
    while k < n:
        c = text[k]
        if quote:
            if c == quote:
                quote = ""
        elif text.startswith("<!--", k):
            end = text.find("-->", k + 4)
            k = n if end < 0 else end + 3
            continue
        elif c in "\"'":
            quote = c
        elif c == "[":
            depth += 1
        elif c == "]":
            depth = max(0, depth - 1)
        elif c == ">" and depth == 0:
            return k + 1
        k += 1
    return n


def _strip_prolog_doctype(text: str) -> tuple[str, bool]:
    """Cut DOCTYPEs and stray entity declarations out of everything before the root element.

    Whatever precedes the root is scanned, including a BOM or junk text (a PHP warning
    printed before the XML declaration), because feedparser's own DOCTYPE handling looks
    at the same region.
    """
    n = len(text)
    i = 0
    out: list[str] = []
    stripped = False
    while i < n:
        j = text.find("<", i)
        if j < 0:
            break
        upper = text[j : j + 9].upper()
        if text.startswith("<?", j):
            end = text.find("?>", j + 2)
            end = n if end < 0 else end + 2
        elif text.startswith("<!--", j):
            end = text.find("-->", j + 4)
            end = n if end < 0 else end + 3
        elif upper == "<!DOCTYPE" or upper.startswith("<!ENTITY"):
            out.append(text[i:j])
            i = _doctype_end(text, j)
            stripped = True
            continue
        elif j + 1 < n and (text[j + 1].isalpha() or text[j + 1] in "_:"):
            break  # the root element
        else:
            end = j + 1  # a stray "<" in junk before the root
        out.append(text[i:end])
        i = end
    if not stripped:
        return text, False
    out.append(text[i:])
    return "".join(out), True


def strip_doctype(data: bytes) -> tuple[bytes, bool]:
    """Return *data* without DOCTYPE declarations before its root, and whether one was removed.

    Works on the raw bytes (any ASCII-compatible charset, via a lossless latin-1 round trip)
    and on UTF-16/32 documents (decoded and re-encoded in the same encoding), so the charset
    declaration stays true.
    """
    wide = _wide_codec(data)
    if wide is None:
        if not _DECLARATION.search(data):
            return data, False  # the common case: no DOCTYPE or ENTITY anywhere
        text, stripped = _strip_prolog_doctype(data.decode("latin-1"))
        return (text.encode("latin-1"), True) if stripped else (data, False)
    codec, bom_len = wide
    text = data[bom_len:].decode(codec, errors="replace")
    new_text, stripped = _strip_prolog_doctype(text)
    if not stripped:
        return data, False
    return data[:bom_len] + new_text.encode(codec, errors="replace"), True


def escape_undefined_entities(data: bytes) -> tuple[bytes, int]:
    """Escape ``&name;`` references XML does not predefine; returns (data, how many).

    Call after strip_doctype: with no DTD left, nothing can define them. CDATA sections and
    comments are copied unchanged. UTF-16/32 documents are left alone (rare; the fallback
    parser still handles them, only slower).
    """
    if b"&" not in data or _wide_codec(data) is not None:
        return data, 0
    count = 0

    def fix(match: re.Match[bytes]) -> bytes:
        nonlocal count
        name = match.group(1)
        if name is None or name in _XML_ENTITIES:
            return match.group(0)
        count += 1
        return b"&amp;" + name + b";"

    fixed = _ENTITY_OR_LITERAL.sub(fix, data)
    return (fixed, count) if count else (data, 0)


# Parsing costs per tag and per reference, not per byte: measured on a busy 2-core machine,
# ~200 µs of CPU a tag in feedparser's fallback parser for malformed XML (less in its strict
# one), ~15 µs a reference, and xml.sax looks attributes up in a list, so one element's cost
# grows with the square of its attributes. Documents under all three limits are parsed
# in-process (ordinary feeds have a few hundred tags and references: the fixtures in
# tests/adapters/fixtures have at most 174); the worst document just under them costs about
# 2 s of CPU there. The rest go to adapters.isolate.
INLINE_TAGS = 10_000  # "<"
INLINE_REFERENCES = 30_000  # "&": escaped HTML, entity and character references
INLINE_EQUALS = 1_000  # "=": attributes, quadratic per element


def inline_safe(data: bytes) -> bool:
    """Whether *data* may be parsed without CPU and memory limits (a few µs per 100 kB)."""
    return (
        data.count(b"<") <= INLINE_TAGS
        and data.count(b"&") <= INLINE_REFERENCES
        and data.count(b"=") <= INLINE_EQUALS
    )


# Beyond these a document would outrun adapters.isolate's CPU limit anyway (even feedparser's
# strict parser needs ~35 µs a tag, so 4 s is at most ~100,000 tags), so it is refused at
# once, with the reason, instead of spending 4 s finding out. Only heavy documents (not
# inline_safe) are counted.
MAX_TAGS = 150_000
MAX_REFERENCES = 200_000
MAX_UNCLOSED = 50_000  # "<a>" without "</a>"; generous, as CDATA may hold <br> and <img>
MAX_ATTRIBUTES = 256  # on one element
_LONG_TAG = re.compile(rb"<[^<>]{%d,}" % (MAX_ATTRIBUTES * 4))  # 'a="x" ' is 4+ bytes each


def complexity_refusal(data: bytes) -> str | None:
    """Why *data* is certainly too costly to parse, in words, or None (then it may be)."""
    tags = data.count(b"<")
    if tags > MAX_TAGS:
        return f"it has {tags:,} tags (at most {MAX_TAGS:,})"
    references = data.count(b"&")
    if references > MAX_REFERENCES:
        return f"it has {references:,} entity references (at most {MAX_REFERENCES:,})"
    closed = data.count(b"</") + data.count(b"/>") + data.count(b"<?") + data.count(b"<!")
    if tags - 2 * closed > MAX_UNCLOSED:  # each "</" closes one "<" and is one itself
        return f"about {tags - 2 * closed:,} of its elements are never closed"
    for tag in _LONG_TAG.finditer(data):
        attributes = tag.group().count(b"=")
        if attributes > MAX_ATTRIBUTES:
            return f"an element has {attributes:,} attributes (at most {MAX_ATTRIBUTES})"
    return None
