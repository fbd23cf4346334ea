"""Webmention (W3C), issue #31 item 4, against real loopback sites (tests/webmentionserver.py):
pbp's endpoint takes a mention, a job verifies its source through the SSRF-guarded fetcher,
and the mention is a note, credited like other commenters; pbp's built-in entries send
mentions for their links. The round trip that Bridgy Fed makes with Mastodon is played
against a loopback "Bridgy": pbp mentions it, it answers with a reply's mention."""

from __future__ import annotations

import html
from datetime import UTC, datetime, timedelta

import pytest
from sqlmodel import select

from adapters.fetch import Fetcher
from pbp.models import Note, ReceivedMention, SentMention, Turn, User
from pbp.services.mail.settings import MailSettings
from pbp.services.noteworthy import commenters, hosted_blog, webmentions
from pbp.services.noteworthy import tally as tally_service
from tests.factories import make_campaign, make_characters, make_user
from tests.webmentionserver import MentionSite

NOW = datetime(2026, 5, 1, 13, 0, tzinfo=UTC)
LATER = NOW + timedelta(minutes=30)


@pytest.fixture
def site():
    with MentionSite() as server:
        yield server


@pytest.fixture
def fetcher():
    with Fetcher(allow_private=True, connect_timeout=2, read_timeout=2, total_timeout=5) as f:
        yield f


@pytest.fixture
def guarded():
    """The production policy: no loopback or private addresses."""
    with Fetcher(allow_private=False, connect_timeout=2, read_timeout=2, total_timeout=5) as f:
        yield f


@pytest.fixture
def game(app, db_session):
    campaign = make_campaign(db_session, referee=make_user(db_session, "Referee"))
    chars = make_characters(db_session, campaign, names=("Ada", "Bram", "Cleo", "Dov"))
    db_session.add(Turn(campaign_id=campaign.id, number=3, opened_at=NOW - timedelta(hours=1)))
    db_session.flush()
    return campaign, chars


def _settings(app) -> MailSettings:
    return MailSettings.from_config(app.config)


def _write(app, session, campaign, who, *, body="Words.", mood="Calm", target=None):
    entry = hosted_blog.write_entry(
        session=session,
        actor=session.get(User, who.user_id),
        campaign=campaign,
        title="The ledger",
        mood=mood,
        body=body,
        target_id=target.id if target else None,
        now=NOW,
        mail=_settings(app),
    )
    session.commit()
    return entry


def _entry_url(app, campaign, who, entry) -> str:
    return f"{app.config['PBP_BASE_URL']}/c/{campaign.slug}/{who.slug}/{entry.id}"


def _reply_page(target: str, text: str, author="Bram", author_url=None) -> str:
    card = f'<a class="p-author h-card" href="{author_url}">{author}</a>' if author_url else ""
    return (
        f'<html><head><title>a reply</title></head><body><article class="h-entry">{card}'
        f'<div class="e-content"><p>{text}</p><p>In reply to <a class="u-in-reply-to" '
        f'href="{target}">this</a>.</p></div></article><footer>© me</footer></body></html>'
    )


def _mention(client, source: str, target: str):
    return client.post("/webmention", data={"source": source, "target": target})


def test_pages_advertise_the_endpoint_and_carry_microformats(app, client, db_session, game):
    campaign, (ada, *_) = game
    entry = _write(app, db_session, campaign, ada)
    for url in (f"/c/{campaign.slug}/", f"/c/{campaign.slug}/{ada.slug}/{entry.id}"):
        page = client.get(url)
        assert page.status_code == 200
        assert 'rel="webmention"' in page.headers.get("Link", "")
        html = page.get_data(as_text=True)
        assert '<link rel="webmention" href="http://pbp.test/webmention">' in html
        for name in ("h-entry", "p-author h-card", "e-content", "dt-published"):
            assert name in html, (url, name)
    assert "h-feed" in client.get(f"/c/{campaign.slug}/").get_data(as_text=True)


