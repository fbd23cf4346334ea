"""Helpers the tests share (no fixtures here: those stay in the conftest files and use these).

- the database: `create_scratch_postgres`, `session_on` (a session joined to the test's
  transaction), `make_test_app`;
- the pages: `PASSWORD`, `csrf_token`, `post_form`, `AuthActions` (accounts and logging in
  through the real pages), `auth_for`, the web clock `T0` / `Clock`;
- the API: `wire`, `Api` (calls /api/v1 with a bearer token), `make_token`, `ROLES`, `API_NOW`;
- the browser: `log_in`, `no_horizontal_scroll`, `UNLABELLED_FIELDS`, `make_account` (a
  committed account with PASSWORD, hashed once per run);
- the adapters' feed files: `FEED_FIXTURES`, `fixture_bytes`, `FEED_NOW`.
"""

from __future__ import annotations

import functools
import itertools
import re
import secrets
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import sqlalchemy as sa
from sqlmodel import Session

from pbp import create_app
from pbp.db import make_engine, normalize_url
from pbp.models import Campaign, Character, Entry, Turn, User
from pbp.services import campaigns
from pbp.services.accounts import logins as accounts
from pbp.services.accounts import tokens as api_tokens

_seq = itertools.count(1)  # one counter: names and addresses only need to differ


def create_scratch_postgres(server_url: str) -> tuple[str, callable]:
    """A fresh database per run so parallel runs on one server never collide."""
    name = f"pbp_test_{uuid.uuid4().hex[:12]}"
    admin = make_engine(server_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    url = sa.engine.make_url(normalize_url(server_url)).set(database=name)

    def drop() -> None:
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()

    return url.render_as_string(hide_password=False), drop


def session_on(connection) -> Session:
    # Each service commit releases a savepoint; the test's outer transaction still
    # rolls everything back at the end.
    return Session(
        bind=connection, join_transaction_mode="create_savepoint", expire_on_commit=False
    )


def make_test_app(engine, connection, database_url, instance_path, **overrides):
    """The test app on the test's connection; `overrides` add or change settings (those
    read at start-up, such as PBP_TRUSTED_PROXIES, need an app of their own)."""
    app = create_app(
        {
            "TESTING": True,
            "INSTANCE_PATH": instance_path,
            "SECRET_KEY": "test-secret-key-" + "x" * 32,
            "DATABASE_URL": database_url,
            "ENGINE": engine,
            "PBP_ALLOW_PRIVATE_FEEDS": True,
            "PBP_BASE_URL": "http://pbp.test",
            # Tests read pages right after writing: no second of grace for visitors
            # (tests/web/test_planet_cache.py covers it).
            "PBP_PAGE_RECHECK_SECONDS": 0,
            **overrides,
        }
    )
    app.extensions["pbp_db"].session_factory = lambda: session_on(connection)
    return app


PASSWORD = "correct horse battery staple"
_CSRF = re.compile(r'name="csrf_token"[^>]*value="([^"]+)"')


def csrf_token(client, url: str = "/login") -> str:
    page = client.get(url)
    match = _CSRF.search(page.get_data(as_text=True))
    assert match, f"no CSRF token in the form at {url} (status {page.status_code})"
    return match.group(1)


def post_form(client, url: str, data: dict | None = None, *, token_url: str = "/login", **kw):
    """POST a form as a browser sends it: with the CSRF token and a one-time form token (a
    fresh one each call, unless `data` carries its own: the same token twice is a double
    click)."""
    data = {"form_token": secrets.token_urlsafe(18), **(data or {})}
    data["csrf_token"] = csrf_token(client, token_url)
    return client.post(url, data=data, **kw)


class AuthActions:
    """flaskr's `auth` helper: make accounts, log in and out through the real pages."""

    password = PASSWORD

    def __init__(self, client, db_session):
        self._client = client
        self._session = db_session

    def create_user(
        self, email: str | None = None, display_name: str | None = None, password=PASSWORD
    ) -> User:
        n = next(_seq)
        user = campaigns.create_user(
            session=self._session,
            email=email or f"web{n}@example.test",
            display_name=display_name or f"Web User {n}",
        )
        user.password_hash = accounts.hash_password(password)
        self._session.add(user)
        self._session.commit()
        return user

    def login(self, user: User | str, password: str = PASSWORD, next: str | None = None):
        email = user if isinstance(user, str) else user.email
        return self.post("/login", {"email": email, "password": password, "next": next or ""})

    def logout(self):
        return self.post("/logout")

    def post(self, url: str, data: dict | None = None, **kw):
        return post_form(self._client, url, data, **kw)


def auth_for(client, db_session) -> AuthActions:
    return AuthActions(client, db_session)


# A referee's game of six players on a clock the test moves (the web's PBP_CLOCK).
T0 = datetime(2026, 7, 1, 9, 0, tzinfo=UTC)


class Clock:
    def __init__(self, start):
        self.now = start

    def __call__(self):
        return self.now


ROLES = ("anonymous", "stranger", "player", "other_player", "referee")
API_NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def wire(app) -> None:
    """Register the API and the token page unless pbp.web.init_app does already."""
    from pbp import api
    from pbp.web import tokens

    if "api" not in app.blueprints:
        api.init_app(app)
    if "tokens" not in app.blueprints:
        app.register_blueprint(tokens.bp)


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


def make_token(session, user: User, scope: str = "write") -> str:
    issued = api_tokens.create_token(
        session=session, user=user, name=f"test {next(_seq)}", scope=scope, now=API_NOW
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


FEED_FIXTURES = Path(__file__).parent / "adapters" / "fixtures"
FEED_NOW = datetime(2024, 4, 3, 12, 0, tzinfo=UTC)


def fixture_bytes(name: str) -> bytes:
    return (FEED_FIXTURES / name).read_bytes()


# -- the browser tests' steps (tests/browser) ----------------------------------------------


def log_in(page, email: str, password: str = PASSWORD) -> None:
    page.goto("/login")
    page.locator("#email").fill(email)
    page.locator("#password").fill(password)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(re.compile(r"^(?!.*/login).*$"))


def no_horizontal_scroll(page, width: int) -> int:
    scroll = page.evaluate("document.scrollingElement.scrollWidth")
    assert scroll <= width + 1, f"{page.url} scrolls sideways: {scroll}px wide at {width}px"
    return scroll


UNLABELLED_FIELDS = """() => Array.from(document.querySelectorAll(
    'input:not([type=hidden]), select, textarea')).filter(el =>
      !(el.labels && el.labels.length) && !el.getAttribute('aria-label')
      && !el.getAttribute('aria-labelledby')).map(el => el.outerHTML.slice(0, 120))"""


@functools.cache
def _password_hash() -> str:
    return accounts.hash_password(PASSWORD)  # scrypt takes ~0.5 s: hash once per run


def make_account(session: Session, name: str) -> User:
    user = campaigns.create_user(
        session=session, email=f"{name.lower()}{next(_seq)}@browser.test", display_name=name
    )
    user.password_hash = _password_hash()
    session.add(user)
    session.flush()
    return user
