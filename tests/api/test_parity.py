"""Web/API parity (#18): every page action that changes something has an API twin.

Every state-changing web route (POST, PUT, PATCH or DELETE, outside the API and the static
files) is either mapped here to the API operation that does the same, or listed as having
no twin by design, with the reason. A new page action in neither list fails the first test,
so it cannot land without its API operation (or a reason).
"""

from __future__ import annotations

from pbp.api import OPERATIONS
from pbp.rate_limits import CONTENT_ENDPOINTS, CONTENT_OPERATIONS

WRITES = {"POST", "PUT", "PATCH", "DELETE"}

# web endpoint -> the API operation (pbp.api.registry name) that does the same.
TWINS = {
    # An existing account accepts an invitation (#35 item 3); a new account is made on the
    # invitation's page (the person has no token yet).
    "auth.invite": "accept_invite",
    # the referee's dashboard (pbp.web.referee)
    "referee.post_event": "post_event",
    "referee.queue_event": "queue_event",
    "referee.close": "close_turn",
    "referee.reopen": "reopen_turn",
    "referee.rule": "add_ruling",
    "referee.resolve": "resolve_turn",
    "referee.final_notice": "publish_final_notice",
    "referee.add_character": "add_character",
    "referee.map_commenter": "map_commenter",
    # The page asks the scheduler to poll one blog soon; the API polls it in the request
    # (a script wants the result), or asks for every blog at once (poll_all).
    "referee.poll_now": "poll_now",
    "referee.settings": "put_settings",
    "referee.remind": "send_reminders",
    # the roster's character pages and invitations (pbp.web.roster_admin, pbp.web.auth)
    "roster_admin.resend_invite": "resend_invite",
    "roster_admin.rename": "rename_character",
    "roster_admin.aliases": "set_aliases",
    "roster_admin.feed": "set_feed",
    "roster_admin.drop": "drop_character",
    "roster_admin.hand_over": "hand_over_character",
    "auth.create_invite": "create_invite",
    # starting a campaign, mail preferences
    "public.new_campaign": "create_campaign",
    "mail.preferences": "put_mail_preferences",
    "mail.revoke_replies": "revoke_reply_addresses",
    # issue #31: chat channels and push devices (pbp.web.channels)
    "channels.add_webhook": "add_chat_webhook",
    "channels.remove_webhook": "remove_chat_webhook",
    "channels.add_device": "add_push_device",
    "channels.remove_device": "remove_push_device",
    # a player's blog and notes (pbp.web.blog, pbp.web.player)
    "blog.write": "write_entry",
    "blog.edit": "edit_entry",
    "blog.withdraw": "withdraw",
    "blog.hide": "hide_entry",
    "blog.add_note": "add_note",
    "player.commenter": "declare_commenter",
    # forum scenes (pbp.web.forum)
    "forum.new_thread": "create_thread",
    "forum.reply": "reply",
    "forum.edit": "edit_post",
    "forum.delete": "delete_post",
    "forum.start": "start",
    "forum.end": "end",
    "forum.watch": "watch",
    "forum.sheet_edit": "edit_sheet",
    "forum.make_character": "make_character",
    # character icons (pbp.web.icons, issue #33 item 1)
    "icons.upload": "upload_icon",
    "icons.default": "default_icon",
    "icons.remove": "remove_icon",
    "forum.make_character_for": "make_character_for",
    # ONE combat in a scene (pbp.web.combat, issue #33 item 4)
    "combat.start": "start_combat",
    "combat.declare": "declare_plan",
    "combat.attack": "resolve_attack",
    "combat.next_segment": "next_segment",
    "combat.end": "end_combat",
    "cards.new": "open_table",
    "cards.act": "move",
    "player.blog": "choose_blog",
    # keeping a game alive (pbp.web.activity, issue #30)
    "activity.settings": "put_activity_settings",
    "activity.away": "set_away",
    "activity.back": "end_away",
    # saved drafts of the write forms (pbp.web.saved_drafts; the autosave script posts the
    # same form as the Save draft button)
    "drafts.save": "save_draft",
    "drafts.discard": "delete_draft",
    # the secret calendar address (pbp.web.calendar)
    "calendar.make": "make_calendar",
    "calendar.revoke": "revoke_calendar",
    # read marks (pbp.web.unread): "Mark all read"; the API can mark one scene or entry too
    "unread.mark_all_read": "mark_read",
}

