"""Sex & Violence, Mayhem: a wounded player character cancels the attack or takes the wounds.

"For every wound you receive, flip over the highest card in your hand. […] You may cancel all
wounds incurred during a single attack by flipping a face card, so long as you meet the
following criterion […] If you run out of cards to bid (and you cannot flip any face card to
cancel the attack), your character dies."
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import replace

from pbp.rules.cards import Card, Event, Outcome, Suit, describe_cards, encode_cards
from pbp.rules.sex_and_violence.contest import close_contest
from pbp.rules.sex_and_violence.hand import flip_highest, touched
from pbp.rules.sex_and_violence.state import (
    Archetype,
    Character,
    Game,
    SexAndViolenceError,
    Slot,
    Stage,
    WoundPacket,
)

CANCEL_CRITERIA = {
    Suit.SPADES: "you are using a weapon of some kind",
    Suit.HEARTS: "your redeeming quality comes into play",
    Suit.CLUBS: "you have fought this opponent before",
    Suit.DIAMONDS: "your archetype is the Survivor",
}


def pending_wounds(game: Game, player_id: str) -> WoundPacket | None:
    """The next attack's wounds that ``player_id`` must cancel or take, if any."""
    if game.contest is None or game.contest.stage is not Stage.WOUNDS:
        return None
    return next((p for p in game.contest.wounds if p.victim == player_id), None)


def _packet(game: Game, player_id: str) -> WoundPacket:
    packet = pending_wounds(game, player_id)
    if packet is None:
        raise SexAndViolenceError("You have no wounds waiting to be cancelled or taken.")
    return packet


def criterion_holds(
    character: Character, suit: Suit, opponent: str | None, ruling: bool | None
) -> bool:
    """Whether a face card of ``suit`` may cancel an attack.

    Clubs and Diamonds are checked from the record (a finished fight against this opponent;
    the Survivor archetype); Spades (a weapon) and Hearts (the redeeming quality) need the
    GM's ``ruling``. A ruling given for Clubs or Diamonds overrides the record.
    """
    if ruling is not None:
        return ruling
    if suit is Suit.CLUBS:
        return opponent is not None and opponent in character.fought
    if suit is Suit.DIAMONDS:
        return character.archetype is Archetype.SURVIVOR
    return False


def cancel_wounds(
    game: Game,
    *,
    player_id: str,
    face_card: Card,
    rng: random.Random,
    criterion_met: bool | None = None,
) -> Outcome[Game]:
    """Mayhem: flip a face card to cancel every wound of one attack (criterion per suit)."""
    packet = _packet(game, player_id)
    character = touched(game.living(player_id))
    if not packet.cancellable:
        raise SexAndViolenceError("This attack was a Bullseye: it cannot be cancelled.")
    slot = character.face(face_card)
    if slot.flipped:
        raise SexAndViolenceError(f"Your {face_card.name} is already flipped.")
    if not criterion_holds(character, face_card.suit, packet.opponent, criterion_met):
        need = CANCEL_CRITERIA[face_card.suit]
        ask = " (the GM must confirm it)" if face_card.suit in (Suit.SPADES, Suit.HEARTS) else ""
        raise SexAndViolenceError(
            f"Your {face_card.name} can cancel an attack only if {need}{ask}."
        )
    sideboard = tuple(Slot(s.card, True) if s.card == face_card else s for s in character.sideboard)
    game = game.with_character(replace(character, sideboard=sideboard))
    event = Event(
        kind="cancel",
        text=(
            f"{character.name} flips the {face_card.name} and cancels {packet.amount} wounds "
            f"({CANCEL_CRITERIA[face_card.suit]})."
        ),
        owner=player_id,
        data={"face_card": face_card.code, "amount": packet.amount},
    )
    return _done(game, packet, [event], rng)


def take_wounds(
    game: Game, *, player_id: str, rng: random.Random, prefer: Sequence[Card] = ()
) -> Outcome[Game]:
    """Mayhem: flip the highest unflipped hand card for each wound (aces count 1).

    A character left with no card to bid dies: flipped cards keep their slot but cannot be
    bid. ``prefer`` picks among cards of equal rank.
    """
    packet = _packet(game, player_id)
    character = touched(game.living(player_id))
    flipped: list[Card] = []
    for _ in range(packet.amount):
        if not character.usable_cards:
            break
        character, card = flip_highest(character, prefer)
        flipped.append(card)
    dies = not character.usable_cards
    character = replace(character, wounds_taken=character.wounds_taken + packet.amount, dead=dies)
    game = game.with_character(character)
    ending = " and has no card left to bid: the character dies" if dies else ""
    events = [
        Event(
            kind="wounds",
            text=f"{character.name} takes {packet.amount} wounds{ending}.",
            owner=player_id,
            private_text=(
                f"{character.name} takes {packet.amount} wounds, flipping "
                f"{describe_cards(flipped)}{ending}."
            ),
            data={"amount": packet.amount, "flipped_count": len(flipped), "dead": dies},
            private_data={"flipped": encode_cards(flipped)},
            gm_may_read=game.settings.gm_sees_hands,
        )
    ]
    return _done(game, packet, events, rng)


def _done(
    game: Game, packet: WoundPacket, events: list[Event], rng: random.Random
) -> Outcome[Game]:
    contest = game.contest
    assert contest is not None
    rest = list(contest.wounds)
    rest.remove(packet)
    if game.character(packet.victim).dead:
        rest = [p for p in rest if p.victim != packet.victim]
    game = replace(game, contest=replace(contest, wounds=tuple(rest)))
    if rest:
        return Outcome(game, tuple(events))
    game, closing = close_contest(game, rng)
    return Outcome(game, tuple(events + closing))
