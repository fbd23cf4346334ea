"""Sex & Violence: the game state (characters, sideboards, hands, decks, contests).

Frozen dataclasses only; the actions live in :mod:`pbp.rules.sex_and_violence.game` and its
siblings. Every state round-trips through ``to_dict``/``from_dict`` as plain JSON.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from pbp.rules.cards import (
    JACK,
    KING,
    QUEEN,
    Card,
    Deck,
    RulesError,
    Suit,
    decode_cards,
    encode_cards,
)


class SexAndViolenceError(RulesError):
    """An action the Sex & Violence rules do not allow."""


class Archetype(enum.Enum):
    """Rule 1: each archetype has a "strong" suit and (for appeals) a pre-defined task."""

    SURVIVOR = "survivor"
    WARRIOR = "warrior"
    FOOL = "fool"
    MAGICIAN = "magician"

    @property
    def suit(self) -> Suit:
        return {
            "survivor": Suit.DIAMONDS,
            "warrior": Suit.CLUBS,
            "fool": Suit.HEARTS,
            "magician": Suit.SPADES,
        }[self.value]

    @property
    def task(self) -> str:
        """The task a character performs to appeal to the archetype ("Replenishing")."""
        return {
            "survivor": "Go see a contact for advice or assistance.",
            "warrior": "Meditate; reflect on present events in the place you feel most at peace.",
            "fool": "Teach someone a lesson.",
            "magician": (
                "Spend time in the place where you do your best work and accomplish something "
                "related to your work."
            ),
        }[self.value]

    @property
    def label(self) -> str:
        return f"the {self.name.capitalize()}"


class ContestKind(enum.Enum):
    """Plain contests; sex and violence scenes make bid aces trigger their effects."""

    PLAIN = "plain"
    SEX = "sex"
    VIOLENCE = "violence"


EXPERTISE_BID = {JACK: 2, QUEEN: 3, KING: 4}
"""Contests: maximum bid by the best unflipped face card of the action's suit."""


