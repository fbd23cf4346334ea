"""Issue #16 item 5: nobody votes as another character through a comment feed.

A note from an external comment feed counts for a character only through a verified
identity: the commenter's profile address as the feed gives it, mapped by the referee or
declared by the player on their own page (or the account of a built-in blog's writer). A
display name alone is anyone's to type: such a note is listed for the referee as an
"unverified author" and waits. A note dated more than five minutes after pbp first saw it
is read at its first-seen time, and flagged.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlmodel import select

from adapters.base import FeedEntry, FeedNote, ParsedFeed, fallback_key
from pbp.errors import Conflict
from pbp.models import Blog, Membership, Note, OutboxMessage, Turn, User
from pbp.services import audit_log
from pbp.services.accounts import logins as accounts
from pbp.services.noteworthy import commenters, dashboard, ingest, polling, tally
from tests.api import conftest as api_fixtures
from tests.factories import make_campaign, make_characters
from tests.helpers import PASSWORD
from tests.services.mail.test_outbox import SETTINGS
from tests.web import conftest as web_fixtures

auth = web_fixtures.auth  # the web tests' login helper, shared rather than copied

T0 = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
SEEN = T0 + timedelta(hours=3)  # when pbp reads the comment feed
POST_ID = "https://ada.blog.test/1"
BRAM_PROFILE = "https://bram.dreamwidth.test/"


def challenge() -> FeedEntry:
    published = T0 + timedelta(hours=1)
    return FeedEntry(
        source_id=POST_ID,
        url=POST_ID,
        title="I challenge Cleo",
        author=None,
        published=published,
        updated=None,
        body_html="<p>Target: Cleo. She lied to the court.</p>",
        raw_mood="Challenging",
        mood_source="field",
        fallback_key=fallback_key("I challenge Cleo", published),
    )


def comment(
    name: str | None = "Bram",
    uri: str | None = None,
    n: int = 1,
    body: str = "<p>Support.</p>",
    published: datetime | None = T0 + timedelta(hours=2),
) -> FeedNote:
    source_id = f"{POST_ID}#c{n}"
    return FeedNote(
        source_id=source_id,
        url=None,
        parent_source_id=POST_ID,
        parent_url=None,
        author_name=name,
        author_uri=uri,
        published=published,
        updated=None,
        body_html=body,
        title="",
        fallback_key=source_id,
    )


@pytest.fixture
def game(db_session):
    """Six characters with players; turn 1 open, challenges allowed; Ada blogs elsewhere
    and challenges Cleo there."""
    campaign = make_campaign(db_session, settings={"opening_turns": 0})
    chars = {c.name: c for c in make_characters(db_session, campaign)}
    blog = db_session.exec(select(Blog).where(Blog.character_id == chars["Ada"].id)).one()
    blog.kind, blog.feed_url = "external", "https://ada.blog.test/feed"
    turn = Turn(campaign_id=campaign.id, number=1, opened_at=T0)
    db_session.add_all([blog, turn])
    db_session.flush()
    read(db_session, campaign, blog, entries=(challenge(),))
    return campaign, chars, blog, turn


def read(db_session, campaign, blog, *, entries=(), notes=(), now=SEEN):
    parsed = ParsedFeed(kind="test", title="t", site_url=None, entries=entries, notes=notes)
    return ingest.ingest_parsed(
        session=db_session, blog=blog, parsed=parsed, now=now, campaign_id=campaign.id
    )


def stored(db_session, n: int = 1) -> Note:
    return db_session.exec(select(Note).where(Note.source_id == f"guid:{POST_ID}#c{n}")).one()


# --- the forgery ------------------------------------------------------------------------


def test_a_commenters_name_alone_credits_no_character(db_session, game):
    campaign, chars, blog, _ = game
    read(db_session, campaign, blog, notes=(comment(name="bram"),))
    assert stored(db_session).author_character_id is None


def test_a_name_with_an_unknown_profile_address_credits_no_character(db_session, game):
    """The blog's owner writes a comment as "Bram" from their own profile."""
    campaign, chars, blog, _ = game
    read(db_session, campaign, blog, notes=(comment(uri="https://ada.blog.test/"),))
    assert stored(db_session).author_character_id is None


def test_a_forged_support_is_not_counted_by_the_tally(db_session, game):
    campaign, chars, blog, turn = game
    read(db_session, campaign, blog, notes=(comment(name="Bram"), comment(name="Dov", n=2)))
    (result,) = tally.tally(session=db_session, campaign=campaign, turn=turn).challenges
    assert result.target_id == chars["Cleo"].id
    assert result.supporters == ()
    assert len(result.ignored) == 2  # both listed, with why, for the referee


def test_the_dashboard_lists_a_name_match_as_an_unverified_author(db_session, game):
    campaign, chars, blog, _ = game
    read(db_session, campaign, blog, notes=(comment(name="BRAM"), comment(name="Zed", n=2)))
    waiting = {
        u.name: u for u in dashboard.unmapped_commenters(session=db_session, campaign=campaign)
    }
    assert waiting["BRAM"].claims == "Bram" and waiting["BRAM"].notes == 1
    assert waiting["Zed"].claims is None


