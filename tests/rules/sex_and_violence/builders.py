"""Builders for Sex & Violence tests: characters with injected hands and decks (no tests)."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable

from pbp.rules.cards import Card, Deck, Suit, number_deck
from pbp.rules.sex_and_violence import (
    Archetype,
    Character,
    Game,
    GmCharacter,
    Settings,
    Slot,
    build_sideboard,
)


def cards(text: str) -> tuple[Card, ...]:
    return tuple(Card.from_code(code) for code in text.split())


def card(code: str) -> Card:
    return Card.from_code(code)


def character(
    player_id: str = "p1",
    name: str = "Nico",
    *,
    archetype: Archetype = Archetype.WARRIOR,
    fields: Iterable[Suit] = (Suit.CLUBS,),
    hand: str = "",
    deck: str = "",
    flipped: str = "",
    faces_flipped: str = "",
    **extra: object,
) -> Character:
    """A character whose hand, deck and flips are spelled out as card codes."""
    down = set(flipped.split())
    faces_down = set(faces_flipped.split())
    sideboard = tuple(
        Slot(slot.card, slot.card.code in faces_down) for slot in build_sideboard(fields)
    )
    return Character(
        player_id=player_id,
        name=name,
        archetype=archetype,
        criminal_background="ex-cop",
        redeeming_quality="loyal to his sister",
        angle="bodyguard",
        sideboard=sideboard,
        deck=Deck(cards(deck)),
        hand=tuple(Slot(c, c.code in down) for c in cards(hand)),
        **extra,  # type: ignore[arg-type]
    )


def game(
    *characters: Character,
    npcs: Iterable[tuple[str, str]] = (("sal", "Big Sal"), ("vic", "Vic")),
    settings: Settings | None = None,
) -> Game:
    return Game(
        settings=settings or Settings(),
        characters=tuple(characters),
        gm_characters=tuple(GmCharacter(gm_id, name) for gm_id, name in npcs),
    )


def rest_of_deck(*used: str) -> str:
    """The 40-card deck minus the given codes, in a fixed order, as codes."""
    taken = Counter(card(code) for code in " ".join(used).split())
    left = []
    for c in number_deck():
        if taken[c]:
            taken[c] -= 1
        else:
            left.append(c.code)
    return " ".join(left)


def rng(seed: int = 0) -> random.Random:
    return random.Random(seed)


def codes(items: Iterable[Card]) -> list[str]:
    return [c.code for c in items]


def hand_codes(ch: Character) -> list[str]:
    return [slot.card.code for slot in ch.hand]
