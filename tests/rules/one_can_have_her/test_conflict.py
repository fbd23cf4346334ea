"""One Can Have Her conflicts: stakes, dealing, bonus cards, turns, ties and the conclusion."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from pbp.rules import one_can_have_her as ochh
from pbp.rules.cards import Viewer, standard_deck
from tests.rules.one_can_have_her.builders import (
    STAKES,
    cards,
    conflicts,
    flip_all,
    rig,
    rng,
    scenes,
    table,
    to_bonus,
)

GM = ochh.GM


def _add(g, counts, side=GM, by=GM, conflict_id="r1-p1"):
    return ochh.add_bonus_cards(g, conflict_id=conflict_id, side=side, by=by, counts=counts).state


def _flip(g, conflict_id="r1-p1"):
    return ochh.flip_turn(g, conflict_id=conflict_id, rng=rng())


# --- stakes -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "stakes",
    [
        "Will I sneak past the guards unnoticed or will they notice me?",
        "Does the gangster talk peacefully, OR does it turn violent?",
    ],
)
def test_stakes_are_an_or_question(stakes):
    """“Set the stakes for the conflict in the form of an or-question”"""
    assert ochh.check_stakes(stakes) == stakes


@pytest.mark.parametrize("stakes", ["I get the ledger.", "Will I get the ledger?", "Gun or knife"])
def test_stakes_that_are_not_an_or_question_are_refused(stakes):
    """“Stakes - Formulated as an or-question before a conflict, "Will I sneak past the guards
    unnoticed or will they notice me?", spelling out the two alternatives.”
    """
    with pytest.raises(ochh.OneCanHaveHerError, match="or-question"):
        ochh.check_stakes(stakes)


def _scenes_open():
    return scenes(table())


def test_a_conflict_deals_three_face_down_cards_a_side_from_its_own_deck():
    """“The player and GM places three cards face down on the table. Each card represents a turn, an
    exchange in the conflict.” Reading: each conflict has its own shuffled deck.
    """
    g = ochh.start_conflict(_scenes_open(), player_id="p1", stakes=STAKES, rng=rng(3)).state
    conflict = g.conflict("r1-p1")
    assert [side.counts for side in conflict.sides] == [(1, 1, 1), (1, 1, 1)]
    assert len(conflict.deck) == 46 and not conflict.pvp
    every = conflict.deck.cards + tuple(c for s in conflict.sides for t in s.turns for c in t)
    assert Counter(every) == Counter(standard_deck())
    again = ochh.start_conflict(_scenes_open(), player_id="p1", stakes=STAKES, rng=rng(3)).state
    assert again.conflict("r1-p1") == conflict


def test_nobody_sees_face_down_cards_or_the_deck():
    """“The player and GM places three cards face down on the table.”"""
    g = ochh.start_conflict(_scenes_open(), player_id="p1", stakes=STAKES, rng=rng(3)).state
    hidden = g.conflict("r1-p1")
    codes = [c.code for s in hidden.sides for t in s.turns for c in t]
    for viewer in (Viewer.gm(), Viewer.player("p1"), Viewer.player("p2")):
        shown = ochh.view_for(g, viewer)["conflicts"][0]
        assert shown["sides"][0]["turns"] == [None, None, None]
        assert shown["sides"][0]["counts"] == [1, 1, 1] and shown["deck_count"] == 46
        text = json.dumps(shown)
        assert not any(f'"{code}"' in text for code in codes)


def test_flipped_turns_are_shown_to_everyone():
    """“both sides say what they attempt in the first turn and flip the cards for turn 1”"""
    g = rig(to_bonus(table()), "r1-p1", ["AH", "2S", "3D"], ["5C", "6D", "KS"])
    g = _flip(g).state
    shown = ochh.view_for(g, Viewer.player("p3"))["conflicts"][0]
    assert shown["sides"][0]["turns"] == [["AH"], None, None]
    assert shown["sides"][1]["turns"] == [["5C"], None, None]


@pytest.mark.parametrize(
    ("player_id", "opponent", "message"),
    [("p1", "p1", "with himself"), ("p1", "p9", "no player 'p9'")],
)
def test_pvp_opponents_are_checked(player_id, opponent, message):
    """“It's possible that two players with characters in the same scene want a conflict with each
    other.”
    """
    with pytest.raises(ochh.OneCanHaveHerError, match=message):
        ochh.start_conflict(
            _scenes_open(), player_id=player_id, opponent=opponent, stakes=STAKES, rng=rng()
        )


def test_each_character_is_in_one_conflict_per_round():
    """“Each scene should contain one conflict per PC”"""
    g = ochh.start_conflict(
        _scenes_open(), player_id="p1", opponent="p2", stakes=STAKES, rng=rng()
    ).state
    for player_id in ("p1", "p2"):
        with pytest.raises(ochh.OneCanHaveHerError, match="already in a conflict"):
            ochh.start_conflict(g, player_id=player_id, stakes=STAKES, rng=rng())
    with pytest.raises(ochh.OneCanHaveHerError, match="already in a conflict"):
        ochh.start_conflict(g, player_id="p3", opponent="p2", stakes=STAKES, rng=rng())


def test_stakes_wait_for_the_scene_to_open():
    """“Play the scene until the situation has reached a clear point where you'll need to decide
    what direction the story will go.”
    """
    g = ochh.order_scenes(table(), order=["p1", "p2", "p3"]).state
    with pytest.raises(ochh.OneCanHaveHerError, match="Open your scene"):
        ochh.start_conflict(g, player_id="p1", stakes=STAKES, rng=rng())


def test_both_sides_must_accept_the_stakes_and_a_new_proposal_resets_them():
    """“Both sides has to agree to the stakes”"""
    g = ochh.start_conflict(
        _scenes_open(), player_id="p1", opponent="p2", stakes=STAKES, rng=rng()
    ).state
    assert g.conflict("r1-p1").accepted == (0,)
    with pytest.raises(ochh.OneCanHaveHerError, match="already accepted"):
        ochh.accept_stakes(g, conflict_id="r1-p1", by="p1")
    with pytest.raises(ochh.OneCanHaveHerError, match="not a side"):
        ochh.accept_stakes(g, conflict_id="r1-p1", by=GM)
    new = "Do I keep the money or does Lou get it?"
    g = ochh.set_stakes(g, conflict_id="r1-p1", by="p2", stakes=new).state
    assert (g.conflict("r1-p1").stakes, g.conflict("r1-p1").accepted) == (new, (1,))
    g = ochh.accept_stakes(g, conflict_id="r1-p1", by="p1").state
    assert g.conflict("r1-p1").stakes_set


def test_the_round_moves_on_only_when_every_conflict_is_set():
    """“set the stakes there and keep switching until every player character is in a conflict”"""
    g = ochh.start_conflict(_scenes_open(), player_id="p1", stakes=STAKES, rng=rng()).state
    g = ochh.accept_stakes(g, conflict_id="r1-p1", by=GM).state
    assert g.phase is ochh.Phase.SCENES
    assert conflicts(g).phase is ochh.Phase.BONUS


# --- bonus cards ------------------------------------------------------------------------------


def test_one_added_card_can_only_go_to_turn_three():
    """“There always has to be more cards in later turns than earlier, meaning that if I add one
    card I can only add it to turn 3 and if add another I can either put it in turn 2 or turn 3.”
    """
    g = to_bonus(table())
    with pytest.raises(ochh.OneCanHaveHerError, match="at least as many cards"):
        _add(g, (1, 0, 0))
    with pytest.raises(ochh.OneCanHaveHerError, match="at least as many cards"):
        _add(g, (0, 1, 0))
    g = _add(g, (0, 0, 1))
    g = _add(g, (0, 1, 0))
    assert g.conflict("r1-p1").sides[1].counts == (1, 2, 2)
    g = _add(g, (1, 0, 1))
    assert g.conflict("r1-p1").sides[1].counts == (2, 2, 3)


def test_the_gm_adds_at_most_five_opposition_cards_to_his_own_side():
    """“The GM can add up to 5 cards” and “Opposition Cards are cards that the GM can add to his
    side in conflicts.”
    """
    g = to_bonus(table())
    g = _add(g, (0, 1, 3))
    assert g.opposition_pool == 26
    with pytest.raises(ochh.OneCanHaveHerError, match="at most 5 Opposition cards"):
        _add(g, (0, 1, 1))
    with pytest.raises(ochh.OneCanHaveHerError, match="his own side only"):
        _add(g, (0, 0, 1), side="p1")


def test_the_opposition_pool_can_run_dry():
    """“He gets an amount of cards equal to the number of players times 10.”"""
    g = to_bonus(table(2))
    g = _add(g, (1, 2, 2))
    g = _add(g, (1, 2, 2), conflict_id="r1-p2")
    with pytest.raises(ochh.OneCanHaveHerError, match="at most 5"):
        _add(g, (0, 0, 1), conflict_id="r1-p2")
    assert g.opposition_pool == 10


def test_no_opposition_cards_in_a_pvp_conflict():
    """“All players can add Coolness Cards to the conflict, but the GM can't add Opposition
    Cards.”
    """
    g = to_bonus(table(), pvp=[("p1", "p2")])
    with pytest.raises(ochh.OneCanHaveHerError, match="player-vs-player"):
        _add(g, (0, 0, 1), side="p2")


def test_any_player_adds_his_coolness_to_either_side():
    """“any player can add Coolness Cards to any side of the conflict”"""
    g = to_bonus(table(), pvp=[("p1", "p2")])
    g = _add(g, (0, 0, 2), side="p2", by="p3")
    g = _add(g, (0, 0, 1), side="p1", by="p1")
    assert g.player("p3").coolness == 0 and g.player("p1").coolness == 1
    assert [side.counts for side in g.conflict("r1-p1").sides] == [(1, 1, 2), (1, 1, 3)]
    with pytest.raises(ochh.OneCanHaveHerError, match="only 0 Coolness cards"):
        _add(g, (0, 0, 1), side="p1", by="p3")


def test_used_cards_change_pools_when_the_conflict_is_concluded():
    """“Every opposition card used goes into the Coolness Pool.” “Used Coolness Cards turn back into
    Opposition Cards and can be used by the GM again.”
    """
    g = to_bonus(table())
    g = _add(g, (0, 0, 3))
    g = _add(g, (0, 0, 2), side="p1", by="p2")
    assert (g.opposition_pool, g.coolness_pool) == (27, 0)
    g = rig(g, "r1-p1", ["2H", "3H", "4H 5H 6H"], ["2S", "3S", "4S 5S 6S 7S"])
    g = flip_all(g, "r1-p1")
    assert (g.opposition_pool, g.coolness_pool) == (29, 3)


def test_no_bonus_cards_once_any_conflict_is_flipping():
    """“After you have started flipping, you can't add any more cards to the conflicts.”"""
    g = _flip(to_bonus(table()), "r1-p2").state
    with pytest.raises(ochh.OneCanHaveHerError, match="after flipping has started"):
        _add(g, (0, 0, 1))


