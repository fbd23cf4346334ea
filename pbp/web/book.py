"""The campaign as a book (issue #33 item 3): the reading view, for the whole campaign or
one character, and its EPUB download. Each shows the viewer what the planet shows them
(pbp.services.noteworthy.book)."""

from __future__ import annotations

from flask import Blueprint, Response, render_template

from pbp.request_db import get_session
from pbp.services import campaigns
from pbp.services.forum import scene_book, visibility
from pbp.services.forum.rolls import Viewer
from pbp.services.noteworthy import book as books
from pbp.services.noteworthy import book_epub, play
from pbp.web.access import current_account, current_membership

bp = Blueprint("book", __name__, url_prefix="/c/<slug>")


def _book(slug: str, character: str | None) -> books.Book:
    session = get_session()
    campaign = campaigns.get_campaign(session=session, slug=slug)
    reader = play.character_of(session=session, campaign=campaign, user=current_account())
    return books.book(session=session, campaign=campaign, reader=reader, character_slug=character)


def _page(slug: str, character: str | None):
    story = _book(slug, character)
    return render_template("book/book.html", campaign=story.campaign, book=story)


def _epub(slug: str, character: str | None) -> Response:
    story = _book(slug, character)
    name = story.campaign.slug + (f"-{story.character.slug}" if story.character else "")
    return _download(book_epub.epub_bytes(story), name)


def _download(body: bytes, name: str) -> Response:
    return Response(
        body,
        mimetype="application/epub+zip",
        headers={
            "Content-Disposition": f'attachment; filename="{name}.epub"',
            # The reader's own tailored events are in it: never kept by a shared cache.
            "Cache-Control": "private, no-store",
        },
    )


@bp.get("/book")
def campaign_book(slug: str):
    return _page(slug, None)


@bp.get("/book.epub")
def campaign_epub(slug: str):
    return _epub(slug, None)


@bp.get("/<character>/book")
def character_book(slug: str, character: str):
    return _page(slug, character)


@bp.get("/<character>/book.epub")
def character_epub(slug: str, character: str):
    return _epub(slug, character)


# -- a forum game's scene as a book --------------------------------------------------------


def _scene(slug: str, thread_id: int) -> scene_book.SceneBook:
    session = get_session()
    campaign = campaigns.get_campaign(session=session, slug=slug)
    visibility.require_forum(campaign)
    user, member = current_account(), current_membership(campaign)
    viewer = Viewer(user.id if user else None, member.role if member else None)
    return scene_book.scene_book(
        session=session, campaign=campaign, thread_id=thread_id, viewer=viewer
    )


@bp.get("/forum/t/<int:thread_id>/book")
def scene(slug: str, thread_id: int):
    story = _scene(slug, thread_id)
    return render_template("book/scene.html", campaign=story.campaign, book=story)


@bp.get("/forum/t/<int:thread_id>/book.epub")
def scene_epub(slug: str, thread_id: int):
    story = _scene(slug, thread_id)
    return _download(book_epub.scene_epub(story), f"{story.campaign.slug}-{thread_id}")
