"""Playing cards shared by the card-driven rulesets (Sex & Violence, One Can Have Her).

Pure code: no database, clock or global randomness. Shuffling takes a ``random.Random``
passed in by the caller (the server derives it from the campaign's verifiable seed), so every
rule can be tested with a fixed deck.

Besides cards, suits and decks this module holds the small records both card games share:

* :class:`RulesError` – the base of every error a player can cause in these rulesets; the
  message is written for the player.
* :class:`Viewer` – who is looking (a player, the GM, or a spectator) for ``view_for``
  redaction functions.
* :class:`Event` – one line of the game's record ("drew 3 cards"), with a public text and an
  optional private text that only its owner (and, where the campaign allows, the GM) may read.
  Every deal, draw, discard and shuffle is recorded as an event.
"""

from __future__ import annotations

import enum
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pbp.rules.errors import (
    RulesError as RulesError,
)  # re-exported: the card games' refusals derive from it


class CardError(RulesError):
    """A card that does not exist, is not where the action says, or a deck that ran out."""


class Suit(enum.Enum):
    """The four French suits; the value is the one-letter code used in storage."""

    CLUBS = "C"
    DIAMONDS = "D"
    HEARTS = "H"
    SPADES = "S"

    @property
    def label(self) -> str:
        return self.name.capitalize()

    @property
    def symbol(self) -> str:
        return {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}[self.value]

    @property
    def is_red(self) -> bool:
        return self in (Suit.HEARTS, Suit.DIAMONDS)


ACE, JACK, QUEEN, KING = 1, 11, 12, 13
RANK_NAMES = {ACE: "Ace", JACK: "Jack", QUEEN: "Queen", KING: "King"}
RANK_CODES = {ACE: "A", JACK: "J", QUEEN: "Q", KING: "K"}
_CODE_RANKS = {code: rank for rank, code in RANK_CODES.items()}
_NUMBER_RANKS = {str(rank): rank for rank in range(2, 11)}
_SUIT_CODES = {suit.value for suit in Suit}


@dataclass(frozen=True)
class Card:
    """One playing card. ``rank`` runs 1 (ace) to 13 (king)."""

    rank: int
    suit: Suit

    def __post_init__(self) -> None:
        if not ACE <= self.rank <= KING:
            raise CardError(f"There is no card of rank {self.rank}; ranks run from 1 to 13.")

    @property
    def code(self) -> str:
        """Short storage code: ``"AS"``, ``"10H"``, ``"QC"``."""
        return RANK_CODES.get(self.rank, str(self.rank)) + self.suit.value

    @classmethod
    def from_code(cls, code: str) -> Card:
        text = code.strip().upper()
        if len(text) < 2:
            raise CardError(f"{code!r} is not a card; write it like AS, 10H or QC.")
        rank_text, suit_text = text[:-1], text[-1]
        rank = _CODE_RANKS.get(rank_text) or _NUMBER_RANKS.get(rank_text)
        if rank is None or suit_text not in _SUIT_CODES:
            raise CardError(f"{code!r} is not a card; write it like AS, 10H or QC.")
        return cls(rank, Suit(suit_text))

    @property
    def name(self) -> str:
        return f"{RANK_NAMES.get(self.rank, str(self.rank))} of {self.suit.label}"

    def __str__(self) -> str:
        return self.name

    @property
    def is_ace(self) -> bool:
        return self.rank == ACE

    @property
    def is_face(self) -> bool:
        return self.rank >= JACK

    @property
    def is_red(self) -> bool:
        return self.suit.is_red

    @property
    def value_ace_low(self) -> int:
        """Face value with aces counting 1 (Sex & Violence: "aces count as 1")."""
        return self.rank

    @property
    def value_ace_high(self) -> int:
        """Face value with aces above kings (One Can Have Her's highest card)."""
        return 14 if self.rank == ACE else self.rank


def standard_deck() -> tuple[Card, ...]:
    """The 52-card deck without jokers, in a fixed (unshuffled) order."""
    return tuple(Card(rank, suit) for suit in Suit for rank in range(ACE, KING + 1))


def number_deck() -> tuple[Card, ...]:
    """The aces and number cards 2–10 of all four suits: 40 cards (Sex & Violence's deck)."""
    return tuple(card for card in standard_deck() if not card.is_face)


def face_cards(suit: Suit) -> tuple[Card, ...]:
    """King, Queen and Jack of ``suit``, highest first."""
    return (Card(KING, suit), Card(QUEEN, suit), Card(JACK, suit))


def shuffled(cards: Iterable[Card], rng: random.Random) -> tuple[Card, ...]:
    """Return ``cards`` in an order drawn from ``rng`` (the input is not changed)."""
    pile = list(cards)
    rng.shuffle(pile)
    return tuple(pile)


def encode_cards(cards: Iterable[Card]) -> list[str]:
    return [card.code for card in cards]


def decode_cards(codes: Iterable[str]) -> tuple[Card, ...]:
    return tuple(Card.from_code(code) for code in codes)


def describe_cards(cards: Iterable[Card]) -> str:
    names = [card.name for card in cards]
    return ", ".join(names) if names else "no cards"


