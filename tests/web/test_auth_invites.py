"""Invites through the pages: the referee makes a link, a player uses it once."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from sqlmodel import select

from pbp.models import Invite
from pbp.services import campaigns
from pbp.services.accounts import logins as accounts
from tests.factories import make_campaign

SECRET = "test-secret-key-" + "x" * 32  # tests/conftest.py's app


def issue(db_session, campaign, referee, now=None, **kw):
    issued = accounts.create_invite(
        session=db_session,
        campaign=campaign,
        created_by=referee,
        secret_key=SECRET,
        base_url="http://pbp.test",
        now=now or datetime.now(UTC),
        **kw,
    )
    db_session.commit()
    return issued


def path(issued) -> str:
    return f"/invite/{issued.token}"


def game(db_session, auth, **kw):
    referee = auth.create_user(display_name="The Referee")
    return make_campaign(db_session, name="Salon of Knives", referee=referee, **kw), referee


def test_referee_creates_a_link_to_copy(client, auth, db_session):
    campaign, referee = game(db_session, auth)
    vance = campaigns.add_character(session=db_session, campaign=campaign, name="Lady Vance")
    db_session.commit()
    auth.login(referee)
    form = client.get(f"/c/{campaign.slug}/invites").get_data(as_text=True)
    assert "Lady Vance" in form and '<label for="character">' in form
    page = auth.post(
        f"/c/{campaign.slug}/invites",
        {"role": "player", "character": vance.slug, "days": "7", "email": ""},
    )
    html = page.get_data(as_text=True)
    assert page.status_code == 200
    assert page.headers["Referrer-Policy"] == "no-referrer"
    link = re.search(r'value="(http://pbp\.test/invite/[^"]+)"', html).group(1)
    invite = db_session.exec(select(Invite)).one()
    assert (invite.character_id, invite.created_by) == (vance.id, referee.id)
    assert invite.expires_at - invite.created_at == timedelta(days=7)
    assert "to play <strong>Lady Vance</strong>" in html
    assert client.get(link.removeprefix("http://pbp.test")).status_code == 200


def test_invite_form_errors_are_shown_not_raised(client, auth, db_session):
    campaign, referee = game(db_session, auth)
    auth.login(referee)
    page = auth.post(f"/c/{campaign.slug}/invites", {"role": "player", "days": "400"})
    assert page.status_code == 422
    html = page.get_data(as_text=True)
    assert "An invite works for 1 to 90 days: give a whole number." in html
    assert 'id="days" name="days"' in html and 'value="400"' in html
    assert db_session.exec(select(Invite)).all() == []


def test_invite_by_email_queues_a_message(client, auth, db_session, sent_mail):
    campaign, referee = game(db_session, auth)
    auth.login(referee)
    page = auth.post(
        f"/c/{campaign.slug}/invites", {"role": "player", "days": "3", "email": "ada@example.test"}
    )
    assert "on its way by email" in page.get_data(as_text=True)
    assert [(m["kind"], m["invite"].email) for m in sent_mail] == [("invite", "ada@example.test")]
    assert sent_mail[0]["url"] in page.get_data(as_text=True)


def test_newcomer_accepts_and_is_logged_in(client, auth, db_session):
    campaign, referee = game(db_session, auth)
    pip = campaigns.add_character(session=db_session, campaign=campaign, name="Pip")
    issued = issue(db_session, campaign, referee, character=pip, email="pip@example.test")
    page = client.get(path(issued))
    html = page.get_data(as_text=True)
    assert page.status_code == 200 and page.headers["Cache-Control"] == "no-store"
    assert "play <strong>Pip</strong> in" in html and 'value="pip@example.test"' in html
    response = auth.post(
        path(issued),
        {
            "display_name": "Pip's Player",
            "email": "pip@example.test",
            "password": "a fine long passphrase",
            "confirm": "a fine long passphrase",
        },
    )
    assert response.status_code == 302
    assert response.headers["Location"] == f"/c/{campaign.slug}/"
    db_session.expire_all()
    user = accounts.find_user(session=db_session, email="pip@example.test")
    assert db_session.get(campaigns.Character, pip.id).user_id == user.id
    assert campaigns.membership(session=db_session, campaign=campaign, user=user).role == "player"
    assert "You are logged in as <strong>Pip&#39;s Player</strong>" in client.get(
        "/login"
    ).get_data(as_text=True)


def test_mismatched_passwords_keep_the_invite(client, auth, db_session):
    campaign, referee = game(db_session, auth)
    issued = issue(db_session, campaign, referee)
    page = auth.post(
        path(issued),
        {
            "display_name": "X",
            "email": "x@example.test",
            "password": "a fine long passphrase",
            "confirm": "a different passphrase",
        },
    )
    assert page.status_code == 422
    assert "The two passwords differ." in page.get_data(as_text=True)
    assert client.get(path(issued)).status_code == 200


def test_existing_account_is_told_to_log_in(client, auth, db_session):
    campaign, referee = game(db_session, auth)
    existing = auth.create_user()
    issued = issue(db_session, campaign, referee)
    page = auth.post(
        path(issued),
        {
            "display_name": "Me",
            "email": existing.email,
            "password": "somebody else's guess",
            "confirm": "somebody else's guess",
        },
    )
    assert page.status_code == 409  # refused on the form (a conflict), which keeps what was typed
    assert "log in, then open the invitation link again" in page.get_data(as_text=True)
    assert 'value="Me"' in page.get_data(as_text=True)
    assert client.get(path(issued)).status_code == 200


def test_logged_in_user_joins_with_one_click(client, auth, db_session):
    """A referee of one game joins another as a player."""
    mine, me = game(db_session, auth)
    other_ref = auth.create_user()
    theirs = make_campaign(db_session, name="Other Game", referee=other_ref)
    issued = issue(db_session, theirs, other_ref)
    auth.login(me)
    page = client.get(path(issued)).get_data(as_text=True)
    assert "You will join as <strong>The Referee</strong>" in page
    assert auth.post(path(issued)).status_code == 302
    db_session.expire_all()
    assert campaigns.membership(session=db_session, campaign=theirs, user=me).role == "player"
    assert campaigns.membership(session=db_session, campaign=mine, user=me).role == "referee"


def test_used_invite_is_refused_with_a_clear_page(client, auth, db_session):
    campaign, referee = game(db_session, auth)
    issued = issue(db_session, campaign, referee)
    accounts.accept_invite(
        session=db_session, token=issued.token, secret_key=SECRET, now=datetime.now(UTC),
        email="first@example.test", display_name="First", password="first passphrase",
    )  # fmt: skip
    db_session.commit()
    for response in (client.get(path(issued)), auth.post(path(issued), {})):
        html = response.get_data(as_text=True)
        assert response.status_code == 410
        assert "this invitation was already used on" in html and "ask the referee" in html


def test_expired_invite_is_refused_with_a_clear_page(client, auth, db_session):
    campaign, referee = game(db_session, auth)
    issued = issue(
        db_session, campaign, referee, now=datetime.now(UTC) - timedelta(days=3),
        ttl=timedelta(days=2),
    )  # fmt: skip
    page = client.get(path(issued))
    assert page.status_code == 410
    assert "this invitation expired on" in page.get_data(as_text=True)


def test_forged_invite_is_not_found(client):
    page = client.get("/invite/eyJpIjoxLCJ0IjoxfQ.forged-signature")
    assert page.status_code == 404
    assert "this invitation link is not valid" in page.get_data(as_text=True)


def test_players_and_strangers_cannot_make_invites(client, auth, db_session):
    campaign, _ = game(db_session, auth)
    player = auth.create_user()
    campaigns.add_character(session=db_session, campaign=campaign, name="Cleo", user=player)
    db_session.commit()
    auth.login(player)
    for response in (
        client.get(f"/c/{campaign.slug}/invites"),
        auth.post(f"/c/{campaign.slug}/invites", {"role": "player", "days": "7"}),
    ):
        assert response.status_code == 403
        assert "only the referee of Salon of Knives" in response.get_data(as_text=True)
    assert db_session.exec(select(Invite)).all() == []


def test_visitors_are_sent_to_log_in_first(client, db_session, auth):
    campaign, _ = game(db_session, auth)
    response = client.get(f"/c/{campaign.slug}/invites")
    assert response.status_code == 302
    assert response.headers["Location"] == f"/login?next=/c/{campaign.slug}/invites"


def test_invite_page_offers_login_that_comes_back(client, auth, db_session):
    campaign, referee = game(db_session, auth)
    member = auth.create_user()
    issued = issue(db_session, campaign, referee)
    html = client.get(path(issued)).get_data(as_text=True)
    assert f'href="/login?next={path(issued)}"' in html
    response = auth.login(member, next=path(issued))
    assert response.headers["Location"] == path(issued)
    assert "You will join as" in client.get(path(issued)).get_data(as_text=True)
