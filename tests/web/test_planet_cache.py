"""The planet's pages and its cache: every change shows on the next load, older entries
are a link away, and each page holds a fixed number of entries."""

import re
from datetime import UTC, datetime, timedelta

import pytest
from sqlmodel import select

from pbp.models import Campaign, Character, Entry, User
from pbp.services.accounts import logins as accounts
from pbp.services.noteworthy import hosted_blog, planet, turns
from pbp.web.page_cache import PageCache
from tests.factories import make_campaign, make_characters
from tests.helpers import PASSWORD

T0 = datetime(2026, 8, 1, 9, 0, tzinfo=UTC)


@pytest.fixture
def game(db_session):
    campaign = make_campaign(db_session, settings={"opening_turns": 0})
    chars = make_characters(db_session, campaign)
    turns.post_event(session=db_session, campaign=campaign, text="Turn one.", actor=None, now=T0)
    db_session.commit()
    return campaign, chars


def _entry(db_session, character, title, minutes, **kw):
    entry = hosted_blog.store_entry(
        session=db_session,
        character=character,
        title=title,
        body_markdown=kw.pop("body", "text"),
        mood=kw.pop("mood", "Calm"),
        now=T0 + timedelta(minutes=minutes),
        **kw,
    )
    db_session.commit()
    return entry


def _version(db_session, campaign) -> int:
    return db_session.exec(select(Campaign.content_version).where(Campaign.id == campaign.id)).one()


def test_each_change_shows_on_the_next_load_of_a_cached_planet(client, game, db_session):
    campaign, (ada, bram, cleo, *_) = game
    url = f"/c/{campaign.slug}/"
    entry = _entry(db_session, ada, "First words", 1)
    assert b"First words" in client.get(url).data
    assert client.get(url).data == client.get(url).data  # served again, unchanged

    hosted_blog.store_note(
        session=db_session, entry=entry, author=bram, body_markdown="Bram was here", now=T0
    )
    db_session.commit()
    assert b"Bram was here" in client.get(url).data

    hosted_blog.edit_entry(
        session=db_session,
        actor=db_session.get(User, ada.user_id),
        campaign=campaign,
        entry_id=entry.id,
        title="Second thoughts",
        mood="Calm",
        body="text",
        now=T0 + timedelta(minutes=2),
        mail=None,
    )
    db_session.commit()
    page = client.get(url).data
    assert b"Second thoughts" in page and b"First words" not in page

    db_session.get(Character, cleo.id).status = "outsider"
    db_session.commit()
    assert re.search(rf"{cleo.name}</a> <span class=\"muted\">outsider", client.get(url).text)

    turns.close_turn(session=db_session, campaign=campaign, actor=None, now=T0 + timedelta(1))
    db_session.commit()
    assert "Turn 1</a> · closed" in client.get(url).text


def test_a_write_bumps_only_its_own_campaigns_version(game, db_session):
    campaign, (ada, *_) = game
    other = make_campaign(db_session, name="Elsewhere")
    db_session.commit()
    before = _version(db_session, campaign), _version(db_session, other)
    _entry(db_session, ada, "News", 1)
    after = _version(db_session, campaign), _version(db_session, other)
    assert after[0] > before[0]
    assert after[1] == before[1]


def test_a_rolled_back_write_and_a_read_leave_the_version_alone(game, db_session):
    campaign, (ada, *_) = game
    before = _version(db_session, campaign)
    db_session.get(Character, ada.id).name = "Renamed"
    db_session.flush()
    db_session.rollback()
    db_session.exec(select(Entry)).all()
    db_session.commit()
    assert _version(db_session, campaign) == before


def test_a_savepoint_bumps_at_the_real_commit_not_before(game, db_session):
    campaign, (ada, *_) = game
    before = _version(db_session, campaign)
    with db_session.begin_nested():
        db_session.get(Character, ada.id).name = "Ada Nested"
    assert _version(db_session, campaign) == before
    db_session.commit()
    assert _version(db_session, campaign) == before + 1