def test_a_mention_from_a_loopback_blog_is_a_note_that_counts_in_the_tally(
    app, client, db_session, game, site, fetcher
):
    """Noteworthy: "Each PC still in the game (except the challenger and target) may ...
    note clear support or opposition to the challenge." Bram's reply on his own blog, sent
    as a Webmention, is his supporting note: its address lies under the one he declared."""
    campaign, (ada, bram, cleo, _dov) = game
    duel = _write(app, db_session, campaign, ada, mood="Challenging", target=cleo)
    commenters.declare(
        session=db_session, character=bram, uris=[site.url("/bram")], now=NOW, actor=None
    )
    db_session.commit()
    target = _entry_url(app, campaign, ada, duel)
    source = site.page("/bram/2026/reply", _reply_page(target, "Support. Ada is right."))

    answer = _mention(client, source, target)
    assert answer.status_code == 202, answer.get_data(as_text=True)
    assert db_session.exec(select(Note).where(Note.entry_id == duel.id)).all() == []  # a job's

    webmentions.verify_received(session=db_session, fetcher=fetcher, now=LATER, mail=None)

    (note,) = db_session.exec(select(Note).where(Note.entry_id == duel.id)).all()
    assert note.author_character_id == bram.id and note.author_uri == source
    assert "Ada is right" in note.body_html and "© me" not in note.body_html
    turn = db_session.exec(select(Turn).where(Turn.campaign_id == campaign.id)).one()
    (live,) = tally_service.live_challenges(session=db_session, campaign=campaign, turn=turn)
    assert [p.character_id for p in live.supporters] == [bram.id]
    page = client.get(f"/c/{campaign.slug}/{ada.slug}/{duel.id}").get_data(as_text=True)
    assert "Ada is right" in page


def test_an_unknown_source_waits_for_the_referee_to_map_it(
    app, client, db_session, game, site, fetcher
):
    campaign, (ada, bram, *_) = game
    entry = _write(app, db_session, campaign, ada)
    target = _entry_url(app, campaign, ada, entry)
    source = site.page(
        "/someone/1", _reply_page(target, "Who is this?", "Zed", "https://zed.test/")
    )
    assert _mention(client, source, target).status_code == 202
    webmentions.verify_received(session=db_session, fetcher=fetcher, now=LATER, mail=None)
    (note,) = db_session.exec(select(Note).where(Note.entry_id == entry.id)).all()
    assert note.author_character_id is None and note.author_name == "Zed"
    commenters.map_commenter(
        session=db_session, campaign=campaign, character=bram, kind="uri", value=source
    )
    db_session.refresh(note)
    assert note.author_character_id == bram.id


def test_a_source_that_does_not_link_to_the_target_is_refused_and_its_note_goes(
    app, client, db_session, game, site, fetcher
):
    campaign, (ada, *_) = game
    entry = _write(app, db_session, campaign, ada)
    target = _entry_url(app, campaign, ada, entry)
    source = site.page("/post", _reply_page(target, "Linked."))
    _mention(client, source, target)
    webmentions.verify_received(session=db_session, fetcher=fetcher, now=LATER, mail=None)
    assert len(db_session.exec(select(Note).where(Note.entry_id == entry.id)).all()) == 1
    # The source drops the link and sends the mention again (W3C: an update).
    site.page("/post", "<html><body><p>No link any more.</p></body></html>")
    _mention(client, source, target)
    webmentions.verify_received(session=db_session, fetcher=fetcher, now=LATER, mail=None)
    assert db_session.exec(select(Note).where(Note.entry_id == entry.id)).all() == []
    (row,) = db_session.exec(select(ReceivedMention)).all()
    assert row.status == "refused" and "does not link" in (row.reason or "")


@pytest.mark.parametrize(
    "source, target, why",
    [
        ("{target}", "{target}", "the source is the target"),
        ("{target}#frag", "{target}", "the source is the target"),
        ("https://blog.test/1", "https://elsewhere.test/c/x/y/1", "not a page of this pbp"),
        ("https://blog.test/1", "http://pbp.test/c/{slug}/", "not an entry's page"),
        ("ftp://blog.test/1", "{target}", "http(s) address"),
        ("https://blog.test/1", "http://pbp.test/c/{slug}/nobody/{id}", "no such entry"),
    ],
)
def test_a_mention_is_refused_before_any_fetch(app, client, db_session, game, source, target, why):
    campaign, (ada, *_) = game
    entry = _write(app, db_session, campaign, ada)
    url = _entry_url(app, campaign, ada, entry)
    values = {"target": url, "slug": campaign.slug, "id": entry.id}
    answer = _mention(client, source.format(**values), target.format(**values))
    assert answer.status_code in (400, 404), answer.status_code
    assert why in html.unescape(answer.get_data(as_text=True))
    assert db_session.exec(select(ReceivedMention)).all() == []


