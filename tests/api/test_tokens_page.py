"""The token page: make a token (shown once, stored as a hash), list, revoke."""

from __future__ import annotations

import re

from sqlmodel import select

from pbp.models.api import ApiToken
from pbp.services.accounts import tokens as api_tokens
from tests.helpers import csrf_token

TOKEN = re.compile(r'value="(pbp_[A-Za-z0-9_-]+)"')


def make(auth, name="turn script", scope="write"):
    return auth.post("/account/tokens/", {"name": name, "scope": scope})


def test_the_page_needs_a_login(client):
    response = client.get("/account/tokens/")
    assert response.status_code == 302 and "/login" in response.headers["Location"]


def test_a_new_token_is_shown_once_and_stored_as_a_hash(auth, api, client, db_session):
    user = auth.create_user()
    auth.login(user)
    page = make(auth)
    assert page.status_code == 200
    assert page.headers["Cache-Control"] == "no-store"
    assert page.headers["Referrer-Policy"] == "no-referrer"
    text = TOKEN.search(page.get_data(as_text=True)).group(1)
    row = db_session.exec(select(ApiToken).where(ApiToken.user_id == user.id)).one()
    assert row.token_hash == api_tokens.hash_token(text) and row.scope == "write"
    assert text not in {str(v) for v in row.model_dump().values()}
    listing = client.get("/account/tokens/").get_data(as_text=True)
    assert "turn script" in listing and text not in listing and row.prefix in listing
    assert api.get("/me", token=text).get_json()["id"] == user.id


def test_revoking_ends_the_token(auth, api, db_session):
    user = auth.create_user()
    auth.login(user)
    text = TOKEN.search(make(auth).get_data(as_text=True)).group(1)
    row = db_session.exec(select(ApiToken).where(ApiToken.user_id == user.id)).one()
    response = auth.post(f"/account/tokens/{row.id}/revoke", follow_redirects=True)
    assert "is revoked" in response.get_data(as_text=True)
    assert api.get("/me", token=text).status_code == 401
    again = auth.post(f"/account/tokens/{row.id}/revoke")
    assert again.status_code == 302  # revoking twice changes nothing


def test_nobody_revokes_another_persons_token(auth, db_session):
    owner = auth.create_user()
    issued = api_tokens.create_token(
        session=db_session, user=owner, name="theirs", scope="read", now=owner.created_at
    )
    db_session.commit()
    auth.login(auth.create_user())
    assert auth.post(f"/account/tokens/{issued.token.id}/revoke").status_code == 404
    assert db_session.get(ApiToken, issued.token.id).revoked_at is None


def test_the_form_says_what_is_wrong(auth):
    auth.login(auth.create_user())
    page = make(auth, name="   ")
    assert page.status_code == 422 and "give the token a name" in page.get_data(as_text=True)
    refused = make(auth, name="mine", scope="admin")
    assert refused.status_code == 422 and 'value="mine"' in refused.get_data(as_text=True)


def test_the_form_needs_its_csrf_token(auth, client):
    auth.login(auth.create_user())
    assert csrf_token(client, "/account/tokens/")
    response = client.post("/account/tokens/", data={"name": "x", "scope": "read"})
    assert response.status_code == 400
