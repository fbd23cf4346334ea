"""The pages read a fixed number of queries, whatever the campaign's size.

A page that runs a query per entry, note, turn or character is fast on a test campaign
and slow on a real one (24 characters over 60 turns: tests/bench/test_bench_pages.py).
Here each page is rendered for a small and a larger campaign, built with the benchmark's
bulk inserts, and must send the same number of SELECTs to the database for both.
"""

from __future__ import annotations

from tests.bench.test_bench_pages import (
    build_campaign,
    build_forum,
    count_selects,
    forum_posts,
    page_urls,
)

SMALL, LARGER = (4, 3), (8, 5)  # characters x turns; challenges from turn 3 on


def _selects(client, engine, url: str) -> int:
    client.get(url)  # once first: per-process checks (the schema version) happen here
    with count_selects(engine) as seen:
        response = client.get(url)
    assert response.status_code == 200, f"{url}: {response.status_code}"
    return len(seen)


def test_query_counts_do_not_grow_with_characters_or_turns(client, auth, engine, connection):
    """Planet, dashboard, an open challenge's entry page (it runs the tally), a character
    page and a forum scene (with whispers and GM-only posts), as the referee, who is a
    member: the pages look up, mark and keep what is new to them (issue #29 item 2)."""
    referee = auth.create_user()
    small, larger = (
        build_campaign(connection, characters=c, turns=t, referee_id=referee.id)
        for c, t in (SMALL, LARGER)
    )
    small_forum, larger_forum = (
        build_forum(connection, posts=forum_posts(c, t), referee_id=referee.id)
        for c, t in (SMALL, LARGER)
    )
    auth.login(referee)
    larger_urls = page_urls(larger, larger_forum)
    counts = {
        page: (_selects(client, engine, url), _selects(client, engine, larger_urls[page]))
        for page, url in page_urls(small, small_forum).items()
    }
    assert set(counts) == {"planet", "dashboard", "entry (open challenge)", "character", "scene"}
    grown = {page: pair for page, pair in counts.items() if pair[0] != pair[1]}
    assert not grown, (
        f"queries at {SMALL[0]}x{SMALL[1]} vs {LARGER[0]}x{LARGER[1]} (characters x turns): {grown}"
    )
