"""One Can Have Her properties over random play: later turns never hold fewer cards, bonus
cards are never created or lost, conflict decks conserve their 52 cards, rat notes stay
secret until the end, and at most one character gets Lula."""

from __future__ import annotations

import contextlib
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from pbp.rules import one_can_have_her as ochh
from pbp.rules.cards import Viewer, standard_deck
from tests.rules.one_can_have_her.builders import conflicts, notes, scenes, table

GM = ochh.GM
FULL_DECK = frozenset(standard_deck())


def _committed(g: ochh.Game) -> int:
    """Bonus cards lying in conflicts whose cards are not yet settled into the pools."""
    return sum(
        side.opposition + side.coolness
        for c in g.conflicts
        if c.concluder is None and not c.forfeited_by
        for side in c.sides
    )


def _bonus_total(g: ochh.Game) -> int:
    return g.opposition_pool + g.coolness_pool + sum(p.coolness for p in g.players) + _committed(g)


def _check_conflict_cards(g: ochh.Game) -> None:
    for conflict in g.round_conflicts():
        for side in conflict.sides:
            assert ochh.counts_ascend(side.counts)
            assert side.opposition <= g.settings.max_opposition_per_conflict
            if conflict.pvp:
                assert side.opposition == 0
        if not conflict.results:
            laid = [c for side in conflict.sides for turn in side.turns for c in turn]
            every = conflict.deck.cards + tuple(laid)
            assert len(every) == len(FULL_DECK) and set(every) == FULL_DECK


def _bonus_moves(g: ochh.Game, chooser: random.Random, count: int) -> ochh.Game:
    owners = [GM, *(p.player_id for p in g.players)]
    for _ in range(count):
        conflict = chooser.choice(g.round_conflicts())
        counts = tuple(chooser.randint(0, 2) for _ in range(3))
        with contextlib.suppress(ochh.OneCanHaveHerError):
            g = ochh.add_bonus_cards(
                g,
                conflict_id=conflict.id,
                side=chooser.choice([s.owner for s in conflict.sides]),
                by=chooser.choice(owners),
                counts=counts,
            ).state
        with contextlib.suppress(ochh.OneCanHaveHerError):
            giver, receiver = chooser.sample([p.player_id for p in g.players], 2)
            g = ochh.award_coolness(g, giver=giver, receiver=receiver).state
        _check_conflict_cards(g)
    return g


def _play_round(g: ochh.Game, chooser: random.Random, rng: random.Random, total: int):
    ids = [p.player_id for p in g.players]
    if g.phase is ochh.Phase.NOTES:
        g = notes(g, [pid for pid in ids if chooser.random() < 0.3])
    pvp = [tuple(chooser.sample(ids, 2))] if chooser.random() < 0.3 else []
    g = conflicts(scenes(g, chooser.sample(ids, len(ids))), pvp, seed=chooser.randrange(10**6))
    _check_secrets(g)
    if g.phase is ochh.Phase.END_ROLL:
        g = ochh.roll_end_die(g, rng=rng).state
    g = _bonus_moves(g, chooser, chooser.randint(0, 12))
    assert _bonus_total(g) == total
    for conflict in g.round_conflicts():
        while not g.conflict(conflict.id).done:
            try:
                g = ochh.flip_turn(g, conflict_id=conflict.id, rng=rng).state
            except ochh.OneCanHaveHerError:
                side = chooser.choice(conflict.sides).owner
                g = ochh.gm_break_tie(g, conflict_id=conflict.id, side=side).state
        result = g.conflict(conflict.id)
        for turn in result.results:
            reds = turn.successes
            assert turn.winner == (None if reds[0] == reds[1] else int(reds[1] > reds[0]))
        assert _bonus_total(g) == total
    return ochh.end_round(g).state


def _check_secrets(g: ochh.Game) -> None:
    if g.over:
        return
    for player in g.players:
        shown = ochh.view_for(g, Viewer.player(player.player_id))
        assert all(n["player_id"] == player.player_id for n in shown["notes"]["notes"])
        for number, rats in shown["notes"]["ratted_on_by"].items():
            assert int(number) in g.revealed_rounds and player.player_id not in rats
        others = [p for p in shown["players"] if p["player_id"] != player.player_id]
        assert all("rat_left" not in p for p in others)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32), players=st.integers(2, 4), gm_ties=st.booleans())
def test_random_games_keep_every_invariant(seed, players, gm_ties):
    """“Every opposition card used goes into the Coolness Pool.” “Used Coolness Cards turn back into
    Opposition Cards” — bonus cards are never made or lost — and “only one can have her”.
    """
    tie_break = ochh.ConclusionTieBreak.GM_DECIDES if gm_ties else None
    config = ochh.Settings(conclusion_tie_break=tie_break) if tie_break else None
    g = table(players, settings=config)
    chooser, rng = random.Random(seed), random.Random(seed + 1)
    total = _bonus_total(g)
    assert total == players * 12
    while not g.over:
        g = _play_round(g, chooser, rng, total)
        _check_secrets(g)
    endings = list(ochh.epilogues(g).values())
    lula = endings.count(ochh.Epilogue.GETS_LULA_AND_DRIVE)
    assert lula <= 1
    if lula:
        assert endings.count(ochh.Epilogue.BAD_END) == players - 1
    shown = ochh.view_for(g, Viewer.player("p1"))["notes"]["notes"]
    assert len(shown) == len(g.notes) == players * (g.round - 3)


@settings(max_examples=60, deadline=None)
@given(
    placements=st.lists(
        st.tuples(st.integers(0, 3), st.integers(0, 1), st.tuples(*[st.integers(0, 3)] * 3)),
        max_size=25,
    )
)
def test_a_later_turn_never_holds_fewer_cards_than_an_earlier_one(placements):
    """“There always has to be more cards in later turns than earlier” Reading: more means at least
    as many (the text's own example puts one added card in turn 3).
    """
    g = conflicts(scenes(table(3)))
    owners = [GM, "p1", "p2", "p3"]
    for by, side, counts in placements:
        conflict = g.conflict("r1-p1")
        with contextlib.suppress(ochh.OneCanHaveHerError):
            g = ochh.add_bonus_cards(
                g,
                conflict_id=conflict.id,
                side=conflict.sides[side].owner,
                by=owners[by],
                counts=counts,
            ).state
        _check_conflict_cards(g)
        assert _bonus_total(g) == 36
