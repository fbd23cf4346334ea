"""One Can Have Her (a game noir by Jonas Karlsson): the game state and its JSON form.

Frozen dataclasses only; the actions live in :mod:`pbp.rules.one_can_have_her.game` (rounds, rat
notes, coolness, the end) and :mod:`pbp.rules.one_can_have_her.conflict` (the card conflicts).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from pbp.rules.cards import Card, Deck, RulesError, decode_cards, encode_cards


class OneCanHaveHerError(RulesError):
    """An action the One Can Have Her rules do not allow."""


GM = "gm"
"""The GM's id as the owner of a conflict side; no player may use it."""

CHIEF = "Police Chief Willie Morton"
LULA = "Ms. Lula Morton"
GM_CHARACTERS = (CHIEF, LULA)
"""Characters: "The GM has two characters that exist in every game"."""

SUGGESTED_ARCHETYPES = (
    "Alienated Government Agent",
    "Brooding Police Officer",
    "Conflicted Sports Hero",
    "Corrupt Politician",
    "Cynical Porn Producer",
    "Disillusioned War Veteran",
    "Down-and-Out Journalist",
    "Guilt Wrecked Gangster",
    "Hardboiled Private Detective",
    "Insecure Petty Thief",
    "Paranoid Insurance-Agent",
    "Self-Centered Nightclub Singer",
    "Sinister Murderer",
)
"""Player Characters: suggestions; players may recombine them or invent their own."""

LAST_ROUND = 7
FIRST_RAT_ROUND = 4
TURNS = 3


def round_name(number: int) -> str:
    """Scene Order: 1 drive, 2–3 escalation, 4–6 resolution, 7 end."""
    if number == 1:
        return "drive"
    if number in (2, 3):
        return "escalation"
    if number in (4, 5, 6):
        return "resolution"
    return "end"


class Phase(enum.Enum):
    SETUP = "setup"
    NOTES = "notes"
    ORDERING = "ordering"
    SCENES = "scenes"
    END_ROLL = "end_roll"
    BONUS = "bonus"
    FLIPPING = "flipping"
    ROUND_DONE = "round_done"
    EPILOGUES = "epilogues"


class Epilogue(enum.Enum):
    """Ending the Game: the situation each epilogue must reflect."""

    BAD_END = "bad_end"
    RESOLVES_DRIVE = "resolves_drive"
    GETS_LULA_AND_DRIVE = "gets_lula_and_drive"
    EVERYONE_FALLS = "everyone_falls"

    @property
    def text(self) -> str:
        return {
            "bad_end": "Ratted on: jail or death, and the drive turns out the worst possible way.",
            "resolves_drive": "Neither ratted nor ratted on: resolves the drive.",
            "gets_lula_and_drive": (
                "Ratted and was not ratted on: gets Ms. Lula Morton and resolves the drive."
            ),
            "everyone_falls": "More than one rat: everyone ends up in jail or dead.",
        }[self.value]

    @property
    def needs_fate(self) -> bool:
        return self in (Epilogue.BAD_END, Epilogue.EVERYONE_FALLS)


class Fate(enum.Enum):
    JAIL = "jail"
    DEAD = "dead"


class ConclusionTieBreak(enum.Enum):
    """After turn 3 the text is silent on equal successes; see :class:`Settings`."""

    HIGHEST_CARD = "highest_card"
    GM_DECIDES = "gm_decides"


@dataclass(frozen=True)
class Settings:
    """Numbers from the rules, and the readings a GM may override."""

    opposition_per_player: int = 10
    starting_coolness: int = 2
    max_opposition_per_conflict: int = 5
    rat_notes: int = 4
    """Each player writes 4 "Rat" and 4 "Don't rat" notes."""
    conclusion_tie_break: ConclusionTieBreak = ConclusionTieBreak.HIGHEST_CARD
    """Equal successes after turn 3: like a drawn turn (highest card, then new draws), or the
    GM names the side that concludes."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "opposition_per_player": self.opposition_per_player,
            "starting_coolness": self.starting_coolness,
            "max_opposition_per_conflict": self.max_opposition_per_conflict,
            "rat_notes": self.rat_notes,
            "conclusion_tie_break": self.conclusion_tie_break.value,
        }

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Settings:
        values = dict(raw)
        if "conclusion_tie_break" in values:
            values["conclusion_tie_break"] = ConclusionTieBreak(values["conclusion_tie_break"])
        return cls(**values)


@dataclass(frozen=True)
class Player:
    """The character sheet (nothing on it is secret) plus the player's card counts."""

    player_id: str
    character_name: str
    archetype: str
    drive: str
    dream_woman: str
    future_with_lula: str
    coolness: int = 2
    rat_left: int = 4
    dont_rat_left: int = 4
    fate: Fate | None = None

    def sheet(self) -> dict[str, Any]:
        return {
            "player_id": self.player_id,
            "character_name": self.character_name,
            "archetype": self.archetype,
            "drive": self.drive,
            "dream_woman": self.dream_woman,
            "future_with_lula": self.future_with_lula,
            "coolness": self.coolness,
            "fate": self.fate.value if self.fate else None,
        }

    def to_dict(self) -> dict[str, Any]:
        return {**self.sheet(), "rat_left": self.rat_left, "dont_rat_left": self.dont_rat_left}

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Player:
        values = dict(raw)
        values["fate"] = Fate(values["fate"]) if values.get("fate") else None
        return cls(**values)


