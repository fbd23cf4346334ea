"""Nobody sees through any page what the rules hide from them: every GET page the forum
blueprint serves (the front page, threads, roll pages, post pages, sheets, the export and
the feed) is fetched as the GM, the author, another player, a stranger and a visitor, and
checked for GM-only posts, whispers, hidden roll results, deleted posts' text and the
campaign seed."""

from __future__ import annotations

import itertools

import pytest
from sqlmodel import select

from pbp.models.forum import Post, Roll, Thread
from pbp.services.forum import rolls
from pbp.services.forum.posts import delete_post
from pbp.web import forum as forum_web
from tests.services.forum.tables import T0, make_table, write


@pytest.fixture
def app(app):
    if "forum" not in app.blueprints:
        app.register_blueprint(forum_web.bp)
    return app


@pytest.fixture
def table(auth, db_session):
    users = [auth.create_user(display_name=n) for n in ("Gail GM", "Ann", "Ben", "Cat", "Stan")]
    return make_table(db_session, users=users)


@pytest.fixture
def play(db_session, table):
    """A scene with one of everything that must stay hidden from someone."""
    opening = write(db_session, table, table.gm, "The rain on Water Street.\n/roll 2d6 # weather")
    thread = db_session.get(Thread, opening.thread_id)
    posts = {
        "gm_only": write(
            db_session,
            table,
            table.ada_user,
            "GMSECRET I am the mole.\n/roll 3d6 # MOLEROLL",
            thread=thread,
            audience="gm",
            minutes=1,
        ),
        "whisper": write(
            db_session,
            table,
            table.ada_user,
            "WHISPERSECRET meet me at midnight.\n/roll d100",
            thread=thread,
            audience="whisper",
            recipient_ids=(table.bram_user.id,),
            minutes=2,
        ),
        "gm_roll": write(
            db_session,
            table,
            table.ada_user,
            "Do I spot the tail?\n/roll 5d10 # GMROLLLABEL",
            thread=thread,
            roll_visibility="gm",
            minutes=3,
        ),
        "blind_roll": write(
            db_session,
            table,
            table.ada_user,
            "Is the drink poisoned?\n/roll 7d8 # BLINDLABEL",
            thread=thread,
            roll_visibility="blind",
            minutes=4,
        ),
    }
    secret_thread = write(
        db_session,
        table,
        table.ada_user,
        "SECRETTHREAD body",
        title="SECRETTITLE",
        audience="gm",
        minutes=5,
    )
    posts["secret_thread"] = secret_thread
    regretted = write(
        db_session, table, table.ada_user, "DELETEDSECRET I take it back.", thread=thread, minutes=6
    )
    delete_post(
        session=db_session, campaign=table.campaign, post=regretted, actor=table.ada_user, now=T0
    )
    posts["deleted"] = regretted
    db_session.commit()
    return thread, posts


def _roll(db_session, post) -> Roll:
    return db_session.exec(select(Roll).where(Roll.post_id == post.id)).one()


def _pages(app, db_session, table) -> list[str]:
    """Every GET URL of the forum blueprint, filled with every thread, post, roll and
    character of the campaign: a new route is checked without editing this test."""
    values = {
        "slug": [table.campaign.slug],
        "thread_id": [t.id for t in db_session.exec(select(Thread))],
        "post_id": [p.id for p in db_session.exec(select(Post))],
        "roll_id": [r.id for r in db_session.exec(select(Roll))],
        "character": [c.slug for c in (table.ada, table.bram, table.cleo)],
    }
    urls = []
    with app.test_request_context():
        for rule in app.url_map.iter_rules():
            if not rule.endpoint.startswith("forum.") or "GET" not in rule.methods:
                continue
            names = sorted(rule.arguments)
            for combo in itertools.product(*(values[n] for n in names)):
                urls.append(app.url_for(rule.endpoint, **dict(zip(names, combo, strict=True))))
    return urls


