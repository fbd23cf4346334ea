"""API test helpers: the API wired into the test app, tokens for each kind of caller, and a
small Noteworthy campaign to call it on.

    def test_x(api, world):
        page = api.get(f"/campaigns/{world.slug}", token=world.tokens["referee"])

`api` calls /api/v1 with `Authorization: Bearer <token>` (no header for token=None) and
sends `json=` bodies as JSON. `world` is committed inside the test's transaction (rolled
back afterwards), so tests may change it freely.
"""

from __future__ import annotations

import itertools

import pytest

from pbp.services import campaigns
from pbp.services.noteworthy import hosted_blog, turns
from tests.helpers import API_NOW, ROLES, Api, AuthActions, World, make_token, wire

_seq = itertools.count(1)


@pytest.fixture
def app(app):
    wire(app)
    return app


@pytest.fixture
def api(client) -> Api:
    return Api(client)


@pytest.fixture
def auth(client, db_session):
    """The web tests' login helper (tests/web/conftest.py), for the token page."""

    return AuthActions(client, db_session)


@pytest.fixture
def world(db_session) -> World:
    """Referee, two players (Ada's and Bram's), a stranger; six characters; turn 1 open
    with challenges allowed from the start; Ada challenges Bram on pbp's own blog."""
    n = next(_seq)
    users = {
        role: campaigns.create_user(
            session=db_session, email=f"api{n}-{role}@example.test", display_name=role.title()
        )
        for role in ROLES[1:]
    }
    campaign = campaigns.create_campaign(
        session=db_session,
        referee=users["referee"],
        name=f"Api World {n}",
        settings={"opening_turns": 0},
    )
    owners = {"Ada": users["player"], "Bram": users["other_player"]}
    characters = {
        name: campaigns.add_character(
            session=db_session, campaign=campaign, name=name, user=owners.get(name)
        )
        for name in ("Ada", "Bram", "Cleo", "Dov", "Eli", "Fay")
    }
    turn = turns.post_event(
        session=db_session, campaign=campaign, text="The ball begins.", actor=None, now=API_NOW
    )
    challenge = hosted_blog.store_entry(
        session=db_session,
        character=characters["Ada"],
        title="Pistols at dawn",
        body_markdown="Target: Bram\n\nYou cheated at cards.",
        mood="Challenging",
        now=API_NOW,
    )
    tokens = {role: make_token(db_session, user) for role, user in users.items()}
    tokens["anonymous"] = None
    db_session.commit()
    return World(campaign, users, tokens, characters, turn, challenge)


@pytest.fixture
def forum_world(world, db_session) -> World:
    """The same people in a forum campaign (ONE): Ada is the player's character, Bram the
    other player's; the player opened a thread whose first post rolled 2d6 in public."""
    from pbp.services.forum import posts, rolls
    from pbp.services.forum.drafts import Draft
    from pbp.services.mail.settings import MailSettings

    users = world.users
    game = campaigns.create_campaign(
        session=db_session,
        referee=users["referee"],
        name=f"{world.campaign.name} forum",
        ruleset="one",
    )
    for name, role in (("Ada", "player"), ("Bram", "other_player")):
        campaigns.add_character(session=db_session, campaign=game, name=name, user=users[role])
    post = posts.create_thread(
        session=db_session,
        campaign=game,
        author=users["player"],
        title="The docks",
        draft=Draft(body="We wait.\n/roll 2d6 # watch"),
        mail=MailSettings("http://pbp.test", "s" * 32, "pbp <pbp@localhost>"),
        now=API_NOW,
    )
    from pbp.services import icons
    from tests.services.icons.pictures import picture

    icon = icons.add_icon(
        session=db_session, campaign=game, actor=users["player"], character_slug="ada",
        keyword="calm", alt="Ada, calm", data=picture(), now=API_NOW,
    )  # fmt: skip
    db_session.commit()
    roll = rolls.rolls_of_posts(session=db_session, post_ids=[post.id])[post.id][0]
    world.extra.update(
        forum=game.slug, thread=post.thread_id, post=post.id, roll=roll.id, icon=icon.id
    )
    return world
