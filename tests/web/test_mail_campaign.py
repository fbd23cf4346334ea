"""A played campaign delivers note and challenge mails to the right players.

Five players: three write on pbp's built-in blog (through the pages and the API), two on
their own WordPress blogs served by a real loopback HTTP server and read by the real
poller (`poll_once`, as the scheduler runs it). The mail leaves over a real SMTP server.
Everything commits (the poller opens its own connections), so the campaign is deleted
afterwards, as in tests/services/noteworthy/test_polling.py.
"""

from __future__ import annotations

import uuid
from collections import Counter
from datetime import timedelta
from email.utils import format_datetime

import pytest
import sqlalchemy as sa
from sqlmodel import Session, select

from pbp import create_app
from pbp.models import Blog, Campaign, Character, Entry, OutboxMessage, utcnow
from pbp.services import campaigns
from pbp.services.accounts import tokens as api_tokens
from pbp.services.mail.send import SmtpTransport, send_pending
from pbp.services.noteworthy import polling, turns
from tests.feedserver import FeedServer
from tests.helpers import Api, AuthActions, wire
from tests.smtpserver import SmtpServer

RSS = """<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/"
 xmlns:wfw="http://wellformedweb.org/CommentAPI/" xmlns:dc="http://purl.org/dc/elements/1.1/"
 xmlns:slash="http://purl.org/rss/1.0/modules/slash/">
<channel><title>{name}</title><link>{base}/{slug}/</link><description>d</description>
{items}
</channel></rss>"""
ITEM = """<item><title>{title}</title><link>{base}/{slug}/{n}/</link>
<dc:creator><![CDATA[{name}]]></dc:creator><pubDate>{date}</pubDate>
<guid isPermaLink="false">{base}/{slug}/?p={n}</guid>
<content:encoded><![CDATA[<p><strong>Current mood:</strong> {mood}</p>
<p>{body}</p>]]></content:encoded>
<wfw:commentRss>{base}/{slug}/{n}/feed/</wfw:commentRss><slash:comments>{count}</slash:comments>
</item>"""
COMMENT = """<item><title>By: {author}</title><link>{base}/{slug}/{n}/#comment-{c}</link>
<dc:creator><![CDATA[{author}]]></dc:creator><pubDate>{date}</pubDate>
<guid isPermaLink="false">{base}/{slug}/?p={n}#comment-{c}</guid>
<content:encoded><![CDATA[<p>{text}</p>]]></content:encoded></item>"""


class Blogger:
    """One character's WordPress blog on the loopback server: entries and their comments."""

    def __init__(self, server: FeedServer, name: str):
        self.server, self.name, self.slug = server, name, name.lower()
        self.entries: list[dict] = []

    @property
    def feed_url(self) -> str:
        return self.server.url(f"/{self.slug}/feed/")

    def write(self, title, body, mood, when, comments=()):
        self.entries.append(dict(title=title, body=body, mood=mood, when=when, comments=comments))
        self.publish()

    def publish(self) -> None:
        base = self.server.base_url
        items = []
        for n, e in enumerate(self.entries, start=1):
            items.append(
                ITEM.format(
                    base=base,
                    slug=self.slug,
                    n=n,
                    name=self.name,
                    title=e["title"],
                    body=e["body"],
                    mood=e["mood"],
                    date=format_datetime(e["when"]),
                    count=len(e["comments"]),
                )
            )
            comments = "".join(
                COMMENT.format(
                    base=base,
                    slug=self.slug,
                    n=n,
                    c=c,
                    author=author,
                    text=text,
                    date=format_datetime(e["when"] + timedelta(minutes=c)),
                )
                for c, (author, text) in enumerate(e["comments"], start=1)
            )
            self.server.add(
                f"/{self.slug}/{n}/feed/",
                body=RSS.format(name=self.name, base=base, slug=self.slug, items=comments).encode(),
                content_type="application/rss+xml",
            )
        feed = RSS.format(name=self.name, base=base, slug=self.slug, items="".join(items))
        self.server.add(
            f"/{self.slug}/feed/", body=feed.encode(), content_type="application/rss+xml"
        )


