"""The permission matrix: every API operation x every kind of caller -> the expected status.

Callers: anonymous (no token), stranger (a token, not in the campaign), player (Ada's),
other_player (Bram's: same campaign, not the author of Ada's entry), referee. The world
(tests/api/conftest.py): turn 1 is open and Ada challenges Bram with entry `challenge`.

A 2xx/409/422 for the referee or a player means the permission check let them through and
the game's own rules answered (e.g. posting an event while turn 1 is open is a conflict).
"""

from __future__ import annotations

import base64
from datetime import UTC, datetime, timedelta

import pytest

from pbp.api import OPERATIONS
from tests.helpers import ROLES
from tests.services.icons.pictures import picture

ANON, STRANGER, PLAYER, OTHER, REF = ROLES  # anonymous, stranger, player, other_player, referee

PUBLIC = {ANON: 200, STRANGER: 200, PLAYER: 200, OTHER: 200, REF: 200}
MEMBERS = {ANON: 401, STRANGER: 403, PLAYER: 200, OTHER: 200, REF: 200}
REFEREE_ONLY = {ANON: 401, STRANGER: 403, PLAYER: 403, OTHER: 403}


def only_referee(status: int) -> dict:
    return {**REFEREE_ONLY, REF: status}


def players(player: int, other: int | None = None) -> dict:
    """Players only: the referee is not a player (the blog forms refuse them too)."""
    return {
        ANON: 401,
        STRANGER: 403,
        PLAYER: player,
        OTHER: player if other is None else other,
        REF: 403,
    }


