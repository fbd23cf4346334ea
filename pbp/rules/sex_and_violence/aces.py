"""Sex & Violence: the aces of sex and violence scenes.

"Aces can represent complications that are introduced during scenes of intense passion - sex
and violence, to be exact. To use an Ace, bid it as normal during a contest and announce the
card's function -- the Ace also counts as a 1, as usual."
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from pbp.rules.cards import ACE, Card, Event, Suit
from pbp.rules.sex_and_violence.hand import discard_event, require_usable, take_from_deck
from pbp.rules.sex_and_violence.state import (
    Attack,
    Character,
    Contest,
    ContestKind,
    SexAndViolenceError,
)


@dataclass(frozen=True)
class AceEffect:
    """Sex & Violence: what an ace does when bid and announced in a sex or violence scene."""

    key: str
    name: str
    text: str
    condition: str | None = None


SEX_ACES = {
    Suit.SPADES: AceEffect(
        "conception",
        "Conception",
        "Your partner will become pregnant.",
        "No effect if either participant is sterile or the partner is of the same sex.",
    ),
    Suit.HEARTS: AceEffect(
        "true_love", "True Love", "Your partner falls in love with you (or is infatuated)."
    ),
    Suit.CLUBS: AceEffect(
        "vow",
        "Vow",
        "Your partner vows to safeguard your life with his or her own.",
        "Only if your life is at risk.",
    ),
    Suit.DIAMONDS: AceEffect(
        "accomplice",
        "Accomplice",
        "Your partner helps in any hands-free way (shelter, money, equipment) but takes no "
        "part in your plans.",
    ),
}
VIOLENCE_ACES = {
    Suit.SPADES: AceEffect("bullseye", "Bullseye", "This attack cannot be cancelled."),
    Suit.HEARTS: AceEffect(
        "intimidation",
        "Intimidation",
        "The defender must match the bid with Hearts or back away, no more damage done.",
    ),
    Suit.CLUBS: AceEffect(
        "lethal", "Lethal blow", "The defender must double the bid or die instantly."
    ),
    Suit.DIAMONDS: AceEffect(
        "lucky", "Lucky blow", "The attacker adds the top card of his deck to the attack."
    ),
}
RESPONSE_ORDER = ("intimidation", "lethal")
"""Intimidation is answered first: a defender who backs away takes no more damage."""


def ace_effect(kind: ContestKind, card: Card) -> AceEffect | None:
    if not card.is_ace:
        return None
    if kind is ContestKind.SEX:
        return SEX_ACES[card.suit]
    if kind is ContestKind.VIOLENCE:
        return VIOLENCE_ACES[card.suit]
    return None


VIOLENCE_ACES_BY_KEY = {effect.key: effect for effect in VIOLENCE_ACES.values()}


def announced_aces(
    kind: ContestKind, flat: Sequence[Card], announce: Iterable[Card] | None
) -> frozenset[Card]:
    aces = frozenset(card for card in flat if card.is_ace)
    if announce is None:
        return aces if kind is not ContestKind.PLAIN else frozenset()
    chosen = frozenset(announce)
    if chosen and kind is ContestKind.PLAIN:
        raise SexAndViolenceError("Aces only have effects in sex or violence scenes.")
    if not chosen <= aces:
        raise SexAndViolenceError("You can only announce the effect of an ace you bid.")
    return chosen


def ace_event(character: Character, kind: ContestKind, card: Card) -> Event:
    effect = ace_effect(kind, card)
    assert effect is not None
    condition = f" ({effect.condition})" if effect.condition else ""
    return Event(
        kind="ace",
        text=f"{character.name} plays the {card.name}: {effect.name}. {effect.text}{condition}",
        owner=character.player_id,
        data={"card": card.code, "effect": effect.key},
    )


def lucky_blow(
    contest: Contest, character: Character, attack: Attack, rng: random.Random
) -> tuple[Character, Attack, list[Event]]:
    """Lucky blow: "Attacker adds the top card of his deck to the attack"."""
    if contest.kind is not ContestKind.VIOLENCE or Card(ACE, Suit.DIAMONDS) not in attack.announced:
        return character, attack, []
    character, cards, events = take_from_deck(character, 1, rng, "lucky blow")
    character = replace(character, discards=character.discards + cards)
    events.append(discard_event(character, cards, "lucky blow: added to the attack"))
    return character, replace(attack, lucky=cards), events


def with_pending(contest: Contest, attack: Attack) -> Attack:
    if contest.kind is not ContestKind.VIOLENCE:
        return attack
    keys = {VIOLENCE_ACES[card.suit].key for card in attack.announced}
    return replace(attack, pending=tuple(key for key in RESPONSE_ORDER if key in keys))


def check_answer(
    character: Character, suit: Suit, effect: str, attack: Attack, cards: Sequence[Card]
) -> None:
    """Intimidation: "match bid with all Hearts"; Lethal blow: "double the bid". The answer is
    a bid, so at most the defender's expertise in the action's suit."""
    limit, reason = character.expertise(suit)
    if len(cards) > limit:
        noun = "card" if limit == 1 else "cards"
        raise SexAndViolenceError(f"You can bid at most {limit} {noun}: {reason}.")
    require_usable(character, cards, "bid")
    total = sum(card.value_ace_low for card in cards)
    if effect == "intimidation":
        if any(card.suit is not Suit.HEARTS for card in cards):
            raise SexAndViolenceError("To match an Intimidation you must bid only Hearts.")
        needed = attack.total
    else:
        needed = 2 * attack.total
    if total < needed:
        raise SexAndViolenceError(
            f"Your cards total {total}; you need at least {needed}. Bid more, or give in."
        )