@pytest.fixture
def played(engine, database_url, tmp_path, server):
    """The committed campaign, its app (the real database, no test transaction) and the
    people; deleted afterwards."""
    app = create_app(
        {
            "TESTING": True,
            "INSTANCE_PATH": tmp_path / "instance",
            "SECRET_KEY": "campaign-secret-" + "x" * 32,
            "DATABASE_URL": database_url,
            "ENGINE": engine,
            "PBP_ALLOW_PRIVATE_FEEDS": True,
            "PBP_BASE_URL": "http://pbp.test",
            "PBP_PAGE_RECHECK_SECONDS": 0,
        }
    )
    wire(app)
    tag = uuid.uuid4().hex[:8]
    start = utcnow() - timedelta(hours=3)
    blogs = {name: Blogger(server, name) for name in ("Marsh", "Wick")}
    with Session(engine, expire_on_commit=False) as session:
        client = app.test_client()
        auth = AuthActions(client, session)
        referee = auth.create_user(email=f"ref-{tag}@played.test", display_name="Rita")
        campaign = campaigns.create_campaign(
            session=session,
            referee=referee,
            name=f"Played {tag}",
            settings={"opening_turns": 0},
        )
        people, characters = {}, {}
        for name in ("Ada", "Bram", "Cleo", "Marsh", "Wick"):
            people[name] = auth.create_user(email=f"{name.lower()}-{tag}@played.test")
            feed = blogs[name].feed_url if name in blogs else None
            characters[name] = campaigns.add_character(
                session=session, campaign=campaign, name=name, user=people[name], feed_url=feed
            )
        turns.post_event(
            session=session, campaign=campaign, text="The ball.", actor=None, now=start
        )
        tokens = {
            name: api_tokens.create_token(
                session=session, user=user, name="play", scope="write", now=start
            ).text
            for name, user in people.items()
        }
        session.commit()
        yield dict(
            app=app,
            client=client,
            auth=auth,
            api=Api(client),
            campaign=campaign,
            people=people,
            characters=characters,
            tokens=tokens,
            blogs=blogs,
            start=start,
            session=session,
        )
    with Session(engine) as session:
        session.execute(sa.delete(Campaign).where(Campaign.id == campaign.id))
        session.commit()


def _outbox(engine, campaign, kind):
    with Session(engine) as session:
        rows = session.exec(
            select(OutboxMessage)
            .where(OutboxMessage.campaign_id == campaign.id, OutboxMessage.kind == kind)
            .order_by(OutboxMessage.id)
        )
        return [(row.recipient, row.subject, row.body_text) for row in rows]


def _force_due(engine, campaign) -> None:
    with Session(engine) as session:
        ids = (
            select(Blog.id)
            .join(Character, Character.id == Blog.character_id)
            .where(Character.campaign_id == campaign.id)
        )
        session.execute(sa.update(Blog).where(Blog.id.in_(ids)).values(next_poll_at=None))
        session.commit()