def test_the_planet_pages_older_entries_without_repeats_or_gaps(
    client, game, db_session, monkeypatch
):
    campaign, chars = game
    monkeypatch.setattr(planet, "PAGE_SIZE", 4)
    # Ten entries, two sharing one minute: the page boundary falls between equal times.
    for n in range(10):
        _entry(db_session, chars[n % len(chars)], f"Entry number {n:02d}", min(n, 8))
    seen, url, pages = [], f"/c/{campaign.slug}/", 0
    while url:
        page = client.get(url).text
        seen += re.findall(r"Entry number (\d\d)", page)
        older = re.search(r'<a rel="next" href="([^"]+)"', page)
        url = older.group(1).replace("&amp;", "&") if older else None
        pages += 1
    assert pages == 3
    assert seen == [f"{n:02d}" for n in range(9, -1, -1)]


def test_older_pages_keep_the_filters(client, game, db_session, monkeypatch):
    campaign, (ada, bram, *_) = game
    monkeypatch.setattr(planet, "PAGE_SIZE", 2)
    for n in range(3):
        _entry(db_session, ada, f"Ada {n}", n)
        _entry(db_session, bram, f"Bram {n}", n)
    first = client.get(f"/c/{campaign.slug}/?character={ada.slug}").text
    link = re.search(r'<a rel="next" href="([^"]+)"', first).group(1).replace("&amp;", "&")
    assert f"character={ada.slug}" in link
    second = client.get(link).text
    assert (
        "Ada 0" in second
        and "Bram" not in second.split('class="entries"')[1].split("</section>")[0]
    )
    assert 'rel="next"' not in second


def test_a_hostile_or_unknown_before_gives_a_page_not_an_error(client, game, db_session):
    campaign, (ada, *_) = game
    _entry(db_session, ada, "Only entry", 1)
    for value in ("999999", "-1", "abc", "1%27%20OR%201=1"):
        page = client.get(f"/c/{campaign.slug}/?before={value}")
        assert page.status_code == 200
        assert b"Only entry" in page.data


def test_caching_can_be_turned_off(app, client, game, db_session):
    app.config["PBP_PAGE_CACHE_SECONDS"] = 0
    campaign, (ada, *_) = game
    client.get(f"/c/{campaign.slug}/")
    assert "pbp_page_cache" not in app.extensions


def test_visitors_may_see_a_page_a_second_old_people_logged_in_never(
    app, client, auth, game, db_session
):
    campaign, (ada, bram, *_) = game
    app.config["PBP_PAGE_RECHECK_SECONDS"] = 1
    now = [1000.0]
    app.extensions["pbp_page_cache"] = PageCache(60, clock=lambda: now[0])
    url = f"/c/{campaign.slug}/"
    assert b"No entries" in client.get(url).data
    _entry(db_session, ada, "Fresh news", 1)
    now[0] += 0.5
    assert b"Fresh news" not in client.get(url).data  # a visitor, within the second

    user = db_session.get(User, bram.user_id)
    user.password_hash = accounts.hash_password(PASSWORD)
    db_session.commit()
    auth.login(user)
    assert b"Fresh news" in client.get(url).data  # logged in: the current version
    auth.logout()
    client.get("/")  # shows the logout's message: the next page is a visitor's again

    now[0] += 0.1
    assert b"Fresh news" not in client.get(url).data
    now[0] += 0.5
    assert b"Fresh news" in client.get(url).data  # the second is over


def test_the_cache_forgets_pages_after_its_time_limit(app, client, game, db_session):
    campaign, (ada, *_) = game
    now = [1000.0]
    app.extensions["pbp_page_cache"] = cache = PageCache(60, clock=lambda: now[0])
    client.get(f"/c/{campaign.slug}/")
    assert len(cache._cache) == 2  # the visitor's whole page and the planet part
    now[0] += 61
    assert len(cache._cache) == 0
