"""Sex & Violence: moving cards between a character's deck, hand and discards.

Low-level helpers shared by contests, mayhem and replenishing. Every move is recorded as an
:class:`~pbp.rules.cards.Event`; cards entering a hidden hand are private to its player (and
to the GM when the campaign lets the GM see hands).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import replace

from pbp.rules.cards import Card, Deck, Event, describe_cards, draw_event, encode_cards
from pbp.rules.sex_and_violence.state import Character, Game, SexAndViolenceError, Slot


def touched(character: Character) -> Character:
    """Any action after the deal ends the chance to swap a card of the opening hand."""
    if character.opening_swap_open:
        return replace(character, opening_swap_open=False)
    return character


def reshuffle_discards(
    character: Character, rng: random.Random, why: str
) -> tuple[Character, list[Event]]:
    """Contests: "you may re-shuffle the discarded cards back into your deck"."""
    if not character.discards:
        return character, []
    deck = character.deck.shuffle_in(character.discards, rng)
    event = Event(
        kind="shuffle",
        text=(
            f"{character.name} shuffled {len(character.discards)} discarded cards back into "
            f"the deck ({why}); the deck has {len(deck)} cards."
        ),
        owner=character.player_id,
        data={"count": len(character.discards), "deck_count": len(deck)},
    )
    return replace(character, deck=deck, discards=()), [event]


def take_from_deck(
    character: Character, count: int, rng: random.Random, why: str
) -> tuple[Character, tuple[Card, ...], list[Event]]:
    """Take ``count`` cards off the top of the deck (not into the hand).

    The rules never say what happens when the deck runs out; we reshuffle the discards into
    it first and only fail when even that is not enough.
    """
    events: list[Event] = []
    if count > len(character.deck):
        character, events = reshuffle_discards(character, rng, "the deck ran out")
    if count > len(character.deck):
        raise SexAndViolenceError(
            f"{character.name}'s deck has only {len(character.deck)} cards; "
            f"{count} cannot be drawn ({why})."
        )
    cards, deck = character.deck.draw(count)
    return replace(character, deck=deck), cards, events


def draw_into_hand(
    game: Game, character: Character, count: int, rng: random.Random, why: str
) -> tuple[Character, list[Event]]:
    """Draw up to ``count`` cards into the hand, never past the hand limit."""
    count = min(count, character.room_in_hand(game.settings.hand_limit))
    if count <= 0:
        return character, []
    character, cards, events = take_from_deck(character, count, rng, why)
    character = replace(character, hand=character.hand + tuple(Slot(card) for card in cards))
    gm_may_read = game.settings.gm_sees_hands
    events.append(
        draw_event(character.player_id, character.name, cards, why, gm_may_read=gm_may_read)
    )
    return character, events


def require_usable(character: Character, cards: Sequence[Card], purpose: str) -> None:
    """Raise unless every card is an unflipped card in the hand (each used once)."""
    usable = list(character.usable_cards)
    for card in cards:
        if card in usable:
            usable.remove(card)
            continue
        flipped = any(slot.card == card and slot.flipped for slot in character.hand)
        where = "is flipped" if flipped else "is not in your hand"
        raise SexAndViolenceError(f"You cannot {purpose} the {card.name}: it {where}.")


def remove_from_hand(character: Character, cards: Iterable[Card]) -> Character:
    """Take unflipped cards out of the hand (their slots go with them)."""
    hand = list(character.hand)
    for card in cards:
        hand.remove(Slot(card, flipped=False))
    return replace(character, hand=tuple(hand))


def discard_from_hand(character: Character, cards: Sequence[Card]) -> Character:
    """Contests: "the bid cards are discarded (regardless of the outcome)"."""
    character = remove_from_hand(character, cards)
    return replace(character, discards=character.discards + tuple(cards))


def flip_highest(character: Character, prefer: Sequence[Card] = ()) -> tuple[Character, Card]:
    """Mayhem: "for every wound you receive, flip over the highest card in your hand".

    Aces count 1, so they are flipped last. Among cards of equal rank the player may name the
    one to flip in ``prefer``; otherwise the first such card in the hand is flipped.
    """
    ready = [(index, slot.card) for index, slot in enumerate(character.hand) if not slot.flipped]
    if not ready:
        raise SexAndViolenceError(f"{character.name} has no unflipped card left to flip.")
    top_rank = max(card.rank for _, card in ready)
    candidates = [(index, card) for index, card in ready if card.rank == top_rank]
    chosen = next(((i, c) for i, c in candidates if c in prefer), candidates[0])
    hand = list(character.hand)
    hand[chosen[0]] = Slot(chosen[1], flipped=True)
    return replace(character, hand=tuple(hand)), chosen[1]


def discard_event(character: Character, cards: Sequence[Card], why: str) -> Event:
    """Bid and revealed cards are shown to everyone."""
    return Event(
        kind="discard",
        text=f"{character.name} discarded {describe_cards(cards)} ({why}).",
        owner=character.player_id,
        data={"cards": encode_cards(cards)},
    )


def shuffle_new_deck(character: Character, cards: Sequence[Card], rng: random.Random) -> Character:
    """Playing the Game: shuffle the character's own 40-card deck."""
    return replace(character, deck=Deck.shuffled_from(cards, rng))
