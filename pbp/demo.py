"""`pbp demo`: campaigns for newcomers to look around in, seeded once per database.

The Noteworthy campaign: three characters blog on pbp's built-in blog; three keep "their
own" blogs, which the demo serves itself on loopback (a LiveJournal-style RSS with lj:mood, a
WordPress-style RSS with the mood in the body, an Atom feed), read through the real poller.
Four turns are played: two opening turns; a challenge with notes for and against, resolved
(so the history and its chart show an arc); and an open turn with a challenge in progress.

Beside it, two forum campaigns (see pbp.demo_forum): a Noir scene with dice rolls and a
whisper, and a Sex & Violence card table.
"""

from __future__ import annotations

import fcntl
import threading
from datetime import datetime, timedelta
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from xml.sax.saxutils import escape

import click
from flask import Flask
from sqlmodel import Session, select
from werkzeug.security import generate_password_hash

from adapters import Fetcher
from pbp import default_instance_path, demo_forum
from pbp.db import database, writing
from pbp.models import Blog, Campaign, Character, Entry, utcnow
from pbp.services import campaigns
from pbp.services.mail.settings import MailSettings
from pbp.services.noteworthy import hosted_blog, polling, turns

DEMO_NAME = "The Gilded Quill"
PASSWORD = "demo-password"
BUILTIN = [("Lady Vance", ["Vance"]), ("Doctor Ambrose Hale", ["Hale"]), ("Pip Calloway", ["Pip"])]
EXTERNAL = [
    ("Mirela Sokol", ["Mirela"], "mirela.xml", "lj"),
    ("Captain Ostrander", ["Ostrander"], "ostrander.xml", "wordpress"),
    ("Sister Agathe", ["Agathe"], "agathe.xml", "atom"),
]
EVENTS = [
    "A rival salon opens across the street, and someone leaks its guest list.",
    "The guest list turns out to be forged. Everyone suspects someone.",
    "At the masked ball, a letter is read aloud that ruins one reputation tonight.",
    "The Captain is gone with the tide; his empty chair at the salon draws every eye.",
]
MOODS = {
    1: ["Curious", "Smug", "Amused", "Wary", "Bold", "Devout"],
    2: ["Suspicious", "Indignant", "Gleeful", "Calculating", "Offended", "Serene"],
}


def instance_path() -> Path:
    """The demo's own instance folder (issue #27 item 8): the instance folder's name followed
    by `-demo` (instance/ -> instance-demo/), so a real install in the same place never
    serves the demo's campaigns and accounts, whose password is printed for anyone."""
    real = default_instance_path()
    return real.with_name(real.name + "-demo")


def feed_dir(app: Flask) -> Path:
    path = Path(app.instance_path) / "demo-feeds"
    path.mkdir(parents=True, exist_ok=True)
    return path


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


def single_instance_lock(app: Flask):
    """Hold `<instance>/demo.lock` while this demo runs; a second demo on the same instance
    folder is refused with one line (two would seed and poll the same database at once)."""
    path = Path(app.instance_path)
    path.mkdir(parents=True, exist_ok=True)
    handle = open(path / "demo.lock", "w")  # noqa: SIM115 - held until the demo ends
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        raise click.ClickException(
            f"a demo is already running on {path}; stop it first, or give this one its own "
            "folder with PBP_INSTANCE_PATH"
        ) from None
    return handle


def start_feed_server(app: Flask) -> ThreadingHTTPServer:
    """Serve the demo's "external" blogs on loopback (a stand-in for players' hosts), on a
    free port the system picks, so a demo never collides with another or with the tests."""
    handler = partial(_QuietHandler, directory=str(feed_dir(app)))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, args=(0.1,), daemon=True).start()
    return server


def logins() -> list[tuple[str, str]]:
    """Every demo account, as (email, who), for `pbp demo` to print."""
    people = [("referee@demo.invalid", f"referee of {DEMO_NAME}")]
    people += [
        (f"{aliases[0].lower()}@demo.invalid", f"plays {name}")
        for name, aliases, *_ in BUILTIN + EXTERNAL
    ]
    return people + demo_forum.logins()


def seed_all(app: Flask, feed_port: int) -> list[str]:
    """Every demo campaign, made unless it exists; returns their slugs, Noteworthy first."""
    slugs = [seed(app, feed_port)]
    with writing(), Session(database(app).engine, expire_on_commit=False) as session:
        slugs += demo_forum.seed(
            session,
            make_user=lambda email, name: _user(session, email, name),
            mail=MailSettings.from_config(app.config),
            now=utcnow().replace(microsecond=0),
        )
        session.commit()
    return slugs


def seed(app: Flask, feed_port: int) -> str:
    """Create the Noteworthy demo campaign unless it exists; return its slug. Feeds must
    be served on `feed_port` (see `start_feed_server`)."""
    with writing(), Session(database(app).engine, expire_on_commit=False) as session:
        existing = session.exec(select(Campaign).where(Campaign.name == DEMO_NAME)).first()
        if existing:
            _point_feeds_at(session, existing, feed_port)
            session.commit()
            return existing.slug
        campaign, chars = _cast(session, feed_port)
        session.commit()
    _play(app, campaign, chars)
    return campaign.slug


