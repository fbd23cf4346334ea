"""Builders for One Can Have Her tests: a table, whole rounds, rigged conflicts (no tests)."""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import replace

from pbp.rules import one_can_have_her as ochh
from pbp.rules.cards import Card, Deck

NAMES = {"p1": "Jake", "p2": "Lou", "p3": "Sam", "p4": "Eddie"}


class FixedDie(random.Random):
    """A Random whose d6 always shows ``value`` (for the end-die roll)."""

    def __init__(self, value: int) -> None:
        super().__init__(0)
        self.value = value

    def randint(self, a: int, b: int) -> int:
        assert (a, b) == (1, 6)
        return self.value


def rng(seed: int = 0) -> random.Random:
    return random.Random(seed)


def cards(text: str) -> tuple[Card, ...]:
    return tuple(Card.from_code(code) for code in text.split())


def table(players: int = 3, settings: ochh.Settings | None = None) -> ochh.Game:
    g = ochh.new_game(settings)
    for index in range(1, players + 1):
        pid = f"p{index}"
        g = ochh.add_player(
            g,
            player_id=pid,
            character_name=NAMES[pid],
            archetype=ochh.SUGGESTED_ARCHETYPES[index],
            drive=f"find who framed {NAMES[pid]}",
            dream_woman="a singer",
            future_with_lula="a house by the sea",
        ).state
    return ochh.start_game(g).state


def notes(g: ochh.Game, rats: Iterable[str] = ()) -> ochh.Game:
    rats = set(rats)
    for player in g.players:
        g = ochh.hand_in_note(g, player_id=player.player_id, rat=player.player_id in rats).state
    return g


def scenes(g: ochh.Game, order: Sequence[str] | None = None) -> ochh.Game:
    order = list(order or [p.player_id for p in g.players])
    g = ochh.order_scenes(g, order=order).state
    for pid in order:
        g = ochh.open_scene(
            g, player_id=pid, monologue=f"{NAMES[pid]}: the rain never stops."
        ).state
    return g


STAKES = "Will I get the ledger or will they catch me?"


def conflicts(g: ochh.Game, pvp: Sequence[tuple[str, str]] = (), seed: int = 0) -> ochh.Game:
    """Every player gets a conflict against the GM, except the given PvP pairs; each deck is
    shuffled from ``seed``, the round and the player."""
    busy = {pid for pair in pvp for pid in pair}

    def deal(pid: str) -> random.Random:
        return rng(seed * 1000 + g.round * 10 + int(pid[1:]))

    for a, b in pvp:
        g = ochh.start_conflict(g, player_id=a, opponent=b, stakes=STAKES, rng=deal(a)).state
        g = ochh.accept_stakes(g, conflict_id=f"r{g.round}-{a}", by=b).state
    for player in g.players:
        pid = player.player_id
        if pid in busy or ochh.in_conflict(g, pid) is not None:
            continue
        g = ochh.start_conflict(g, player_id=pid, stakes=STAKES, rng=deal(pid)).state
        g = ochh.accept_stakes(g, conflict_id=f"r{g.round}-{pid}", by=ochh.GM).state
    return g


def to_bonus(g: ochh.Game, rats: Iterable[str] = (), die: int = 6, pvp=()) -> ochh.Game:
    """Play the current round up to the bonus-card phase."""
    if g.phase is ochh.Phase.NOTES:
        g = notes(g, rats)
    g = conflicts(scenes(g), pvp)
    if g.phase is ochh.Phase.END_ROLL:
        g = ochh.roll_end_die(g, rng=FixedDie(die)).state
    return g


def rig(g: ochh.Game, conflict_id: str, a: Sequence[str], b: Sequence[str], deck: str = ""):
    """Replace a conflict's face-down cards: one string of codes per turn and side."""
    conflict = g.conflict(conflict_id)
    sides = tuple(
        replace(side, turns=tuple(cards(turn) for turn in turns))
        for side, turns in zip(conflict.sides, (a, b), strict=True)
    )
    return g.with_conflict(replace(conflict, sides=sides, deck=Deck(cards(deck))))


def flip_all(g: ochh.Game, conflict_id: str) -> ochh.Game:
    while len(g.conflict(conflict_id).results) < 3 and not g.conflict(conflict_id).done:
        g = ochh.flip_turn(g, conflict_id=conflict_id, rng=rng()).state
    return g


def finish_round(g: ochh.Game) -> ochh.Game:
    for conflict in g.round_conflicts():
        if not conflict.done:
            g = flip_all(g, conflict.id)
            if not g.conflict(conflict.id).done:
                side = conflict.sides[1].owner
                g = ochh.gm_break_tie(g, conflict_id=conflict.id, side=side).state
    return ochh.end_round(g).state
