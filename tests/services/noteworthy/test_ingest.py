"""The ingest service: identity, revisions, turns, authors — one path for every source."""

from datetime import UTC, datetime, timedelta

from sqlmodel import select

from adapters.base import FeedEntry, FeedNote, ParsedFeed, fallback_key
from pbp.models import Blog, Entry, EntryRevision, Note, Turn
from pbp.services.noteworthy import commenters, ingest
from tests.factories import make_campaign, make_characters

T0 = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
BRAM_URI = "https://bram.blog.test/"


def entry(
    source_id="https://blog.test/1",
    title="Arrival",
    body="<p>Hello</p>",
    mood="Bold",
    published=T0 + timedelta(hours=1),
    url=None,
    updated=None,
):
    return FeedEntry(
        source_id=source_id,
        url=url,
        title=title,
        author=None,
        published=published,
        updated=updated,
        body_html=body,
        raw_mood=mood,
        mood_source="field",
        fallback_key=fallback_key(title, published),
    )


def note(
    parent="https://blog.test/1",
    author="Bram",
    body="<p>I support this.</p>",
    source_id="https://blog.test/1#c1",
    published=T0 + timedelta(hours=2),
    parent_url=None,
    uri=None,
):
    return FeedNote(
        source_id=source_id,
        url=None,
        parent_source_id=parent,
        parent_url=parent_url,
        author_name=author,
        author_uri=uri,
        published=published,
        updated=None,
        body_html=body,
        title="",
        fallback_key=source_id or "k",
    )


def feed(*entries, notes=()):
    return ParsedFeed(kind="generic-atom", title="t", site_url=None, entries=entries, notes=notes)


def setup(db_session, turn_closed=None):
    campaign = make_campaign(db_session)
    ada, bram, *_ = make_characters(db_session, campaign)
    blog = db_session.exec(select(Blog).where(Blog.character_id == ada.id)).one()
    blog.kind, blog.feed_url = "external", "https://blog.test/feed"
    turn = Turn(campaign_id=campaign.id, number=1, opened_at=T0, closed_at=turn_closed)
    db_session.add_all([blog, turn])
    db_session.flush()
    return campaign, ada, bram, blog, turn


def run(db_session, campaign, blog, parsed, now=T0 + timedelta(hours=3)):
    return ingest.ingest_parsed(
        session=db_session, blog=blog, parsed=parsed, now=now, campaign_id=campaign.id
    )


def entries_of(db_session, blog):
    return db_session.exec(select(Entry).where(Entry.blog_id == blog.id)).all()


def test_new_entry_is_stored_with_normalized_mood_and_turn(db_session):
    campaign, ada, _, blog, turn = setup(db_session)
    report = run(db_session, campaign, blog, feed(entry(mood="  CHALLENGING! ")))
    (stored,) = entries_of(db_session, blog)
    assert report.new_entries == 1
    assert stored.mood == "challenging" and stored.mood_raw == "CHALLENGING!"
    assert stored.turn_id == turn.id and stored.character_id == ada.id


def test_same_feed_twice_writes_nothing_new(db_session):
    campaign, _, _, blog, _ = setup(db_session)
    run(db_session, campaign, blog, feed(entry()))
    again = run(db_session, campaign, blog, feed(entry()))
    assert (again.new_entries, again.changed_entries) == (0, 0)
    assert len(entries_of(db_session, blog)) == 1


def test_http_https_guid_flip_is_the_same_entry(db_session):
    campaign, _, _, blog, _ = setup(db_session)
    run(db_session, campaign, blog, feed(entry(source_id="http://blog.test/1")))
    run(db_session, campaign, blog, feed(entry(source_id="https://blog.test/1")))
    assert len(entries_of(db_session, blog)) == 1


def test_guid_repeated_within_one_feed_is_stored_once(db_session):
    campaign, _, _, blog, _ = setup(db_session)
    report = run(db_session, campaign, blog, feed(entry(), entry(title="Other")))
    assert len(entries_of(db_session, blog)) == 1
    assert any("repeats the id" in w for w in report.warnings)


def test_entry_without_guid_falls_back_to_link_then_hash(db_session):
    campaign, _, _, blog, _ = setup(db_session)
    run(db_session, campaign, blog, feed(entry(source_id=None, url="https://blog.test/p")))
    run(db_session, campaign, blog, feed(entry(source_id=None, url=None, title="No link")))
    keys = sorted(e.source_id.split(":", 1)[0] for e in entries_of(db_session, blog))
    assert keys == ["hash", "link"]


def test_edit_keeps_history_and_mood_change(db_session):
    campaign, _, _, blog, _ = setup(db_session)
    run(db_session, campaign, blog, feed(entry(mood="Challenging")))
    report = run(db_session, campaign, blog, feed(entry(mood="Calm")), now=T0 + timedelta(hours=4))
    (stored,) = entries_of(db_session, blog)
    revisions = db_session.exec(
        select(EntryRevision).where(EntryRevision.entry_id == stored.id).order_by(EntryRevision.id)
    ).all()
    assert report.changed_entries == 1
    assert [r.mood for r in revisions] == ["challenging", "calm"]
    assert revisions[1].seen_at == T0 + timedelta(hours=4)