def test_a_source_on_a_private_address_is_never_fetched(
    app, client, db_session, game, site, guarded
):
    """SSRF: a mention's source is a URL anyone chooses; the production fetcher refuses
    loopback and private addresses, and the site never sees a request."""
    campaign, (ada, *_) = game
    entry = _write(app, db_session, campaign, ada)
    target = _entry_url(app, campaign, ada, entry)
    for source in (
        site.page("/inside", _reply_page(target, "From inside.")),
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]:9/",
        "http://10.0.0.1/",
    ):
        assert _mention(client, source, target).status_code == 202
    webmentions.verify_received(session=db_session, fetcher=guarded, now=LATER, mail=None)
    rows = db_session.exec(select(ReceivedMention)).all()
    assert {r.status for r in rows} == {"refused"}
    assert all("could not be read" in (r.reason or "") for r in rows)
    assert site.requests == []
    assert db_session.exec(select(Note)).all() == []


def test_a_target_or_endpoint_on_a_private_address_is_never_contacted(
    app, db_session, game, site, guarded
):
    campaign, (ada, *_) = game
    target = site.page(
        "/page", "<html></html>", headers={"Link": f'<{site.endpoint}>; rel="webmention"'}
    )
    _write(app, db_session, campaign, ada, body=f"See [this]({target}).")
    for _ in range(webmentions.SEND_ATTEMPTS):
        webmentions.send_queued(
            session=db_session, fetcher=guarded, base_url="http://pbp.test", now=LATER
        )
    (row,) = db_session.exec(select(SentMention)).all()
    assert row.status == "failed" and site.requests == []


def test_built_in_entries_send_mentions_and_bridgy_brings_a_reply_back(
    app, client, db_session, game, site, fetcher
):
    """The round trip docs/feeds.md describes: an entry links to a page; pbp discovers its
    endpoint and mentions it (Bridgy Fed, so followers on Mastodon see the entry); a reply
    on Mastodon comes back as Bridgy's mention of the entry, which becomes its note."""
    campaign, (ada, bram, *_) = game
    profile = site.page(
        "/r/ada", "<html><head></head><body>Ada on the fediverse</body></html>",
        headers={"Link": f'<{site.endpoint}>; rel="webmention"'},
    )  # fmt: skip
    other = site.page(
        "/plain", f'<html><head><link rel="webmention" href="{site.endpoint}"></head></html>'
    )
    entry = _write(
        app, db_session, campaign, ada,
        body=f"Follow me [on Mastodon]({profile}); also [this]({other}) and [home](/c/x/).",
    )  # fmt: skip
    assert {r.target for r in db_session.exec(select(SentMention))} == {profile, other}

    webmentions.send_queued(
        session=db_session, fetcher=fetcher, base_url="http://pbp.test", now=LATER
    )

    source = _entry_url(app, campaign, ada, entry)
    assert sorted(site.received, key=lambda m: m["target"]) == sorted(
        [{"source": source, "target": profile}, {"source": source, "target": other}],
        key=lambda m: m["target"],
    )
    assert {r.status for r in db_session.exec(select(SentMention))} == {"sent"}
    # Bram replies on Mastodon; Bridgy Fed turns the reply into a page and mentions the entry.
    reply = site.page(
        "/convert/web/mastodon.test/@bram/1",
        _reply_page(source, "Lovely entry!", "Bram", "https://mastodon.test/@bram"),
    )
    assert _mention(client, reply, source).status_code == 202
    webmentions.verify_received(session=db_session, fetcher=fetcher, now=LATER, mail=_settings(app))
    (note,) = db_session.exec(select(Note).where(Note.entry_id == entry.id)).all()
    assert "Lovely entry!" in note.body_html and note.author_name == "Bram"
    # An edit that keeps the links sends nothing twice.
    hosted_blog.edit_entry(
        session=db_session, actor=db_session.get(User, ada.user_id), campaign=campaign,
        entry_id=entry.id, title="The ledger", mood="Calm",
        body=f"Follow me [on Mastodon]({profile}) (edited).", now=LATER, mail=_settings(app),
    )  # fmt: skip
    assert len(db_session.exec(select(SentMention)).all()) == 2
