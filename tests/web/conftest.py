"""Web test helpers: users with passwords, logging in, and posting forms with CSRF tokens.

CSRF protection is ON in the test app, as in production: a POST without a token gets a
400 page. How to post a form in a test:

    def test_referee_invites(client, auth, db_session):
        campaign = make_campaign(db_session, referee=(ref := auth.create_user()))
        auth.login(ref)                                  # password: auth.password
        page = auth.post(f"/c/{campaign.slug}/invites", {"role": "player", "days": "7"})

- `auth.post(url, data)` fetches a token and adds it to `data` (it does not follow
  redirects unless you pass follow_redirects=True);
- `csrf_token(client, url="/login")` returns only the token, from any page with a form
  (the token is per session, so one from /login is good for every form);
- `post_form(client, url, data)` is `auth.post` for a second client.
Leave the token out only in a test that checks the refusal.

`sent_mail` stands in for pbp.services.mail.outbox's `queue_invite` / `queue_password_reset`
and records their keyword arguments (with "kind"), so these tests do not depend on the
outbox's details.
"""

from __future__ import annotations

import itertools
import re
import sys
import types
from datetime import UTC, datetime

import pytest

from pbp.models import User
from pbp.services import campaigns
from pbp.services.accounts import logins as accounts
from tests.factories import make_campaign, make_characters

PASSWORD = "correct horse battery staple"
_CSRF = re.compile(r'name="csrf_token"[^>]*value="([^"]+)"')
_seq = itertools.count(1)


def csrf_token(client, url: str = "/login") -> str:
    page = client.get(url)
    match = _CSRF.search(page.get_data(as_text=True))
    assert match, f"no CSRF token in the form at {url} (status {page.status_code})"
    return match.group(1)


def post_form(client, url: str, data: dict | None = None, *, token_url: str = "/login", **kw):
    data = {**(data or {}), "csrf_token": csrf_token(client, token_url)}
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


@pytest.fixture
def auth(client, db_session) -> AuthActions:
    return AuthActions(client, db_session)


@pytest.fixture
def sent_mail(monkeypatch) -> list[dict]:
    """Every message pbp.services.accounts.logins queues, as keyword arguments plus "kind"."""
    sent: list[dict] = []
    fake = types.ModuleType("pbp.services.mail.outbox")
    fake.MailSettings = types.SimpleNamespace
    fake.queue_invite = lambda **kw: sent.append({"kind": "invite", **kw})
    fake.queue_password_reset = lambda **kw: sent.append({"kind": "password_reset", **kw})
    monkeypatch.setitem(sys.modules, "pbp.services.mail.outbox", fake)
    return sent


# A referee's game of six players on a clock the test moves (the web's PBP_CLOCK).
T0 = datetime(2026, 7, 1, 9, 0, tzinfo=UTC)


class Clock:
    def __init__(self, start):
        self.now = start

    def __call__(self):
        return self.now


@pytest.fixture
def clock(app):
    app.config["PBP_CLOCK"] = clock = Clock(T0)
    return clock


@pytest.fixture
def game(db_session, auth):
    referee = auth.create_user(display_name="Referee")
    campaign = make_campaign(db_session, referee=referee, settings={"opening_turns": 0})
    chars = make_characters(db_session, campaign)
    for character in chars:
        user = db_session.get(User, character.user_id)
        user.password_hash = accounts.hash_password(PASSWORD)
    db_session.commit()
    return campaign, referee, chars