# operation -> (method, path, body or None, expected statuses by caller)
MATRIX = {
    "me": ("GET", "/me", None, {ANON: 401, STRANGER: 200, PLAYER: 200, OTHER: 200, REF: 200}),
    "my_board": (
        "GET",
        "/me/board",
        None,
        {ANON: 401, STRANGER: 200, PLAYER: 200, OTHER: 200, REF: 200},
    ),
    # Anyone's own calendar address: every token holder has one to see, make and revoke.
    "get_calendar": ("GET", "/me/calendar", None, {ANON: 401, **{r: 200 for r in ROLES[1:]}}),
    "make_calendar": ("POST", "/me/calendar", None, {ANON: 401, **{r: 201 for r in ROLES[1:]}}),
    "revoke_calendar": (
        "DELETE",
        "/me/calendar",
        None,
        {ANON: 401, **{r: 200 for r in ROLES[1:]}},
    ),
    "list_campaigns": ("GET", "/campaigns", None, PUBLIC),
    "create_campaign": (
        "POST",
        "/campaigns",
        lambda role: {"name": f"New game of the {role}"},
        {ANON: 401, STRANGER: 201, PLAYER: 201, OTHER: 201, REF: 201},
    ),
    "get_campaign": ("GET", "/campaigns/{slug}", None, PUBLIC),
    "list_characters": ("GET", "/campaigns/{slug}/characters", None, PUBLIC),
    "get_character": ("GET", "/campaigns/{slug}/characters/ada", None, PUBLIC),
    "add_character": (
        "POST",
        "/campaigns/{slug}/characters",
        {"name": "Gus", "aliases": ["Gussie"]},
        only_referee(201),
    ),
    "roster": ("GET", "/campaigns/{slug}/roster", None, only_referee(200)),
    # issue #31: anyone's own devices to push to, and a member's choice of what is pushed
    "list_push_devices": (
        "GET",
        "/me/push-devices",
        None,
        {ANON: 401, **{r: 200 for r in ROLES[1:]}},
    ),
    "add_push_device": (
        "POST",
        "/me/push-devices",
        {"endpoint": "https://push.example/d/1", "p256dh": "BKey", "auth": "secret"},
        {ANON: 401, **{r: 201 for r in ROLES[1:]}},
    ),
    "remove_push_device": (
        "DELETE",
        "/me/push-devices/2147483647",
        None,
        {ANON: 401, **{r: 404 for r in ROLES[1:]}},  # let through, then not theirs
    ),
    "get_push_preferences": ("GET", "/campaigns/{slug}/me/push", None, MEMBERS),
    "put_push_preferences": ("PUT", "/campaigns/{slug}/me/push", {"events": True}, MEMBERS),
    # Read marks are each member's own (issue #29 item 2).
    "mark_read": ("POST", "/campaigns/{slug}/read", None, MEMBERS),
    # Any member lists the members and their characters (#35 item 3).
    "list_members": ("GET", "/campaigns/{slug}/members", None, MEMBERS),
    # Any account may try a link; this one is not an invitation (404), never a 403.
    "accept_invite": (
        "POST",
        "/invites/accept",
        {"invitation": "https://pbp.test/invite/not-a-link"},
        {ANON: 401, STRANGER: 404, PLAYER: 404, OTHER: 404, REF: 404},
    ),
    "get_mail_preferences": ("GET", "/campaigns/{slug}/me/mail", None, MEMBERS),
    "put_mail_preferences": (
        "PUT",
        "/campaigns/{slug}/me/mail",
        {"events": True, "digest": True, "notes_on_mine": False, "challenges": True, "forum": True},
        MEMBERS,
    ),
    # A member's own saved draft (issue #29 item 5): none yet to read (404), any member
    # saves and deletes their own.
    "get_draft": (
        "GET",
        "/campaigns/{slug}/drafts/entry",
        None,
        {ANON: 401, STRANGER: 403, PLAYER: 404, OTHER: 404, REF: 404},
    ),
    "save_draft": (
        "PUT",
        "/campaigns/{slug}/drafts/entry",
        {"fields": {"body": "Half of it"}},
        MEMBERS,
    ),
    "delete_draft": ("DELETE", "/campaigns/{slug}/drafts/entry", None, MEMBERS),
    # Keeping a game alive (issue #30): the activity check is the referee's; a hiatus is a
    # player's own (any member reads theirs).
    "get_activity": ("GET", "/campaigns/{slug}/activity", None, only_referee(200)),
    "put_activity_settings": (
        "PUT",
        "/campaigns/{slug}/activity/settings",
        {"nudge_hours": [48, 24], "overdue_hours": 0, "rule_count": 1},
        only_referee(200),
    ),
    "get_away": ("GET", "/campaigns/{slug}/me/away", None, MEMBERS),
    "set_away": (
        "PUT",
        "/campaigns/{slug}/me/away",
        {"until": (datetime.now(UTC) + timedelta(days=30)).date().isoformat(), "note": "Away"},
        {**MEMBERS, REF: 422},  # let through, then "the referee runs the game"
    ),
    # Let through, then "you are not marked away".
    "end_away": (
        "DELETE",
        "/campaigns/{slug}/me/away",
        None,
        {**MEMBERS, PLAYER: 409, OTHER: 409, REF: 409},
    ),
    # A member's own reply-by-mail addresses (issue #31 item 3): any member stops theirs.
    "revoke_reply_addresses": ("DELETE", "/campaigns/{slug}/me/mail/replies", None, MEMBERS),
    "list_invites": ("GET", "/campaigns/{slug}/invites", None, only_referee(200)),
    "resend_invite": (
        "POST",
        "/campaigns/{slug}/invites/2147483647/resend",
        None,
        only_referee(404),  # let through, then no such invitation
    ),
    "rename_character": (
        "POST",
        "/campaigns/{slug}/characters/cleo/name",
        {"name": "Cleo Prime"},
        only_referee(200),
    ),
    "set_aliases": (
        "POST",
        "/campaigns/{slug}/characters/cleo/aliases",
        {"aliases": ["Clee"]},
        only_referee(200),
    ),
    "set_feed": (
        "POST",
        "/campaigns/{slug}/characters/cleo/feed",
        {"feed_url": None},
        only_referee(200),
    ),
    "drop_character": (
        "POST",
        "/campaigns/{slug}/characters/cleo/drop",
        {"reason": "left"},
        only_referee(200),
    ),
    "hand_over_character": (
        "POST",
        "/campaigns/{slug}/characters/cleo/player",
        {},
        only_referee(200),
    ),
    "map_commenter": (
        "POST",
        "/campaigns/{slug}/commenters",
        lambda role, w: {"character_id": w.characters["Cleo"].id, "value": "Cleopatra"},
        only_referee(201),
    ),
    "choose_blog": ("PUT", "/campaigns/{slug}/me/blog", {"kind": "builtin"}, players(200)),
    "declare_commenter": (
        "PUT",
        "/campaigns/{slug}/me/commenter",
        lambda role: {"uris": [f"https://{role}.example/"]},
        players(200),
    ),
    # Ada blogs on pbp: the poll is refused after the permission check lets the referee in.
    "poll_now": ("POST", "/campaigns/{slug}/characters/ada/poll", None, only_referee(422)),
    "list_turns": ("GET", "/campaigns/{slug}/turns", None, PUBLIC),
    "get_turn": ("GET", "/campaigns/{slug}/turns/1", None, PUBLIC),
    "post_event": (
        "POST",
        "/campaigns/{slug}/turns",
        {"text": "The duel.", "expected_number": 2},
        only_referee(409),  # turn 1 is still open
    ),
    "close_turn": ("POST", "/campaigns/{slug}/turns/1/close", None, only_referee(200)),
    "reopen_turn": ("POST", "/campaigns/{slug}/turns/1/reopen", None, only_referee(200)),
    "resolve_turn": ("POST", "/campaigns/{slug}/turns/1/resolve", {}, only_referee(409)),
    "get_tally": ("GET", "/campaigns/{slug}/turns/1/tally", None, only_referee(200)),
    "list_challenges": ("GET", "/campaigns/{slug}/turns/1/challenges", None, PUBLIC),
    "add_ruling": (
        "POST",
        "/campaigns/{slug}/turns/1/rulings",
        lambda role, w: {
            "kind": "target",
            "subject_id": w.challenge.id,
            "value": w.characters["Cleo"].id,
            "reason": "Bram was not at the table",
        },
        only_referee(201),
    ),
    "list_rulings": ("GET", "/campaigns/{slug}/turns/1/rulings", None, only_referee(200)),
    "list_entries": ("GET", "/campaigns/{slug}/entries", None, PUBLIC),
    "get_entry": ("GET", "/campaigns/{slug}/entries/{entry}", None, PUBLIC),
    "challenge_option": ("GET", "/campaigns/{slug}/challenge-option", None, players(200)),
    "write_entry": (
        "POST",
        "/campaigns/{slug}/entries",
        {"title": "A quiet evening", "body": "Cards and wine.", "mood": "Content"},
        players(201),
    ),
    "edit_entry": (
        "PUT",
        "/campaigns/{slug}/entries/{entry}",
        {"title": "Pistols at noon", "body": "Target: Bram\n\nYou cheat.", "mood": "Challenging"},
        players(200, other=403),
    ),
    "withdraw": ("POST", "/campaigns/{slug}/entries/{entry}/withdraw", None, players(200, 403)),
    # {entry} is Ada's challenge, which nobody may hide (a rule's 422 once access is granted).
    "hide_entry": ("POST", "/campaigns/{slug}/entries/{entry}/hide", None, players(422, 403)),
    "list_notes": ("GET", "/campaigns/{slug}/entries/{entry}/notes", None, PUBLIC),
    "add_note": (
        "POST",
        "/campaigns/{slug}/entries/{entry}/notes",
        {"body": "Bram would never.", "stance": "none"},
        players(201),
    ),
}