def test_a_played_campaign_mails_notes_and_challenges_to_the_right_players(engine, played):
    g = played
    slug, people, chars = g["campaign"].slug, g["people"], g["characters"]
    email = {name: user.email for name, user in people.items()}
    api, auth, tokens = g["api"], g["auth"], g["tokens"]

    def login(name):
        auth.logout()
        auth.login(people[name])

    # Cleo wants no mail about notes on her entries (the preferences page).
    login("Cleo")
    on = ["events", "challenges", "forum"]
    assert auth.post(f"/c/{slug}/me/mail", {"on": on}).status_code == 302

    # Built-in blog: Ada writes on the page, Cleo through the API, Bram challenges Marsh.
    login("Ada")
    form = {"title": "A waltz", "mood": "Merry", "body": "I dance.", "target": ""}
    assert auth.post(f"/c/{slug}/write", form).status_code == 302
    cleo_entry = api.post(
        f"/campaigns/{slug}/entries",
        token=tokens["Cleo"],
        json={"title": "Cards", "body": "I deal.", "mood": "Sly"},
    ).get_json()
    challenge = api.post(
        f"/campaigns/{slug}/entries",
        token=tokens["Bram"],
        json={
            "title": "Marsh lies",
            "body": "He was not there.",
            "mood": "Challenging",
            "target_id": chars["Marsh"].id,
        },
    ).get_json()

    # External blogs: Marsh challenges Ada; three commenters note it, and Wick writes.
    before = g["start"] + timedelta(hours=1)
    g["blogs"]["Marsh"].write(
        "The carriage",
        "Target: Ada. She took the Duke's carriage.",
        "Challenging",
        before,
        comments=[("Bram", "Support."), ("Cleo", "Oppose. Nonsense."), ("Wick", "Who knows?")],
    )
    g["blogs"]["Wick"].write("Tea", "Milk first.", "Calm", before)
    outcomes = polling.poll_once(g["app"], slug=slug)
    assert sorted(o.status for o in outcomes) == ["ok", "ok"]
    assert sum(o.report.new_notes for o in outcomes) == 3

    # Notes on pbp: Cleo on Ada's entry (page), Wick backs Bram's challenge (API), Ada on
    # Cleo's entry (Cleo said no), Ada on her own entry (never mailed).
    with Session(engine) as session:
        ada_entry = session.exec(select(Entry).where(Entry.title == "A waltz")).one()
    login("Cleo")
    page = auth.post(
        f"/c/{slug}/{chars['Ada'].slug}/{ada_entry.id}/notes", {"body": "Lovely.", "stance": "none"}
    )
    assert page.status_code == 302
    for who, entry_id, body in (
        ("Wick", challenge["id"], {"body": "Quite right.", "stance": "support"}),
        ("Ada", cleo_entry["id"], {"body": "You cheat."}),
        ("Ada", ada_entry.id, {"body": "Thank you all."}),
    ):
        answer = api.post(
            f"/campaigns/{slug}/entries/{entry_id}/notes", token=tokens[who], json=body
        )
        assert answer.status_code == 201, answer.get_json()

    # A second pass: Marsh edits his challenge and Bram comments once more.
    marsh = g["blogs"]["Marsh"]
    marsh.entries[0]["body"] = "Target: Ada. She took the Duke's carriage, twice."
    marsh.entries[0]["comments"] = [*marsh.entries[0]["comments"], ("Bram", "Still support.")]
    marsh.publish()
    _force_due(engine, g["campaign"])
    outcomes = polling.poll_once(g["app"], slug=slug)
    assert sum(o.report.new_notes for o in outcomes) == 1
    assert sum(o.report.changed_entries for o in outcomes) == 1

    challenges = _outbox(engine, g["campaign"], "challenge")
    notes = _outbox(engine, g["campaign"], "note")
    assert sorted(r for r, _, _ in challenges) == sorted([email["Marsh"], email["Ada"]])
    assert Counter(r for r, _, _ in notes) == {email["Marsh"]: 2, email["Ada"]: 1, email["Bram"]: 1}
    first_batch = next(body for r, _, body in notes if r == email["Marsh"])
    assert "3 new notes" in first_batch and "Oppose. Nonsense." in first_batch

    with SmtpServer() as smtp:
        send_pending(
            engine_or_sessionmaker=engine,
            transport=SmtpTransport(smtp.host, smtp.port, timeout=10),
            now=utcnow(),
        )
        received = Counter(r for r in smtp.recipients() if r.endswith("@played.test"))
    print(f"\nplayed campaign: {len(challenges)} challenge mails, {len(notes)} note mails")
    assert received == {
        email["Marsh"]: 3,  # Bram's challenge, two batches of notes
        email["Ada"]: 2,  # Marsh's challenge, Cleo's note
        email["Bram"]: 1,  # Wick's note on his challenge
    }
