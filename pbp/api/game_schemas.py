"""The forum games' reads, typed (issue #35 item 2): a roll's result per ruleset and roll
kind, each ruleset's sheet, and each card game's table view.

The services hand these out as plain JSON (the engines' ``view_for``, `RollResult.to_dict`,
the stored sheet); the API validates them into these models, so the OpenAPI document says
field by field what a bot reads, and a field the engine adds without a model here fails the
round-trip test (tests/api/test_typed_games.py) instead of vanishing unnoticed.

Seats: a player's seat at a card table is their user id, an integer as everywhere else in
the API; the GM's side is "gm" and a GM character's id is "npc1", "npc2", ... The engines
keep ids as text, so `Seat` reads "2" as 2.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal, Union

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field
from typing_extensions import TypeAliasType

# Free JSON (a sheet's own fields, an event's data): typed, so no schema is "any object".
if TYPE_CHECKING:  # mypy cannot follow a recursive alias made at run time
    Plain = Any
else:
    Plain = TypeAliasType(
        "Plain",
        Union[str, int, float, bool, None, list["Plain"], dict[str, "Plain"]],  # noqa: UP007
    )


def _seat(value: Any) -> Any:
    """A user id stored as text ("2") is the integer 2; "gm" and "npc1" stay text."""
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return value


Seat = Annotated[
    int | str,
    BeforeValidator(_seat),
    Field(description='A player\'s user id (integer); "gm" for the GM, "npcN" for a GM character.'),
]
PlayerSeat = Annotated[
    int | str, BeforeValidator(_seat), Field(description="The player's user id.")
]
CardCode = Annotated[str, Field(description='A card: rank and suit, e.g. "10H", "QS", "AC".')]


class Typed(BaseModel):
    model_config = ConfigDict(extra="ignore")


# -- rolls -----------------------------------------------------------------------------------


class GenericDie(Typed):
    value: int
    kept: bool
    exploded: bool
    extra: bool
    hit: bool | None


class GenericTerm(Typed):
    term: str
    sign: int
    value: int
    dice: list[GenericDie]


class GenericReading(Typed):
    """A plain dice expression (2d6+1, 4d6kh3, 3d10!, 5d10>=7)."""

    terms: list[GenericTerm]
    capped: bool


class OneCheckPart(Typed):
    faces: list[int]
    roll: int
    target: int
    success: bool


class OneCheckReading(OneCheckPart):
    kind: Literal["check"]
    skill: str | None = Field(description="The skill named, or null for a number.")


class OneContestReading(Typed):
    kind: Literal["contest"]
    skill: str | None = Field(description="The skill named, or null for a number.")
    actor: OneCheckPart
    opponent: OneCheckPart | None
    success: bool


class OneQuickReading(Typed):
    kind: Literal["quick"]
    skill: str | None = Field(description="The skill named, or null for a number.")
    actor_total: int
    opponent_total: int
    winner: str | None


class NoirDice(Typed):
    base: list[int]
    extra: list[int]
    spaerr: int = Field(description="Dice blocked (spärr).")
    L: int
    H: int
    A: int
    exceptional: bool
    capped: bool


class NoirDifficulty(Typed):
    total: int
    automatic: bool
    outcome: str
    dice: NoirDice | None


class NoirSide(Typed):
    total: int
    dice: NoirDice | None


class NoirOpposed(Typed):
    actor: NoirSide
    opponent: NoirSide
    tie_breaks: list[list[int]]
    winner: str | None
    decided_by: str | None
    outcome: dict[str, str] = Field(description="Each side's outcome, by side.")


class NoirDamageReading(Typed):
    kind: Literal["damage"]
    code: str
    dice: NoirDice | None


class NoirDifficultyReading(NoirDifficulty):
    kind: Literal["difficulty"]
    skill: str | None = Field(description="The skill named, or null for a number.")
    score: int
    modifier: int


class NoirExtendedReading(Typed):
    kind: Literal["extended"]
    skill: str | None = Field(description="The skill named, or null for a number.")
    score: int
    modifier: int
    needed: int
    successes: int
    voids: int
    done: bool
    attempts: list[NoirDifficulty]


class NoirOpposedReading(NoirOpposed):
    kind: Literal["opposed"]
    skill: str | None = Field(description="The skill named, or null for a number.")
    score: int
    modifier: int


class NoirContestReading(Typed):
    kind: Literal["contest"]
    skill: str | None = Field(description="The skill named, or null for a number.")
    score: int
    modifier: int
    actor_needs: int
    opponent_needs: int
    actor_wins: int
    opponent_wins: int
    winner: str | None
    attempts: list[NoirOpposed]


class _Result(Typed):
    algorithm: str
    command: str = Field(description="The command as rolled (a named skill with its number).")
    faces: list[list[int]] = Field(description="Every die drawn, in order: [sides, value].")
    total: int | None
    text: str


class GenericResult(_Result):
    ruleset: Literal["generic"]
    reading: GenericReading


class OneResult(_Result):
    ruleset: Literal["one"]
    reading: Annotated[
        OneCheckReading | OneContestReading | OneQuickReading, Field(discriminator="kind")
    ]


class NoirResult(_Result):
    ruleset: Literal["noir"]
    reading: Annotated[
        NoirDamageReading
        | NoirDifficultyReading
        | NoirExtendedReading
        | NoirOpposedReading
        | NoirContestReading,
        Field(discriminator="kind"),
    ]


RollResult = Annotated[GenericResult | OneResult | NoirResult, Field(discriminator="ruleset")]


# -- sheets ----------------------------------------------------------------------------------


class OneSheet(Typed):
    """ONE: the five stats, the skill levels bought above Base, hit points lost."""

    stats: dict[str, int] = Field(description="STR INT DEX HLT SPD.")
    skills: dict[str, int] = Field(default_factory=dict, description="Levels above Base.")
    hit_points_lost: int = 0
    notes: str = ""


class NoirSheet(BaseModel):
    """Noir: whole-number "skills" and "attributes" (a roll names one), and any other
    fields the group keeps."""

    model_config = ConfigDict(extra="allow")
    __pydantic_extra__: dict[str, Plain] = Field(init=False)  # type: ignore[assignment]

    skills: dict[str, int] = Field(default_factory=dict)
    attributes: dict[str, int] = Field(default_factory=dict)


class FreeSheet(BaseModel):
    """Another ruleset's sheet: any fields the group keeps (pbp reads none of them)."""

    model_config = ConfigDict(extra="allow")
    __pydantic_extra__: dict[str, Plain] = Field(init=False)  # type: ignore[assignment]