def _user(session: Session, email: str, name: str):
    user = campaigns.create_user(session=session, email=email, display_name=name)
    user.password_hash = generate_password_hash(PASSWORD)
    return user


def _cast(session: Session, feed_port: int):
    referee = _user(session, "referee@demo.invalid", "The Referee")
    campaign = campaigns.create_campaign(session=session, referee=referee, name=DEMO_NAME)
    chars = {}
    for name, aliases in BUILTIN:
        player = _user(session, f"{aliases[0].lower()}@demo.invalid", f"{name}'s player")
        chars[name] = campaigns.add_character(
            session=session, campaign=campaign, name=name, user=player, aliases=aliases
        )
    for name, aliases, filename, _ in EXTERNAL:
        player = _user(session, f"{aliases[0].lower()}@demo.invalid", f"{name}'s player")
        chars[name] = campaigns.add_character(
            session=session,
            campaign=campaign,
            name=name,
            user=player,
            aliases=aliases,
            feed_url=f"http://127.0.0.1:{feed_port}/{filename}",
        )
    return campaign, chars


def _point_feeds_at(session: Session, campaign: Campaign, feed_port: int) -> None:
    for blog_row in session.exec(
        select(Blog).join(Character).where(Character.campaign_id == campaign.id)
    ):
        if blog_row.kind == "external" and blog_row.feed_url:
            filename = blog_row.feed_url.rsplit("/", 1)[-1]
            blog_row.feed_url = f"http://127.0.0.1:{feed_port}/{filename}"
            session.add(blog_row)


def _play(app: Flask, campaign: Campaign, chars: dict[str, Character]) -> None:
    engine = database(app).engine
    start = utcnow().replace(microsecond=0) - timedelta(days=len(EVENTS) - 1, hours=12)
    external_items: dict[str, list[dict]] = {name: [] for name, *_ in EXTERNAL}
    fetcher = Fetcher(allow_private=True, connect_timeout=2, read_timeout=5)
    with fetcher, writing(), Session(engine, expire_on_commit=False) as session:
        blog_ids = {
            name: session.exec(select(Blog.id).where(Blog.character_id == chars[name].id)).one()
            for name, *_ in EXTERNAL
        }
        session.commit()  # no transaction may stay open while the poller writes
        for number, event in enumerate(EVENTS, start=1):
            opened = start + timedelta(days=number - 1)
            turns.post_event(session=session, campaign=campaign, text=event, actor=None, now=opened)
            session.commit()
            posted = _builtin_entries(session, chars, number, opened)
            for i, (name, _, filename, style) in enumerate(EXTERNAL):
                external_items[name].append(_external_item(name, number, opened, i))
                _write_feed(app, filename, style, name, external_items[name])
            session.commit()
            for name, *_ in EXTERNAL:
                polling.poll_blog(
                    engine=engine,
                    blog_id=blog_ids[name],
                    fetcher=fetcher,
                    now=opened + timedelta(hours=6),
                )
            _notes(session, chars, number, opened, posted)
            session.commit()
            if number < len(EVENTS):
                turns.close_turn(
                    session=session, campaign=campaign, actor=None, now=opened + timedelta(hours=23)
                )
                turns.resolve_turn(
                    session=session,
                    campaign=campaign,
                    actor=None,
                    now=opened + timedelta(hours=23, minutes=30),
                )
                session.commit()


CHALLENGES = {
    # turn: (challenger, target, title, body)
    3: (
        "Lady Vance",
        "Captain Ostrander",
        "An open letter to Captain Ostrander",
        "You read that letter aloud, Captain, and you knew it was forged. I challenge you: "
        "may you sail with the morning tide.",
    ),
    4: (
        "Pip Calloway",
        "Doctor Ambrose Hale",
        "A question for the good Doctor",
        "Doctor Hale prescribed the Captain a tonic the night before the ball. I challenge "
        "you, Doctor: tell the salon what was in it.",
    ),
}
NOTES = {
    3: (
        ("Doctor Ambrose Hale", "support", "The Captain has it coming."),
        ("Mirela Sokol", "support", "I saw him pocket the original."),
        ("Pip Calloway", "oppose", "Lady Vance forged it herself, surely."),
    ),
    4: (
        ("Lady Vance", "support", "A fair question, and he has not answered it."),
        ("Mirela Sokol", "oppose", "The Doctor was with me all evening."),
    ),
}