@pytest.mark.parametrize("counts", [(0, 0), (0, 0, 0), (0, -1, 2)])
def test_bonus_counts_name_three_turns(counts):
    """“Each card represents a turn, an exchange in the conflict.” Reading: bonus cards are placed
    as a count for each of the three turns.
    """
    with pytest.raises(ochh.OneCanHaveHerError, match="each of the three turns"):
        _add(to_bonus(table()), counts)


# --- turns ------------------------------------------------------------------------------------


def test_most_red_cards_win_each_turn_and_most_successes_conclude():
    """“Red cards are successes while black cards are failures. The side with most red cards wins
    the turn, and gets to narrate what happens in the turn.”
    """
    g = rig(to_bonus(table()), "r1-p1", ["AH", "2S", "3D"], ["5C", "6D", "KS"])
    g = flip_all(g, "r1-p1")
    conflict = g.conflict("r1-p1")
    assert [(r.successes, r.winner, r.narrator) for r in conflict.results] == [
        ((1, 0), 0, 0),
        ((0, 1), 1, 1),
        ((1, 0), 0, 0),
    ]
    assert (conflict.concluder, conflict.conclusion_reason) == (0, "most successes")


def test_the_conclusion_goes_to_most_successes_not_most_turns_won():
    """“After narrating turn 3 the side with the highest total number of successes in the
    conflict gets to conclude it and close the scene.” Jake wins turns 1 and 2 one to nothing;
    the GM wins turn 3 three to nothing with bonus cards: two turns won against one, but two
    successes against three, so the GM concludes."""
    g = rig(to_bonus(table()), "r1-p1", ["2H", "3H", "4S"], ["5S", "6S", "7H 8H 9H"])
    conflict = flip_all(g, "r1-p1").conflict("r1-p1")
    assert [r.winner for r in conflict.results] == [0, 0, 1]
    assert [r.successes for r in conflict.results] == [(1, 0), (1, 0), (0, 3)]
    assert (conflict.concluder, conflict.conclusion_reason) == (1, "most successes")


