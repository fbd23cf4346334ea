"""Players' pages: writing, editing, withdrawing, noting — and the rules' refusals."""

from datetime import UTC, datetime, timedelta

import pytest
from sqlmodel import select

from pbp.models import Character, Entry, EntryRevision, Note, User
from pbp.services.accounts import logins as accounts
from pbp.services.noteworthy import hosted_blog, turns
from tests.factories import make_campaign, make_characters
from tests.helpers import PASSWORD

T0 = datetime(2026, 8, 1, 9, 0, tzinfo=UTC)
XSS = '<script>alert("x")</script><img src=x onerror=alert(1)>'


@pytest.fixture
def clock(app):
    state = {"now": T0}
    app.config["PBP_CLOCK"] = lambda: state["now"]
    return state


def _players(db_session, chars):
    for character in chars:
        user = db_session.get(User, character.user_id)
        user.password_hash = accounts.hash_password(PASSWORD)
    db_session.commit()


@pytest.fixture
def game(db_session, clock):
    campaign = make_campaign(db_session, settings={"opening_turns": 1})
    chars = make_characters(db_session, campaign)
    _players(db_session, chars)
    turns.post_event(session=db_session, campaign=campaign, text="Turn one.", actor=None, now=T0)
    db_session.commit()
    return campaign, chars


def login_as(auth, db_session, character):
    auth.login(db_session.get(User, character.user_id))


def next_turn(db_session, campaign, clock, hours=24):
    clock["now"] += timedelta(hours=hours)
    turns.close_turn(session=db_session, campaign=campaign, actor=None, now=clock["now"])
    turns.resolve_turn(session=db_session, campaign=campaign, actor=None, now=clock["now"])
    clock["now"] += timedelta(minutes=1)
    turns.post_event(
        session=db_session, campaign=campaign, text="Next.", actor=None, now=clock["now"]
    )
    db_session.commit()


def write(auth, campaign, **form):
    data = {"title": "An entry", "mood": "Calm", "body": "Text", "target": "", **form}
    return auth.post(f"/c/{campaign.slug}/write", data)


def test_challenge_picker_is_disabled_in_opening_turns_with_the_reason(
    client, auth, game, db_session
):
    campaign, (ada, *_) = game
    login_as(auth, db_session, ada)
    page = client.get(f"/c/{campaign.slug}/write")
    assert b"No challenges are permitted in the first turn of the game" in page.data
    refused = write(auth, campaign, mood="Challenging", target="1")
    assert refused.status_code == 422 and b"No challenges are permitted" in refused.data
    assert db_session.exec(select(Entry)).all() == []


def test_challenge_needs_exactly_one_target_and_only_one_per_turn(
    client, auth, game, db_session, clock
):
    campaign, (ada, bram, cleo, *_) = game
    next_turn(db_session, campaign, clock)
    login_as(auth, db_session, ada)
    assert write(auth, campaign, mood="Challenging").status_code == 422
    ok = write(auth, campaign, mood="Challenging", target=str(bram.id), title="Bram!")
    assert ok.status_code == 302
    entry = db_session.exec(select(Entry).where(Entry.title == "Bram!")).one()
    assert entry.mood == "challenging" and "Target: Bram" in entry.body_html
    again = write(auth, campaign, mood="Challenging", target=str(cleo.id))
    assert again.status_code == 422 and b"already challenged this turn" in again.data


def test_withdrawal_is_a_revision_and_still_blocks_a_second_challenge(
    client, auth, game, db_session, clock
):
    campaign, (ada, bram, cleo, *_) = game
    next_turn(db_session, campaign, clock)
    login_as(auth, db_session, ada)
    write(auth, campaign, mood="Challenging", target=str(bram.id), title="Bram!")
    entry = db_session.exec(select(Entry).where(Entry.title == "Bram!")).one()
    clock["now"] += timedelta(hours=1)
    assert auth.post(f"/c/{campaign.slug}/{ada.slug}/{entry.id}/withdraw", {}).status_code == 302
    moods = db_session.exec(
        select(EntryRevision.mood)
        .where(EntryRevision.entry_id == entry.id)
        .order_by(EntryRevision.id)
    ).all()
    assert moods == ["challenging", "withdrawn"]
    again = write(auth, campaign, mood="Challenging", target=str(cleo.id))
    assert b"a withdrawn challenge still counts" in again.data