# Page actions whose API twin is still to come: none. A page action added without its
# twin may wait here, named, only while its operation is being written on another branch.
AWAITING_TWIN: set[str] = set()

# Page actions that have no API twin by design, and why.
NO_TWIN = {
    # The API authenticates with a bearer token, made on the token page; it has no cookie
    # session to open or close, and a token cannot be what makes a token.
    "auth.login": "a cookie session; the API uses bearer tokens",
    "auth.logout": "a cookie session; a token is revoked on the token page",
    "tokens.create": "tokens are made by a logged-in person, never by another token",
    "tokens.revoke": "revoked on the token page, by the person who made it",
    # Getting an account: the person has no token yet.
    "signup.signup_page": "sign-up: the person has no account, so no token, yet",
    "signup.resend": "sign-up confirmation mail: no account, so no token, yet",
    "signup.confirm": "the mailed confirmation link sets the password: no token yet",
    "auth.reset_request": "password reset: the person cannot log in, so has no token",
    "auth.reset": "password reset by the mailed link: authorised by that link alone",
    "auth.change_password": "a password is the cookie session's: a token cannot change it",
    # The signed link in a mail is the whole authorisation (RFC 8058 one-click).
    "mail.unsubscribe": "the unsubscribe link in a mail; the API has put_mail_preferences",
    # Not a person's action: a WebSub hub pushing a feed's new content to pbp.
    "websub.deliver": "a hub's server-to-server delivery, signed with the subscription's secret",
    # Not a person's action: another site's Webmention (W3C), a protocol endpoint itself.
    "webmention.receive": "a site's server-to-server Webmention, verified by a job",
}


def _page_actions(app) -> set[str]:
    """Every web endpoint answering a state-changing method (the API and static excluded)."""
    return {
        rule.endpoint
        for rule in app.url_map.iter_rules()
        if rule.methods & WRITES
        and not rule.endpoint.startswith("api.")
        and rule.endpoint != "static"
    }


def test_every_page_action_has_an_api_twin_or_a_reason(app):
    actions = _page_actions(app)
    unaccounted = actions - set(TWINS) - AWAITING_TWIN - set(NO_TWIN)
    assert not unaccounted, f"page actions with no API operation and no reason: {unaccounted}"


def test_each_twin_is_an_api_operation_that_changes_something():
    operations = {op.name: op for op in OPERATIONS}
    missing = {web: api for web, api in TWINS.items() if api not in operations}
    assert not missing, f"twins that are not API operations: {missing}"
    reads = {web: api for web, api in TWINS.items() if not operations[api].writes}
    assert not reads, f"twins that only read: {reads}"


def test_a_rate_limited_page_action_is_rate_limited_in_the_api_too():
    """The per-account content budget holds whichever way the content arrives."""
    limited = {web: TWINS[web] for web in CONTENT_ENDPOINTS if web in TWINS}
    assert limited.keys() == CONTENT_ENDPOINTS
    assert set(limited.values()) <= CONTENT_OPERATIONS, set(limited.values()) - CONTENT_OPERATIONS


def test_the_draft_budget_holds_in_the_api_too():
    """Issue #29 item 5: the autosave's per-account budget holds whichever way it comes."""
    from pbp.rate_limits import DRAFT_ENDPOINTS, DRAFT_OPERATIONS

    assert {TWINS[web] for web in DRAFT_ENDPOINTS} == DRAFT_OPERATIONS


def test_the_lists_name_only_routes_that_exist_and_each_once(app):
    """A renamed or removed page must leave the lists too, or the lists lie."""
    actions = _page_actions(app)
    lists = [set(TWINS), AWAITING_TWIN, set(NO_TWIN)]
    assert set().union(*lists) <= actions, set().union(*lists) - actions
    for i, one in enumerate(lists):
        for other in lists[i + 1 :]:
            assert not one & other, one & other


def test_a_new_page_action_without_a_twin_fails(app):
    """The check itself can fail: a page action added to the app is reported."""

    def new_page_action():
        return "changed"

    app.add_url_rule(
        "/c/<slug>/something-new", "referee_extra.thing", new_page_action, methods=["POST"]
    )
    actions = _page_actions(app)
    assert "referee_extra.thing" in actions - set(TWINS) - AWAITING_TWIN - set(NO_TWIN)