def test_entries_missing_from_a_later_fetch_are_kept(db_session):
    campaign, _, _, blog, _ = setup(db_session)
    run(db_session, campaign, blog, feed(entry(), entry(source_id="https://blog.test/2")))
    run(db_session, campaign, blog, feed(entry(source_id="https://blog.test/2")))
    assert len(entries_of(db_session, blog)) == 2


def test_missing_and_future_dates_use_first_seen_and_are_flagged(db_session):
    campaign, _, _, blog, _ = setup(db_session)
    now = T0 + timedelta(hours=3)
    run(
        db_session,
        campaign,
        blog,
        feed(
            entry(source_id="a", published=None),
            entry(source_id="b", published=now + timedelta(days=2)),
        ),
        now=now,
    )
    stored = {e.source_id: e for e in entries_of(db_session, blog)}
    assert stored["guid:a"].published_at == now and ingest.FLAG_NO_DATE in stored["guid:a"].flags
    assert ingest.FLAG_FUTURE_DATE in stored["guid:b"].flags


def test_backdated_entry_first_seen_after_its_turn_closed_is_flagged(db_session):
    campaign, _, _, blog, turn = setup(db_session, turn_closed=T0 + timedelta(hours=2))
    run(db_session, campaign, blog, feed(entry(published=T0 + timedelta(hours=1))))
    (stored,) = entries_of(db_session, blog)
    assert stored.turn_id == turn.id and ingest.FLAG_BACKDATED in stored.flags


def test_entry_outside_any_turn_is_flagged(db_session):
    campaign, _, _, blog, _ = setup(db_session)
    run(db_session, campaign, blog, feed(entry(published=T0 - timedelta(days=1))))
    (stored,) = entries_of(db_session, blog)
    assert stored.turn_id is None and ingest.FLAG_NO_TURN in stored.flags


def test_hostile_html_is_sanitized_on_the_way_in(db_session):
    campaign, _, _, blog, _ = setup(db_session)
    body = '<p onclick="x()">Hi</p><script>alert(1)</script><a href="javascript:x()">l</a>'
    run(db_session, campaign, blog, feed(entry(title="<b>T</b><script>x</script>", body=body)))
    (stored,) = entries_of(db_session, blog)
    for bad in ("<script", "onclick", "javascript:"):
        assert bad not in stored.body_html and bad not in stored.title


def test_note_maps_to_character_and_stance_is_read_on_arrival(db_session):
    campaign, _, bram, blog, _ = setup(db_session)
    # A verified identity: the profile address the referee mapped (a name alone is not).
    commenters.map_commenter(
        session=db_session, campaign=campaign, character=bram, kind="uri", value=BRAM_URI
    )
    report = run(db_session, campaign, blog, feed(entry(), notes=(note(uri=BRAM_URI),)))
    (stored,) = db_session.exec(select(Note)).all()
    assert report.new_notes == 1
    assert stored.author_character_id == bram.id and stored.stance == "support"


def test_note_found_by_parent_url(db_session):
    campaign, _, _, blog, _ = setup(db_session)
    run(db_session, campaign, blog, feed(entry(url="https://blog.test/posts/1")))
    parsed = feed(notes=(note(parent=None, parent_url="http://blog.test/posts/1"),))
    report = run(db_session, campaign, blog, parsed)
    assert report.new_notes == 1 and report.unmatched_notes == 0


def test_unmapped_commenter_is_kept_and_counts_once_mapped(db_session):
    campaign, _, bram, blog, _ = setup(db_session)
    parsed = feed(entry(), notes=(note(author="bram_the_bold", uri=BRAM_URI),))
    run(db_session, campaign, blog, parsed)
    (stored,) = db_session.exec(select(Note)).all()
    assert stored.author_character_id is None and stored.author_name == "bram_the_bold"
    mapped = commenters.map_commenter(
        session=db_session,
        campaign=campaign,
        character=bram,
        kind="uri",
        value=BRAM_URI.upper(),
    )
    db_session.refresh(stored)
    assert mapped == 1 and stored.author_character_id == bram.id
    later_note = note(author="bram_the_bold", uri=BRAM_URI, source_id="c2")
    run(db_session, campaign, blog, feed(notes=(later_note,)))
    later = db_session.exec(select(Note).where(Note.source_id == "guid:c2")).one()
    assert later.author_character_id == bram.id


def test_note_without_parent_is_counted_as_unmatched(db_session):
    campaign, _, _, blog, _ = setup(db_session)
    report = run(db_session, campaign, blog, feed(notes=(note(parent="https://else/9"),)))
    assert report.unmatched_notes == 1
    assert db_session.exec(select(Note)).all() == []