def test_only_the_author_edits_and_players_outside_the_campaign_are_refused(
    client, auth, game, db_session
):
    campaign, (ada, bram, *_) = game
    entry = hosted_blog.store_entry(
        session=db_session,
        character=ada,
        title="Mine",
        body_markdown="b",
        mood="Calm",
        now=T0 + timedelta(minutes=5),
    )
    db_session.commit()
    login_as(auth, db_session, bram)
    url = f"/c/{campaign.slug}/{ada.slug}/{entry.id}/edit"
    assert client.get(url).status_code == 403
    assert auth.post(url, {"title": "Hacked", "mood": "x", "body": "y"}).status_code == 403
    auth.logout()
    stranger = auth.create_user()
    auth.login(stranger)
    assert write(auth, campaign).status_code == 403
    note = auth.post(f"/c/{campaign.slug}/{ada.slug}/{entry.id}/notes", {"body": "hi"})
    assert note.status_code == 403
    db_session.expire_all()
    assert db_session.get(Entry, entry.id).title == "Mine"


def test_notes_on_a_past_turns_entry_are_refused(client, auth, game, db_session, clock):
    campaign, (ada, bram, *_) = game
    old = hosted_blog.store_entry(
        session=db_session,
        character=ada,
        title="Old",
        body_markdown="b",
        mood="Calm",
        now=T0 + timedelta(minutes=5),
    )
    db_session.commit()
    next_turn(db_session, campaign, clock)
    login_as(auth, db_session, bram)
    page = client.get(f"/c/{campaign.slug}/{ada.slug}/{old.id}")
    assert b"only on the current turn" in page.data and b"Post note" not in page.data
    refused = auth.post(f"/c/{campaign.slug}/{ada.slug}/{old.id}/notes", {"body": "late"})
    assert refused.status_code == 422 and b"late</textarea>" in refused.data
    assert db_session.exec(select(Note)).all() == []


def test_positions_of_challenger_target_and_outsiders_are_refused(
    client, auth, game, db_session, clock
):
    campaign, (ada, bram, cleo, dov, *_) = game
    db_session.get(Character, dov.id).status = "outsider"
    next_turn(db_session, campaign, clock)
    entry = hosted_blog.store_entry(
        session=db_session,
        character=ada,
        title="Bram!",
        body_markdown="Target: Bram\n\ngo",
        mood="Challenging",
        now=clock["now"] + timedelta(minutes=1),
    )
    db_session.commit()
    url = f"/c/{campaign.slug}/{ada.slug}/{entry.id}"
    login_as(auth, db_session, dov)
    assert b"An outsider cannot support or oppose" in client.get(url).data
    refused = auth.post(url + "/notes", {"body": "yes", "stance": "support"})
    assert refused.status_code == 422
    auth.logout()
    login_as(auth, db_session, cleo)
    assert auth.post(url + "/notes", {"body": "yes", "stance": "support"}).status_code == 302
    planet = client.get(f"/c/{campaign.slug}/")
    assert b"1 support" in planet.data