# --- verified identities ---------------------------------------------------------------


def test_a_profile_address_the_referee_mapped_counts_now_and_later(db_session, game):
    campaign, chars, blog, turn = game
    read(db_session, campaign, blog, notes=(comment(uri=BRAM_PROFILE),))
    mapped = commenters.map_commenter(
        session=db_session,
        campaign=campaign,
        character=chars["Bram"],
        kind="uri",
        value="http://BRAM.dreamwidth.test",  # the same profile, written another way
    )
    assert mapped == 1 and stored(db_session).author_character_id == chars["Bram"].id
    read(db_session, campaign, blog, notes=(comment(name="B.", uri=BRAM_PROFILE, n=2),))
    assert stored(db_session, 2).author_character_id == chars["Bram"].id
    (result,) = tally.tally(session=db_session, campaign=campaign, turn=turn).challenges
    assert [p.character_id for p in result.supporters] == [chars["Bram"].id]


def test_a_referee_name_mapping_credits_only_the_notes_waiting_now(db_session, game):
    """The referee read those notes; a later note under the same name is anyone's."""
    campaign, chars, blog, _ = game
    read(db_session, campaign, blog, notes=(comment(name="Bram"),))
    mapped = commenters.map_commenter(
        session=db_session, campaign=campaign, character=chars["Bram"], kind="name", value="Bram"
    )
    assert mapped == 1 and stored(db_session).author_character_id == chars["Bram"].id
    read(db_session, campaign, blog, notes=(comment(name="Bram", n=2),))
    assert stored(db_session, 2).author_character_id is None


def test_a_name_mapping_leaves_a_same_named_commenter_with_an_address_waiting(db_session, game):
    campaign, chars, blog, _ = game
    read(db_session, campaign, blog, notes=(comment(), comment(uri="https://x.test/", n=2)))
    mapped = commenters.map_commenter(
        session=db_session, campaign=campaign, character=chars["Bram"], kind="name", value="Bram"
    )
    assert mapped == 1 and stored(db_session, 2).author_character_id is None


def test_an_address_mapped_to_one_character_cannot_be_mapped_to_another(db_session, game):
    campaign, chars, _, _ = game
    commenters.map_commenter(
        session=db_session,
        campaign=campaign,
        character=chars["Bram"],
        kind="uri",
        value=BRAM_PROFILE,
    )
    with pytest.raises(Conflict, match="Bram"):
        commenters.map_commenter(
            session=db_session,
            campaign=campaign,
            character=chars["Dov"],
            kind="uri",
            value=BRAM_PROFILE.upper(),
        )


# --- the player's own page ---------------------------------------------------------------


@pytest.fixture
def bram_logged_in(db_session, game, auth):
    campaign, chars, blog, _ = game
    user = db_session.get(User, chars["Bram"].user_id)
    user.password_hash = accounts.hash_password(PASSWORD)
    db_session.commit()
    auth.login(user)
    return f"/c/{campaign.slug}/me/commenter"


def test_a_player_declares_their_profile_address_and_their_notes_count(
    db_session, game, auth, client, bram_logged_in
):
    campaign, chars, blog, _ = game
    read(db_session, campaign, blog, notes=(comment(uri=BRAM_PROFILE),))
    db_session.commit()
    page = auth.post(bram_logged_in, {"uris": f"  {BRAM_PROFILE}\n\n"})
    assert page.status_code == 302
    db_session.expire_all()
    assert stored(db_session).author_character_id == chars["Bram"].id
    assert BRAM_PROFILE in client.get(f"/c/{campaign.slug}/me/blog").get_data(as_text=True)
    read(db_session, campaign, blog, notes=(comment(name="Bramwell", uri=BRAM_PROFILE, n=2),))
    assert stored(db_session, 2).author_character_id == chars["Bram"].id
    (line,) = [
        line
        for line in audit_log.audit_lines(session=db_session, campaign=campaign)
        if "commenter" in line.sentence
    ]
    assert line.sentence == "gave 1 profile address as Bram's commenter identity"


def test_a_player_cannot_claim_another_characters_address(
    db_session, game, auth, client, bram_logged_in
):
    campaign, chars, _, _ = game
    commenters.map_commenter(
        session=db_session,
        campaign=campaign,
        character=chars["Dov"],
        kind="uri",
        value=BRAM_PROFILE,
    )
    db_session.commit()
    page = auth.post(bram_logged_in, {"uris": BRAM_PROFILE})
    assert page.status_code == 409  # shown again on its form, with its status (pbp.web.refusals)
    assert "already Dov" in page.get_data(as_text=True)


