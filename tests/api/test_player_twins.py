"""Every page action of a player (the blog, their settings, the forum, the card tables) has
its API twin (#18 item 1): a new POST route in these blueprints fails here until it has one.
The referee's pages are listed by their own test."""

from __future__ import annotations

from pbp.api import OPERATIONS

PLAYER_BLUEPRINTS = {"blog", "player", "forum", "cards"}

# page endpoint -> API operation(s) that do the same action
TWINS = {
    "blog.write": {"write_entry"},
    "blog.edit": {"edit_entry"},
    "blog.withdraw": {"withdraw"},
    "blog.hide": {"hide_entry"},
    "blog.add_note": {"add_note"},
    "player.blog": {"choose_blog"},
    "player.commenter": {"declare_commenter"},
    "forum.new_thread": {"create_thread"},
    "forum.reply": {"reply"},
    "forum.watch": {"watch"},
    "forum.edit": {"edit_post"},
    "forum.delete": {"delete_post"},
    "forum.start": {"start"},
    "forum.end": {"end"},
    "forum.sheet_edit": {"edit_sheet"},
    "forum.make_character": {"make_character"},
    "forum.make_character_for": {"make_character_for"},
    "cards.new": {"open_table"},
    "cards.act": {"move"},
}


def _state_changing_endpoints(app) -> set[str]:
    return {
        rule.endpoint
        for rule in app.url_map.iter_rules()
        if rule.endpoint.split(".")[0] in PLAYER_BLUEPRINTS
        and rule.methods & {"POST", "PUT", "PATCH", "DELETE"}
    }


def test_every_players_page_action_is_listed_with_its_twin(app):
    assert _state_changing_endpoints(app) == set(TWINS)


def test_every_twin_is_an_api_operation_that_writes():
    writes = {op.name for op in OPERATIONS if op.method != "GET"}
    missing = {page: ops - writes for page, ops in TWINS.items() if ops - writes}
    assert not missing
