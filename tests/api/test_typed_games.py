"""The forum games' API is typed (issue #35 item 2): no response of a forum or card
operation holds an untyped object, every card move has its own schema, and the typed models
carry every field the engines and the dice hand out (nothing dropped on the way)."""

from __future__ import annotations

import random

import pytest
from pydantic import TypeAdapter

from pbp.api import OPERATIONS, game_schemas
from pbp.api.openapi import document
from pbp.rules import dice
from pbp.rules import one_can_have_her as ochh
from pbp.rules import sex_and_violence as sv
from pbp.rules.cards import Viewer
from pbp.services.cards.actions import RULESETS, Actor, apply_action
from tests.rules.one_can_have_her import builders as ob

WARRIOR = {
    "archetype": "warrior",
    "criminal_background": "Enforcer",
    "redeeming_quality": "Loyal",
    "angle": "bodyguard",
    "fields": ["C"],
}

FORUM_OPS = [op for op in OPERATIONS if op.tag == "forum"]


def _resolve(doc: dict, schema: dict) -> dict:
    while "$ref" in schema:
        schema = doc["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return schema


def untyped(doc: dict, schema: dict, where: str, seen: set[str]) -> list[str]:
    """Every place under `schema` that accepts any object (or anything at all)."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[1]
        if name in seen:
            return []
        seen.add(name)
        return untyped(doc, _resolve(doc, schema), name, seen)
    found = []
    if schema == {} or schema is True:
        return [f"{where}: any value"]
    if schema.get("type") == "object":
        extra = schema.get("additionalProperties", "properties" not in schema)
        if "properties" not in schema and extra in (True, {}):
            found.append(f"{where}: an object without properties")
        if extra in (True, {}) and "properties" in schema:
            found.append(f"{where}: an object open to any extra field")
        if isinstance(extra, dict):
            found += untyped(doc, extra, f"{where}.*", seen)
    for name, sub in (schema.get("properties") or {}).items():
        found += untyped(doc, sub, f"{where}.{name}", seen)
    if isinstance(schema.get("items"), dict):
        found += untyped(doc, schema["items"], f"{where}[]", seen)
    for key in ("anyOf", "oneOf", "allOf", "prefixItems"):
        for sub in schema.get(key, []):
            found += untyped(doc, sub, where, seen)
    return found


def test_no_untyped_object_in_a_response_of_the_forum_or_card_operations():
    doc = document()
    problems = []
    for op in FORUM_OPS:
        path = doc["paths"][op.openapi_path][op.method.lower()]
        success = path["responses"][str(op.status)]["content"]["application/json"]["schema"]
        problems += untyped(doc, success, op.name, set())
    assert not problems, problems


def test_the_walker_finds_an_untyped_object():
    doc = {"components": {"schemas": {"A": {"type": "object", "properties": {"v": {}}}}}}
    assert untyped(doc, {"$ref": "#/components/schemas/A"}, "x", set()) == ["A.v: any value"]
    loose = {"type": "object", "additionalProperties": True}
    assert untyped(doc, loose, "x", set()) == ["x: an object without properties"]


def test_every_card_move_has_its_own_schema_with_its_parameters():
    doc = document()
    body = doc["paths"]["/campaigns/{slug}/forum/threads/{thread_id}/cards/moves"]["post"]
    schema = _resolve(doc, body["requestBody"]["content"]["application/json"]["schema"])
    mapping = schema["discriminator"]["mapping"]
    engine_actions = {a for ruleset in RULESETS.values() for a in ruleset.actions}
    assert set(mapping) == engine_actions
    bid = _resolve(doc, {"$ref": mapping["bid"]})
    params = _resolve(doc, bid["properties"]["params"])
    assert {"cards", "split", "announce", "redraw"} <= set(params["properties"])
    move = _resolve(doc, {"$ref": mapping["create_character"]})
    create = _resolve(doc, move["properties"]["params"])
    assert "fields" in create["properties"] and create["additionalProperties"] is False


def test_each_rulesets_sheet_has_its_schema():
    schemas = document()["components"]["schemas"]
    assert set(schemas["OneSheet"]["properties"]) >= {"stats", "skills", "hit_points_lost"}
    assert set(schemas["NoirSheet"]["properties"]) >= {"skills", "attributes"}


# -- nothing the engines say is lost in the typed models ---------------------------------------


def _round_trip(adapter: TypeAdapter, value: dict) -> dict:
    return adapter.dump_python(adapter.validate_python(value), mode="json", exclude_unset=True)


def _sv_states():
    """A table through the moves a bot makes: characters, a contest, a bid."""
    ruleset, rng = RULESETS["sex-and-violence"], random.Random(3)
    game = ruleset.new_game({})
    states = [game]
    moves = [
        ("1", "create_character", {**WARRIOR, "name": "Max"}),
        ("2", "create_character", {**WARRIOR, "name": "Burke", "fields": ["H", "S"]}),
        ("1", "keep", {}),
        ("2", "keep", {}),
        ("gm", "add_gm_character", {"name": "Big Sal"}),
        ("gm", "open_contest", {"player": "1", "suit": "C", "kind": "violence",
                                "targets": ["2"]}),
    ]  # fmt: skip
    for actor, action, params in moves:
        game = apply_action(ruleset, game, action, Actor(actor), params, rng).state
        states.append(game)
    usable = [c for c in game.characters if c.player_id == "1"][0].usable_cards
    bid = {"cards": [usable[0].code]}
    states.append(apply_action(ruleset, game, "bid", Actor("1"), bid, rng).state)
    return states


def _ochh_states():
    g = ob.table(3)
    bonus = ob.to_bonus(g, rats=["p2"])
    flipped = ob.flip_all(bonus, bonus.conflicts[0].id)
    for conflict in bonus.conflicts[1:]:
        flipped = ob.flip_all(flipped, conflict.id)
    return [g, bonus, flipped, ob.finish_round(flipped)]


VIEWERS = [Viewer.gm(), Viewer.spectator(), Viewer.player("p1"), Viewer.player("1")]


@pytest.mark.parametrize("viewer", VIEWERS, ids=["gm", "spectator", "player", "seat"])
def test_the_table_views_keep_every_field(viewer):
    adapter = TypeAdapter(game_schemas.TableView)
    views = [ochh.view_for(g, viewer) for g in _ochh_states()]
    views += [sv.view_for(g, viewer) for g in _sv_states()]
    assert views
    for view in views:
        assert _round_trip(adapter, view) == seats_as_numbers(view)


def seats_as_numbers(value):
    """The engines' text ids ("2") as the API gives them (2); "gm", "p1" unchanged."""
    if isinstance(value, dict):
        return {k: seats_as_numbers(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [seats_as_numbers(v) for v in value]
    return int(value) if isinstance(value, str) and value.isdigit() else value


def test_a_players_seat_is_an_integer_and_the_gm_keeps_gm():
    seat = TypeAdapter(game_schemas.Seat)
    assert (seat.validate_python("2"), seat.validate_python("gm")) == (2, "gm")


COMMANDS = [
    "2d6+1",
    "4d6kh3",
    "3d10!",
    "5d10>=7",
    "one check skill=8",
    "one contest skill=8 vs=6",
    "one quick skill=8 vs=6",
    "noir difficulty skill=8",
    "noir opposed skill=8 vs=7",
    "noir extended skill=8 successes=3",
    "noir contest skill=8 vs=7 best=3",
    "noir damage 3T+2",
]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_roll_kind_keeps_every_field(command):
    adapter = TypeAdapter(game_schemas.RollResult)
    result = dice.execute(dice.parse_roll_command(command), random.Random(7)).to_dict()
    assert _round_trip(adapter, result) == dice_plain(result)


def dice_plain(value):
    import json

    return json.loads(json.dumps(value))
