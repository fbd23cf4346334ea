"""Markdown rendered for a write, with no transaction open (pbp.db.release)."""

from __future__ import annotations

from sqlmodel import Session

from pbp.db import release
from pbp.markup import render_markdown


def rendered(*, session: Session, text: str) -> str:
    """*text* as safe HTML, rendered after the session's transaction has ended.

    A long text takes a while to render, and a POST's transaction holds SQLite's write
    lock from its first query: every other writer of the instance would wait. So the
    action's checks and writes come after this call, in a short transaction of their own.
    The length of what the person typed is checked before (pbp.limits): the text here may
    carry a line pbp added ("Target:", a stance), or a withdrawn entry's stored HTML.
    """
    release(session)
    return render_markdown(text)