def test_bonus_cards_add_successes():
    """“Red cards are successes while black cards are failures. The side with most red cards wins
    the turn”
    """
    g = rig(to_bonus(table()), "r1-p1", ["2H 3H", "2S", "3S"], ["4D", "5S", "6S"])
    result = _flip(g).state.conflict("r1-p1").results[0]
    assert (result.successes, result.winner) == ((2, 1), 0)


@pytest.mark.parametrize(
    ("a", "b", "narrator"),
    [("2H", "KD", 1), ("AS", "KS", 0), ("QD 2S", "JH 10C", 0)],
)
def test_a_drawn_turn_is_narrated_by_the_highest_card_aces_high(a, b, narrator):
    """“If there's an equal amount of successes the turn is a draw, and neither side has an
    advantage. The side with the highest card gets to narrate.” Reading: aces are high.
    """
    g = rig(to_bonus(table()), "r1-p1", [a, "2S", "3S"], [b, "5S", "6S"])
    result = _flip(g).state.conflict("r1-p1").results[0]
    assert (result.winner, result.narrator, result.reason) == (None, narrator, "highest card")


def test_equal_highest_cards_draw_new_cards_whose_red_does_not_count():
    """“If that doesn't solve who narrates, draw a new card each and compare the value, but don't
    count red cards as extra successes.”
    """
    g = rig(to_bonus(table()), "r1-p1", ["5S", "2S", "3S"], ["5C", "5S", "6S"], "9H 9D 3C 2H")
    out = _flip(g)
    result = out.state.conflict("r1-p1").results[0]
    assert (result.successes, result.winner, result.narrator) == ((0, 0), None, 0)
    assert [(x.code, y.code) for x, y in result.tie_draws] == [("9H", "9D"), ("3C", "2H")]
    assert "after drawing 9 of Hearts against 9 of Diamonds" in out.events[0].text
    assert len(out.state.conflict("r1-p1").deck) == 0


