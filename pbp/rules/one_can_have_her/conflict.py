"""One Can Have Her, Scene Conflict: stakes, face-down cards, bonus cards and the three turns.

"The player and GM places three cards face down on the table. Each card represents a turn
[…] Red cards are successes while black cards are failures." The server deals every conflict
from its own freshly shuffled 52-card deck, so every card is recorded and reproducible.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import replace

from pbp.rules.cards import Card, Deck, Event, Outcome, describe_cards, encode_cards, standard_deck
from pbp.rules.one_can_have_her.state import (
    GM,
    TURNS,
    ConclusionTieBreak,
    Conflict,
    Game,
    OneCanHaveHerError,
    Phase,
    Side,
    TurnResult,
)

_OR = re.compile(r"\bor\b", re.IGNORECASE)


def check_stakes(stakes: str) -> str:
    """Stakes: "formulated as an or-question", spelling out the two alternatives."""
    text = " ".join(stakes.split())
    if not _OR.search(text) or not text.endswith("?"):
        raise OneCanHaveHerError(
            'Write the stakes as an or-question, e.g. "Will I sneak past the guards unnoticed '
            'or will they notice me?"'
        )
    return text


def counts_ascend(counts: Sequence[int]) -> bool:
    """ "There always has to be more cards in later turns than earlier": as the rules' example
    shows (one added card goes to turn 3), later turns hold *at least* as many cards."""
    return all(earlier <= later for earlier, later in zip(counts, counts[1:], strict=False))


def in_conflict(game: Game, player_id: str) -> Conflict | None:
    return next((c for c in game.round_conflicts() if player_id in c.players), None)


def start_conflict(
    game: Game,
    *,
    player_id: str,
    stakes: str,
    rng: random.Random,
    opponent: str | None = None,
) -> Outcome[Game]:
    """Scene Conflict: the scene's player proposes stakes against the GM, or (PvP) against a
    player whose character is in the scene; a fresh deck deals three face-down cards a side.
    The other side accepts the stakes with :func:`accept_stakes`."""
    if game.phase is not Phase.SCENES:
        raise OneCanHaveHerError("Conflicts are set during the scenes of a round.")
    if player_id not in game.scenes_opened:
        raise OneCanHaveHerError("Open your scene with your monologue before setting stakes.")
    for who in (player_id, opponent):
        if who is not None and in_conflict(game, who) is not None:
            raise OneCanHaveHerError(f"{game.name(who)} is already in a conflict this round.")
    if opponent is not None:
        game.player(opponent)
        if opponent == player_id:
            raise OneCanHaveHerError("A character cannot be in a conflict with himself.")
    text = check_stakes(stakes)
    deck = Deck.shuffled_from(standard_deck(), rng)
    first, deck = deck.draw(TURNS)
    second, deck = deck.draw(TURNS)
    sides = (
        Side(player_id, tuple((card,) for card in first)),
        Side(opponent or GM, tuple((card,) for card in second)),
    )
    conflict = Conflict(
        id=f"r{game.round}-{player_id}", round=game.round, sides=sides, deck=deck, stakes=text
    )
    event = Event(
        kind="conflict",
        text=(
            f"{game.name(player_id)} proposes the stakes against "
            f"{game.name(opponent or GM)}: {text} The server shuffles a deck and deals three "
            "face-down cards to each side."
        ),
        data={"conflict": conflict.id, "stakes": text, "sides": [s.owner for s in sides]},
    )
    game = replace(game, conflicts=(*game.conflicts, conflict))
    return Outcome(game, (event,))


def set_stakes(game: Game, *, conflict_id: str, by: str, stakes: str) -> Outcome[Game]:
    """Either side may propose new stakes; the other side must then accept them again."""
    conflict = _open_for_stakes(game, conflict_id)
    side = conflict.side_of(by)
    text = check_stakes(stakes)
    conflict = replace(conflict, stakes=text, accepted=(side,))
    event = Event(kind="stakes", text=f"{game.name(by)} proposes: {text}", data={"stakes": text})
    return Outcome(game.with_conflict(conflict), (event,))


def accept_stakes(game: Game, *, conflict_id: str, by: str) -> Outcome[Game]:
    """ "Both sides has to agree to the stakes." When every conflict of the round is set the
    round moves on: to the end-die roll in resolution rounds, else to bonus cards."""
    conflict = _open_for_stakes(game, conflict_id)
    side = conflict.side_of(by)
    if side in conflict.accepted:
        raise OneCanHaveHerError("You have already accepted these stakes.")
    conflict = replace(conflict, accepted=tuple(sorted({*conflict.accepted, side})))
    game = game.with_conflict(conflict)
    events = [Event(kind="stakes", text=f"{game.name(by)} accepts the stakes.")]
    game, more = conflicts_set(game)
    return Outcome(game, (*events, *more))


def _open_for_stakes(game: Game, conflict_id: str) -> Conflict:
    if game.phase is not Phase.SCENES:
        raise OneCanHaveHerError("Stakes can only change before the round's conflicts are set.")
    conflict = game.conflict(conflict_id)
    if conflict.round != game.round:
        raise OneCanHaveHerError("That conflict belongs to an earlier round.")
    return conflict


def conflicts_set(game: Game) -> tuple[Game, list[Event]]:
    """Once every scene is open and every player is in a conflict with agreed stakes."""
    everyone = {p.player_id for p in game.players}
    ready = set(game.scenes_opened) == everyone and all(
        (c := in_conflict(game, pid)) is not None and c.stakes_set for pid in everyone
    )
    if not ready:
        return game, []
    if game.round in (4, 5, 6):
        text = "Every conflict is set: the GM rolls the die to see if the game ends."
        return replace(game, phase=Phase.END_ROLL), [Event(kind="conflicts_set", text=text)]
    if game.round == 7:
        game = replace(game, final=True)
        game, events = apply_final_round(game)
        text = "Every conflict is set. This is the end scene: the game ends after it."
        return replace(game, phase=Phase.BONUS), [Event(kind="conflicts_set", text=text), *events]
    text = "Every conflict is set: add Opposition and Coolness cards before the first flip."
    return replace(game, phase=Phase.BONUS), [Event(kind="conflicts_set", text=text)]


def apply_final_round(game: Game) -> tuple[Game, list[Event]]:
    """Scene Conflict: a character ratted on in the final round "automatically loses the
    stakes and is either put behind bars or shot dead by the police" – no card play."""
    events = []
    for conflict in game.round_conflicts():
        losers = tuple(
            index
            for index, side in enumerate(conflict.sides)
            if side.owner != GM and game.ratted_on_by(side.owner, game.round)
        )
        if not losers:
            continue
        winner = None if len(losers) == 2 else 1 - losers[0]
        conflict = replace(
            conflict,
            forfeited_by=losers,
            concluder=winner,
            conclusion_reason="ratted on in the final round",
        )
        game = game.with_conflict(conflict)
        for index in losers:
            name = game.name(conflict.sides[index].owner)
            events.append(
                Event(
                    kind="forfeit",
                    text=(
                        f"{name} was ratted on in the final round: he loses the stakes "
                        "automatically and ends in jail or dead, as his player chooses."
                    ),
                    data={"conflict": conflict.id, "player": conflict.sides[index].owner},
                )
            )
    return game, events