# The referee's desk (pbp.api.referee) and the history: the dashboard's and the history
# page's actions. The campaign's players and strangers are refused; anonymous callers are
# asked for a token.
DESK_MATRIX = {
    "get_settings": ("GET", "/campaigns/{slug}/settings", None, only_referee(200)),
    "put_settings": (
        "PUT",
        "/campaigns/{slug}/settings",
        {"opening_turns": 1, "time_zone": "Europe/Stockholm", "cadence": {"kind": "manual"}},
        only_referee(200),
    ),
    "get_queued_event": ("GET", "/campaigns/{slug}/queued-event", None, only_referee(200)),
    "queue_event": (
        "PUT",
        "/campaigns/{slug}/queued-event",
        {"text": "The duel at noon."},
        only_referee(200),
    ),
    "publish_final_notice": (
        "POST",
        "/campaigns/{slug}/final-notice",
        {"text": "The ball is over."},
        only_referee(200),
    ),
    "send_reminders": ("POST", "/campaigns/{slug}/reminders", None, only_referee(200)),
    "poll_all": ("POST", "/campaigns/{slug}/poll", None, only_referee(200)),
    "unmapped_commenters": (
        "GET",
        "/campaigns/{slug}/commenters/unmapped",
        None,
        only_referee(200),
    ),
    "get_outbox": ("GET", "/campaigns/{slug}/outbox", None, only_referee(200)),
    "get_audit_log": ("GET", "/campaigns/{slug}/audit", None, only_referee(200)),
    "create_invite": (
        "POST",
        "/campaigns/{slug}/invites",
        {"character": "cleo", "days": 7},
        only_referee(201),
    ),
    "get_history": ("GET", "/campaigns/{slug}/history", None, MEMBERS),
    # issue #31: the campaign's chat channels (the test app allows loopback addresses)
    "list_chat_webhooks": ("GET", "/campaigns/{slug}/chat-webhooks", None, only_referee(200)),
    "add_chat_webhook": (
        "POST",
        "/campaigns/{slug}/chat-webhooks",
        {"platform": "discord", "url": "http://127.0.0.1:9/api/webhooks/1/t"},
        only_referee(201),
    ),
    "remove_chat_webhook": (
        "DELETE",
        "/campaigns/{slug}/chat-webhooks/2147483647",
        None,
        only_referee(404),  # let through, then no such channel
    ),
}


