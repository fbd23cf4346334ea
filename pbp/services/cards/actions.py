"""The card games' actions: who may take each one and how its plain parameters (what a form or
an export holds) become a call into the pure engine.

No database and no clock here: `apply_action` is the single way an action reaches an engine,
used by pbp.services.cards.tables to play and by `verify_card_export` to replay a finished game from
its record with the revealed seed. Parameters are JSON values (strings, lists, booleans,
objects); anything malformed is a `RulesError` (a 422 refusal), never a 500.
"""

from __future__ import annotations

import enum
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from pbp.rules import one_can_have_her as ochh
from pbp.rules import sex_and_violence as sv
from pbp.rules.cards import Card, Outcome, RulesError, Suit, Viewer

GM = "gm"
"""The GM's actor id (One Can Have Her uses the same id for the GM's side of a conflict)."""

MAX_TEXT = 2000
MAX_MONOLOGUE = 5000


@dataclass(frozen=True)
class Actor:
    """Who takes an action: the GM, or one player (the user id as a string)."""

    id: str

    @property
    def is_gm(self) -> bool:
        return self.id == GM

    def viewer(self) -> Viewer:
        return Viewer.gm() if self.is_gm else Viewer.player(self.id)


class Params:
    """Typed reading of an action's parameters, with messages for the person who sent them."""

    def __init__(self, raw: Mapping[str, Any] | None):
        if raw is not None and not isinstance(raw, Mapping):
            raise RulesError("The form is damaged: reload the page.")
        self.raw = dict(raw or {})

    def text(self, name: str, *, limit: int = MAX_TEXT, required: bool = True) -> str:
        value = self.raw.get(name, "")
        if not isinstance(value, str):
            raise RulesError(f"The form is damaged ({name}): reload the page.")
        value = value.replace("\r\n", "\n").strip()
        if required and not value:
            raise RulesError(f"Fill in {name.replace('_', ' ')}.")
        if len(value) > limit:
            raise RulesError(f"{name.replace('_', ' ').capitalize()}: at most {limit} characters.")
        return value

    def optional(self, name: str) -> str | None:
        value = self.text(name, required=False, limit=100)
        return value or None

    def strings(self, name: str) -> list[str]:
        value = self.raw.get(name, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise RulesError(f"The form is damaged ({name}): reload the page.")
        return [v.strip() for v in value if v.strip()]

    def card(self, name: str) -> Card:
        code = self.text(name, limit=4)
        return Card.from_code(code)

    def cards(self, name: str) -> tuple[Card, ...]:
        return tuple(Card.from_code(code) for code in self.strings(name))

    def maybe_cards(self, name: str) -> tuple[Card, ...] | None:
        return None if self.raw.get(name) is None else self.cards(name)

    def flag(self, name: str, default: bool | None = None) -> bool | None:
        value = self.raw.get(name, default)
        if value is not None and not isinstance(value, bool):
            raise RulesError(f"The form is damaged ({name}): reload the page.")
        return value

    def choice(self, name: str, kind: type[enum.Enum]) -> Any:
        value = self.text(name, limit=40)
        try:
            return kind(value)
        except ValueError:
            allowed = ", ".join(str(member.value) for member in kind)
            raise RulesError(f"{value!r} is not a choice for {name}; choose {allowed}.") from None

    def suits(self, name: str) -> list[Suit]:
        out = []
        for value in self.strings(name):
            try:
                out.append(Suit(value))
            except ValueError:
                raise RulesError(f"{value!r} is not a suit (C, D, H or S).") from None
        return out

    def split(self, name: str) -> dict[str, tuple[Card, ...]]:
        value = self.raw.get(name, {})
        if not isinstance(value, Mapping):
            raise RulesError(f"The form is damaged ({name}): reload the page.")
        return {str(k): Params({"c": v}).cards("c") for k, v in value.items()}

    def counts(self, name: str) -> tuple[int, ...]:
        value = self.raw.get(name, [])
        if not isinstance(value, list) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in value
        ):
            raise RulesError("Give a whole number of cards for each of the three turns.")
        return tuple(value)


