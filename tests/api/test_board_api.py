"""`GET /me/board` and the signed-in home page show the same lines (pbp.services.board)."""

from __future__ import annotations


def test_the_board_in_the_api_and_on_the_home_page(api, world, auth, client, db_session):
    """Bram's player is challenged by Ada and has no entry yet: two lines, the challenge
    first (the turn has no deadline, so neither line has a time, and challenges come
    before entries). Ada's player has written this turn's entry."""
    answer = api.get("/me/board", token=world.tokens["other_player"])
    assert answer.status_code == 200
    items = answer.get_json()["items"]
    assert [(i["kind"], i["campaign"]) for i in items] == [
        ("challenge", world.slug),
        ("entry", world.slug),
    ]
    assert items[0]["text"] == "Ada challenges Bram: 0 support · 0 oppose"
    assert items[0]["path"] == f"/c/{world.slug}/turns/1"
    # Ada's player wrote this turn's entry: nothing waits on them.
    assert api.get("/me/board", token=world.tokens["player"]).get_json()["items"] == []
    # Without a token: the API's usual refusal.
    assert api.get("/me/board", token=None).status_code == 401

    from pbp.services.accounts import logins as accounts

    bram_user = world.users["other_player"]
    bram_user.password_hash = accounts.hash_password(auth.password)
    db_session.commit()
    auth.login(bram_user)
    home = client.get("/").get_data(as_text=True)
    assert "Waiting on you" in home and "Ada challenges Bram: 0 support · 0 oppose" in home
    assert f'href="/c/{world.slug}/write"' in home


def test_the_home_page_says_when_nothing_waits(auth, client):
    auth.login(auth.create_user())
    home = client.get("/").get_data(as_text=True)
    assert "Nothing is waiting on you" in home


def test_a_visitor_sees_no_board(client):
    assert "Waiting on you" not in client.get("/").get_data(as_text=True)