def _hidden_from(db_session, table, posts, who) -> list[str]:
    """Strings `who` must never meet on any page."""
    secret = rolls.get_secret(session=db_session, campaign=table.campaign)
    hidden = [secret.seed]
    gm_roll, blind_roll = (
        _roll(db_session, posts["gm_roll"]),
        _roll(db_session, posts["blind_roll"]),
    )
    if who in ("other player", "stranger", "visitor"):
        hidden += ["GMSECRET", "MOLEROLL", "WHISPERSECRET", "SECRETTITLE", "SECRETTHREAD"]
        hidden += [_roll(db_session, posts["gm_only"]).id, _roll(db_session, posts["whisper"]).id]
        hidden += [gm_roll.result["text"], "GMROLLLABEL", "BLINDLABEL"]
    if who in ("author", "other player", "stranger", "visitor"):
        # A deleted post's text is the GM's alone, its author's included (its edit page too).
        hidden += [blind_roll.result["text"], "DELETEDSECRET"]
    return hidden


@pytest.mark.parametrize("who", ["author", "other player", "stranger", "visitor"])
def test_no_page_shows_what_is_hidden(app, auth, client, db_session, table, play, who):
    _, posts = play
    user = {
        "author": table.ada_user,
        "other player": table.cleo_user,
        "stranger": table.stranger,
        "visitor": None,
    }[who]
    if user is not None:
        auth.login(user)
    urls = _pages(app, db_session, table)
    assert any("/rolls/" in u for u in urls) and any("export.json" in u for u in urls)
    hidden = _hidden_from(db_session, table, posts, who)
    statuses = {}
    for url in urls:
        page = client.get(url)
        statuses[url] = page.status_code
        assert page.status_code in (200, 302, 403, 404), url
        text = page.get_data(as_text=True)
        for needle in hidden:
            if needle in url:
                continue  # a hidden roll's id in the URL the visitor typed (e.g. "Log in" next=)
            assert needle not in text, f"{who} sees {needle!r} at {url}"
    assert statuses[f"/c/{table.campaign.slug}/forum/"] == 200


def test_the_gm_sees_every_post_and_roll(app, auth, client, db_session, table, play):
    thread, posts = play
    auth.login(table.gm)
    html = client.get(f"/c/{table.campaign.slug}/forum/t/{thread.id}").get_data(as_text=True)
    for key in ("gm_only", "whisper", "gm_roll", "blind_roll"):
        assert _roll(db_session, posts[key]).result["text"] in html
    assert "GMSECRET" in html and "WHISPERSECRET" in html
    export = client.get(f"/c/{table.campaign.slug}/forum/export.json").get_json()
    assert len(export["rolls"]) == 5 and not any(r.get("hidden") for r in export["rolls"])
    assert export["fairness"]["seed"] is None


def test_the_whisper_recipient_reads_it(app, auth, client, db_session, table, play):
    thread, posts = play
    auth.login(table.bram_user)
    html = client.get(f"/c/{table.campaign.slug}/forum/t/{thread.id}").get_data(as_text=True)
    assert "WHISPERSECRET" in html and "GMSECRET" not in html
    assert _roll(db_session, posts["whisper"]).result["text"] in html


def test_the_blind_roller_sees_the_command_but_not_the_dice(
    app, auth, client, db_session, table, play
):
    thread, posts = play
    blind = _roll(db_session, posts["blind_roll"])
    auth.login(table.ada_user)
    page = client.get(f"/c/{table.campaign.slug}/rolls/{blind.id}").get_data(as_text=True)
    assert "rolled blind" in page and blind.result["text"] not in page
    assert "Blind: only the GM sees the dice" in page  # the one-line definition


def test_a_hidden_roll_shows_others_only_that_it_was_made(
    app, auth, client, db_session, table, play
):
    thread, posts = play
    auth.login(table.cleo_user)
    page = client.get(f"/c/{table.campaign.slug}/rolls/{_roll(db_session, posts['gm_roll']).id}")
    assert page.status_code == 200
    assert "a hidden roll: only the roller and the GM see it" in page.get_data(as_text=True)