Runner = Callable[[Any, Actor, Params, random.Random], Outcome]


@dataclass(frozen=True)
class Action:
    """One action of a ruleset: a label for pages, who may take it, and how to run it."""

    label: str
    who: str  # "gm", "player" or "either"
    run: Runner


@dataclass(frozen=True)
class Ruleset:
    """A card ruleset as the server plays it: the engine module and its actions."""

    key: str
    name: str
    engine: ModuleType
    actions: Mapping[str, Action]
    make_settings: Callable[[Mapping[str, Any]], Any]

    def new_game(self, settings: Mapping[str, Any]) -> Any:
        return self.engine.new_game(self.make_settings(settings))

    def load(self, state: Mapping[str, Any]) -> Any:
        return self.engine.Game.from_dict(state)

    def view(self, game: Any, viewer: Viewer) -> dict[str, Any]:
        """``view_for`` – with a player who has no seat at this table seen as a spectator:
        One Can Have Her would tell any other player id that every rat ratted on him."""
        if viewer.player_id is not None and viewer.player_id not in self.seated(game):
            viewer = Viewer.spectator()
        return self.engine.view_for(game, viewer)

    def seated(self, game: Any) -> set[str]:
        people = game.characters if self.key == "sex-and-violence" else game.players
        return {person.player_id for person in people}


def apply_action(
    ruleset: Ruleset, game: Any, action: str, actor: Actor, params: Any, rng: random.Random
) -> Outcome:
    """Check that ``actor`` may take ``action`` and run it through the engine."""
    found = ruleset.actions.get(action)
    if found is None:
        raise RulesError(f"{ruleset.name} has no action {action!r}.")
    if found.who == "gm" and not actor.is_gm:
        raise RulesError(f"Only the GM can {found.label.lower()}.")
    if found.who == "player" and actor.is_gm:
        raise RulesError(f"Only a player can {found.label.lower()}.")
    return found.run(game, actor, Params(params), rng)


# -- Sex & Violence ----------------------------------------------------------------------------


def _sv_create(game, actor, p, rng):
    return sv.add_character(
        game,
        player_id=actor.id,
        name=p.text("name", limit=120),
        archetype=p.choice("archetype", sv.Archetype),
        criminal_background=p.text("criminal_background"),
        redeeming_quality=p.text("redeeming_quality"),
        angle=p.text("angle", limit=200),
        fields=p.suits("fields"),
        rng=rng,
    )


def _sv_add_npc(game, actor, p, rng):
    npc_id = f"npc{len(game.gm_characters) + 1}"
    return sv.add_gm_character(game, gm_id=npc_id, name=p.text("name", limit=120))


def _sv_open_contest(game, actor, p, rng):
    return sv.open_contest(
        game,
        player_id=p.text("player", limit=40),
        suit=p.choice("suit", Suit),
        kind=p.choice("kind", sv.ContestKind),
        targets=p.strings("targets"),
    )


def _sv_bid(game, actor, p, rng):
    cards = p.split("split") if p.raw.get("split") else p.cards("cards")
    return sv.bid(
        game,
        player_id=actor.id,
        cards=cards,
        rng=rng,
        announce=p.maybe_cards("announce"),
        redraw=bool(p.flag("redraw", True)),
    )


def _sv_answer_ace(game, actor, p, rng):
    return sv.respond_to_ace(game, defender=actor.id, rng=rng, cards=p.cards("cards"))


def _sv_rule_ace(game, actor, p, rng):
    meets = p.flag("meets")
    if meets is None:
        raise RulesError("Rule whether the answer is met: yes or no.")
    return sv.respond_to_ace(game, defender=p.text("defender", limit=40), rng=rng, meets=meets)


