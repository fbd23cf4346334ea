"""The book as an EPUB 3 file (issue #33 item 3), so a finished campaign can be read offline.

Made with ebooklib, which writes the container, the package document, the navigation and
the zip in the order readers need (tests/web/test_book.py runs EPUBCheck on it). One
document per turn. The entries' HTML was sanitised when stored; here nh3 also makes it fit
for a book read with no network: an image is left out (a remote resource is not allowed
in an EPUB), and a link that is not to the web or mail keeps only its text.
"""

from __future__ import annotations

import io
import re
import uuid

import nh3
from ebooklib import epub
from markupsafe import Markup, escape

from pbp.services.forum.scene_book import SceneBook
from pbp.services.noteworthy.book import Book, Chapter

STYLE = """body { font-family: serif; line-height: 1.5; }
.event { font-style: italic; margin: 1em 2em; }
.byline, .mood { color: #444; font-size: 0.9em; }
.notes { font-size: 0.9em; border-left: 2px solid #999; padding-left: 1em; }
"""

#: Link targets a reader can follow from a book.
KEPT_SCHEMES = ("http://", "https://", "mailto:")


def epub_bytes(book: Book) -> bytes:
    whose = book.character.slug if book.character else "*"
    who = book.character.name if book.character else f"The players of {book.campaign.name}"
    chapters = [(c.title, _chapter_html(c)) for c in book.chapters]
    return _written(f"pbp:{book.campaign.slug}/{whose}", book.title, who, chapters)


def scene_epub(book: SceneBook) -> bytes:
    """A forum scene's book (pbp.services.forum.scene_book): one document, its posts."""
    parts = [f"<h1>{escape(book.thread.title)}</h1>"]
    for post in book.posts:
        name = escape(post.character or post.author)
        parts.append(f'<p class="byline"><strong>{name}</strong></p>{_offline(post.html)}')
        parts.extend(f'<p class="roll">{escape(roll.text)}</p>' for roll in post.rolls)
    html = "<html><body>" + "".join(parts) + "</body></html>"
    key = f"pbp:{book.campaign.slug}/forum/{book.thread.id}"
    who = f"The players of {book.campaign.name}"
    return _written(key, book.title, who, [(book.thread.title, html)])


def _written(key: str, title: str, author: str, chapters: list[tuple[str, str]]) -> bytes:
    out = epub.EpubBook()
    out.set_identifier(uuid.uuid5(uuid.NAMESPACE_URL, key).urn)
    out.set_title(title)
    out.set_language("en")
    out.add_author(author)
    style = epub.EpubItem(
        uid="style", file_name="style/book.css", media_type="text/css", content=STYLE
    )
    out.add_item(style)
    docs = []
    for number, (name, html) in enumerate(chapters, start=1):
        doc = epub.EpubHtml(title=name, file_name=f"part-{number}.xhtml", lang="en")
        doc.content = html
        doc.add_item(style)
        out.add_item(doc)
        docs.append(doc)
    if not docs:  # an EPUB needs one document in its spine
        doc = epub.EpubHtml(title=title, file_name="empty.xhtml", lang="en")
        doc.content = f"<h1>{escape(title)}</h1><p>No entries yet.</p>"
        out.add_item(doc)
        docs.append(doc)
    out.toc = docs
    out.add_item(epub.EpubNcx())
    out.add_item(epub.EpubNav())
    out.spine = ["nav", *docs]
    buffer = io.BytesIO()
    epub.write_epub(buffer, out)
    return buffer.getvalue()


def _chapter_html(chapter: Chapter) -> str:
    parts = [f"<h1>{escape(chapter.title)}</h1>"]
    if chapter.event:
        parts.append(f'<blockquote class="event"><p>{escape(chapter.event)}</p></blockquote>')
    for part in chapter.tailored:
        lead = "Instead, for" if part.mode == "replacement" else "Also, for"
        parts.append(
            f"<h2>{lead} {escape(part.character.name)}</h2>"
            f'<blockquote class="event"><p>{escape(part.text)}</p></blockquote>'
        )
    for item in chapter.entries:
        entry = item.entry
        parts.append(f"<h2>{escape(entry.title or '(untitled)')}</h2>")
        mood = f' · <span class="mood">{escape(entry.mood_raw)}</span>' if entry.mood_raw else ""
        parts.append(f'<p class="byline">{escape(item.author.name)}{mood}</p>')
        parts.append(_offline(entry.body_html))
        if item.notes:
            parts.append('<div class="notes"><h3>Notes</h3>')
            for note, author in item.notes:
                who = author.name if author else note.author_name
                parts.append(f"<p><strong>{escape(who)}</strong></p>{_offline(note.body_html)}")
            parts.append("</div>")
    return "<html><body>" + "".join(parts) + "</body></html>"


#: What a link that means nothing offline points to between the two passes of `_offline`.
_DROPPED = "#pbp-dropped-link"
_DROPPED_LINK = re.compile(r'<a [^>]*href="' + _DROPPED + r'"[^>]*>(.*?)</a>', re.DOTALL)


def _offline(html: str) -> Markup:
    """Stored, sanitised HTML made fit for a book read offline (see the module's doc). An
    `a` without `href` is not valid EPUB XHTML, so such a link becomes its text: nh3 marks
    it, then the mark is unwrapped (links do not nest, so the pattern cannot overreach)."""
    tags = set(nh3.ALLOWED_TAGS) - {"img"}
    marked = nh3.clean(html, tags=tags, attribute_filter=_kept_attribute)
    return Markup(_DROPPED_LINK.sub(r"\1", marked))


def _kept_attribute(tag: str, name: str, value: str) -> str | None:
    if tag == "a" and name == "href" and not value.startswith(KEPT_SCHEMES):
        return _DROPPED
    return value
