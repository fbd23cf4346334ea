"""Sex & Violence properties: random play never creates or loses a card, never overfills a
hand, never shows a hand to another player, and only ever fails with the ruleset's error."""

from __future__ import annotations

import contextlib
import json
import random
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from pbp.rules import sex_and_violence as sv
from pbp.rules.cards import Suit, Viewer, number_deck

FULL_DECK = Counter(number_deck())
KINDS = list(sv.ContestKind)


def _table(seed: int) -> sv.Game:
    rng = random.Random(seed)
    g = sv.new_game()
    for gm_id, name in (("sal", "Big Sal"), ("vic", "Vic")):
        g = sv.add_gm_character(g, gm_id=gm_id, name=name).state
    for player_id, archetype, fields in (
        ("p1", sv.Archetype.WARRIOR, [Suit.CLUBS]),
        ("p2", sv.Archetype.SURVIVOR, [Suit.DIAMONDS, Suit.HEARTS]),
    ):
        g = sv.add_character(
            g,
            player_id=player_id,
            name=player_id.upper(),
            archetype=archetype,
            criminal_background="thief",
            redeeming_quality="family",
            angle="hustler",
            fields=fields,
            rng=rng,
        ).state
    return g


def _some(chooser: random.Random, items, most: int):
    items = list(items)
    return chooser.sample(items, chooser.randint(0, min(most, len(items))))


def _step(g: sv.Game, move: int, chooser: random.Random, rng: random.Random) -> sv.Game:
    """One random action, legal or not; illegal ones must raise SexAndViolenceError."""
    pid = chooser.choice(["p1", "p2"])
    me = g.character(pid)
    face = chooser.choice([slot.card for slot in me.sideboard])
    if move == 0:
        kind = chooser.choice(KINDS)
        others = ["sal", "vic", "p2" if pid == "p1" else "p1"]
        targets = _some(chooser, others, 2 if kind is sv.ContestKind.VIOLENCE else 1)
        suit = chooser.choice(list(Suit))
        return sv.open_contest(g, player_id=pid, suit=suit, kind=kind, targets=targets).state
    if move == 1:
        contest = g.contest
        bidder = contest.player_id if contest else pid
        hand = g.character(bidder).usable_cards
        bid = _some(chooser, hand, 4)
        targets = contest.targets if contest else ()
        if len(targets) > 1 and bid:
            split = {t: [] for t in targets}
            for card in bid:
                split[chooser.choice(targets)].append(card)
            return sv.bid(g, player_id=bidder, cards=split, rng=rng).state
        return sv.bid(g, player_id=bidder, cards=bid, rng=rng).state
    if move == 2:
        waiting = sv.awaiting_response(g)
        defender = waiting[2] if waiting else pid
        if g.is_player(defender):
            answer = _some(chooser, g.character(defender).usable_cards, 2)
            return sv.respond_to_ace(g, defender=defender, cards=answer, rng=rng).state
        return sv.respond_to_ace(g, defender=defender, meets=chooser.random() < 0.5, rng=rng).state
    if move == 3:
        return sv.take_wounds(g, player_id=pid, rng=rng).state
    if move == 4:
        ruling = chooser.choice([None, True, False])
        return sv.cancel_wounds(
            g, player_id=pid, face_card=face, criterion_met=ruling, rng=rng
        ).state
    if move == 5:
        return sv.flip_to_draw(g, player_id=pid, face_card=face, rng=rng).state
    if move == 6:
        return sv.flip_to_restore_hand(g, player_id=pid, face_card=face).state
    if move == 7:
        return sv.appeal_to_archetype(g, player_id=pid, rng=rng).state
    if move == 8:
        exchange = _some(chooser, me.usable_cards, 3)
        return sv.stack_deck(g, player_id=pid, exchange=exchange, rng=rng).state
    if move == 9:
        return sv.end_scene(g).state
    return sv.end_session(g).state


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32), moves=st.lists(st.integers(0, 10), max_size=60))
def test_random_play_conserves_cards_and_hand_limits(seed, moves):
    """“Continue until your hand is back up to 10 cards” “If the flipped card is part of your
    hand, then that card's "slot" is still counted as part of your hand, even if it's not
    usable.” Reading: no card is ever made or lost, and a hand never exceeds ten slots.
    """
    g = _table(seed)
    chooser, rng = random.Random(seed + 1), random.Random(seed + 2)
    for move in moves:
        with contextlib.suppress(sv.SexAndViolenceError):
            g = _step(g, move, chooser, rng)
        for character in g.characters:
            assert Counter(character.all_cards()) == FULL_DECK
            assert len(character.hand) <= g.settings.hand_limit
            assert all(npc.out == (npc.wounds > 10) for npc in g.gm_characters if npc.wounds)
        if g.contest is None:
            assert all(not c.discards for c in g.characters)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32), moves=st.lists(st.integers(0, 10), max_size=30))
def test_random_play_never_shows_a_hand_or_deck_to_another_player(seed, moves):
    """“This is called your hand and should be kept hidden.”"""
    g = _table(seed)
    chooser, rng = random.Random(seed + 1), random.Random(seed + 2)
    for move in moves:
        with contextlib.suppress(sv.SexAndViolenceError):
            g = _step(g, move, chooser, rng)
    view = sv.view_for(g, Viewer.player("p2"))
    mine, theirs = view["characters"][1], view["characters"][0]
    assert theirs["hand"] is None and theirs["usable_cards"] is None
    assert len(mine["hand"]) == len(g.character("p2").hand)
    assert all("deck" not in shown for shown in view["characters"])
    assert sv.Game.from_dict(json.loads(json.dumps(g.to_dict()))) == g
