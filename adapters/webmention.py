"""Webmention (W3C Recommendation) on the wire, with no database: reading a source page
(does it link to the target, what does it say, who wrote it: microformats2's h-entry and
h-card) and discovering a target's endpoint. The HTTP goes through adapters.fetch's
SSRF-guarded Fetcher, whoever calls.

The microformats2 reading is the small part Webmention needs: the first h-entry's
`e-content` (or `p-content`, or `p-name`) and its `p-author` (an h-card's `p-name` and
`u-url`, or a plain link). The page as a whole is only searched for links.
"""

from __future__ import annotations

from dataclasses import dataclass
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit, urlunsplit

from requests.utils import parse_header_links

from adapters.fetch_types import Document

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}
LINK_ATTRIBUTES = {"href", "src", "cite"}
MAX_TEXT = 20_000


def without_fragment(url: str) -> str:
    parts = urlsplit(url.strip())
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path, parts.query, ""))


def is_web_url(url: str) -> bool:
    parts = urlsplit(url.strip())
    return parts.scheme in ("http", "https") and bool(parts.hostname)


@dataclass(frozen=True)
class SourcePage:
    """What a source page says, as Webmention reads it."""

    links: frozenset[str]  # every link, absolute, without its fragment
    content: str  # the h-entry's text (else the page's title)
    author_name: str
    author_url: str | None
    endpoint: str | None  # the first <link>/<a rel="webmention">, absolute


class _Reader(HTMLParser):
    def __init__(self, base: str) -> None:
        super().__init__(convert_charrefs=True)
        self.base = base
        self.links: set[str] = set()
        self.endpoint: str | None = None
        self.stack: list[tuple[str, set[str]]] = []
        self.in_entry = self.entries = 0
        self.content: list[str] = []
        self.content_depth: int | None = None
        self.content_found = False
        self.name: list[str] = []
        self.name_depth: int | None = None
        self.author: list[str] = []
        self.author_depth: int | None = None
        self.author_url: str | None = None
        self.title: list[str] = []
        self.in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: (v or "") for k, v in attrs}
        classes = set(values.get("class", "").split())
        for name in LINK_ATTRIBUTES & values.keys():
            if values[name].strip():
                self.links.add(without_fragment(urljoin(self.base, values[name])))
        rels = set(values.get("rel", "").lower().split())
        if tag in ("link", "a") and "webmention" in rels and self.endpoint is None:
            self.endpoint = urljoin(self.base, values.get("href", ""))
        if tag == "title":
            self.in_title = True
        if tag in VOID:
            if "u-url" in classes and self.author_depth is not None and "href" in values:
                self.author_url = urljoin(self.base, values["href"])
            return
        self.stack.append((tag, classes))
        depth = len(self.stack)
        if "h-entry" in classes and self.entries == 0:
            self.entries, self.in_entry = 1, depth
        if not self.in_entry:
            return
        if {"e-content", "p-content"} & classes and not self.content_found:
            self.content_depth, self.content_found = depth, True
        if "p-name" in classes and self.name_depth is None and self.author_depth is None:
            self.name_depth = depth
        if "p-author" in classes and self.author_depth is None:
            self.author_depth = depth
            if tag == "a" and values.get("href"):
                self.author_url = urljoin(self.base, values["href"])
        elif self.author_depth is not None and "u-url" in classes and values.get("href"):
            self.author_url = self.author_url or urljoin(self.base, values["href"])

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self.in_title = False
        if tag in VOID or not any(t == tag for t, _ in self.stack):
            return
        while self.stack:
            depth = len(self.stack)
            open_tag, _ = self.stack.pop()
            for attribute in ("content_depth", "name_depth", "author_depth", "in_entry"):
                if getattr(self, attribute) == depth:
                    setattr(self, attribute, None if attribute != "in_entry" else 0)
            if open_tag == tag:
                break
        if tag in ("p", "div", "li", "blockquote", "br") and self.content_depth is not None:
            self.content.append("\n")

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title.append(data)
        if self.content_depth is not None:
            self.content.append(data)
        if self.name_depth is not None:
            self.name.append(data)
        if self.author_depth is not None:
            self.author.append(data)


def read_source(document: Document) -> SourcePage:
    """Read a fetched source page (HTML, or any text: then only its links... none)."""
    text = document.body.decode("utf-8", "replace")
    reader = _Reader(document.final_url)
    reader.feed(text)
    reader.close()
    lines = "".join(reader.content or reader.name or reader.title).splitlines()
    content = "\n".join(" ".join(line.split()) for line in lines).strip()
    while "\n\n\n" in content:
        content = content.replace("\n\n\n", "\n\n")
    author = " ".join("".join(reader.author).split())
    return SourcePage(
        links=frozenset(reader.links),
        content=content[:MAX_TEXT],
        author_name=author[:200],
        author_url=reader.author_url,
        endpoint=reader.endpoint,
    )


def links_to(page: SourcePage, target: str) -> bool:
    return without_fragment(target) in page.links


def discover_endpoint(document: Document) -> str | None:
    """The target's Webmention endpoint: the first HTTP Link rel="webmention", else the first
    <link> or <a> with rel="webmention" in the HTML; absolute, resolved against the page's
    final address (after redirects). An empty href is the page itself."""
    header = document.headers.get("link", "")
    if header:
        for link in parse_header_links(header):
            if "webmention" in str(link.get("rel", "")).lower().split():
                return urljoin(document.final_url, link.get("url", ""))
    content_type = document.headers.get("content-type", "")
    if "html" not in content_type:
        return None
    return read_source(document).endpoint