def _builtin_entries(session, chars, number: int, opened: datetime) -> dict[str, Entry]:
    posted = {}
    challenger, target, challenge_title, challenge_text = CHALLENGES.get(number, ("",) * 4)
    for i, (name, _) in enumerate(BUILTIN):
        if name == challenger:
            title, mood = challenge_title, "Challenging"
            body = f"Target: {target}\n\n{challenge_text}"
        else:
            title = f"{name.split()[-1]}'s notes on turn {number}"
            mood = MOODS.get(number, MOODS[2])[i]
            body = f"{name} considers the news: *{EVENTS[number - 1]}*"
        posted[name] = hosted_blog.store_entry(
            session=session,
            character=chars[name],
            title=title,
            body_markdown=body,
            mood=mood,
            now=opened + timedelta(hours=1 + i),
        )
    return posted


def _notes(session, chars, number: int, opened: datetime, posted: dict[str, Entry]) -> None:
    at = opened + timedelta(hours=8)
    if number not in CHALLENGES:
        hosted_blog.store_note(
            session=session,
            entry=posted["Lady Vance"],
            author=chars["Pip Calloway"],
            body_markdown="How very like you, my lady.",
            now=at,
        )
        return
    challenge = posted[CHALLENGES[number][0]]
    for name, stance, text in NOTES[number]:
        hosted_blog.store_note(
            session=session,
            entry=challenge,
            author=chars[name],
            stance=stance,
            body_markdown=text,
            now=at,
        )
        at += timedelta(minutes=30)


def _external_item(name: str, number: int, opened: datetime, index: int) -> dict:
    mood = MOODS.get(number, MOODS[2])[3 + index]
    return {
        "id": f"{name.lower().replace(' ', '-')}-{number}",
        "title": f"{name}: turn {number}",
        "mood": mood,
        "text": f"{name} writes about the news: {EVENTS[number - 1]}",
        "published": opened + timedelta(hours=2 + index),
    }


def _write_feed(app: Flask, filename: str, style: str, name: str, items: list[dict]) -> None:
    render = {"lj": _lj_rss, "wordpress": _wordpress_rss, "atom": _atom}[style]
    (feed_dir(app) / filename).write_text(render(name, items), encoding="utf-8")


def _rfc822(moment: datetime) -> str:
    return moment.strftime("%a, %d %b %Y %H:%M:%S +0000")


def _lj_rss(name: str, items: list[dict]) -> str:
    body = "".join(
        f"<item><guid isPermaLink='true'>https://demo.invalid/{i['id']}.html</guid>"
        f"<pubDate>{_rfc822(i['published'])}</pubDate><title>{escape(i['title'])}</title>"
        f"<link>https://demo.invalid/{i['id']}.html</link>"
        f"<description>{escape('<p>' + i['text'] + '</p>')}</description>"
        f"<lj:mood>{escape(i['mood'])}</lj:mood><lj:security>public</lj:security></item>"
        for i in reversed(items)
    )
    return (
        "<?xml version='1.0' encoding='utf-8'?><rss version='2.0' "
        "xmlns:lj='http://www.livejournal.org/rss/lj/1.0/'><channel>"
        f"<title>{escape(name)}</title><link>https://demo.invalid/</link>"
        f"<description>demo</description><generator>LiveJournal</generator>{body}"
        "</channel></rss>"
    )


def _wordpress_rss(name: str, items: list[dict]) -> str:
    body = "".join(
        f"<item><title>{escape(i['title'])}</title><link>https://demo.invalid/wp/{i['id']}/</link>"
        f"<guid isPermaLink='false'>https://demo.invalid/?p={i['id']}</guid>"
        f"<pubDate>{_rfc822(i['published'])}</pubDate><content:encoded>"
        f"{escape('<p><strong>Current mood:</strong> ' + i['mood'] + '</p><p>' + i['text'])}"
        f"{escape('</p>')}</content:encoded></item>"
        for i in reversed(items)
    )
    return (
        "<?xml version='1.0' encoding='utf-8'?><rss version='2.0' "
        "xmlns:content='http://purl.org/rss/1.0/modules/content/'><channel>"
        f"<title>{escape(name)}</title><link>https://demo.invalid/wp/</link>"
        f"<description>demo</description>"
        f"<generator>https://wordpress.org/?v=6.4</generator>{body}</channel></rss>"
    )


def _atom(name: str, items: list[dict]) -> str:
    body = "".join(
        f"<entry><id>tag:demo.invalid,2026:{i['id']}</id><title>{escape(i['title'])}</title>"
        f"<published>{i['published'].isoformat()}</published>"
        f"<updated>{i['published'].isoformat()}</updated>"
        f"<link href='https://demo.invalid/atom/{i['id']}'/>"
        f"<content type='html'>{escape('<p>Current mood: ' + i['mood'] + '</p>')}"
        f"{escape('<p>' + i['text'] + '</p>')}</content></entry>"
        for i in reversed(items)
    )
    updated = items[-1]["published"].isoformat()
    return (
        "<?xml version='1.0' encoding='utf-8'?><feed xmlns='http://www.w3.org/2005/Atom'>"
        f"<title>{escape(name)}</title><id>tag:demo.invalid,2026:{escape(name)}</id>"
        f"<updated>{updated}</updated><author><name>{escape(name)}</name></author>"
        f"{body}</feed>"
    )