def test_hostile_markup_is_neutralized_on_every_page(client, auth, game, db_session):
    campaign, (ada, bram, *_) = game
    db_session.get(Character, ada.id).name = "Ada " + XSS
    entry = hosted_blog.store_entry(
        session=db_session,
        character=ada,
        title="T " + XSS,
        body_markdown="B " + XSS,
        mood="M " + XSS,
        now=T0 + timedelta(minutes=5),
    )
    hosted_blog.store_note(
        session=db_session,
        entry=entry,
        author=bram,
        body_markdown="N " + XSS,
        now=T0 + timedelta(minutes=6),
    )
    db_session.commit()
    pages = [
        f"/c/{campaign.slug}/",
        f"/c/{campaign.slug}/{ada.slug}/",
        f"/c/{campaign.slug}/{ada.slug}/{entry.id}",
        f"/c/{campaign.slug}/feed.atom",
        f"/c/{campaign.slug}/{ada.slug}/feed.atom",
        f"/c/{campaign.slug}/{ada.slug}/comments.atom",
        "/",
    ]
    for url in pages:
        body = client.get(url).get_data(as_text=True)
        assert "<script>alert" not in body, url
        assert "<img src=x onerror" not in body and 'onerror="alert' not in body, url


def test_planet_filters_by_turn_character_and_mood(client, game, db_session, clock):
    campaign, (ada, bram, *_) = game
    hosted_blog.store_entry(
        session=db_session,
        character=ada,
        title="Ada one",
        body_markdown="b",
        mood="Calm",
        now=T0 + timedelta(minutes=5),
    )
    next_turn(db_session, campaign, clock)
    hosted_blog.store_entry(
        session=db_session,
        character=bram,
        title="Bram two",
        body_markdown="b",
        mood="Angry",
        now=clock["now"] + timedelta(minutes=5),
    )
    db_session.commit()
    base = f"/c/{campaign.slug}/"
    assert b"Ada one" in client.get(base + "?turn=1").data
    assert b"Bram two" not in client.get(base + "?turn=1").data
    assert b"Ada one" not in client.get(base + f"?character={bram.slug}").data
    assert b"Bram two" in client.get(base + "?mood=angry").data
    assert b"Ada one" not in client.get(base + "?mood=angry").data


def test_character_pages_show_this_turns_challenges_with_live_counts(
    client, auth, game, db_session, clock
):
    campaign, (ada, bram, cleo, *_) = game
    next_turn(db_session, campaign, clock)
    entry = hosted_blog.store_entry(
        session=db_session,
        character=ada,
        title="Bram!",
        body_markdown="Target: Bram\n\ngo",
        mood="Challenging",
        now=clock["now"] + timedelta(minutes=1),
    )
    hosted_blog.store_note(
        session=db_session,
        entry=entry,
        author=cleo,
        body_markdown="yes",
        stance="support",
        now=clock["now"] + timedelta(minutes=2),
    )
    db_session.commit()
    ada_page = client.get(f"/c/{campaign.slug}/{ada.slug}/").get_data(as_text=True)
    bram_page = client.get(f"/c/{campaign.slug}/{bram.slug}/").get_data(as_text=True)
    cleo_page = client.get(f"/c/{campaign.slug}/{cleo.slug}/").get_data(as_text=True)
    assert "Turn 2 (open)" in ada_page and "against Bram</a>:" in ada_page
    assert "1 support · 0 oppose" in ada_page
    assert "from Ada</a>:" in bram_page and "1 support · 0 oppose" in bram_page
    assert f"/c/{campaign.slug}/{ada.slug}/{entry.id}" in bram_page
    assert "Turn 2 (open)" not in cleo_page


def _textarea(html: str) -> str:
    """The edit page's entry text, as the browser would show it."""
    import html as html_module

    start = html.index('<textarea id="body"')
    text = html[html.index(">", start) + 1 : html.index("</textarea>", start)]
    return html_module.unescape(text).removeprefix("\n")