@dataclass(frozen=True)
class RatNote:
    round: int
    player_id: str
    rat: bool

    def to_dict(self) -> dict[str, Any]:
        return {"round": self.round, "player_id": self.player_id, "rat": self.rat}

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> RatNote:
        return cls(raw["round"], raw["player_id"], raw["rat"])


@dataclass(frozen=True)
class Side:
    """One side of a conflict: three face-down base cards and the bonus cards per turn."""

    owner: str
    turns: tuple[tuple[Card, ...], ...] = ((), (), ())
    opposition: int = 0
    coolness: int = 0

    @property
    def counts(self) -> tuple[int, ...]:
        return tuple(len(cards) for cards in self.turns)

    def to_dict(self) -> dict[str, Any]:
        return {
            "owner": self.owner,
            "turns": [encode_cards(cards) for cards in self.turns],
            "opposition": self.opposition,
            "coolness": self.coolness,
        }

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Side:
        return cls(
            owner=raw["owner"],
            turns=tuple(decode_cards(cards) for cards in raw["turns"]),
            opposition=raw["opposition"],
            coolness=raw["coolness"],
        )


def decode_pairs(raw: list[list[str]]) -> tuple[tuple[Card, Card], ...]:
    """Tie-break draws are stored as pairs of card codes (side 0's card first)."""
    return tuple((Card.from_code(first), Card.from_code(second)) for first, second in raw)


@dataclass(frozen=True)
class TurnResult:
    """A flipped turn: successes (red cards) per side, who won it and who narrates."""

    successes: tuple[int, int]
    winner: int | None
    narrator: int
    tie_draws: tuple[tuple[Card, Card], ...] = ()
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "successes": list(self.successes),
            "winner": self.winner,
            "narrator": self.narrator,
            "tie_draws": [encode_cards(pair) for pair in self.tie_draws],
            "reason": self.reason,
        }

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> TurnResult:
        return cls(
            successes=(raw["successes"][0], raw["successes"][1]),
            winner=raw["winner"],
            narrator=raw["narrator"],
            tie_draws=decode_pairs(raw["tie_draws"]),
            reason=raw["reason"],
        )


@dataclass(frozen=True)
class Conflict:
    """A scene conflict: side 0 is the scene's player, side 1 the GM or another player."""

    id: str
    round: int
    sides: tuple[Side, Side]
    deck: Deck
    stakes: str
    accepted: tuple[int, ...] = (0,)
    results: tuple[TurnResult, ...] = ()
    concluder: int | None = None
    conclusion_reason: str = ""
    conclusion_draws: tuple[tuple[Card, Card], ...] = ()
    forfeited_by: tuple[int, ...] = ()

    @property
    def pvp(self) -> bool:
        return self.sides[1].owner != GM

    @property
    def players(self) -> tuple[str, ...]:
        return tuple(side.owner for side in self.sides if side.owner != GM)

    @property
    def stakes_set(self) -> bool:
        return set(self.accepted) == {0, 1}

    @property
    def done(self) -> bool:
        return self.concluder is not None or bool(self.forfeited_by)

    def side_of(self, owner: str) -> int:
        for index, side in enumerate(self.sides):
            if side.owner == owner:
                return index
        raise OneCanHaveHerError(f"{owner!r} is not a side of conflict {self.id}.")

    def with_side(self, index: int, side: Side) -> Conflict:
        sides = (side, self.sides[1]) if index == 0 else (self.sides[0], side)
        return replace(self, sides=sides)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "round": self.round,
            "sides": [side.to_dict() for side in self.sides],
            "deck": self.deck.to_list(),
            "stakes": self.stakes,
            "accepted": list(self.accepted),
            "results": [result.to_dict() for result in self.results],
            "concluder": self.concluder,
            "conclusion_reason": self.conclusion_reason,
            "conclusion_draws": [encode_cards(pair) for pair in self.conclusion_draws],
            "forfeited_by": list(self.forfeited_by),
        }

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Conflict:
        return cls(
            id=raw["id"],
            round=raw["round"],
            sides=(Side.from_dict(raw["sides"][0]), Side.from_dict(raw["sides"][1])),
            deck=Deck.from_list(raw["deck"]),
            stakes=raw["stakes"],
            accepted=tuple(raw["accepted"]),
            results=tuple(TurnResult.from_dict(item) for item in raw["results"]),
            concluder=raw["concluder"],
            conclusion_reason=raw["conclusion_reason"],
            conclusion_draws=decode_pairs(raw["conclusion_draws"]),
            forfeited_by=tuple(raw["forfeited_by"]),
        )