def _sv_rule_cancel(game, actor, p, rng):
    return sv.cancel_wounds(
        game,
        player_id=p.text("player", limit=40),
        face_card=p.card("face_card"),
        rng=rng,
        criterion_met=p.flag("criterion_met"),
    )


SEX_AND_VIOLENCE = Ruleset(
    key="sex-and-violence",
    name="Sex & Violence",
    engine=sv,
    make_settings=lambda raw: sv.Settings.from_dict(raw),
    actions={
        "create_character": Action("Create a character", "player", _sv_create),
        "swap": Action(
            "Swap a card of the opening hand",
            "player",
            lambda g, a, p, r: sv.swap_opening_card(g, player_id=a.id, card=p.card("card"), rng=r),
        ),
        "keep": Action(
            "Keep the opening hand",
            "player",
            lambda g, a, p, r: sv.keep_opening_hand(g, player_id=a.id),
        ),
        "add_gm_character": Action("Add a GM character", "gm", _sv_add_npc),
        "open_contest": Action("Open a contest", "gm", _sv_open_contest),
        "bid": Action("Bid", "player", _sv_bid),
        "answer_ace": Action("Answer the ace", "player", _sv_answer_ace),
        "rule_ace": Action("Rule on a GM character's answer", "gm", _sv_rule_ace),
        "take_wounds": Action(
            "Take the wounds",
            "player",
            lambda g, a, p, r: sv.take_wounds(g, player_id=a.id, rng=r, prefer=p.cards("prefer")),
        ),
        "cancel_wounds": Action(
            "Cancel the wounds",
            "player",
            lambda g, a, p, r: sv.cancel_wounds(
                g, player_id=a.id, face_card=p.card("face_card"), rng=r
            ),
        ),
        "rule_cancel": Action("Confirm a cancel", "gm", _sv_rule_cancel),
        "flip_to_draw": Action(
            "Flip a face card to draw",
            "player",
            lambda g, a, p, r: sv.flip_to_draw(
                g, player_id=a.id, face_card=p.card("face_card"), rng=r
            ),
        ),
        "restore_hand": Action(
            "Flip a face card to restore the hand",
            "player",
            lambda g, a, p, r: sv.flip_to_restore_hand(
                g, player_id=a.id, face_card=p.card("face_card")
            ),
        ),
        "restore_face": Action(
            "Flip a face card to restore a lesser one",
            "player",
            lambda g, a, p, r: sv.flip_to_restore_face(
                g, player_id=a.id, face_card=p.card("face_card"), restore=p.card("restore")
            ),
        ),
        "appeal": Action(
            "Appeal to the archetype",
            "player",
            lambda g, a, p, r: sv.appeal_to_archetype(g, player_id=a.id, rng=r),
        ),
        "stack_deck": Action(
            "Stack the deck",
            "player",
            lambda g, a, p, r: sv.stack_deck(
                g, player_id=a.id, exchange=p.cards("exchange"), rng=r
            ),
        ),
        "end_scene": Action("End the scene", "gm", lambda g, a, p, r: sv.end_scene(g)),
        "end_session": Action("End the session", "gm", lambda g, a, p, r: sv.end_session(g)),
    },
)


# -- One Can Have Her --------------------------------------------------------------------------


def _ochh_settings(raw: Mapping[str, Any]) -> ochh.Settings:
    try:
        return ochh.Settings.from_dict(raw)
    except (TypeError, ValueError) as exc:
        raise RulesError(f"These settings cannot be used: {exc}") from None


def _ochh_add_player(game, actor, p, rng):
    return ochh.add_player(
        game,
        player_id=actor.id,
        character_name=p.text("character_name", limit=120),
        archetype=p.text("archetype", limit=200),
        drive=p.text("drive"),
        dream_woman=p.text("dream_woman"),
        future_with_lula=p.text("future_with_lula"),
    )


def _ochh_note(game, actor, p, rng):
    rat = p.flag("rat")
    if rat is None:
        raise RulesError('Choose the note to hand in: "Rat" or "Don\'t rat".')
    return ochh.hand_in_note(game, player_id=actor.id, rat=rat)