def test_an_exhausted_deck_is_replaced_for_tie_draws():
    """“draw a new card each and compare the value” Reading: an exhausted deck is replaced by a
    fresh shuffled one.
    """
    g = rig(to_bonus(table()), "r1-p1", ["5S", "2S", "3S"], ["5C", "5S", "6S"], "")
    result = _flip(g).state.conflict("r1-p1").results[0]
    assert result.tie_draws and result.reason == "new cards drawn"


def test_even_successes_conclude_by_the_highest_card_by_default():
    """“After narrating turn 3 the side with the highest total number of successes in the conflict
    gets to conclude it” Reading: the text is silent on even successes; by default they are
    broken like a turn, highest card first.
    """
    g = rig(to_bonus(table()), "r1-p1", ["2H", "5S", "KC"], ["3D", "4S", "QC"])
    conflict = flip_all(g, "r1-p1").conflict("r1-p1")
    assert [r.successes for r in conflict.results] == [(1, 1), (0, 0), (0, 0)]
    assert (conflict.concluder, conflict.conclusion_reason) == (0, "even successes; highest card")


def test_even_successes_and_equal_highest_cards_draw_again():
    """Reading: even successes with equal highest cards are broken as a turn's are: “draw a new card
    each and compare the value”.
    """
    g = rig(to_bonus(table()), "r1-p1", ["2H", "5S", "KC"], ["3D", "KS", "4S"], "2C 7D")
    conflict = flip_all(g, "r1-p1").conflict("r1-p1")
    assert conflict.concluder == 1 and conflict.conclusion_draws == ((cards("2C 7D")),)


def test_the_gm_may_break_even_successes_himself():
    """Reading: a GM option for even successes after turn 3, on which the text (“the side with the
    highest total number of successes in the conflict gets to conclude it”) is silent.
    """
    settings = ochh.Settings(conclusion_tie_break=ochh.ConclusionTieBreak.GM_DECIDES)
    g = to_bonus(table(settings=settings))
    g = _add(g, (0, 0, 1))
    g = rig(g, "r1-p1", ["2H", "5S", "KC"], ["3D", "4S", "QC 2C"])
    g = flip_all(g, "r1-p1")
    assert g.conflict("r1-p1").concluder is None and g.coolness_pool == 0
    with pytest.raises(ochh.OneCanHaveHerError, match="no turn left"):
        _flip(g)
    g = ochh.gm_break_tie(g, conflict_id="r1-p1", side="p1").state
    assert g.conflict("r1-p1").concluder == 0 and g.coolness_pool == 1
    with pytest.raises(ochh.OneCanHaveHerError, match="not waiting for the GM"):
        ochh.gm_break_tie(g, conflict_id="r1-p1", side=GM)


def test_cards_are_flipped_only_once_conflicts_are_set():
    """“Note that the GM and players must play all Opposition and Coolness Cards before starting to
    flip cards for the first player.”
    """
    g = ochh.start_conflict(_scenes_open(), player_id="p1", stakes=STAKES, rng=rng()).state
    with pytest.raises(ochh.OneCanHaveHerError, match="once every conflict is set"):
        _flip(g)