def sheet_model(ruleset: str) -> type[OneSheet | NoirSheet | FreeSheet]:
    found: dict[str, type[OneSheet | NoirSheet]] = {"one": OneSheet, "noir": NoirSheet}
    return found.get(ruleset, FreeSheet)


# -- card tables: the log --------------------------------------------------------------------


class CardEventOut(Typed):
    """One recorded step, as you may see it (a private part only if it is yours)."""

    kind: str
    text: str
    data: dict[str, Plain]
    owner: Seat | None = None


# -- Sex & Violence --------------------------------------------------------------------------


class SvSettings(Typed):
    gm_sees_hands: bool
    hand_limit: int
    gm_wound_limit: int
    split_bid_shares_top_card: bool
    two_fields_keep_both_jacks: bool
    reshuffle_after_contest: bool


class SvSlot(Typed):
    card: CardCode
    flipped: bool


class SvCharacter(Typed):
    player_id: PlayerSeat
    name: str
    archetype: Literal["survivor", "warrior", "fool", "magician"]
    criminal_background: str
    redeeming_quality: str
    angle: str
    sideboard: list[SvSlot]
    hand: list[SvSlot] | None = Field(description="Null: you may not see this hand.")
    discards: list[CardCode]
    opening_swap_open: bool
    appealed_this_session: bool
    stacked_this_scene: bool
    fought: list[Seat]
    wounds_taken: int
    dead: bool
    deck_count: int
    hand_size: int
    flipped_in_hand: int
    usable_cards: list[CardCode] | None


class SvGmCharacter(Typed):
    id: str = Field(description='"npc1", "npc2", ...')
    name: str
    wounds: int
    out: bool


class SvAttack(Typed):
    target: Seat | None
    cards: list[CardCode]
    announced: list[CardCode]
    lucky: list[CardCode]
    pending: list[str]
    responses: list[CardCode]
    top_card: CardCode | None
    outcome: str | None
    wounds: int
    total: int