@dataclass(frozen=True)
class Game:
    """The whole table. ``conflicts`` holds every conflict of every round."""

    settings: Settings = Settings()
    players: tuple[Player, ...] = ()
    phase: Phase = Phase.SETUP
    round: int = 0
    opposition_pool: int = 0
    coolness_pool: int = 0
    notes: tuple[RatNote, ...] = ()
    revealed_rounds: tuple[int, ...] = ()
    scene_order: tuple[str, ...] = ()
    scenes_opened: tuple[str, ...] = ()
    monologues: tuple[tuple[int, str, str], ...] = ()
    conflicts: tuple[Conflict, ...] = ()
    end_roll: int | None = None
    final: bool = False
    epilogue_order: tuple[str, ...] = ()

    @property
    def over(self) -> bool:
        return self.phase is Phase.EPILOGUES

    def player(self, player_id: str) -> Player:
        for player in self.players:
            if player.player_id == player_id:
                return player
        raise OneCanHaveHerError(f"There is no player {player_id!r} in this game.")

    def with_player(self, player: Player) -> Game:
        players = tuple(player if p.player_id == player.player_id else p for p in self.players)
        return replace(self, players=players)

    def conflict(self, conflict_id: str) -> Conflict:
        for conflict in self.conflicts:
            if conflict.id == conflict_id:
                return conflict
        raise OneCanHaveHerError(f"There is no conflict {conflict_id!r}.")

    def with_conflict(self, conflict: Conflict) -> Game:
        conflicts = tuple(conflict if c.id == conflict.id else c for c in self.conflicts)
        return replace(self, conflicts=conflicts)

    def round_conflicts(self, number: int | None = None) -> tuple[Conflict, ...]:
        number = self.round if number is None else number
        return tuple(c for c in self.conflicts if c.round == number)

    def notes_of_round(self, number: int) -> tuple[RatNote, ...]:
        return tuple(note for note in self.notes if note.round == number)

    def rats(self, number: int) -> tuple[str, ...]:
        """Who handed in a "Rat" note in round ``number``."""
        return tuple(note.player_id for note in self.notes_of_round(number) if note.rat)

    def ratted_on_by(self, player_id: str, number: int) -> tuple[str, ...]:
        """ "You always rat on all the other characters": every rat but the player himself."""
        return tuple(rat for rat in self.rats(number) if rat != player_id)

    def name(self, owner: str) -> str:
        return "the GM" if owner == GM else self.player(owner).character_name

    def to_dict(self) -> dict[str, Any]:
        return {
            "ruleset": "one_can_have_her",
            "settings": self.settings.to_dict(),
            "players": [player.to_dict() for player in self.players],
            "phase": self.phase.value,
            "round": self.round,
            "opposition_pool": self.opposition_pool,
            "coolness_pool": self.coolness_pool,
            "notes": [note.to_dict() for note in self.notes],
            "revealed_rounds": list(self.revealed_rounds),
            "scene_order": list(self.scene_order),
            "scenes_opened": list(self.scenes_opened),
            "monologues": [list(item) for item in self.monologues],
            "conflicts": [conflict.to_dict() for conflict in self.conflicts],
            "end_roll": self.end_roll,
            "final": self.final,
            "epilogue_order": list(self.epilogue_order),
        }

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Game:
        return cls(
            settings=Settings.from_dict(raw["settings"]),
            players=tuple(Player.from_dict(item) for item in raw["players"]),
            phase=Phase(raw["phase"]),
            round=raw["round"],
            opposition_pool=raw["opposition_pool"],
            coolness_pool=raw["coolness_pool"],
            notes=tuple(RatNote.from_dict(item) for item in raw["notes"]),
            revealed_rounds=tuple(raw["revealed_rounds"]),
            scene_order=tuple(raw["scene_order"]),
            scenes_opened=tuple(raw["scenes_opened"]),
            monologues=tuple((m[0], m[1], m[2]) for m in raw["monologues"]),
            conflicts=tuple(Conflict.from_dict(item) for item in raw["conflicts"]),
            end_roll=raw["end_roll"],
            final=raw["final"],
            epilogue_order=tuple(raw["epilogue_order"]),
        )
