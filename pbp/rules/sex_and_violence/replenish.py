"""Sex & Violence: replenishing the hand (flipping face cards, appeals) and stacking the deck.

"You may re-draw cards back into your hand at any time by flipping over a face card from your
sideboard." "Kings are the only cards that cannot be restored during the game."
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import replace

from pbp.rules.cards import KING, Card, Event, Outcome, describe_cards, encode_cards
from pbp.rules.sex_and_violence.hand import (
    draw_into_hand,
    remove_from_hand,
    require_usable,
    take_from_deck,
    touched,
)
from pbp.rules.sex_and_violence.state import (
    EXPERTISE_BID,
    Character,
    Game,
    SexAndViolenceError,
    Slot,
)

FLIP_DRAWS = dict(EXPERTISE_BID)
"""Replenishing: a King draws 4, a Queen 3, a Jack 2 (the same numbers as the bid limits)."""


def _flip_face(character: Character, face_card: Card) -> Character:
    if character.face(face_card).flipped:
        raise SexAndViolenceError(f"Your {face_card.name} is already flipped.")
    sideboard = tuple(
        Slot(slot.card, True) if slot.card == face_card else slot for slot in character.sideboard
    )
    return replace(character, sideboard=sideboard)


def _in_contest(game: Game, player_id: str) -> bool:
    contest = game.contest
    return contest is not None and (contest.player_id == player_id or player_id in contest.targets)


def flip_to_draw(
    game: Game, *, player_id: str, face_card: Card, rng: random.Random
) -> Outcome[Game]:
    """Replenishing: flip a King / Queen / Jack to draw 4 / 3 / 2 cards, up to the hand limit."""
    character = touched(game.living(player_id))
    room = character.room_in_hand(game.settings.hand_limit)
    if room == 0:
        raise SexAndViolenceError(
            f"Your hand already holds {len(character.hand)} cards (flipped cards keep their "
            "slot); flip a face card to restore your flipped hand cards instead."
        )
    character = _flip_face(character, face_card)
    count = FLIP_DRAWS[face_card.rank]
    flip = Event(
        kind="flip",
        text=f"{character.name} flips the {face_card.name} to draw {min(count, room)} cards.",
        owner=player_id,
        data={"face_card": face_card.code},
    )
    character, events = draw_into_hand(game, character, count, rng, f"{face_card.name} flipped")
    return Outcome(game.with_character(character), (flip, *events))


def flip_to_restore_hand(game: Game, *, player_id: str, face_card: Card) -> Outcome[Game]:
    """Replenishing: flip a face card to restore all flipped cards of the hand."""
    character = touched(game.living(player_id))
    if not character.flipped_in_hand:
        raise SexAndViolenceError("No card in your hand is flipped.")
    count = character.flipped_in_hand
    character = _flip_face(character, face_card)
    hand = tuple(Slot(slot.card) for slot in character.hand)
    event = Event(
        kind="restore",
        text=f"{character.name} flips the {face_card.name} and restores {count} hand cards.",
        owner=player_id,
        data={"face_card": face_card.code, "count": count},
    )
    return Outcome(game.with_character(replace(character, hand=hand)), (event,))


def flip_to_restore_face(
    game: Game, *, player_id: str, face_card: Card, restore: Card
) -> Outcome[Game]:
    """Replenishing: flip a face card to restore a flipped face card of lesser value.

    Kings cannot be restored during the game; they unflip at the end of a session.
    """
    character = touched(game.living(player_id))
    target = character.face(restore)
    if not target.flipped:
        raise SexAndViolenceError(f"Your {restore.name} is not flipped.")
    if restore.rank == KING:
        raise SexAndViolenceError("Kings cannot be restored; they unflip at the session's end.")
    if restore.rank >= face_card.rank:
        raise SexAndViolenceError(
            f"The {face_card.name} can only restore a face card of lesser value than itself."
        )
    character = _flip_face(character, face_card)
    sideboard = tuple(
        Slot(slot.card) if slot.card == restore else slot for slot in character.sideboard
    )
    event = Event(
        kind="restore",
        text=f"{character.name} flips the {face_card.name} and restores the {restore.name}.",
        owner=player_id,
        data={"face_card": face_card.code, "restored": restore.code},
    )
    return Outcome(game.with_character(replace(character, sideboard=sideboard)), (event,))


def appeal_to_archetype(game: Game, *, player_id: str, rng: random.Random) -> Outcome[Game]:
    """Replenishing: after the archetype's task, draw while the suit matches, up to the limit.

    "If this card's suit is the same as your archetype's, keep that card and draw again.
    Continue until your hand is back up to 10 cards or until you draw an unrelated suit (this
    card is kept […])." Once per game session; not in the middle of a contest.
    """
    character = touched(game.living(player_id))
    if character.appealed_this_session:
        raise SexAndViolenceError("You have already appealed to your archetype this session.")
    if _in_contest(game, player_id):
        raise SexAndViolenceError("Finish the contest before appealing to your archetype.")
    if not character.room_in_hand(game.settings.hand_limit):
        raise SexAndViolenceError("Your hand is full; there is nothing to replenish.")
    suit = character.archetype.suit
    drawn: list[Card] = []
    events: list[Event] = [
        Event(
            kind="appeal",
            text=f"{character.name} appeals to {character.archetype.label}: "
            f"{character.archetype.task}",
            owner=player_id,
        )
    ]
    while character.room_in_hand(game.settings.hand_limit):
        character, step = draw_into_hand(game, character, 1, rng, "appeal")
        events += step
        drawn.append(character.hand[-1].card)
        if drawn[-1].suit is not suit:
            break
    character = replace(character, appealed_this_session=True)
    return Outcome(game.with_character(character), tuple(events))


def stack_deck(
    game: Game, *, player_id: str, exchange: Sequence[Card], rng: random.Random
) -> Outcome[Game]:
    """Stacking your Deck: exchange hand cards for as many from the deck, once per scene.

    For every drawn card of 5 or less (aces count 1) the player announces a negative factor,
    above 5 a positive one. Flipped cards cannot be exchanged. The exchanged cards are
    shuffled into the deck after the new ones are drawn. Only at a lull, so not during a
    contest the character is in.
    """
    character = touched(game.living(player_id))
    if character.stacked_this_scene:
        raise SexAndViolenceError("You have already stacked your deck in this scene.")
    if _in_contest(game, player_id):
        raise SexAndViolenceError("You can stack your deck only at a lull in the action.")
    if not exchange:
        raise SexAndViolenceError("Name the hand cards you want to exchange.")
    require_usable(character, exchange, "exchange")
    character = remove_from_hand(character, exchange)
    character, new, taken = take_from_deck(character, len(exchange), rng, "stacking the deck")
    deck = character.deck.shuffle_in(exchange, rng)
    character = replace(
        character,
        deck=deck,
        hand=character.hand + tuple(Slot(card) for card in new),
        stacked_this_scene=True,
    )
    factors = ["negative" if card.value_ace_low <= 5 else "positive" for card in new]
    negative = factors.count("negative")
    event = Event(
        kind="stack",
        text=(
            f"{character.name} stacks the deck, exchanging {len(exchange)} cards, and must "
            f"announce {negative} negative and {len(new) - negative} positive factors."
        ),
        owner=player_id,
        private_text=(
            f"{character.name} exchanges {describe_cards(exchange)} for {describe_cards(new)}, "
            f"and must announce {negative} negative and {len(new) - negative} positive factors."
        ),
        data={"count": len(exchange), "factors": factors},
        private_data={"returned": encode_cards(exchange), "drawn": encode_cards(new)},
        gm_may_read=game.settings.gm_sees_hands,
    )
    return Outcome(game.with_character(character), (*taken, event))