@pytest.mark.parametrize("name", list(DESK_MATRIX))
def test_desk_permission(api, connection, world, name):
    check_row(api, connection, world, DESK_MATRIX[name])


def test_the_matrix_covers_every_operation():
    assert set(MATRIX) | set(FORUM_MATRIX) | set(DESK_MATRIX) == {op.name for op in OPERATIONS}


def test_every_operation_is_in_the_matrix_with_its_declared_method():
    declared = {op.name: op.method for op in OPERATIONS}
    for name, (method, *_rest) in {**MATRIX, **FORUM_MATRIX, **DESK_MATRIX}.items():
        assert declared[name] == method, name


def _body(spec, role, world):
    if callable(spec):
        try:
            return spec(role, world)
        except TypeError:
            return spec(role)
    return spec


def check_row(api, connection, world, spec) -> None:
    """Call one operation as each caller, each call in a savepoint rolled back afterwards
    (so the callers see the same world), and compare the whole row at once."""
    method, path, body, expected = spec
    url = path.format(slug=world.slug, entry=world.challenge.id, **world.extra)
    actual, problems = {}, {}
    for role in ROLES:
        savepoint = connection.begin_nested()
        try:
            kwargs = {"json": _body(body, role, world)} if body is not None else {}
            response = api.call(method, url, token=world.tokens[role], **kwargs)
        finally:
            savepoint.rollback()
        actual[role] = response.status_code
        if response.status_code >= 400:
            problems[role] = response.get_data(as_text=True)
            assert response.mimetype == "application/problem+json", problems[role]
            assert response.get_json()["detail"]
        if response.status_code == 401:
            assert response.headers["WWW-Authenticate"].startswith("Bearer")
    assert actual == expected, problems


@pytest.mark.parametrize("name", list(MATRIX))
def test_permission(api, connection, world, name):
    check_row(api, connection, world, MATRIX[name])


def members(status: int, other: int | None = None) -> dict:
    return {
        ANON: 401,
        STRANGER: 403,
        PLAYER: status,
        OTHER: status if other is None else other,
        REF: status,
    }