class SvWounds(Typed):
    victim: Seat
    amount: int
    opponent: Seat | None
    cancellable: bool


class SvContest(Typed):
    player_id: PlayerSeat
    suit: Literal["C", "D", "H", "S"]
    kind: Literal["plain", "sex", "violence"]
    targets: list[Seat]
    stage: Literal["bidding", "responses", "wounds"]
    attacks: list[SvAttack]
    wounds: list[SvWounds]
    redraw: bool


class SvView(Typed):
    """A Sex & Violence table: the characters (hands only if you may see them), the GM's
    characters and the contest."""

    ruleset: Literal["sex_and_violence"]
    settings: SvSettings
    characters: list[SvCharacter]
    gm_characters: list[SvGmCharacter]
    contest: SvContest | None
    awaiting_response: tuple[int, str, Seat] | None = Field(
        description="[attack index, effect, defender] whose answer the contest waits for."
    )


# -- One Can Have Her ------------------------------------------------------------------------


class OchhSettings(Typed):
    opposition_per_player: int
    starting_coolness: int
    max_opposition_per_conflict: int
    rat_notes: int
    conclusion_tie_break: Literal["highest_card", "gm_decides"]


class OchhPlayer(Typed):
    player_id: PlayerSeat
    character_name: str
    archetype: str
    drive: str
    dream_woman: str
    future_with_lula: str
    coolness: int
    fate: Literal["jail", "dead"] | None
    rat_left: int | None = Field(default=None, description="Yours, or all for the GM.")
    dont_rat_left: int | None = None


class OchhNote(Typed):
    round: int
    player_id: PlayerSeat
    rat: bool


class OchhNotes(Typed):
    handed_in: dict[str, bool] = Field(description="By player id: handed in this round.")
    notes: list[OchhNote] | None = Field(default=None, description="The notes you may read.")
    ratted_on_by: dict[str, list[PlayerSeat]] | None = Field(
        default=None, description="By revealed round: the players whose rat notes named you."
    )


class OchhSide(Typed):
    owner: Seat
    turns: list[list[CardCode] | None] = Field(description="Null: a turn not flipped yet.")
    opposition: int
    coolness: int
    counts: list[int]


class OchhTurnResult(Typed):
    successes: list[int]
    winner: int | None = Field(description="The side (0 or 1) that won the turn.")
    narrator: int = Field(description="The side (0 or 1) that narrates.")
    tie_draws: list[list[CardCode]]
    reason: str


class OchhConflict(Typed):
    id: str
    round: int
    sides: list[OchhSide]
    stakes: str
    accepted: list[int] = Field(description="The sides (0 or 1) that accepted the stakes.")
    results: list[OchhTurnResult]
    concluder: int | None = Field(description="The side (0 or 1) that concludes.")
    conclusion_reason: str
    conclusion_draws: list[list[CardCode]]
    forfeited_by: list[int] = Field(description="The sides (0 or 1) that forfeited.")
    deck_count: int


class OchhView(Typed):
    """A One Can Have Her table: sheets, pools, rat notes as you may see them, conflicts
    (unflipped turns as counts only)."""

    ruleset: Literal["one_can_have_her"]
    settings: OchhSettings
    players: list[OchhPlayer]
    phase: Literal[
        "setup",
        "notes",
        "ordering",
        "scenes",
        "end_roll",
        "bonus",
        "flipping",
        "round_done",
        "epilogues",
    ]
    round: int
    opposition_pool: int
    coolness_pool: int
    notes: OchhNotes
    revealed_rounds: list[int]
    scene_order: list[PlayerSeat]
    scenes_opened: list[PlayerSeat]
    monologues: list[tuple[int, PlayerSeat, str]] = Field(description="[round, player, text].")
    conflicts: list[OchhConflict]
    end_roll: int | None
    final: bool
    epilogue_order: list[PlayerSeat]
    in_conflict: dict[str, str | None] = Field(description="By player id: their conflict's id.")
    round_name: str | None
    epilogues: dict[str, str] | None = Field(default=None, description="By player id, at the end.")


TableView = Annotated[SvView | OchhView, Field(discriminator="ruleset")]
