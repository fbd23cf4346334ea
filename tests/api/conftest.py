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
from dataclasses import dataclass, field
from datetime import UTC, datetime

import pytest

from pbp.models import Campaign, Character, Entry, Turn, User
from pbp.services import campaigns
from pbp.services.accounts import tokens as api_tokens
from pbp.services.noteworthy import hosted_blog as blog
from pbp.services.noteworthy import turns

_seq = itertools.count(1)
ROLES = ("anonymous", "stranger", "player", "other_player", "referee")
NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def wire(app) -> None:
    """Register the API and the token page unless pbp.web.init_app does already."""
    from pbp import api
    from pbp.web import tokens

    if "api" not in app.blueprints:
        api.init_app(app)
    if "tokens" not in app.blueprints:
        app.register_blueprint(tokens.bp)


@pytest.fixture
def app(app):
    wire(app)
    return app


class Api:
    def __init__(self, client):
        self.client = client

    def call(self, method, path, *, token=None, headers=None, **kw):
        headers = dict(headers or {})
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        url = path if path.startswith("/api/") else "/api/v1" + path
        return self.client.open(url, method=method, headers=headers, **kw)

    def get(self, path, **kw):
        return self.call("GET", path, **kw)

    def post(self, path, **kw):
        return self.call("POST", path, **kw)

    def put(self, path, **kw):
        return self.call("PUT", path, **kw)


@pytest.fixture
def api(client) -> Api:
    return Api(client)


@pytest.fixture
def auth(client, db_session):
    """The web tests' login helper (tests/web/conftest.py), for the token page."""
    from tests.web.conftest import AuthActions

    return AuthActions(client, db_session)


def make_token(session, user: User, scope: str = "write") -> str:
    issued = api_tokens.create_token(
        session=session, user=user, name=f"test {next(_seq)}", scope=scope, now=NOW
    )
    return issued.text


@dataclass
class World:
    campaign: Campaign
    users: dict[str, User]
    tokens: dict[str, str | None]
    characters: dict[str, Character]
    turn: Turn
    challenge: Entry  # Ada's challenge on Bram, this turn
    extra: dict = field(default_factory=dict)

    @property
    def slug(self) -> str:
        return self.campaign.slug


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
        session=db_session, campaign=campaign, text="The ball begins.", actor=None, now=NOW
    )
    challenge = blog.post_entry(
        session=db_session,
        character=characters["Ada"],
        title="Pistols at dawn",
        body_markdown="Target: Bram\n\nYou cheated at cards.",
        mood="Challenging",
        now=NOW,
    )
    tokens = {role: make_token(db_session, user) for role, user in users.items()}
    tokens["anonymous"] = None
    db_session.commit()
    return World(campaign, users, tokens, characters, turn, challenge)


@pytest.fixture
def forum_world(world, db_session) -> World:
    """The same people in a forum campaign (ONE): Ada is the player's character, Bram the
    other player's; the player opened a thread whose first post rolled 2d6 in public."""
    from pbp.services.forum import scenes as forum
    from pbp.services.mail.outbox import MailSettings

    users = world.users
    game = campaigns.create_campaign(
        session=db_session,
        referee=users["referee"],
        name=f"{world.campaign.name} forum",
        ruleset="one",
    )
    for name, role in (("Ada", "player"), ("Bram", "other_player")):
        campaigns.add_character(session=db_session, campaign=game, name=name, user=users[role])
    post = forum.create_thread(
        session=db_session,
        campaign=game,
        author=users["player"],
        title="The docks",
        draft=forum.Draft(body="We wait.\n/roll 2d6 # watch"),
        mail=MailSettings("http://pbp.test", "s" * 32, "pbp <pbp@localhost>"),
        now=NOW,
    )
    db_session.commit()
    roll = forum.rolls.rolls_of_posts(session=db_session, post_ids=[post.id])[post.id][0]
    world.extra.update(forum=game.slug, thread=post.thread_id, post=post.id, roll=roll.id)
    return world
