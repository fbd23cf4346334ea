"""Sex & Violence: contests, bids and the top card (the aces are in ``aces``).

A contest runs: the GM opens it (:func:`open_contest`) → the player bids (:func:`bid`) →
defenders answer an Intimidation or Lethal blow ace (:func:`respond_to_ace`) → each part of
the bid meets the top card of the player's deck → wounded player characters cancel or take
their wounds (:mod:`pbp.rules.sex_and_violence.mayhem`) → the discards are reshuffled.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from pbp.rules.cards import ACE, Card, Event, Outcome, Suit, describe_cards, encode_cards
from pbp.rules.sex_and_violence.aces import (
    VIOLENCE_ACES_BY_KEY,
    ace_event,
    announced_aces,
    check_answer,
    lucky_blow,
    with_pending,
)
from pbp.rules.sex_and_violence.hand import (
    discard_event,
    discard_from_hand,
    draw_into_hand,
    require_usable,
    reshuffle_discards,
    take_from_deck,
    touched,
)
from pbp.rules.sex_and_violence.state import (
    Attack,
    Character,
    Contest,
    ContestKind,
    Game,
    SexAndViolenceError,
    Stage,
    WoundPacket,
)


def open_contest(
    game: Game,
    *,
    player_id: str,
    suit: Suit,
    kind: ContestKind = ContestKind.PLAIN,
    targets: Sequence[str] = (),
) -> Outcome[Game]:
    """Contests (GM): ask a player to bid in ``suit``; fights (Mayhem) name the opponents."""
    if game.contest is not None:
        raise SexAndViolenceError("Finish the open contest before starting another.")
    character = game.living(player_id)
    targets = tuple(targets)
    _check_targets(game, character, kind, targets)
    limit, reason = character.expertise(suit)
    names = ", ".join(game.target_name(target) for target in targets) or "the odds"
    event = Event(
        kind="contest",
        text=(
            f"{character.name} faces a {kind.value} contest in {suit.label} against {names}: "
            f"bid up to {limit} {'card' if limit == 1 else 'cards'} ({reason})."
        ),
        owner=player_id,
        data={"suit": suit.value, "kind": kind.value, "targets": list(targets), "limit": limit},
    )
    contest = Contest(player_id=player_id, suit=suit, kind=kind, targets=targets)
    return Outcome(replace(game, contest=contest), (event,))


def _check_targets(
    game: Game, character: Character, kind: ContestKind, targets: tuple[str, ...]
) -> None:
    if len(set(targets)) != len(targets):
        raise SexAndViolenceError("Name each opponent only once.")
    if kind is ContestKind.VIOLENCE and not targets:
        raise SexAndViolenceError("A fight needs at least one opponent.")
    if kind is not ContestKind.VIOLENCE and len(targets) > 1:
        raise SexAndViolenceError("Only fights can take on more than one opponent.")
    for target in targets:
        if target == character.player_id:
            raise SexAndViolenceError("A character cannot be their own opponent.")
        if game.is_player(target):
            game.living(target)
        elif game.gm_character(target).out:
            raise SexAndViolenceError(f"{game.gm_character(target).name} is already out.")


def bid(
    game: Game,
    *,
    player_id: str,
    cards: Sequence[Card] | Mapping[str, Sequence[Card]],
    rng: random.Random,
    announce: Iterable[Card] | None = None,
    redraw: bool = True,
) -> Outcome[Game]:
    """Contests: bid cards from the hand; the total meets the top card of the player's deck.

    ``cards`` is a list, or for a split bid (Mayhem) a mapping opponent → cards. The maximum
    is 1 card, or 2/3/4 with an unflipped Jack/Queen/King of the action's suit (not
    cumulative). ``announce`` names the aces whose effect is announced; by default every bid
    ace in a sex or violence scene is. ``redraw=False`` declines the redraw of bid cards of
    the action's suit ("you *may* re-draw that many cards").
    """
    contest = game.contest
    if contest is None or contest.stage is not Stage.BIDDING:
        raise SexAndViolenceError("There is no contest waiting for a bid.")
    if contest.player_id != player_id:
        raise SexAndViolenceError("This contest is not yours to bid in.")
    character = game.living(player_id)
    parts = _split(contest, cards)
    flat = [card for _, part in parts for card in part]
    limit, reason = character.expertise(contest.suit)
    if not character.usable_cards:
        raise SexAndViolenceError(
            "You have no unflipped card to bid; flip a face card in your sideboard to draw."
        )
    if len(flat) > limit:
        noun = "card" if limit == 1 else "cards"
        raise SexAndViolenceError(f"You can bid at most {limit} {noun}: {reason}.")
    require_usable(character, flat, "bid")
    announced = announced_aces(contest.kind, flat, announce)
    character = discard_from_hand(touched(character), flat)
    events = [_bid_event(game, contest, character, parts)]
    attacks = []
    for target, part in parts:
        aces = tuple(card for card in part if card in announced)
        attack = Attack(target=target, cards=part, announced=aces)
        events += [ace_event(character, contest.kind, card) for card in attack.announced]
        character, attack, lucky_events = lucky_blow(contest, character, attack, rng)
        events += lucky_events
        attacks.append(with_pending(contest, attack))
    matching = sum(1 for card in flat if card.suit is contest.suit)
    contest = replace(
        contest,
        stage=Stage.RESPONSES,
        attacks=tuple(attacks),
        redraw=matching if redraw else 0,
    )
    game = replace(game.with_character(character), contest=contest)
    return advance(game, events, rng)


def _split(
    contest: Contest, cards: Sequence[Card] | Mapping[str, Sequence[Card]]
) -> list[tuple[str | None, tuple[Card, ...]]]:
    if isinstance(cards, Mapping):
        if contest.kind is not ContestKind.VIOLENCE:
            raise SexAndViolenceError("Only a fight's bid can be split between opponents.")
        unknown = [target for target in cards if target not in contest.targets]
        if unknown:
            raise SexAndViolenceError(f"{unknown[0]!r} is not an opponent in this fight.")
        parts: list[tuple[str | None, tuple[Card, ...]]] = [
            (target, tuple(cards[target])) for target in contest.targets if target in cards
        ]
        if any(not part for _, part in parts) or not parts:
            raise SexAndViolenceError("Bid at least one card against each opponent you name.")
        return parts
    if len(contest.targets) > 1:
        raise SexAndViolenceError("Say how your bid is split between your opponents.")
    if not cards:
        raise SexAndViolenceError("Bid at least one card.")
    return [(contest.targets[0] if contest.targets else None, tuple(cards))]


def _bid_event(
    game: Game,
    contest: Contest,
    character: Character,
    parts: list[tuple[str | None, tuple[Card, ...]]],
) -> Event:
    pieces = [
        f"{describe_cards(part)} against {game.target_name(target)}" for target, part in parts
    ]
    return Event(
        kind="bid",
        text=f"{character.name} bids {'; '.join(pieces)} in {contest.suit.label}.",
        owner=character.player_id,
        data={"parts": [[target, encode_cards(part)] for target, part in parts]},
    )


def awaiting_response(game: Game) -> tuple[int, str, str] | None:
    """The (attack index, effect, defender) whose answer the contest waits for, if any."""
    if game.contest is None:
        return None
    for index, attack in enumerate(game.contest.attacks):
        if attack.pending and attack.target is not None:
            return index, attack.pending[0], attack.target
    return None


def respond_to_ace(
    game: Game,
    *,
    defender: str,
    rng: random.Random,
    cards: Sequence[Card] = (),
    meets: bool | None = None,
) -> Outcome[Game]:
    """Intimidation / Lethal blow: the defender answers the ace.

    Intimidation: "Defender must match bid with all Hearts or back away from the fight with no
    more damage done to either side." Lethal blow: "Defender must double the bid or die
    instantly." A player defender answers with ``cards`` from the hand (a bid: at most their
    expertise in the action's suit; discarded, with the usual redraw); ``cards=()`` gives in.
    A GM character has no hand, so the GM rules with ``meets``.
    """
    waiting = awaiting_response(game)
    if waiting is None:
        raise SexAndViolenceError("No ace is waiting for an answer.")
    index, effect, expected = waiting
    if defender != expected:
        raise SexAndViolenceError(f"The answer is {game.target_name(expected)}'s to give.")
    assert game.contest is not None
    attack = game.contest.attacks[index]
    events: list[Event] = []
    if game.is_player(defender):
        if meets is not None:
            raise SexAndViolenceError("A player answers with cards, not with a ruling.")
        game, meets, events = _answer_with_cards(game, defender, effect, attack, cards, rng)
    elif meets is None or cards:
        raise SexAndViolenceError("For a GM character the GM rules whether the answer is met.")
    name = game.target_name(defender)
    if meets:
        attack = replace(attack, pending=attack.pending[1:])
        text = f"{name} answers the {VIOLENCE_ACES_BY_KEY[effect].name}."
    elif effect == "intimidation":
        attack = replace(attack, pending=(), outcome="backed_away")
        text = f"{name} backs away from the fight; no more damage is done to either side."
    else:
        attack = replace(attack, pending=(), outcome="slain")
        game = _slay(game, defender)
        text = f"{name} cannot double the bid and dies instantly (lethal blow)."
    events.append(Event(kind="ace_answer", text=text, data={"effect": effect, "met": meets}))
    assert game.contest is not None  # _slay keeps the fight going
    attacks = list(game.contest.attacks)
    attacks[index] = attack
    game = replace(game, contest=replace(game.contest, attacks=tuple(attacks)))
    return advance(game, events, rng)


def _answer_with_cards(
    game: Game,
    defender: str,
    effect: str,
    attack: Attack,
    cards: Sequence[Card],
    rng: random.Random,
) -> tuple[Game, bool, list[Event]]:
    assert game.contest is not None
    if not cards:
        return game, False, []
    character = game.living(defender)
    check_answer(character, game.contest.suit, effect, attack, cards)
    character = discard_from_hand(touched(character), cards)
    events = [discard_event(character, cards, f"answering the {effect}")]
    matching = sum(1 for card in cards if card.suit is game.contest.suit)
    character, drawn = draw_into_hand(game, character, matching, rng, "redraw")
    events += drawn
    attacks = list(game.contest.attacks)
    index = attacks.index(attack)
    attacks[index] = replace(attack, responses=attack.responses + tuple(cards))
    contest = replace(game.contest, attacks=tuple(attacks))
    return replace(game.with_character(character), contest=contest), True, events


def _slay(game: Game, target: str) -> Game:
    if game.is_player(target):
        return game.with_character(replace(game.character(target), dead=True))
    return game.with_gm_character(replace(game.gm_character(target), out=True))


def advance(game: Game, events: list[Event], rng: random.Random) -> Outcome[Game]:
    """Move the contest on as far as it can go without a decision from someone."""
    contest = game.contest
    assert contest is not None
    if awaiting_response(game) is not None:
        return Outcome(game, tuple(events))
    if contest.stage is Stage.RESPONSES:
        game, compared = _compare(game, rng)
        events += compared
        contest = game.contest
        assert contest is not None
        if contest.wounds:
            return Outcome(
                replace(game, contest=replace(contest, stage=Stage.WOUNDS)), tuple(events)
            )
    if contest.wounds:
        return Outcome(game, tuple(events))
    game, closing = close_contest(game, rng)
    return Outcome(game, tuple(events + closing))


def _compare(game: Game, rng: random.Random) -> tuple[Game, list[Event]]:
    """Contests: each bid total against the top card (aces 1): higher succeeds, equal is
    unknown or inconsequential, lower brings the GM's consequence. In a fight (Mayhem) the
    difference is dealt as wounds to the loser."""
    contest = game.contest
    assert contest is not None
    character = game.character(contest.player_id)
    events: list[Event] = []
    attacks: list[Attack] = []
    shared: Card | None = None
    for attack in contest.attacks:
        if attack.outcome is not None:
            attacks.append(attack)
            continue
        if shared is not None and game.settings.split_bid_shares_top_card:
            top = shared
        else:
            character, (top,), drawn = take_from_deck(character, 1, rng, "top card")
            character = replace(character, discards=character.discards + (top,))
            events += drawn
            shared = top
        difference = attack.total - top.value_ace_low
        outcome = "success" if difference > 0 else "tie" if difference == 0 else "failure"
        attacks.append(replace(attack, top_card=top, outcome=outcome, wounds=abs(difference)))
        events.append(_compare_event(game, contest, character, attacks[-1]))
    game = game.with_character(character)
    contest = replace(contest, attacks=tuple(attacks))
    game = replace(game, contest=contest)
    if contest.kind is ContestKind.VIOLENCE:
        game, wound_events = _deal_wounds(game)
        events += wound_events
    game, redrawn = _redraw(game, rng)
    return game, events + redrawn


def _compare_event(game: Game, contest: Contest, character: Character, attack: Attack) -> Event:
    assert attack.top_card is not None
    meaning = {
        "success": "success",
        "tie": "a tie: the outcome is unknown or inconsequential",
        "failure": "failure: the GM says what it costs",
    }[attack.outcome or "tie"]
    return Event(
        kind="compare",
        text=(
            f"{character.name}'s {attack.total} against {game.target_name(attack.target)} "
            f"meets the top card, the {attack.top_card.name}: {meaning}."
        ),
        owner=character.player_id,
        data={
            "target": attack.target,
            "total": attack.total,
            "top_card": attack.top_card.code,
            "outcome": attack.outcome,
        },
    )


def _deal_wounds(game: Game) -> tuple[Game, list[Event]]:
    """Mayhem: the difference becomes wounds to the losing party; GM characters survive up to
    the wound limit; wounds to player characters wait for them to cancel or take them."""
    contest = game.contest
    assert contest is not None
    bidder = contest.player_id
    packets: list[WoundPacket] = []
    events: list[Event] = []
    for attack in contest.attacks:
        if attack.outcome not in ("success", "failure") or attack.target is None:
            continue
        if attack.outcome == "failure":
            packets.append(WoundPacket(bidder, attack.wounds, attack.target))
        elif game.is_player(attack.target):
            bullseye = Card(ACE, Suit.SPADES) in attack.announced
            packets.append(WoundPacket(attack.target, attack.wounds, bidder, not bullseye))
        else:
            game, event = _wound_gm(game, attack.target, attack.wounds)
            events.append(event)
    return replace(game, contest=replace(contest, wounds=tuple(packets))), events


def _wound_gm(game: Game, gm_id: str, amount: int) -> tuple[Game, Event]:
    npc = game.gm_character(gm_id)
    wounds = npc.wounds + amount
    out = wounds > game.settings.gm_wound_limit
    npc = replace(npc, wounds=wounds, out=out)
    status = "and is out of the fight" if out else f"({wounds} of {game.settings.gm_wound_limit})"
    event = Event(
        kind="wounds",
        text=f"{npc.name} takes {amount} wounds {status}.",
        data={"target": gm_id, "amount": amount, "wounds": wounds, "out": out},
    )
    return game.with_gm_character(npc), event


def _redraw(game: Game, rng: random.Random) -> tuple[Game, list[Event]]:
    """Contests: redraw one card for each bid card of the action's suit."""
    contest = game.contest
    assert contest is not None
    character = game.character(contest.player_id)
    if not contest.redraw or character.dead:
        return game, []
    character, events = draw_into_hand(game, character, contest.redraw, rng, "redraw")
    game = replace(game.with_character(character), contest=replace(contest, redraw=0))
    return game, events


def close_contest(game: Game, rng: random.Random) -> tuple[Game, list[Event]]:
    """ "When the action has been resolved, you may re-shuffle the discarded cards back into
    your deck." Fights are remembered for the Clubs cancel ("fought your opponent before")."""
    contest = game.contest
    assert contest is not None
    events: list[Event] = []
    people = [contest.player_id] + [t for t in contest.attacked if game.is_player(t)]
    for player_id in people:
        character = game.character(player_id)
        if game.settings.reshuffle_after_contest:
            character, shuffled = reshuffle_discards(character, rng, "the action is resolved")
            events += shuffled
        if contest.kind is ContestKind.VIOLENCE:
            foes = contest.attacked if player_id == contest.player_id else (contest.player_id,)
            fought = tuple(dict.fromkeys(character.fought + foes))
            character = replace(character, fought=fought)
        game = game.with_character(character)
    events.append(Event(kind="contest_closed", text="The contest is resolved."))
    return replace(game, contest=None), events
