"""Noteworthy issue 17, item 4, on the referee's dashboard: a resolved turn shows the result
stored when it was resolved, and what arrived since is listed beside it for the referee."""

from datetime import UTC, datetime, timedelta

from adapters.base import FeedNote
from pbp.services.noteworthy import hosted_blog, ingest, turns
from tests.factories import make_campaign, make_characters

T0 = datetime(2026, 7, 1, 9, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)


def test_the_dashboard_shows_a_resolved_turn_as_it_was_resolved(client, auth, db_session):
    referee = auth.create_user(display_name="Referee")
    campaign = make_campaign(db_session, referee=referee, settings={"opening_turns": 0})
    ada, bram, cleo, dov, eli, fay = make_characters(db_session, campaign)
    turns.post_event(session=db_session, campaign=campaign, text="Fog.", actor=None, now=T0)
    duel = hosted_blog.store_entry(
        session=db_session,
        character=ada,
        title="Bram must go",
        body_markdown="Target: Bram\n\nHe cheats.",
        mood="Challenging",
        now=T0,
    )
    for who in (cleo, dov, eli):
        hosted_blog.store_note(
            session=db_session, entry=duel, author=who, body_markdown="Support", now=T0
        )
    turns.close_turn(session=db_session, campaign=campaign, actor=None, now=T0 + 5 * HOUR)
    turns.resolve_turn(session=db_session, campaign=campaign, actor=None, now=T0 + 6 * HOUR)
    late = FeedNote(
        source_id="urn:test:late",
        url=None,
        parent_source_id=None,
        parent_url=None,
        author_name="Fay",
        author_uri=None,
        published=T0 + HOUR,
        updated=None,
        body_html="<p>Oppose</p>",
        title="",
        fallback_key="urn:test:late",
    )
    ingest.upsert_note(
        session=db_session, entry=duel, item=late, author_id=fay.id, now=T0 + 9 * HOUR
    )
    db_session.commit()

    auth.login(referee)
    page = client.get(f"/c/{campaign.slug}/referee/").get_data(as_text=True)
    assert "Support (3)" in page and "Oppose (0)" in page
    assert "the result as it was resolved" in page
    late_list = page.split('id="arrived-late"')[1].split("</ul>")[0]
    assert "Arrived after the turn was resolved (1)" in page
    assert "by Fay" in late_list and "arrived after the turn was resolved" in late_list