def test_the_edit_page_shows_the_markdown_the_player_wrote(client, auth, game, db_session, clock):
    """Issue #27 item 6: editing a Markdown entry shows that Markdown again, not the HTML it
    became; the picker's "Target:" line is kept in it (it names the target), and an edit's
    Markdown is the next edit's text."""
    campaign, (ada, bram, *_) = game
    next_turn(db_session, campaign, clock)
    login_as(auth, db_session, ada)
    typed = "Bram *lied* to me.\n\n- once\n- twice"
    write(auth, campaign, title="Bram!", mood="Challenging", target=str(bram.id), body=typed)
    entry = db_session.exec(select(Entry).where(Entry.title == "Bram!")).one()
    url = f"/c/{campaign.slug}/{ada.slug}/{entry.id}/edit"
    page = client.get(url).get_data(as_text=True)
    assert _textarea(page) == f"Target: Bram\n\n{typed}"
    assert "<em>" not in _textarea(page) and "before pbp kept the Markdown" not in page

    edited = f"Target: Bram\n\n{typed}\n\n**Thrice.**"
    saved = auth.post(url, {"title": "Bram!", "mood": "Challenging", "body": edited})
    assert saved.status_code == 302
    assert _textarea(client.get(url).get_data(as_text=True)) == edited
    # A withdrawal changes the mood only: the Markdown stays the one to edit.
    auth.post(f"/c/{campaign.slug}/{ada.slug}/{entry.id}/withdraw", {})
    assert _textarea(client.get(url).get_data(as_text=True)) == edited
    db_session.expire_all()
    sources = db_session.exec(
        select(EntryRevision.body_source)
        .where(EntryRevision.entry_id == entry.id)
        .order_by(EntryRevision.id)
    ).all()
    assert sources == [f"Target: Bram\n\n{typed}", edited, edited]


def test_an_entry_from_before_the_markdown_was_kept_shows_its_html_and_says_so(
    client, auth, game, db_session
):
    campaign, (ada, *_) = game
    entry = hosted_blog.store_entry(
        session=db_session,
        character=ada,
        title="Old",
        body_markdown="An *old* entry.",
        mood="Calm",
        now=T0 + timedelta(minutes=5),
    )
    entry.body_source = None  # as stored before migration 0012
    db_session.commit()
    login_as(auth, db_session, ada)
    page = client.get(f"/c/{campaign.slug}/{ada.slug}/{entry.id}/edit").get_data(as_text=True)
    assert "<em>old</em>" in _textarea(page)
    assert "written before pbp kept the Markdown you type: the box shows the HTML" in page


def test_an_entry_read_from_a_feed_is_not_editable_on_pbp(client, auth, game, db_session):
    """A feed's entry is HTML from its blog: edited there, not on pbp."""
    from adapters.base import FeedEntry, ParsedFeed
    from pbp.models import Blog
    from pbp.services.noteworthy.ingest import ingest_parsed

    campaign, (ada, *_) = game
    blog = db_session.exec(select(Blog).where(Blog.character_id == ada.id)).one()
    blog.kind, blog.feed_url = "external", "https://ada.example.net/feed"
    item = FeedEntry(
        source_id="https://ada.example.net/1",
        url="https://ada.example.net/1",
        title="From my blog",
        author=None,
        published=T0 + timedelta(minutes=5),
        updated=None,
        body_html="<p>Written <em>elsewhere</em>.</p>",
        raw_mood="Calm",
        mood_source="field",
        fallback_key="x",
    )
    parsed = ParsedFeed(kind="rss", title="Ada", site_url=None, entries=(item,))
    ingest_parsed(
        session=db_session,
        blog=blog,
        parsed=parsed,
        now=T0 + timedelta(minutes=6),
        campaign_id=campaign.id,
    )
    db_session.commit()
    entry = db_session.exec(select(Entry).where(Entry.title == "From my blog")).one()
    login_as(auth, db_session, ada)
    page = client.get(f"/c/{campaign.slug}/{ada.slug}/{entry.id}")
    assert f"/{entry.id}/edit" not in page.get_data(as_text=True)
    refused = client.get(f"/c/{campaign.slug}/{ada.slug}/{entry.id}/edit")
    assert refused.status_code == 422
    assert "edit it on your blog" in refused.get_data(as_text=True)
