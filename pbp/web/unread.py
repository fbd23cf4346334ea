"""What is new to the reader, on the pages (pbp.services.unread): the "new" marks, the
"Jump to the first unread" link, the "N new" of the campaign bar and "Mark all read".

The planet's entries are rendered once for every reader and cached (pbp.web.page_cache),
so they carry a placeholder per entry and note (`<!--new:e12-->`, `<!--new:n34-->`, HTML
comments that show nothing); each signed-in member's page turns those of the items new to
them into a "new" mark. A visitor's cached page is never touched.
"""

from __future__ import annotations

import re

from flask import Blueprint, request, url_for
from markupsafe import Markup

from pbp.models import Campaign, User
from pbp.request_db import get_session
from pbp.services import unread
from pbp.web.actions import Act, action, after_reading, now

bp = Blueprint("unread", __name__)

_PLACEHOLDER = re.compile(r"<!--new:([en])(\d+)-->")
NEW_MARK = '<span class="new-mark">new</span>'


def planet_marked(html: str, *, user: User, campaign: Campaign) -> tuple[str, str | None]:
    """The planet's cached HTML with the items new to `user` marked, and the anchor of the
    first of them; what it showed is read from now on (the marks are raised)."""
    shown: dict[str, set[int]] = {"e": set(), "n": set()}
    for kind, number in _PLACEHOLDER.findall(html):
        shown[kind].add(int(number))
    news = unread.planet_news(
        session=get_session(), user=user, campaign=campaign, entry_ids=shown["e"]
    )
    reading = unread.seen_on_planet(
        user=user, campaign=campaign, news=news, shown_entries=shown["e"], shown_notes=shown["n"]
    )
    keep(reading)
    if not reading.new and not reading.new_notes:
        return html, None
    new = {"e": reading.new, "n": reading.new_notes}

    def mark(match: re.Match) -> str:
        return NEW_MARK if int(match.group(2)) in new[match.group(1)] else ""

    return _PLACEHOLDER.sub(mark, html), reading.first


def keep(reading: unread.Reading) -> None:
    """Raise the marks of what a page showed, after its reads (`actions.after_reading`)."""
    if reading.marks:
        after_reading(lambda session: unread.record(session=session, reading=reading, now=now()))


def new_mark(item_id: int, new: set[int] | frozenset[int]) -> Markup:
    """The "new" mark beside an item of an entry's or a scene's page."""
    return Markup(NEW_MARK) if item_id in new else Markup("")


@action(bp, "/c/<slug>/read", role="member")
def mark_all_read(act: Act, slug: str):
    """ "Mark all read": everything of the campaign the member may read is read."""
    unread.mark_read(session=act.session, campaign=act.campaign, user=act.account, now=act.now)
    back = request.form.get("next", "")
    # Only a path of this site: never a redirect elsewhere.
    if not back.startswith("/") or back[1:2] in ("/", "\\"):
        back = url_for("public.campaign", slug=slug)
    return act.done(back, f"Everything in {act.campaign.name} is marked read.")


def init_app(app) -> None:
    app.add_template_global(new_mark)
    app.add_template_global(unread.shown, name="unread_words")
    app.register_blueprint(bp)
