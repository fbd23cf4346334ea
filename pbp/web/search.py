"""The search page of a campaign (issue #33 item 2): a GET form, the hits with their
snippets, and the next page. Open to whoever may read the campaign's pages; what it finds
is what the reader may read (pbp.services.search.visible)."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, render_template, request, url_for

from pbp.errors import UserError
from pbp.inputs.search import SearchIn
from pbp.request_db import get_session
from pbp.services import campaigns, search
from pbp.web.access import current_account
from pbp.web.forms import parsed

bp = Blueprint("search", __name__, url_prefix="/c/<slug>")


def hit_url(slug: str, hit: search.Hit) -> str:
    """Where a hit is read: its entry (a note at its anchor), post or turn."""
    if hit.kind in ("entry", "note") and hit.character_slug and hit.entry_id:
        anchor = f"#note-{hit.id}" if hit.kind == "note" else ""
        url = url_for("blog.entry", slug=slug, character=hit.character_slug, entry_id=hit.entry_id)
        return url + anchor
    if hit.kind == "post" and hit.thread_id:
        return url_for("forum.thread", slug=slug, thread_id=hit.thread_id) + f"#post-{hit.id}"
    if hit.kind == "event" and hit.turn:
        return url_for("turns.page", slug=slug, number=hit.turn)
    return url_for("public.campaign", slug=slug)


@bp.get("/search")
def page(slug: str):
    session = get_session()
    campaign = campaigns.get_campaign(session=session, slug=slug)
    typed: dict[str, Any] = request.args.to_dict()
    offset = max(0, min(request.args.get("from", 0, type=int), 10_000))
    found, refused, form = None, None, None
    try:
        form = parsed(SearchIn, typed)
        if form.q.strip():
            found = search.search(
                session=session,
                campaign=campaign,
                user=current_account(),
                request=search.SearchRequest(
                    form.q, form.character, form.turn, form.mood, form.kind, form.rolls
                ),
                offset=offset,
            )
    except UserError as exc:
        refused = str(exc)
    status = 400 if refused else 200
    next_url = None
    if found is not None and found.next_offset is not None:
        next_url = url_for("search.page", slug=slug, **{**typed, "from": found.next_offset})
    return render_template(
        "search.html",
        campaign=campaign,
        typed=typed,
        found=found,
        refused=refused,
        characters=campaigns.characters(session=session, campaign=campaign),
        hit_url=hit_url,
        next_url=next_url,
    ), status