def add_bonus_cards(
    game: Game, *, conflict_id: str, side: str, by: str, counts: Sequence[int]
) -> Outcome[Game]:
    """Bonus cards before any flip: the GM adds up to 5 Opposition cards to his own side (not in
    PvP conflicts); any player adds his Coolness cards to either side. ``counts`` gives the
    cards added to turns 1, 2 and 3; later turns must keep at least as many as earlier ones."""
    if game.phase is not Phase.BONUS:
        when = "after flipping has started" if game.phase is Phase.FLIPPING else "now"
        raise OneCanHaveHerError(f"Bonus cards cannot be added {when}.")
    conflict = game.conflict(conflict_id)
    if conflict.round != game.round or conflict.done:
        raise OneCanHaveHerError("That conflict takes no more cards.")
    index = conflict.side_of(side)
    added = tuple(counts)
    if len(added) != TURNS or any(n < 0 for n in added) or sum(added) == 0:
        raise OneCanHaveHerError("Give the number of cards added to each of the three turns.")
    total = sum(added)
    target = conflict.sides[index]
    if by == GM:
        game = _spend_opposition(game, conflict, target, total)
    else:
        game = _spend_coolness(game, by, total)
    new_counts = tuple(have + more for have, more in zip(target.counts, added, strict=True))
    if not counts_ascend(new_counts):
        raise OneCanHaveHerError(
            "Later turns must hold at least as many cards as earlier ones; the side would hold "
            f"{'/'.join(map(str, new_counts))} cards. Add cards to later turns first."
        )
    if total > len(conflict.deck):
        raise OneCanHaveHerError(f"The conflict's deck has only {len(conflict.deck)} cards left.")
    deck = conflict.deck
    turns = []
    for cards, more in zip(target.turns, added, strict=True):
        dealt, deck = deck.draw(more)
        turns.append(cards + dealt)
    kind = "opposition" if by == GM else "coolness"
    target = replace(
        target,
        turns=tuple(turns),
        opposition=target.opposition + (total if by == GM else 0),
        coolness=target.coolness + (0 if by == GM else total),
    )
    game = game.with_conflict(replace(conflict.with_side(index, target), deck=deck))
    event = Event(
        kind="bonus",
        text=(
            f"{game.name(by)} adds {total} {kind} cards to {game.name(side)}'s side "
            f"(turns 1/2/3: {'/'.join(map(str, added))})."
        ),
        data={"conflict": conflict_id, "side": side, "by": by, "counts": list(added)},
    )
    return Outcome(game, (event,))


