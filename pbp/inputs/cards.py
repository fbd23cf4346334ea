"""A card move as the API takes it (issue #35 item 2): one schema per action, told apart by
`action`, each with its own parameters, so the OpenAPI document lists every move a bot may
send. The engine still decides whether the move is allowed now (pbp.services.cards.actions
reads the same parameters from the page's form).

Seats: a player is named by their user id, an integer as elsewhere in the API ("2" is read
as 2, for clients written before); the GM's side is "gm", a GM character "npc1". The record
keeps them as the engines do, as text, so `params()` gives them back as text.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel

from pbp.inputs import Text

Seat = Annotated[
    int | Annotated[str, Field(pattern=r"^(gm|npc\d+|\d+)$")],
    Field(description='A player\'s user id; "gm" for the GM, "npcN" for a GM character.'),
]
Card = Annotated[
    str, Field(pattern=r"^(10|[2-9AJQKajqk])[CDHScdhs]$", description='e.g. "10H", "QS".')
]
Suit = Literal["C", "D", "H", "S"]
Short = Annotated[Text, Field(min_length=1, max_length=120)]
Line = Annotated[Text, Field(min_length=1, max_length=2000)]
ConflictId = Annotated[Text, Field(min_length=1, max_length=60, description='e.g. "r1-2".')]


class Params(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NoParams(Params):
    """This move takes no parameters."""


class _Move(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: int | None = Field(
        default=None,
        ge=0,
        description="The table's version you saw: a move on a table changed since is refused.",
    )


def _move(action: str, params: type[Params], doc: str) -> type[_Move]:
    from pydantic import create_model

    name = "".join(part.capitalize() for part in action.split("_")) + "Move"
    default: Any = (
        ...
        if params.model_fields and any(f.is_required() for f in params.model_fields.values())
        else Field(default_factory=params)
    )
    return create_model(
        name,
        __base__=_Move,
        __doc__=doc,
        action=(Literal[action], ...),  # type: ignore[valid-type,arg-type]
        params=(params, default),
    )


# -- Sex & Violence --------------------------------------------------------------------------


class CreateCharacter(Params):
    name: Short
    archetype: Literal["survivor", "warrior", "fool", "magician"]
    criminal_background: Line
    redeeming_quality: Line
    angle: Annotated[Text, Field(min_length=1, max_length=200)]
    fields: list[Suit] = Field(max_length=4, description="One, two or three fields of expertise.")


class OneCard(Params):
    card: Card


class Named(Params):
    name: Short


class OpenContest(Params):
    player: Seat = Field(description="The player who bids.")
    suit: Suit
    kind: Literal["plain", "sex", "violence"]
    targets: list[Seat] = Field(default_factory=list, max_length=20)


class Bid(Params):
    cards: list[Card] = Field(default_factory=list, max_length=20, description="The bid.")
    split: dict[str, list[Card]] | None = Field(
        default=None, description="A bid split between opponents: cards by target seat."
    )
    announce: list[Card] | None = None
    redraw: bool = True


class Cards(Params):
    cards: list[Card] = Field(default_factory=list, max_length=20)


class RuleAce(Params):
    defender: Seat
    meets: bool


class Prefer(Params):
    prefer: list[Card] = Field(default_factory=list, max_length=20)


class FaceCard(Params):
    face_card: Card


class RuleCancel(Params):
    player: Seat
    face_card: Card
    criterion_met: bool | None = None


class RestoreFace(Params):
    face_card: Card
    restore: Card


class StackDeck(Params):
    exchange: list[Card] = Field(max_length=20)


# -- One Can Have Her ------------------------------------------------------------------------


class AddPlayer(Params):
    character_name: Short
    archetype: Annotated[Text, Field(min_length=1, max_length=200)]
    drive: Line
    dream_woman: Line
    future_with_lula: Line


class HandInNote(Params):
    rat: bool


class Order(Params):
    order: list[Seat] = Field(max_length=20, description="Players' seats, in order.")


class OpenScene(Params):
    monologue: Annotated[Text, Field(min_length=1, max_length=5000)]


class StartConflict(Params):
    stakes: Line
    opponent: Seat | None = Field(default=None, description="Another player; none: the GM.")


class SetStakes(Params):
    conflict: ConflictId
    stakes: Line


class OfConflict(Params):
    conflict: ConflictId


class AddBonusCards(Params):
    conflict: ConflictId
    side: Seat = Field(description="The side's owner.")
    counts: list[Annotated[int, Field(ge=0, le=60)]] = Field(min_length=3, max_length=3)


class BreakTie(Params):
    conflict: ConflictId
    side: Seat


class AwardCoolness(Params):
    receiver: Seat


class ChooseFate(Params):
    fate: Literal["jail", "dead"]


MOVES: dict[str, tuple[type[Params], str]] = {
    # Sex & Violence
    "create_character": (CreateCharacter, "Create your character (Sex & Violence)."),
    "swap": (OneCard, "Swap a card of the opening hand."),
    "keep": (NoParams, "Keep the opening hand."),
    "add_gm_character": (Named, "Add a GM character (the GM)."),
    "open_contest": (OpenContest, "Open a contest (the GM)."),
    "bid": (Bid, "Bid cards, or split the bid between opponents."),
    "answer_ace": (Cards, "Answer the ace (no cards: give in)."),
    "rule_ace": (RuleAce, "Rule on a GM character's answer (the GM)."),
    "take_wounds": (Prefer, "Take the wounds."),
    "cancel_wounds": (FaceCard, "Cancel the wounds with a face card."),
    "rule_cancel": (RuleCancel, "Confirm a cancel (the GM)."),
    "flip_to_draw": (FaceCard, "Flip a face card to draw."),
    "restore_hand": (FaceCard, "Flip a face card to restore the hand."),
    "restore_face": (RestoreFace, "Flip a face card to restore a lesser one."),
    "appeal": (NoParams, "Appeal to the archetype."),
    "stack_deck": (StackDeck, "Stack the deck."),
    "end_scene": (NoParams, "End the scene (the GM)."),
    "end_session": (NoParams, "End the session (the GM)."),
    # One Can Have Her
    "add_player": (AddPlayer, "Add your character sheet (One Can Have Her)."),
    "start_game": (NoParams, "Start the game (the GM)."),
    "hand_in_note": (HandInNote, "Hand in a rat note."),
    "order_scenes": (Order, "Order the scenes (the GM)."),
    "open_scene": (OpenScene, "Open your scene with a monologue."),
    "start_conflict": (StartConflict, "Start a conflict."),
    "set_stakes": (SetStakes, "Propose new stakes."),
    "accept_stakes": (OfConflict, "Accept the stakes."),
    "roll_end_die": (NoParams, "Roll the end die (the GM)."),
    "add_bonus_cards": (AddBonusCards, "Add bonus cards for each of the three turns."),
    "flip_turn": (OfConflict, "Flip the next turn."),
    "gm_break_tie": (BreakTie, "Break the tie (the GM)."),
    "award_coolness": (AwardCoolness, "Award a Coolness card."),
    "end_round": (NoParams, "End the round (the GM)."),
    "choose_fate": (ChooseFate, "Choose your end."),
    "order_epilogues": (Order, "Order the epilogues (the GM)."),
}

MOVE_MODELS = tuple(_move(action, params, doc) for action, (params, doc) in MOVES.items())


def _union() -> Any:
    from functools import reduce
    from operator import or_

    return Annotated[reduce(or_, MOVE_MODELS), Field(discriminator="action")]


class CardMove(RootModel[_union()]):  # type: ignore[misc]
    """One move at a card table: `action` names it, `params` holds its choices (each action's
    own schema), `version` the table's version you saw."""

    def params(self) -> dict[str, Any]:
        """The parameters as the engines and the record take them (seats as text)."""
        return _as_text(self.root.params.model_dump(exclude_none=False))

    @property
    def action(self) -> str:
        return self.root.action

    @property
    def version(self) -> int | None:
        return self.root.version


_SEAT_FIELDS = {"player", "defender", "receiver", "opponent", "side", "targets", "order"}


def _as_text(params: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for key, value in params.items():
        if key in _SEAT_FIELDS:
            value = [str(v) for v in value] if isinstance(value, list) else _text(value)
        if key == "split" and isinstance(value, dict):
            value = {str(k): v for k, v in value.items()}
        if value is None and key in {"split", "announce", "opponent", "criterion_met"}:
            continue  # absent, as the page's form leaves it
        out[key] = value
    return out


def _text(value: Any) -> Any:
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value
