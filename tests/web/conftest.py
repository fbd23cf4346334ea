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

`sent_mail` stands in for pbp.services.mail.notifications' `queue_invite` / `queue_password_reset`
and records their keyword arguments (with "kind"), so these tests do not depend on the
outbox's details.
"""

from __future__ import annotations

import pytest

from pbp.models import User
from pbp.services.accounts import logins as accounts
from pbp.services.mail import notifications
from tests.factories import make_campaign, make_characters
from tests.helpers import PASSWORD, T0, AuthActions, Clock


@pytest.fixture
def auth(client, db_session) -> AuthActions:
    return AuthActions(client, db_session)


@pytest.fixture
def sent_mail(monkeypatch) -> list[dict]:
    """Every message pbp.services.accounts.logins queues, as keyword arguments plus "kind"."""
    sent: list[dict] = []
    monkeypatch.setattr(
        notifications, "queue_invite", lambda **kw: sent.append({"kind": "invite", **kw})
    )
    monkeypatch.setattr(
        notifications,
        "queue_password_reset",
        lambda **kw: sent.append({"kind": "password_reset", **kw}),
    )
    return sent


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