def _spend_opposition(game: Game, conflict: Conflict, target: Side, total: int) -> Game:
    if conflict.pvp:
        raise OneCanHaveHerError("The GM adds no Opposition cards to a player-vs-player conflict.")
    if target.owner != GM:
        raise OneCanHaveHerError("The GM adds Opposition cards to his own side only.")
    limit = game.settings.max_opposition_per_conflict
    if target.opposition + total > limit:
        raise OneCanHaveHerError(
            f"The GM can add at most {limit} Opposition cards to a conflict "
            f"({target.opposition} already added)."
        )
    if total > game.opposition_pool:
        raise OneCanHaveHerError(f"The Opposition pool holds only {game.opposition_pool} cards.")
    return replace(game, opposition_pool=game.opposition_pool - total)


def _spend_coolness(game: Game, player_id: str, total: int) -> Game:
    player = game.player(player_id)
    if total > player.coolness:
        raise OneCanHaveHerError(f"You have only {player.coolness} Coolness cards.")
    return game.with_player(replace(player, coolness=player.coolness - total))


def flip_turn(game: Game, *, conflict_id: str, rng: random.Random) -> Outcome[Game]:
    """Flip the next turn of a conflict. The first flip of the round ends all bonus cards.

    "The side with most red cards wins the turn, and gets to narrate […] If there's an equal
    amount of successes the turn is a draw […] The side with the highest card gets to narrate.
    If that doesn't solve who narrates, draw a new card each and compare the value, but don't
    count red cards as extra successes." Aces are high; equal draws are drawn again.
    """
    if game.phase not in (Phase.BONUS, Phase.FLIPPING):
        raise OneCanHaveHerError("Cards are flipped once every conflict is set.")
    conflict = game.conflict(conflict_id)
    if conflict.round != game.round or conflict.done or len(conflict.results) == TURNS:
        raise OneCanHaveHerError("That conflict has no turn left to flip.")
    turn = len(conflict.results)
    cards = (conflict.sides[0].turns[turn], conflict.sides[1].turns[turn])
    reds = (sum(c.is_red for c in cards[0]), sum(c.is_red for c in cards[1]))
    deck = conflict.deck
    draws: tuple[tuple[Card, Card], ...] = ()
    narrator: int
    if reds[0] != reds[1]:
        narrator, reason = (0 if reds[0] > reds[1] else 1), "most red cards"
        winner: int | None = narrator
    else:
        winner = None
        narrator, reason, draws, deck = break_tie(cards, deck, rng)
    result = TurnResult(reds, winner, narrator, draws, reason)
    conflict = replace(conflict, results=(*conflict.results, result), deck=deck)
    events = [_turn_event(game, conflict, turn, cards, result)]
    if turn + 1 == TURNS:
        conflict, concluded = _conclude(game, conflict, rng)
        events += concluded
    game = replace(game.with_conflict(conflict), phase=Phase.FLIPPING)
    if conflict.concluder is not None:
        game = settle_pools(game, conflict)
    return Outcome(game, tuple(events))


def break_tie(
    cards: tuple[Sequence[Card], Sequence[Card]], deck: Deck, rng: random.Random
) -> tuple[int, str, tuple[tuple[Card, Card], ...], Deck]:
    """Highest card narrates (aces high); still equal: each side draws a new card, again and
    again until the values differ. An exhausted deck is replaced by a fresh shuffled one."""
    highest = [max((c.value_ace_high for c in side), default=0) for side in cards]
    if highest[0] != highest[1]:
        return (0 if highest[0] > highest[1] else 1), "highest card", (), deck
    draws: list[tuple[Card, Card]] = []
    while True:
        if len(deck) < 2:
            deck = Deck.shuffled_from(standard_deck(), rng)
        (first, second), deck = deck.draw(2)
        draws.append((first, second))
        if first.value_ace_high != second.value_ace_high:
            side = 0 if first.value_ace_high > second.value_ace_high else 1
            return side, "new cards drawn", tuple(draws), deck