@pytest.mark.parametrize(
    "typed, reason",
    [
        ("Bram", "a profile address starts with https://"),
        ("javascript:alert(1)", "a profile address starts with https://"),
        ("\n".join(f"https://b{i}.test/" for i in range(6)), "at most 5"),
        ("https://" + "b" * 2000 + ".test/", "at most 2,000 characters"),
    ],
)
def test_a_bad_declaration_is_refused_with_the_reason(
    db_session, game, auth, bram_logged_in, typed, reason
):
    """Refused by the service or by the input model the API shares: either way the page
    shows the form again with the reason (422)."""
    page = auth.post(bram_logged_in, {"uris": typed})
    assert page.status_code == 422
    assert reason in page.get_data(as_text=True)
    campaign, chars, _, _ = game
    assert commenters.declared(session=db_session, character=chars["Bram"]) == []


def test_the_referees_dashboard_shows_unverified_authors_and_declared_addresses(
    db_session, game, auth, client
):
    campaign, chars, blog, _ = game
    late = comment(name="Eli", n=2, published=SEEN + timedelta(hours=2))
    read(db_session, campaign, blog, notes=(comment(name="Bram"), late))
    commenters.declare(
        session=db_session, character=chars["Dov"], uris=["https://dov.test/"], now=SEEN, actor=None
    )
    referee = db_session.exec(
        select(User)
        .join(Membership, Membership.user_id == User.id)
        .where(Membership.campaign_id == campaign.id, Membership.role == "referee")
    ).one()
    referee.password_hash = accounts.hash_password(PASSWORD)
    db_session.commit()
    auth.login(referee)
    html = client.get(f"/c/{campaign.slug}/referee/").get_data(as_text=True)
    assert "unverified author" in html
    assert "https://dov.test/" in html and "declared by the player" in html
    assert "by Eli" in html and "read at its first-seen time" in html


@pytest.fixture
def app(app):
    api_fixtures.wire(app)
    return app


def test_a_player_declares_their_address_through_the_api(db_session, game, client):
    campaign, chars, blog, _ = game
    read(db_session, campaign, blog, notes=(comment(uri=BRAM_PROFILE),))
    commenters.map_commenter(
        session=db_session,
        campaign=campaign,
        character=chars["Dov"],
        kind="uri",
        value="https://dov.test/",
    )
    bram = db_session.get(User, chars["Bram"].user_id)
    api = api_fixtures.Api(client)
    token = api_fixtures.make_token(db_session, bram)
    db_session.commit()
    url = f"/campaigns/{campaign.slug}/me/commenter"
    answer = api.put(url, token=token, json={"uris": [BRAM_PROFILE]})
    assert answer.status_code == 200, answer.get_data(as_text=True)
    assert answer.get_json() == {"uris": [BRAM_PROFILE], "mapped_notes": 1}
    taken = api.put(url, token=token, json={"uris": ["https://dov.test"]})
    assert taken.status_code == 409 and taken.mimetype == "application/problem+json"
    assert "already Dov's" in taken.get_json()["detail"]
    bad = api.put(url, token=token, json={"uris": ["Bram"]})
    assert bad.status_code == 422 and "starts with https://" in bad.get_json()["detail"]
    assert api.put(url, json={"uris": []}).status_code == 401


# --- dates -------------------------------------------------------------------------------


def test_a_note_dated_well_after_it_was_first_seen_is_read_then_and_flagged(db_session, game):
    campaign, _, blog, _ = game
    late = comment(uri=BRAM_PROFILE, published=SEEN + timedelta(minutes=6))
    close = comment(uri=BRAM_PROFILE, n=2, published=SEEN + timedelta(minutes=4))
    read(db_session, campaign, blog, notes=(late, close))
    first, second = stored(db_session), stored(db_session, 2)
    assert first.published_at == first.first_seen_at == SEEN
    assert any("first seen" in flag for flag in first.flags)
    assert second.published_at == SEEN + timedelta(minutes=4) and second.flags == []


def test_the_player_a_note_is_credited_to_hears_of_it(db_session, game):
    """Ada owns the blog, so she can type Bram's declared profile address into a comment
    there: the note counts as Bram's, and the poller's mail tells Bram, with how pbp read
    it, so he can ask the referee to rule its author."""
    campaign, chars, blog, _ = game
    bram = chars["Bram"]
    commenters.declare(
        session=db_session, character=bram, uris=[BRAM_PROFILE], now=SEEN, actor=None
    )
    forged = comment(name="Bram", uri=BRAM_PROFILE, body="<p>Support. Cleo must go.</p>")
    report = read(db_session, campaign, blog, notes=(forged,))
    assert stored(db_session).author_character_id == bram.id
    polling.store.queue_play_mail(db_session, SETTINGS, report, SEEN)
    (mail,) = db_session.exec(select(OutboxMessage).where(OutboxMessage.kind == "credited"))
    assert mail.recipient == db_session.get(User, bram.user_id).email
    assert "On Ada's entry" in mail.body_text
    assert "read as support: Support. Cleo must go." in mail.body_text
