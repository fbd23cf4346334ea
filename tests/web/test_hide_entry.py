"""Issue #27 item 2 on the pages: "Hide my entry" on the entry's page, while its turn is
open; then only its author and the referee see it, the referee on the dashboard and on
the entry's page with every version; a double click hides it once."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlmodel import select

from pbp.models import AuditLog, Entry, User
from pbp.services.noteworthy import hosted_blog, turns
from tests.helpers import T0, Clock

TOKEN = "a-one-time-hide-form-token-001"


@pytest.fixture
def played(app, game, db_session):
    """Turn 1 open; Ada wrote "MKSECRET plans" (then edited it) and Bram noted it."""
    app.config["PBP_CLOCK"] = clock = Clock(T0 + timedelta(hours=1))
    campaign, referee, (ada, bram, cleo, *_) = game
    turns.post_event(session=db_session, campaign=campaign, text="Go.", actor=None, now=T0)
    entry = hosted_blog.store_entry(
        session=db_session,
        character=ada,
        title="MKSECRET plans",
        body_markdown="First draft MKDRAFT.",
        mood="Calm",
        now=T0 + timedelta(minutes=10),
    )
    hosted_blog.edit_entry(
        session=db_session,
        actor=db_session.get(User, ada.user_id),
        campaign=campaign,
        entry_id=entry.id,
        title="MKSECRET plans",
        mood="Calm",
        body="Second draft.",
        now=T0 + timedelta(minutes=20),
        mail=None,
    )
    hosted_blog.store_note(
        session=db_session,
        entry=entry,
        author=bram,
        body_markdown="MKNOTE nice.",
        now=T0 + timedelta(minutes=30),
    )
    db_session.commit()
    return campaign, referee, (ada, bram, cleo), entry, clock


def _as(auth, db_session, who):
    auth.logout()
    if who is not None:
        auth.login(who if isinstance(who, User) else db_session.get(User, who.user_id))


def _url(campaign, ada, entry, tail=""):
    return f"/c/{campaign.slug}/{ada.slug}/{entry.id}{tail}"


def test_the_author_hides_it_from_the_entry_page(client, auth, db_session, played):
    campaign, _, (ada, *_), entry, _ = played
    _as(auth, db_session, ada)
    page = client.get(_url(campaign, ada, entry)).get_data(as_text=True)
    assert "Hide my entry" in page and f'action="{_url(campaign, ada, entry, "/hide")}"' in page
    answer = auth.post(_url(campaign, ada, entry, "/hide"), {})
    assert answer.status_code == 302 and answer.headers["Location"].endswith(
        _url(campaign, ada, entry)
    )
    db_session.refresh(entry)
    assert entry.hidden_at is not None
    page = client.get(_url(campaign, ada, entry)).get_data(as_text=True)
    assert "Entry hidden" in page and "Hidden by its author" in page
    assert "Hide my entry" not in page and "Post note" not in page
    assert "MKDRAFT" not in page  # the earlier versions are the referee's page only
    assert db_session.exec(select(AuditLog).where(AuditLog.action == "entry.hidden")).one()


@pytest.mark.parametrize("who", ["other player", "visitor"])
def test_nobody_else_finds_it_anywhere(client, auth, db_session, played, who):
    campaign, _, (ada, bram, _), entry, _ = played
    _as(auth, db_session, ada)
    assert auth.post(_url(campaign, ada, entry, "/hide"), {}).status_code == 302
    _as(auth, db_session, bram if who == "other player" else None)
    assert client.get(_url(campaign, ada, entry)).status_code == 404
    for url in (
        f"/c/{campaign.slug}/",
        f"/c/{campaign.slug}/{ada.slug}/",
        f"/c/{campaign.slug}/turns/1",
        f"/c/{campaign.slug}/feed.atom",
        f"/c/{campaign.slug}/{ada.slug}/feed.atom",
        f"/c/{campaign.slug}/{ada.slug}/comments.atom",
    ):
        page = client.get(url)
        assert page.status_code == 200, url
        text = page.get_data(as_text=True)
        assert "MKSECRET" not in text and "MKNOTE" not in text, url


def test_the_referee_sees_it_with_every_version(client, auth, db_session, played):
    campaign, referee, (ada, *_), entry, _ = played
    _as(auth, db_session, ada)
    auth.post(_url(campaign, ada, entry, "/hide"), {})
    _as(auth, db_session, referee)
    board = client.get(f"/c/{campaign.slug}/referee/").get_data(as_text=True)
    assert "Hidden by their authors (1)" in board and "MKSECRET plans" in board
    page = client.get(_url(campaign, ada, entry)).get_data(as_text=True)
    assert "Hidden by its author" in page and "only Ada and the referee see it" in page
    assert "Every version pbp kept (2)" in page and "MKDRAFT" in page and "MKNOTE" in page
    audit = client.get(f"/c/{campaign.slug}/referee/audit").get_data(as_text=True)
    assert "hid Ada&#39;s entry" in audit or "hid Ada's entry" in audit


def test_a_closed_turns_entry_is_refused_beside_its_form(client, auth, db_session, played):
    campaign, _, (ada, *_), entry, clock = played
    turns.close_turn(session=db_session, campaign=campaign, actor=None, now=clock.now)
    db_session.commit()
    _as(auth, db_session, ada)
    assert "Hide my entry" not in client.get(_url(campaign, ada, entry)).get_data(as_text=True)
    page = auth.post(_url(campaign, ada, entry, "/hide"), {})
    assert page.status_code == 422
    assert "only while its turn is open" in page.get_data(as_text=True)
    db_session.refresh(entry)
    assert entry.hidden_at is None


def test_another_players_hide_is_forbidden(client, auth, db_session, played):
    campaign, _, (ada, bram, _), entry, _ = played
    _as(auth, db_session, bram)
    assert "Hide my entry" not in client.get(_url(campaign, ada, entry)).get_data(as_text=True)
    assert auth.post(_url(campaign, ada, entry, "/hide"), {}).status_code == 403
    db_session.refresh(entry)
    assert entry.hidden_at is None


def test_a_double_click_hides_it_once(client, auth, db_session, played):
    """The second press is answered as the first, not refused as "you hid this entry"."""
    campaign, _, (ada, *_), entry, _ = played
    _as(auth, db_session, ada)
    first = auth.post(_url(campaign, ada, entry, "/hide"), {"form_token": TOKEN})
    second = auth.post(_url(campaign, ada, entry, "/hide"), {"form_token": TOKEN})
    assert first.status_code == second.status_code == 302
    assert second.headers.get("Form-Replayed") == "true"
    audits = db_session.exec(select(AuditLog).where(AuditLog.action == "entry.hidden")).all()
    assert len(audits) == 1
    assert db_session.exec(select(Entry.hidden_at).where(Entry.id == entry.id)).one()