def _ochh_flip(game, actor, p, rng):
    conflict = game.conflict(p.text("conflict", limit=60))
    if not actor.is_gm and actor.id not in conflict.players:
        raise RulesError("Only the GM or a side of this conflict flips its cards.")
    return ochh.flip_turn(game, conflict_id=conflict.id, rng=rng)


ONE_CAN_HAVE_HER = Ruleset(
    key="one-can-have-her",
    name="One Can Have Her",
    engine=ochh,
    make_settings=_ochh_settings,
    actions={
        "add_player": Action("Add a character sheet", "player", _ochh_add_player),
        "start_game": Action("Start the game", "gm", lambda g, a, p, r: ochh.start_game(g)),
        "hand_in_note": Action("Hand in a rat note", "player", _ochh_note),
        "order_scenes": Action(
            "Order the scenes",
            "gm",
            lambda g, a, p, r: ochh.order_scenes(g, order=p.strings("order")),
        ),
        "open_scene": Action(
            "Open your scene",
            "player",
            lambda g, a, p, r: ochh.open_scene(
                g, player_id=a.id, monologue=p.text("monologue", limit=MAX_MONOLOGUE)
            ),
        ),
        "start_conflict": Action(
            "Start a conflict",
            "player",
            lambda g, a, p, r: ochh.start_conflict(
                g, player_id=a.id, stakes=p.text("stakes"), rng=r, opponent=p.optional("opponent")
            ),
        ),
        "set_stakes": Action(
            "Propose new stakes",
            "either",
            lambda g, a, p, r: ochh.set_stakes(
                g, conflict_id=p.text("conflict", limit=60), by=a.id, stakes=p.text("stakes")
            ),
        ),
        "accept_stakes": Action(
            "Accept the stakes",
            "either",
            lambda g, a, p, r: ochh.accept_stakes(
                g, conflict_id=p.text("conflict", limit=60), by=a.id
            ),
        ),
        "roll_end_die": Action(
            "Roll the end die", "gm", lambda g, a, p, r: ochh.roll_end_die(g, rng=r)
        ),
        "add_bonus_cards": Action(
            "Add bonus cards",
            "either",
            lambda g, a, p, r: ochh.add_bonus_cards(
                g,
                conflict_id=p.text("conflict", limit=60),
                side=p.text("side", limit=40),
                by=a.id,
                counts=p.counts("counts"),
            ),
        ),
        "flip_turn": Action("Flip the next turn", "either", _ochh_flip),
        "gm_break_tie": Action(
            "Break the tie",
            "gm",
            lambda g, a, p, r: ochh.gm_break_tie(
                g, conflict_id=p.text("conflict", limit=60), side=p.text("side", limit=40)
            ),
        ),
        "award_coolness": Action(
            "Award a Coolness card",
            "player",
            lambda g, a, p, r: ochh.award_coolness(
                g, giver=a.id, receiver=p.text("receiver", limit=40)
            ),
        ),
        "end_round": Action("End the round", "gm", lambda g, a, p, r: ochh.end_round(g)),
        "choose_fate": Action(
            "Choose your end",
            "player",
            lambda g, a, p, r: ochh.choose_fate(
                g, player_id=a.id, fate=p.choice("fate", ochh.Fate)
            ),
        ),
        "order_epilogues": Action(
            "Order the epilogues",
            "gm",
            lambda g, a, p, r: ochh.order_epilogues(g, order=p.strings("order")),
        ),
    },
)

RULESETS: dict[str, Ruleset] = {
    SEX_AND_VIOLENCE.key: SEX_AND_VIOLENCE,
    ONE_CAN_HAVE_HER.key: ONE_CAN_HAVE_HER,
}


def ruleset_for(key: str) -> Ruleset:
    try:
        return RULESETS[key]
    except KeyError:
        raise RulesError(f"{key!r} is not a card game pbp can play.") from None