def remove_cards(pile: Sequence[Card], cards: Iterable[Card], where: str) -> tuple[Card, ...]:
    """Return ``pile`` without ``cards`` (one copy each); ``where`` names the pile in errors."""
    rest = list(pile)
    for card in cards:
        if card not in rest:
            raise CardError(f"The {card.name} is not in {where}.")
        rest.remove(card)
    return tuple(rest)


@dataclass(frozen=True)
class Deck:
    """A face-down pile; ``cards[0]`` is the top card. Its order is never shown to anyone."""

    cards: tuple[Card, ...] = ()

    @classmethod
    def shuffled_from(cls, cards: Iterable[Card], rng: random.Random) -> Deck:
        return cls(shuffled(cards, rng))

    def __len__(self) -> int:
        return len(self.cards)

    def draw(self, count: int = 1) -> tuple[tuple[Card, ...], Deck]:
        """Take ``count`` cards from the top; raise :class:`CardError` if there are too few."""
        if count < 0:
            raise CardError("You cannot draw a negative number of cards.")
        if count > len(self.cards):
            raise CardError(f"The deck has {len(self.cards)} cards left; {count} cannot be drawn.")
        return self.cards[:count], Deck(self.cards[count:])

    def shuffle_in(self, cards: Iterable[Card], rng: random.Random) -> Deck:
        """Put ``cards`` into the deck and shuffle the whole deck."""
        return Deck.shuffled_from(self.cards + tuple(cards), rng)

    def to_list(self) -> list[str]:
        return encode_cards(self.cards)

    @classmethod
    def from_list(cls, codes: Iterable[str]) -> Deck:
        return cls(decode_cards(codes))


@dataclass(frozen=True)
class Viewer:
    """Who looks at a game state: one player, the GM, or a spectator (neither)."""

    player_id: str | None = None
    is_gm: bool = False

    @classmethod
    def gm(cls) -> Viewer:
        return cls(is_gm=True)

    @classmethod
    def player(cls, player_id: str) -> Viewer:
        return cls(player_id=player_id)

    @classmethod
    def spectator(cls) -> Viewer:
        return cls()

    def is_player(self, player_id: str | None) -> bool:
        return player_id is not None and self.player_id == player_id


@dataclass(frozen=True)
class Event:
    """One recorded step of a game with the explanation shown to each viewer.

    ``text``/``data`` are public. ``private_text``/``private_data`` belong to ``owner`` (for
    example the cards a player drew); the GM may also read them when ``gm_may_read`` is set.
    """

    kind: str
    text: str
    owner: str | None = None
    private_text: str | None = None
    data: Mapping[str, Any] = field(default_factory=dict)
    private_data: Mapping[str, Any] = field(default_factory=dict)
    gm_may_read: bool = True
    secret: bool = False
    """A secret event is not shown at all to viewers who may not read its private part."""

    def may_read_private(self, viewer: Viewer) -> bool:
        if self.private_text is None and not self.private_data:
            return True
        return viewer.is_player(self.owner) or (viewer.is_gm and self.gm_may_read)

    def view_for(self, viewer: Viewer) -> dict[str, Any] | None:
        """The event as ``viewer`` may see it (private parts dropped unless allowed); ``None``
        for a secret event the viewer may not read."""
        if self.secret and not self.may_read_private(viewer):
            return None
        shown: dict[str, Any] = {"kind": self.kind, "text": self.text, "data": dict(self.data)}
        if self.owner is not None:
            shown["owner"] = self.owner
        if self.may_read_private(viewer):
            if self.private_text is not None:
                shown["text"] = self.private_text
            shown["data"].update(self.private_data)
        return shown

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "text": self.text,
            "owner": self.owner,
            "private_text": self.private_text,
            "data": dict(self.data),
            "private_data": dict(self.private_data),
            "gm_may_read": self.gm_may_read,
            "secret": self.secret,
        }

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Event:
        return cls(
            kind=raw["kind"],
            text=raw["text"],
            owner=raw.get("owner"),
            private_text=raw.get("private_text"),
            data=dict(raw.get("data", {})),
            private_data=dict(raw.get("private_data", {})),
            gm_may_read=raw.get("gm_may_read", True),
            secret=raw.get("secret", False),
        )


def events_for(events: Iterable[Event], viewer: Viewer) -> list[dict[str, Any]]:
    """Redact a list of events for ``viewer``, leaving out secret events it may not read."""
    shown = (event.view_for(viewer) for event in events)
    return [item for item in shown if item is not None]


def draw_event(
    owner: str, who: str, cards: Sequence[Card], why: str, *, gm_may_read: bool = True
) -> Event:
    """Record a draw into a hidden hand: everyone sees how many, only the owner sees which."""
    count = len(cards)
    noun = "card" if count == 1 else "cards"
    return Event(
        kind="draw",
        text=f"{who} drew {count} {noun} ({why}).",
        owner=owner,
        private_text=f"{who} drew {describe_cards(cards)} ({why}).",
        data={"count": count},
        private_data={"cards": encode_cards(cards)},
        gm_may_read=gm_may_read,
    )


StateT = TypeVar("StateT")


@dataclass(frozen=True)
class Outcome(Generic[StateT]):
    """What every action returns: the new state and the events that explain it."""

    state: StateT
    events: tuple[Event, ...] = ()