def _conclude(game: Game, conflict: Conflict, rng: random.Random) -> tuple[Conflict, list[Event]]:
    """ "After narrating turn 3 the side with the highest total number of successes in the
    conflict gets to conclude it." The text is silent on a tie; see Settings."""
    totals = [sum(r.successes[i] for r in conflict.results) for i in (0, 1)]
    draws: tuple[tuple[Card, Card], ...]
    if totals[0] != totals[1]:
        concluder, reason, draws = (0 if totals[0] > totals[1] else 1), "most successes", ()
    elif game.settings.conclusion_tie_break is ConclusionTieBreak.GM_DECIDES:
        text = "Successes are even: the GM decides which side concludes."
        return conflict, [Event(kind="conclusion_tie", text=text, data={"conflict": conflict.id})]
    else:
        flipped = tuple(tuple(c for turn in side.turns for c in turn) for side in conflict.sides)
        concluder, reason, draws, deck = break_tie((flipped[0], flipped[1]), conflict.deck, rng)
        conflict = replace(conflict, deck=deck)
        reason = f"even successes; {reason}"
    conflict = replace(
        conflict, concluder=concluder, conclusion_reason=reason, conclusion_draws=draws
    )
    return conflict, [_conclusion_event(game, conflict, totals)]


def gm_break_tie(game: Game, *, conflict_id: str, side: str) -> Outcome[Game]:
    """GM override for even successes after turn 3 (``ConclusionTieBreak.GM_DECIDES``)."""
    conflict = game.conflict(conflict_id)
    if conflict.done or len(conflict.results) != TURNS:
        raise OneCanHaveHerError("That conflict is not waiting for the GM to break a tie.")
    conflict = replace(
        conflict, concluder=conflict.side_of(side), conclusion_reason="the GM's decision"
    )
    totals = [sum(r.successes[i] for r in conflict.results) for i in (0, 1)]
    game = settle_pools(game.with_conflict(conflict), conflict)
    return Outcome(game, (_conclusion_event(game, conflict, totals),))


def settle_pools(game: Game, conflict: Conflict) -> Game:
    """ "Every opposition card used goes into the Coolness Pool"; "Used Coolness Cards turn
    back into Opposition Cards". Cards count as used when their conflict is concluded."""
    opposition = sum(side.opposition for side in conflict.sides)
    coolness = sum(side.coolness for side in conflict.sides)
    return replace(
        game,
        coolness_pool=game.coolness_pool + opposition,
        opposition_pool=game.opposition_pool + coolness,
    )


def _turn_event(
    game: Game,
    conflict: Conflict,
    turn: int,
    cards: tuple[Sequence[Card], Sequence[Card]],
    result: TurnResult,
) -> Event:
    names = [game.name(side.owner) for side in conflict.sides]
    shown = "; ".join(f"{names[i]} flips {describe_cards(cards[i])}" for i in (0, 1))
    outcome = (
        f"{names[result.winner]} wins the turn"
        if result.winner is not None
        else f"a draw; {names[result.narrator]} narrates ({result.reason})"
    )
    if result.tie_draws:
        drawn = ", ".join(f"{a.name} against {b.name}" for a, b in result.tie_draws)
        outcome += f" after drawing {drawn}"
    return Event(
        kind="turn",
        text=f"Turn {turn + 1}: {shown}. Successes {result.successes[0]}–"
        f"{result.successes[1]}: {outcome}.",
        data={
            "conflict": conflict.id,
            "turn": turn + 1,
            "cards": [encode_cards(cards[0]), encode_cards(cards[1])],
            **result.to_dict(),
        },
    )


def _conclusion_event(game: Game, conflict: Conflict, totals: list[int]) -> Event:
    assert conflict.concluder is not None
    name = game.name(conflict.sides[conflict.concluder].owner)
    return Event(
        kind="conclusion",
        text=(
            f"Successes {totals[0]}–{totals[1]}: {name} concludes the conflict and closes the "
            f"scene ({conflict.conclusion_reason})."
        ),
        data={
            "conflict": conflict.id,
            "concluder": conflict.concluder,
            "totals": totals,
            "draws": [encode_cards(pair) for pair in conflict.conclusion_draws],
        },
    )
