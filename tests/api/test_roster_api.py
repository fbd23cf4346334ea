"""Getting people in through the API: open invitations with their links, a re-send, and
the referee's changes to a character (the same services as the pages)."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlmodel import select

from pbp.models import AuditLog, Character, OutboxMessage
from pbp.services.accounts import logins as accounts

SECRET = "test-secret-key-" + "x" * 32  # tests/conftest.py's app


def mails(db_session, to):
    return list(
        db_session.exec(
            select(OutboxMessage)
            .where(OutboxMessage.kind == "invite", OutboxMessage.recipient == to)
            .order_by(OutboxMessage.id)
        )
    )


def test_invitations_listed_with_their_links_and_resent(api, world, db_session):
    # The API reads the real clock, so the invitations are made on it.
    referee = world.users["referee"]
    issued = accounts.create_invite(
        session=db_session, campaign=world.campaign, created_by=referee, secret_key=SECRET,
        base_url="http://pbp.test", now=datetime.now(UTC), email="pip@example.test",
        character=world.characters["Cleo"], mail_from="pbp <pbp@localhost>",
    )  # fmt: skip
    bare = accounts.create_invite(
        session=db_session, campaign=world.campaign, created_by=referee, secret_key=SECRET,
        base_url="http://pbp.test", now=datetime.now(UTC),
    )  # fmt: skip
    db_session.commit()
    token = world.tokens["referee"]
    listed = api.get(f"/campaigns/{world.slug}/invites", token=token).get_json()
    by_id = {i["id"]: i for i in listed["items"]}
    assert by_id[issued.invite.id]["url"] == issued.url
    assert by_id[issued.invite.id]["character"] == "cleo"
    assert by_id[bare.invite.id]["email"] is None

    sent = api.post(f"/campaigns/{world.slug}/invites/{issued.invite.id}/resend", token=token)
    assert sent.status_code == 200 and sent.get_json()["url"] == issued.url
    assert len(mails(db_session, "pip@example.test")) == 2

    refused = api.post(f"/campaigns/{world.slug}/invites/{bare.invite.id}/resend", token=token)
    assert refused.status_code == 422
    assert "names no email address" in refused.get_json()["detail"]


def character(world, slug, what):
    return f"/campaigns/{world.slug}/characters/{slug}/{what}"


def test_the_referee_changes_characters_through_the_api(api, world, db_session):
    token = world.tokens["referee"]
    renamed = api.post(character(world, "cleo", "name"), token=token, json={"name": "Cleopatra"})
    assert renamed.status_code == 200
    assert (renamed.get_json()["name"], renamed.get_json()["slug"]) == ("Cleopatra", "cleo")
    taken = api.post(character(world, "cleo", "name"), token=token, json={"name": "Ada"})
    assert taken.status_code == 409 and "already a character" in taken.get_json()["detail"]

    aliases = api.post(character(world, "cleo", "aliases"), token=token,
                       json={"aliases": ["Cleo", " The Queen "]})  # fmt: skip
    assert aliases.get_json()["aliases"] == ["Cleo", "The Queen"]

    bad = api.post(character(world, "dov", "feed"), token=token,
                   json={"feed_url": "ftp://example.test/feed"})  # fmt: skip
    assert bad.status_code == 422 and bad.get_json()["detail"]
    feed = api.post(character(world, "dov", "feed"), token=token,
                    json={"feed_url": "http://127.0.0.1:9/dov.xml"})  # fmt: skip
    assert feed.get_json()["blog"] == {
        "kind": "external", "feed_url": "http://127.0.0.1:9/dov.xml", "home_url": None,
    }  # fmt: skip

    dropped = api.post(character(world, "eli", "drop"), token=token, json={"reason": "left"})
    assert dropped.get_json()["status"] == "outsider"
    again = api.post(character(world, "eli", "drop"), token=token, json={"reason": ""})
    assert again.status_code == 409
    audit = db_session.exec(select(AuditLog).where(AuditLog.action == "character.dropped")).one()
    assert audit.detail == {"character_id": world.characters["Eli"].id, "reason": "left"}


def test_handing_over_through_the_api(api, world, db_session):
    token = world.tokens["referee"]
    bram_player = world.users["other_player"]
    busy = api.post(character(world, "fay", "player"), token=token,
                    json={"member_id": bram_player.id})  # fmt: skip
    assert busy.status_code == 409 and "already plays Bram" in busy.get_json()["detail"]
    stranger = api.post(character(world, "fay", "player"), token=token,
                        json={"member_id": world.users["stranger"].id})  # fmt: skip
    assert stranger.status_code == 422
    handed = api.post(character(world, "bram", "player"), token=token,
                      json={"email": "new@example.test"})  # fmt: skip
    body = handed.get_json()
    assert handed.status_code == 200 and body["invite"]["character"] == "bram"
    (mail,) = mails(db_session, "new@example.test")
    assert body["invite"]["url"] in mail.body_text
    db_session.expire_all()
    assert db_session.get(Character, world.characters["Bram"].id).user_id is None
    # Bram's former player plays nothing now, so they may take Fay.
    taken = api.post(character(world, "fay", "player"), token=token,
                     json={"member_id": bram_player.id})  # fmt: skip
    assert taken.status_code == 200 and taken.get_json()["invite"] is None
    db_session.expire_all()
    assert db_session.get(Character, world.characters["Fay"].id).user_id == bram_player.id


def test_the_roster_says_push_or_poll_per_feed(api, world, db_session):
    """A WebSub hub pushes Ada's feed; Bram's is polled (pbp.services.noteworthy.websub)."""
    from pbp.models import WebSubSubscription
    from pbp.services.noteworthy import blog_settings

    ada, bram = (world.characters[name] for name in ("Ada", "Bram"))
    pushed_at = datetime(2026, 7, 1, 8, 0, tzinfo=UTC)
    polled_at = datetime(2026, 7, 1, 7, 0, tzinfo=UTC)
    for character, when in ((ada, None), (bram, polled_at)):
        blog = blog_settings.blog_of(session=db_session, character=character)
        blog.kind, blog.feed_url = "external", f"https://{character.slug}.example/feed/"
        blog.last_success_at = when
        db_session.add(blog)
    db_session.flush()
    ada_blog = blog_settings.blog_of(session=db_session, character=ada)
    db_session.add(
        WebSubSubscription(
            blog_id=ada_blog.id, hub_url="https://hub.example/", topic_url=ada_blog.feed_url,
            secret="s" * 64, state="active", last_delivery_at=pushed_at,
        )
    )  # fmt: skip
    db_session.commit()

    rows = api.get(f"/campaigns/{world.slug}/roster", token=world.tokens["referee"]).get_json()
    feeds = {row["character"]["name"]: row["feed"] for row in rows["items"]}

    assert feeds["Ada"]["delivery"] == "push"
    assert feeds["Ada"]["last_delivery_at"].startswith("2026-07-01T08:00")
    assert feeds["Bram"]["delivery"] == "poll"
    assert feeds["Bram"]["last_delivery_at"].startswith("2026-07-01T07:00")
    assert feeds["Cleo"] is None  # the built-in blog: nothing to deliver