FORUM = "/campaigns/{forum}/forum"
ICON_DATA = base64.b64encode(picture()).decode()
FORUM_MATRIX = {
    "forum_state": ("GET", FORUM, None, PUBLIC),
    "list_threads": ("GET", FORUM + "/threads", None, PUBLIC),
    "create_thread": (
        "POST",
        FORUM + "/threads",
        {"title": "The tavern", "post": {"body": "Ale, and /roll lines below.\n/roll 1d6"}},
        members(201),
    ),
    "list_posts": ("GET", FORUM + "/threads/{thread}/posts", None, PUBLIC),
    "reply": ("POST", FORUM + "/threads/{thread}/posts", {"body": "I keep watch."}, members(201)),
    # The player wrote the post: the other player may neither edit nor delete it; the GM may.
    "edit_post": ("PUT", FORUM + "/posts/{post}", {"body": "We wait, armed."}, members(200, 403)),
    "delete_post": ("DELETE", FORUM + "/posts/{post}", None, members(200, 403)),
    "get_roll": ("GET", FORUM + "/rolls/{roll}", None, PUBLIC),
    "watch": ("PUT", FORUM + "/threads/{thread}/watch", {"on": True}, members(200)),
    "get_sheet": ("GET", "/campaigns/{forum}/sheets/ada", None, PUBLIC),
    # Ada's sheet: her player and the GM may change it; ONE refuses an empty sheet (422).
    "edit_sheet": (
        "PUT",
        "/campaigns/{forum}/sheets/ada",
        {"data": {}},
        {ANON: 401, STRANGER: 403, PLAYER: 422, OTHER: 403, REF: 422},
    ),
    # ONE is not played with cards: past the permission checks the table is not found.
    "get_table": ("GET", FORUM + "/threads/{thread}/cards", None, {r: 404 for r in ROLES}),
    "open_table": ("POST", FORUM + "/threads/{thread}/cards", {}, only_referee(404)),
    "move": (
        "POST",
        FORUM + "/threads/{thread}/cards/moves",
        {"action": "bid"},
        members(404),
    ),
    # ONE combat (issue #33 item 4): no combat yet, so past the checks a conflict; Ada has no
    # sheet to start one from (400).
    "get_combat": ("GET", FORUM + "/threads/{thread}/combat", None, {r: 404 for r in ROLES}),
    "start_combat": (
        "POST",
        FORUM + "/threads/{thread}/combat",
        {"characters": ["ada", "bram"]},
        only_referee(422),
    ),
    "declare_plan": (
        "POST",
        FORUM + "/threads/{thread}/combat/plans",
        {"fighter": "Ada", "plans": [["attack"]]},
        members(409),
    ),
    "resolve_attack": (
        "POST",
        FORUM + "/threads/{thread}/combat/attacks",
        {"attacker": "Ada", "defender": "Bram", "skill": "Short Blade", "attack_roll": "x"},
        only_referee(409),
    ),
    "next_segment": ("POST", FORUM + "/threads/{thread}/combat/next", None, only_referee(409)),
    "end_combat": ("POST", FORUM + "/threads/{thread}/combat/end", None, only_referee(409)),
    "start": ("POST", FORUM + "/start", None, only_referee(200)),
    "end": ("POST", FORUM + "/end", None, only_referee(200)),
    # Both players play a character already: past the checks, a second one is a conflict.
    "make_character": (
        "POST",
        FORUM + "/characters",
        {"name": "Gus", "sheet": {"stats": {"STR": 7, "INT": 7, "DEX": 7, "HLT": 7, "SPD": 7}}},
        {ANON: 401, STRANGER: 403, PLAYER: 409, OTHER: 409, REF: 403},
    ),
    # Issue #33: search (public: a token finds more) and Ada's icons (her player and the GM).
    "search_campaign": ("GET", "/campaigns/{forum}/search?q=wait", None, PUBLIC),
    "list_icons": ("GET", "/campaigns/{forum}/characters/ada/icons", None, PUBLIC),
    "upload_icon": (
        "POST",
        "/campaigns/{forum}/characters/ada/icons",
        {"keyword": "grin", "alt": "Ada grins", "data": ICON_DATA},
        {ANON: 401, STRANGER: 403, PLAYER: 201, OTHER: 403, REF: 201},
    ),
    "default_icon": (
        "POST",
        "/campaigns/{forum}/icons/{icon}/default",
        None,
        {ANON: 401, STRANGER: 403, PLAYER: 200, OTHER: 403, REF: 200},
    ),
    "remove_icon": (
        "DELETE",
        "/campaigns/{forum}/icons/{icon}",
        None,
        {ANON: 401, STRANGER: 403, PLAYER: 200, OTHER: 403, REF: 200},
    ),
    "make_character_for": (
        "POST",
        FORUM + "/characters/for-player",
        lambda role, world: {"player_id": world.users["player"].id, "name": "Gus"},
        only_referee(409),
    ),
}


@pytest.mark.parametrize("name", list(FORUM_MATRIX))
def test_forum_permission(api, connection, forum_world, name):
    check_row(api, connection, forum_world, FORUM_MATRIX[name])
