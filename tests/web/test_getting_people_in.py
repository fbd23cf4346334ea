"""Getting people in through the pages: open invitations to copy and re-send on both
dashboards, the invited address fixed on the invitation page, and the referee's page per
character (rename, aliases, feed, dropped, new player)."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from types import SimpleNamespace

from sqlmodel import select

from pbp.models import Character, Invite, OutboxMessage, User
from pbp.services import campaigns
from pbp.services.accounts import logins as accounts
from tests.factories import make_campaign
from tests.helpers import PASSWORD

SECRET = "test-secret-key-" + "x" * 32  # tests/conftest.py's app
LINK = re.compile(r'readonly value="(http://pbp\.test/invite/[^"]+)"')


def issue(db_session, campaign, referee, clock, **kw):
    issued = accounts.create_invite(
        session=db_session, campaign=campaign, created_by=referee, secret_key=SECRET,
        base_url="http://pbp.test", now=clock.now, mail_from="pbp <pbp@localhost>", **kw,
    )  # fmt: skip
    db_session.commit()
    return issued


def invite_mails(db_session, to):
    return list(
        db_session.exec(
            select(OutboxMessage)
            .where(OutboxMessage.kind == "invite", OutboxMessage.recipient == to)
            .order_by(OutboxMessage.id)
        )
    )


def test_both_dashboards_list_open_invitations_to_copy_and_resend(
    client, auth, db_session, game, clock
):
    campaign, referee, _ = game
    vance = campaigns.add_character(session=db_session, campaign=campaign, name="Lady Vance")
    forum_game = make_campaign(db_session, referee=referee, name="Docks", ruleset="one")
    db_session.commit()
    mailed = issue(db_session, campaign, referee, clock, email="pip@example.test", character=vance)
    bare = issue(db_session, forum_game, referee, clock)
    auth.login(referee)
    for game_, issued in ((campaign, mailed), (forum_game, bare)):
        page = client.get(f"/c/{game_.slug}/referee/")
        html = page.get_data(as_text=True)
        assert page.status_code == 200
        assert page.headers["Referrer-Policy"] == "no-referrer"
        assert LINK.findall(html) == [issued.url]
        assert 'data-copy="invite-link-1"' in html and 'id="invite-link-1"' in html
        assert "/static/copy-link.js" in html
        assert "onfocus=" not in html and "onclick=" not in html
        assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", html)  # no inline script
    dashboard = client.get(f"/c/{campaign.slug}/referee/").get_data(as_text=True)
    assert "to play Lady Vance" in dashboard and "Send it again to pip@example.test" in dashboard
    assert "Send it again" not in client.get(f"/c/{forum_game.slug}/referee/").get_data(
        as_text=True
    )

    assert len(invite_mails(db_session, "pip@example.test")) == 1
    clock.now = clock.now.replace(minute=30)
    sent = auth.post(f"/c/{campaign.slug}/referee/invites/{mailed.invite.id}/resend")
    assert sent.status_code == 302
    first, second = invite_mails(db_session, "pip@example.test")
    assert mailed.url in second.body_text and second.message_id != first.message_id

    # Refused (nobody to mail): the board again (422), with the reason.
    refused = auth.post(f"/c/{forum_game.slug}/referee/invites/{bare.invite.id}/resend")
    board = refused.get_data(as_text=True)
    assert refused.status_code == 422 and "Send it again" not in board
    assert "Not saved: this invitation names no email address" in board
    script = client.get("/static/copy-link.js")
    script.close()  # a file response: release the file
    assert script.status_code == 200


def test_resend_is_for_the_referee_only(client, auth, db_session, game, clock):
    campaign, referee, chars = game
    issued = issue(db_session, campaign, referee, clock, email="pip@example.test")
    auth.login(db_session.get(User, chars[0].user_id))
    page = auth.post(f"/c/{campaign.slug}/referee/invites/{issued.invite.id}/resend")
    assert page.status_code == 403
    assert len(invite_mails(db_session, "pip@example.test")) == 1


def test_the_invitation_page_fixes_the_invited_address(client, auth, db_session, game):
    campaign, referee, _ = game
    # The invitation page reads the real clock (pbp.web.auth), not the test's PBP_CLOCK.
    real = SimpleNamespace(now=datetime.now(UTC))
    issued = issue(db_session, campaign, referee, real, email="pip@example.test")
    path = f"/invite/{issued.token}"
    html = client.get(path).get_data(as_text=True)
    assert re.search(r'name="email" type="email" value="pip@example.test" readonly', html)
    fields = {"display_name": "Pip", "password": PASSWORD, "confirm": PASSWORD}
    refused = auth.post(path, {**fields, "email": "thief@example.test"}, token_url=path)
    assert refused.status_code == 422
    body = refused.get_data(as_text=True)
    assert "This invitation is for pip@example.test" in body and 'value="Pip"' in body
    assert accounts.find_user(session=db_session, email="thief@example.test") is None
    joined = auth.post(path, {**fields, "email": "pip@example.test"}, token_url=path)
    assert joined.status_code == 302
    assert accounts.find_user(session=db_session, email="pip@example.test") is not None


def page_of(campaign, character):
    return f"/c/{campaign.slug}/referee/characters/{character.id}"


def test_the_referee_changes_a_character_on_its_page(client, auth, db_session, game, clock):
    campaign, referee, chars = game
    ada, bram = chars[0], chars[1]
    auth.login(referee)
    dashboard = client.get(f"/c/{campaign.slug}/referee/").get_data(as_text=True)
    assert f'href="{page_of(campaign, ada)}"' in dashboard
    page = client.get(page_of(campaign, ada))
    assert page.status_code == 200 and 'value="Ada"' in page.get_data(as_text=True)

    assert auth.post(page_of(campaign, ada) + "/name", {"name": "Ada Lovelace"}).status_code == 302
    taken = auth.post(page_of(campaign, ada) + "/name", {"name": "Bram"})
    assert taken.status_code == 409
    html = taken.get_data(as_text=True)
    assert "&#39;Bram&#39; is already a character" in html and 'value="Bram"' in html

    auth.post(page_of(campaign, ada) + "/aliases", {"aliases": "Lovelace, The Countess"})
    bad_feed = auth.post(page_of(campaign, ada) + "/feed", {"feed_url": "ftp://example.test/f"})
    assert bad_feed.status_code == 422
    assert 'value="ftp://example.test/f"' in bad_feed.get_data(as_text=True)
    assert auth.post(page_of(campaign, ada) + "/feed", {"feed_url": "http://127.0.0.1:9/feed"})
    db_session.expire_all()
    ada = db_session.get(Character, ada.id)
    assert (ada.name, ada.aliases) == ("Ada Lovelace", ["Lovelace", "The Countess"])
    assert "Read from the feed http://127.0.0.1:9/feed" in client.get(
        page_of(campaign, ada)
    ).get_data(as_text=True)

    dropped = auth.post(page_of(campaign, bram) + "/drop", {"reason": "moved away"})
    assert dropped.status_code == 302
    db_session.expire_all()
    assert db_session.get(Character, bram.id).status == "outsider"
    audit = client.get(f"/c/{campaign.slug}/referee/audit").get_data(as_text=True)
    assert "ruled that Bram dropped out of the game, an outsider from now on (moved away)" in audit
    assert "renamed Ada to Ada Lovelace" in audit
    again = auth.post(page_of(campaign, bram) + "/drop", {"reason": ""})
    assert again.status_code == 409 and "Bram is already an outsider" in again.get_data(
        as_text=True
    )


def test_handing_a_character_to_a_new_player(client, auth, db_session, game, clock):
    campaign, referee, chars = game
    ada, bram = chars[0], chars[1]
    ada_player = ada.user_id
    auth.login(referee)
    busy = auth.post(page_of(campaign, bram) + "/player", {"member": str(ada_player)})
    assert busy.status_code == 409
    assert "already plays Ada" in busy.get_data(as_text=True)
    handed = auth.post(page_of(campaign, bram) + "/player", {"email": "newbram@example.test"})
    assert handed.status_code == 200
    assert handed.headers["Referrer-Policy"] == "no-referrer"
    link = LINK.search(handed.get_data(as_text=True)).group(1)
    db_session.expire_all()
    assert db_session.get(Character, bram.id).user_id is None
    invite = db_session.exec(select(Invite).where(Invite.character_id == bram.id)).one()
    assert invite.email == "newbram@example.test"
    (mail,) = invite_mails(db_session, "newbram@example.test")
    assert link in mail.body_text
    # The dropped player's former character can go to a member who plays nothing active.
    auth.post(page_of(campaign, ada) + "/drop", {"reason": ""})
    taken = auth.post(page_of(campaign, bram) + "/player", {"member": str(ada_player)})
    assert taken.status_code == 302
    db_session.expire_all()
    assert db_session.get(Character, bram.id).user_id == ada_player


def test_a_character_page_is_the_referees_only(client, auth, db_session, game):
    campaign, referee, chars = game
    auth.login(db_session.get(User, chars[0].user_id))
    assert client.get(page_of(campaign, chars[0])).status_code == 403
    assert auth.post(page_of(campaign, chars[1]) + "/drop", {"reason": "x"}).status_code == 403
    db_session.expire_all()
    assert db_session.get(Character, chars[1].id).status == "active"
    auth.logout()
    auth.login(referee)
    other = make_campaign(db_session, referee=referee)
    db_session.commit()
    assert client.get(page_of(other, chars[0])).status_code == 404