@dataclass(frozen=True)
class Settings:
    """Campaign settings; the rules readings a GM may override are documented per field."""

    gm_sees_hands: bool = True
    """Secrets: the GM sees every hand (a campaign setting); players never see others'."""
    hand_limit: int = 10
    """Hands hold at most 10 slots; flipped hand cards keep their slot."""
    gm_wound_limit: int = 10
    """Mayhem: GM characters survive up to 10 wounds and are out from the 11th."""
    split_bid_shares_top_card: bool = False
    """Mayhem: False – each part of a split bid meets its own top card; True – one card."""
    two_fields_keep_both_jacks: bool = True
    """Sideboard: two fields give Queen and Jack of both suits (the rules' example)."""
    reshuffle_after_contest: bool = True
    """Contests: discards go back into the deck when the action is resolved."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "gm_sees_hands": self.gm_sees_hands,
            "hand_limit": self.hand_limit,
            "gm_wound_limit": self.gm_wound_limit,
            "split_bid_shares_top_card": self.split_bid_shares_top_card,
            "two_fields_keep_both_jacks": self.two_fields_keep_both_jacks,
            "reshuffle_after_contest": self.reshuffle_after_contest,
        }

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Settings:
        return cls(**{key: raw[key] for key in cls().to_dict() if key in raw})


@dataclass(frozen=True)
class Slot:
    """A card in a hand or sideboard; a flipped card is unavailable but keeps its place."""

    card: Card
    flipped: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"card": self.card.code, "flipped": self.flipped}

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Slot:
        return cls(Card.from_code(raw["card"]), bool(raw["flipped"]))


def build_sideboard(fields: Iterable[Suit], *, keep_both_jacks: bool = True) -> tuple[Slot, ...]:
    """Characters (Part II): the face cards for one, two or three fields of expertise.

    One field: King, Queen and Jack. Two fields: the King is sacrificed for a second Queen;
    following the rules' example (Nico Greer) each field also keeps its Jack, so Queen and Jack
    of both suits; ``keep_both_jacks=False`` reads the text literally (Jack of the first field
    only). Three fields: King and Queen are sacrificed for two more Jacks, so three Jacks.
    Never all four fields.
    """
    chosen = list(fields)
    suits = list(dict.fromkeys(chosen))
    if len(suits) != len(chosen):
        raise SexAndViolenceError("Choose each field of expertise only once.")
    if not 1 <= len(suits) <= 3:
        raise SexAndViolenceError(
            "Choose one, two or three fields of expertise; you may not excel in all four."
        )
    if len(suits) == 1:
        cards = [Card(KING, suits[0]), Card(QUEEN, suits[0]), Card(JACK, suits[0])]
    elif len(suits) == 2:
        cards = [Card(QUEEN, suits[0]), Card(QUEEN, suits[1]), Card(JACK, suits[0])]
        if keep_both_jacks:
            cards.append(Card(JACK, suits[1]))
    else:
        cards = [Card(JACK, suit) for suit in suits]
    return tuple(Slot(card) for card in cards)


@dataclass(frozen=True)
class Character:
    """A player character: the sheet, sideboard, own 40-card deck, hand and discards."""

    player_id: str
    name: str
    archetype: Archetype
    criminal_background: str
    redeeming_quality: str
    angle: str
    sideboard: tuple[Slot, ...]
    deck: Deck = Deck()
    hand: tuple[Slot, ...] = ()
    discards: tuple[Card, ...] = ()
    opening_swap_open: bool = False
    appealed_this_session: bool = False
    stacked_this_scene: bool = False
    fought: tuple[str, ...] = ()
    wounds_taken: int = 0
    dead: bool = False

    @property
    def usable_cards(self) -> tuple[Card, ...]:
        """Hand cards that are not flipped: the cards the player can bid."""
        return tuple(slot.card for slot in self.hand if not slot.flipped)

    @property
    def flipped_in_hand(self) -> int:
        return sum(1 for slot in self.hand if slot.flipped)

    def room_in_hand(self, hand_limit: int) -> int:
        """Slots left before the hand limit; flipped cards keep their slot."""
        return max(0, hand_limit - len(self.hand))

    def all_cards(self) -> tuple[Card, ...]:
        """Deck, hand (flipped or not) and discards: always the same 40 cards."""
        return self.deck.cards + tuple(slot.card for slot in self.hand) + self.discards

    def face(self, card: Card) -> Slot:
        for slot in self.sideboard:
            if slot.card == card:
                return slot
        raise SexAndViolenceError(f"{self.name} has no {card.name} in the sideboard.")

    def expertise(self, suit: Suit) -> tuple[int, str]:
        """Contests: the maximum bid in ``suit`` and the reason, for messages.

        Expertise is not cumulative: the best unflipped face card of the suit decides.
        """
        own = [slot for slot in self.sideboard if slot.card.suit == suit]
        ready = [slot.card for slot in own if not slot.flipped]
        flipped = [slot.card for slot in own if slot.flipped]
        if ready:
            best = max(ready, key=lambda card: card.rank)
            limit = EXPERTISE_BID[best.rank]
            reason = f"your {best.name} gives expertise in {suit.label}"
        else:
            limit = 1
            reason = f"you have no expertise in {suit.label}"
        if flipped:
            names = " and ".join(card.name for card in flipped)
            verb = "is" if len(flipped) == 1 else "are"
            reason += f"; your {names} {verb} flipped"
        return limit, reason

    def to_dict(self) -> dict[str, Any]:
        return {
            "player_id": self.player_id,
            "name": self.name,
            "archetype": self.archetype.value,
            "criminal_background": self.criminal_background,
            "redeeming_quality": self.redeeming_quality,
            "angle": self.angle,
            "sideboard": [slot.to_dict() for slot in self.sideboard],
            "deck": self.deck.to_list(),
            "hand": [slot.to_dict() for slot in self.hand],
            "discards": encode_cards(self.discards),
            "opening_swap_open": self.opening_swap_open,
            "appealed_this_session": self.appealed_this_session,
            "stacked_this_scene": self.stacked_this_scene,
            "fought": list(self.fought),
            "wounds_taken": self.wounds_taken,
            "dead": self.dead,
        }

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Character:
        return cls(
            player_id=raw["player_id"],
            name=raw["name"],
            archetype=Archetype(raw["archetype"]),
            criminal_background=raw["criminal_background"],
            redeeming_quality=raw["redeeming_quality"],
            angle=raw["angle"],
            sideboard=tuple(Slot.from_dict(item) for item in raw["sideboard"]),
            deck=Deck.from_list(raw["deck"]),
            hand=tuple(Slot.from_dict(item) for item in raw["hand"]),
            discards=decode_cards(raw["discards"]),
            opening_swap_open=raw["opening_swap_open"],
            appealed_this_session=raw["appealed_this_session"],
            stacked_this_scene=raw["stacked_this_scene"],
            fought=tuple(raw["fought"]),
            wounds_taken=raw["wounds_taken"],
            dead=raw["dead"],
        )


@dataclass(frozen=True)
class GmCharacter:
    """A GM-controlled opponent: only a wound count (survives up to the wound limit)."""

    id: str
    name: str
    wounds: int = 0
    out: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "wounds": self.wounds, "out": self.out}

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> GmCharacter:
        return cls(raw["id"], raw["name"], raw["wounds"], raw["out"])


@dataclass(frozen=True)
class Attack:
    """One part of a bid, against one target (or against no one in a plain contest)."""

    target: str | None
    cards: tuple[Card, ...]
    announced: tuple[Card, ...] = ()
    lucky: tuple[Card, ...] = ()
    pending: tuple[str, ...] = ()
    responses: tuple[Card, ...] = ()
    top_card: Card | None = None
    outcome: str | None = None
    wounds: int = 0

    @property
    def total(self) -> int:
        """Bid total with aces as 1, plus a lucky blow's extra card."""
        return sum(card.value_ace_low for card in self.cards + self.lucky)

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "cards": encode_cards(self.cards),
            "announced": encode_cards(self.announced),
            "lucky": encode_cards(self.lucky),
            "pending": list(self.pending),
            "responses": encode_cards(self.responses),
            "top_card": self.top_card.code if self.top_card else None,
            "outcome": self.outcome,
            "wounds": self.wounds,
            "total": self.total,
        }

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Attack:
        return cls(
            target=raw["target"],
            cards=decode_cards(raw["cards"]),
            announced=decode_cards(raw["announced"]),
            lucky=decode_cards(raw["lucky"]),
            pending=tuple(raw["pending"]),
            responses=decode_cards(raw["responses"]),
            top_card=Card.from_code(raw["top_card"]) if raw["top_card"] else None,
            outcome=raw["outcome"],
            wounds=raw["wounds"],
        )


