"""Search a campaign (issue #33 item 2): the search page's twin."""

from __future__ import annotations

from datetime import datetime

from pbp.api.registry import Call, operation
from pbp.api.schemas import Out, PageQuery
from pbp.inputs.search import SearchIn
from pbp.services import campaigns, search
from pbp.services.lookups import Page


class SearchQuery(PageQuery, SearchIn):
    pass


class HitOut(Out):
    kind: str
    id: int
    title: str
    snippet_html: str
    character: str | None
    character_slug: str | None
    entry_id: int | None
    thread_id: int | None
    turn: int | None
    ooc: bool
    rolls: int
    at: datetime | None


@operation(
    "GET",
    "/campaigns/<slug>/search",
    tag="search",
    access="public",
    query=SearchQuery,
    response=HitOut,
    paginated=True,
)
def search_campaign(call: Call, slug: str) -> Page:
    """Entries, notes, forum posts and events with every word of `q`, best first, each with
    a snippet whose matched words are in `<mark>` (everything else escaped). Only what the
    caller may read on the pages is found: a whisper by its recipients, a hidden entry by
    its author and the referee, a tailored event by its character's player."""
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    q = call.query
    offset = call.after or 0
    page = search.search(
        session=call.session,
        campaign=campaign,
        user=call.user,
        request=search.SearchRequest(q.q, q.character, q.turn, q.mood, q.kind, q.rolls),
        limit=q.limit,
        offset=offset,
    )
    items = [
        HitOut.model_validate({**h.__dict__, "snippet_html": str(h.snippet)}) for h in page.hits
    ]
    return Page(items, page.next_offset)