@dataclass(frozen=True)
class WoundPacket:
    """Wounds one attack inflicted on a player character, awaiting cancel-or-take."""

    victim: str
    amount: int
    opponent: str | None
    cancellable: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {
            "victim": self.victim,
            "amount": self.amount,
            "opponent": self.opponent,
            "cancellable": self.cancellable,
        }

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> WoundPacket:
        return cls(raw["victim"], raw["amount"], raw["opponent"], raw["cancellable"])


class Stage(enum.Enum):
    BIDDING = "bidding"
    RESPONSES = "responses"
    WOUNDS = "wounds"


@dataclass(frozen=True)
class Contest:
    """The contest in progress: who bids, in which suit, against whom, and what is pending."""

    player_id: str
    suit: Suit
    kind: ContestKind
    targets: tuple[str, ...] = ()
    stage: Stage = Stage.BIDDING
    attacks: tuple[Attack, ...] = ()
    wounds: tuple[WoundPacket, ...] = ()
    redraw: int = 0

    @property
    def attacked(self) -> tuple[str, ...]:
        """Targets the bid was actually aimed at (a split bid may leave some out)."""
        return tuple(attack.target for attack in self.attacks if attack.target is not None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "player_id": self.player_id,
            "suit": self.suit.value,
            "kind": self.kind.value,
            "targets": list(self.targets),
            "stage": self.stage.value,
            "attacks": [attack.to_dict() for attack in self.attacks],
            "wounds": [packet.to_dict() for packet in self.wounds],
            "redraw": self.redraw,
        }

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Contest:
        return cls(
            player_id=raw["player_id"],
            suit=Suit(raw["suit"]),
            kind=ContestKind(raw["kind"]),
            targets=tuple(raw["targets"]),
            stage=Stage(raw["stage"]),
            attacks=tuple(Attack.from_dict(item) for item in raw["attacks"]),
            wounds=tuple(WoundPacket.from_dict(item) for item in raw["wounds"]),
            redraw=raw["redraw"],
        )


@dataclass(frozen=True)
class Game:
    """A Sex & Violence table: settings, player characters, GM characters, open contest."""

    settings: Settings = Settings()
    characters: tuple[Character, ...] = ()
    gm_characters: tuple[GmCharacter, ...] = ()
    contest: Contest | None = None

    def character(self, player_id: str) -> Character:
        for character in self.characters:
            if character.player_id == player_id:
                return character
        raise SexAndViolenceError(f"There is no character for player {player_id!r}.")

    def living(self, player_id: str) -> Character:
        character = self.character(player_id)
        if character.dead:
            raise SexAndViolenceError(f"{character.name} is dead and cannot act.")
        return character

    def gm_character(self, gm_id: str) -> GmCharacter:
        for npc in self.gm_characters:
            if npc.id == gm_id:
                return npc
        raise SexAndViolenceError(f"There is no GM character {gm_id!r}.")

    def is_player(self, target: str) -> bool:
        return any(character.player_id == target for character in self.characters)

    def with_character(self, character: Character) -> Game:
        characters = tuple(
            character if old.player_id == character.player_id else old for old in self.characters
        )
        return replace(self, characters=characters)

    def with_gm_character(self, npc: GmCharacter) -> Game:
        npcs = tuple(npc if old.id == npc.id else old for old in self.gm_characters)
        return replace(self, gm_characters=npcs)

    def target_name(self, target: str | None) -> str:
        if target is None:
            return "the odds"
        if self.is_player(target):
            return self.character(target).name
        return self.gm_character(target).name

    def to_dict(self) -> dict[str, Any]:
        return {
            "ruleset": "sex_and_violence",
            "settings": self.settings.to_dict(),
            "characters": [character.to_dict() for character in self.characters],
            "gm_characters": [npc.to_dict() for npc in self.gm_characters],
            "contest": self.contest.to_dict() if self.contest else None,
        }

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Game:
        settings = Settings.from_dict(raw["settings"])
        return cls(
            settings=settings,
            characters=tuple(Character.from_dict(item) for item in raw["characters"]),
            gm_characters=tuple(GmCharacter.from_dict(item) for item in raw["gm_characters"]),
            contest=Contest.from_dict(raw["contest"]) if raw["contest"] else None,
        )
