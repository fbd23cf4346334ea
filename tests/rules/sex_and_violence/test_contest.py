"""Sex & Violence contests: bids, the top card, redraws, split bids and the aces."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import pytest

from pbp.rules import sex_and_violence as sv
from pbp.rules.cards import Suit
from tests.rules.sex_and_violence.builders import (
    card,
    cards,
    character,
    game,
    hand_codes,
    rng,
)

VIOLENCE = sv.ContestKind.VIOLENCE


def _contest(g, suit=Suit.CLUBS, kind=sv.ContestKind.PLAIN, targets=(), player_id="p1"):
    return sv.open_contest(g, player_id=player_id, suit=suit, kind=kind, targets=targets).state


def _bid(g, bid, player_id="p1", **kwargs):
    return sv.bid(g, player_id=player_id, cards=bid, rng=rng(), **kwargs)


def _kinds(outcome):
    return [event.kind for event in outcome.events]


# --- the top card -----------------------------------------------------------------------------


def test_a_higher_total_succeeds_and_bid_cards_of_the_suit_are_redrawn():
    """“The total of these cards is then compared to the top card of your deck (aces count as 1).
    If your total is higher than the drawn card, then you perform the action as you see fit.
    If the total is not higher, the GM will inform you of the consequences. In the event of a
    tie, the outcome of the action becomes unknown or inconsequential.” “After bidding, the
    bid cards are discarded (regardless of the outcome) If any of the bid cards are of the
    same suit as that of the action, you may re-draw that many cards. Otherwise, your hand
    will remain short until you have time to replenish it.”
    """
    g = _contest(game(character(hand="7C 5H 2S 9D", deck="6S 3H 10C 4C")))
    out = _bid(g, cards("7C 5H"))
    nico = out.state.character("p1")
    assert out.state.contest is None
    compare = next(e for e in out.events if e.kind == "compare")
    assert compare.data == {"target": None, "total": 12, "top_card": "6S", "outcome": "success"}
    assert hand_codes(nico) == ["2S", "9D", "3H"]
    assert len(nico.deck) == 5 and nico.discards == ()


@pytest.mark.parametrize(
    ("bid", "top", "outcome"),
    [
        ("6C", "6D", "tie"),
        ("5C", "6D", "failure"),
        ("AC", "AD", "tie"),
        ("AC", "2D", "failure"),
        ("2C", "AS", "success"),
    ],
)
def test_outcome_against_the_top_card_with_aces_as_one(bid, top, outcome):
    """“The total of these cards is then compared to the top card of your deck (aces count as 1).
    If your total is higher than the drawn card, then you perform the action as you see fit.
    If the total is not higher, the GM will inform you of the consequences. In the event of a
    tie, the outcome of the action becomes unknown or inconsequential.”
    """
    g = _contest(game(character(hand=bid + " 9H", deck=top + " 3H")))
    compare = next(e for e in _bid(g, cards(bid)).events if e.kind == "compare")
    assert compare.data["outcome"] == outcome


def test_without_cards_of_the_suit_the_hand_stays_short():
    """“After bidding, the bid cards are discarded (regardless of the outcome) If any of the bid
    cards are of the same suit as that of the action, you may re-draw that many cards.
    Otherwise, your hand will remain short until you have time to replenish it.”
    """
    g = _contest(game(character(hand="7C 5H 2S", deck="6S 3H 10C")))
    assert hand_codes(_bid(g, cards("5H")).state.character("p1")) == ["7C", "2S"]


def test_the_redraw_may_be_declined():
    """“If any of the bid cards are of the same suit as that of the action, you may re-draw that
    many cards.” — may, not must.
    """
    g = _contest(game(character(hand="7C 5H 2S", deck="6S 3H 10C")))
    nico = _bid(g, cards("7C"), redraw=False).state.character("p1")
    assert hand_codes(nico) == ["5H", "2S"]


def test_discards_are_shuffled_back_when_the_action_is_resolved():
    """“When the action has been resolved, you may re-shuffle the discarded cards back into your
    deck.”
    """
    g = _contest(game(character(hand="7C 5H 2S", deck="6S 3H 10C")))
    nico = _bid(g, cards("7C 5H")).state.character("p1")
    assert nico.discards == ()
    assert Counter(nico.all_cards()) == Counter(cards("7C 5H 2S 6S 3H 10C"))


def test_a_campaign_may_keep_discards_out_of_the_deck():
    """“When the action has been resolved, you may re-shuffle the discarded cards back into your
    deck.” Reading: “may” makes it a campaign option.
    """
    settings = sv.Settings(reshuffle_after_contest=False)
    g = _contest(game(character(hand="7C 5H 2S", deck="6S 3H 10C"), settings=settings))
    nico = _bid(g, cards("7C 5H")).state.character("p1")
    assert sorted(c.code for c in nico.discards) == ["5H", "6S", "7C"]


# --- bid limits -------------------------------------------------------------------------------


def test_the_bid_limit_names_the_expertise_and_the_flipped_queen():
    """“No expertise (no appropriate face card): Maximum bid of 1 card from you hand Jack-level
    expertise: Maximum bid of 2 cards from your hand Queen-level expertise: Maximum bid of 3
    cards from your hand King-level expertise: Maximum bid of 4 cards from your hand” “If a
    card has been flipped, it is "unavailable" -- you are considered not to have that card in
    play at all.”
    """
    nico = character(fields=(Suit.CLUBS, Suit.HEARTS), faces_flipped="QC", hand="2C 3C 4C 5C")
    g = _contest(game(nico))
    with pytest.raises(sv.SexAndViolenceError) as error:
        _bid(g, cards("2C 3C 4C"))
    assert str(error.value) == (
        "You can bid at most 2 cards: your Jack of Clubs gives expertise in Clubs; "
        "your Queen of Clubs is flipped."
    )


def test_without_expertise_only_one_card_may_be_bid():
    """“No expertise (no appropriate face card): Maximum bid of 1 card from you hand”"""
    g = _contest(game(character(hand="2S 3S", deck="4S")), suit=Suit.SPADES)
    with pytest.raises(sv.SexAndViolenceError, match="at most 1 card: you have no expertise"):
        _bid(g, cards("2S 3S"))


def test_a_king_allows_four_cards():
    """“King-level expertise: Maximum bid of 4 cards from your hand”"""
    g = _contest(game(character(hand="2S 3S 4S 5S", deck="10S")))
    assert _bid(g, cards("2S 3S 4S 5S")).state.contest is None


@pytest.mark.parametrize(
    ("bid", "message"),
    [("9H", "it is flipped"), ("8D", "not in your hand"), ("2S 2S", "not in your hand")],
)
def test_only_unflipped_hand_cards_can_be_bid(bid, message):
    """“the GM will ask you to bid a number of cards” “If a card has been flipped, it is
    "unavailable" -- you are considered not to have that card in play at all.”
    """
    g = _contest(game(character(hand="2S 9H", flipped="9H", deck="10S")))
    with pytest.raises(sv.SexAndViolenceError, match=message):
        _bid(g, cards(bid))


def test_bids_belong_to_the_contest_player():
    """“Whenever you want to perform an action that deals in any of the four fields of expertise,
    the GM will ask you to bid a number of cards.” Reading: only the player whose contest it
    is bids.
    """
    g = game(character(hand="2S", deck="3S"), character("p2", "Vera", hand="2H", deck="3H"))
    with pytest.raises(sv.SexAndViolenceError, match="no contest waiting"):
        _bid(g, cards("2S"))
    g = _contest(g)
    with pytest.raises(sv.SexAndViolenceError, match="not yours"):
        _bid(g, cards("2H"), player_id="p2")


def test_a_hand_without_usable_cards_must_replenish_first():
    """“Otherwise, your hand will remain short until you have time to replenish it.” Reading:
    with no usable card there is nothing to bid until the hand is replenished.
    """
    g = _contest(game(character(hand="2S", flipped="2S", deck="3S")))
    with pytest.raises(sv.SexAndViolenceError, match="flip a face card"):
        _bid(g, cards("2S"))


def test_one_contest_at_a_time():
    """“Play progresses in typical RPG fashion. That is, until a contest occurs.” Reading: one
    contest is resolved at a time.
    """
    g = _contest(game(character(hand="2S", deck="3S")))
    with pytest.raises(sv.SexAndViolenceError, match="Finish the open contest"):
        _contest(g)


# --- opponents --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "targets", "message"),
    [
        (VIOLENCE, (), "at least one opponent"),
        (sv.ContestKind.PLAIN, ("sal", "vic"), "Only fights"),
        (VIOLENCE, ("sal", "sal"), "only once"),
        (VIOLENCE, ("p1",), "their own opponent"),
        (VIOLENCE, ("nobody",), "no GM character"),
    ],
)
def test_opponents_are_checked(kind, targets, message):
    """“You may also split your bid to take on more than one opponent at a time.” Reading: a
    fight names existing opponents who are still in it; a plain contest has none.
    """
    with pytest.raises(sv.SexAndViolenceError, match=message):
        _contest(game(character(hand="2S", deck="3S")), kind=kind, targets=targets)


def test_an_opponent_who_is_out_cannot_be_fought():
    """“(GM-controlled opponents are assumed to be able to survive up to ten wounds)” Reading:
    one who is out cannot be attacked.
    """
    g = game(character(hand="2S", deck="3S"))
    g = g.with_gm_character(replace(g.gm_character("sal"), out=True))
    with pytest.raises(sv.SexAndViolenceError, match="already out"):
        _contest(g, kind=VIOLENCE, targets=("sal",))


def test_the_difference_wounds_the_gm_character():
    """“The difference is, that when the player's bid is compared to the top card, the difference
    becomes a number of "wounds" that are inflicted on the losing party.”
    """
    g = _contest(game(character(hand="9C 8C", deck="5S 3H 4H")), kind=VIOLENCE, targets=("sal",))
    out = _bid(g, cards("9C 8C"))
    assert out.state.gm_character("sal").wounds == 12
    assert out.state.character("p1").fought == ("sal",)


@pytest.mark.parametrize(("before", "out"), [(8, False), (9, True)])
def test_gm_characters_survive_up_to_ten_wounds(before, out):
    """“(GM-controlled opponents are assumed to be able to survive up to ten wounds)”"""
    g = game(character(hand="4C", deck="2S 3H"))
    g = g.with_gm_character(replace(g.gm_character("sal"), wounds=before))
    g = _bid(_contest(g, kind=VIOLENCE, targets=("sal",)), cards("4C")).state
    assert (g.gm_character("sal").wounds, g.gm_character("sal").out) == (before + 2, out)


def test_a_split_bid_meets_one_top_card_per_opponent():
    """“You may also split your bid to take on more than one opponent at a time.” Reading: each
    part of a split bid is compared to its own top card.
    """
    nico = character(hand="9C 8C 2H 3H", deck="5S 10S 4D 6D 7D")
    g = _contest(game(nico), kind=VIOLENCE, targets=("sal", "vic"))
    out = _bid(g, {"sal": cards("9C 8C"), "vic": cards("2H")})
    tops = [e.data["top_card"] for e in out.events if e.kind == "compare"]
    assert tops == ["5S", "10S"]
    assert out.state.gm_character("sal").out
    assert out.state.contest.wounds == (sv.WoundPacket("p1", 8, "vic"),)
    assert hand_codes(out.state.character("p1")) == ["3H", "4D", "6D"]


def test_a_split_bid_may_share_one_top_card_as_a_gm_option():
    """“You may also split your bid to take on more than one opponent at a time.” Reading: a GM
    option compares every part to one shared top card.
    """
    settings = sv.Settings(split_bid_shares_top_card=True)
    nico = character(hand="9C 8C 2H", deck="5S 10S 4D 6D")
    g = _contest(game(nico, settings=settings), kind=VIOLENCE, targets=("sal", "vic"))
    out = _bid(g, {"sal": cards("9C 8C"), "vic": cards("2H")})
    assert [e.data["top_card"] for e in out.events if e.kind == "compare"] == ["5S", "5S"]
    assert out.state.contest.wounds == (sv.WoundPacket("p1", 3, "vic"),)


def test_a_split_bid_counts_against_the_one_limit():
    """“You may also split your bid to take on more than one opponent at a time.” “Expertise is
    not cumulative. If you have (for example) the King, Queen and Jack of Clubs and you're
    performing an act of violence, you may bid a maximum of 4 cards, not 9 cards ( 4+3+2).”
    Reading: the parts together stay within the one limit.
    """
    nico = character(hand="9C 8C 2H 3H 4H", deck="5S")
    g = _contest(game(nico), kind=VIOLENCE, targets=("sal", "vic"))
    with pytest.raises(sv.SexAndViolenceError, match="at most 4 cards"):
        _bid(g, {"sal": cards("9C 8C 2H"), "vic": cards("3H 4H")})


@pytest.mark.parametrize(
    ("kind", "targets", "bid", "message"),
    [
        (VIOLENCE, ("sal", "vic"), "9C", "how your bid is split"),
        (VIOLENCE, ("sal", "vic"), {"sal": "9C", "vic": ""}, "at least one card"),
        (VIOLENCE, ("sal",), {"ghost": "9C"}, "not an opponent"),
        (sv.ContestKind.PLAIN, (), {"sal": "9C"}, "Only a fight"),
    ],
)
def test_split_bids_must_name_the_opponents(kind, targets, bid, message):
    """“You may also split your bid to take on more than one opponent at a time.”"""
    g = _contest(game(character(hand="9C 8C", deck="5S")), kind=kind, targets=targets)
    parsed = {k: cards(v) for k, v in bid.items()} if isinstance(bid, dict) else cards(bid)
    with pytest.raises(sv.SexAndViolenceError, match=message):
        _bid(g, parsed)


# --- aces -------------------------------------------------------------------------------------


def test_aces_in_a_sex_scene_trigger_their_effects_with_conditions():
    """“To use an Ace, bid it as normal during a contest and announce the card's function -- the
    Ace also counts as a 1, as usual. The card's function is determined by its suit and the
    nature of the contest.” “Ace of Spades: Conception. Your partner will become pregnant.
    Playing an Ace has no effect if either particpant is sterile or the partner is of the same
    sex. Ace of Hearts: True Love.”
    """
    nico = character(fields=(Suit.HEARTS,), hand="AS AH 5H", deck="2C 3C 4C")
    g = _contest(game(nico), suit=Suit.HEARTS, kind=sv.ContestKind.SEX, targets=("vic",))
    out = _bid(g, cards("AS AH"))
    aces = [e for e in out.events if e.kind == "ace"]
    assert [e.data["effect"] for e in aces] == ["conception", "true_love"]
    assert "sterile" in aces[0].text


def test_only_announced_aces_take_effect():
    """“To use an Ace, bid it as normal during a contest and announce the card's function”"""
    nico = character(fields=(Suit.HEARTS,), hand="AS AH 5H", deck="2C 3C 4C")
    g = _contest(game(nico), suit=Suit.HEARTS, kind=sv.ContestKind.SEX)
    out = _bid(g, cards("AS AH"), announce=cards("AH"))
    assert [e.data["effect"] for e in out.events if e.kind == "ace"] == ["true_love"]


def test_aces_do_nothing_in_a_plain_contest():
    """“Aces can represent complications that are introduced during scenes of intense passion -
    sex and violence, to be exact.”
    """
    g = _contest(game(character(hand="AS 5H", deck="2C")), suit=Suit.SPADES)
    assert "ace" not in _kinds(_bid(g, cards("AS")))
    with pytest.raises(sv.SexAndViolenceError, match="only have effects"):
        _bid(g, cards("AS"), announce=cards("AS"))


def test_only_a_bid_ace_can_be_announced():
    """“To use an Ace, bid it as normal during a contest and announce the card's function”"""
    g = _contest(game(character(hand="AS 5H", deck="2C")), kind=sv.ContestKind.SEX)
    with pytest.raises(sv.SexAndViolenceError, match="an ace you bid"):
        _bid(g, cards("5H"), announce=cards("AS"))


def test_lucky_blow_adds_the_top_card_before_the_comparison():
    """“Ace of Diamonds: Lucky blow. Attacker adds the top card of his deck to the attack.”"""
    g = _contest(game(character(hand="AD 2C", deck="9S 5H 3H")), kind=VIOLENCE, targets=("sal",))
    out = _bid(g, cards("AD 2C"))
    compare = next(e for e in out.events if e.kind == "compare")
    assert (compare.data["total"], compare.data["top_card"]) == (12, "5H")
    assert out.state.gm_character("sal").wounds == 7


def _intimidate(g, bid="AH 9C", target="sal"):
    return _bid(_contest(g, kind=VIOLENCE, targets=(target,)), cards(bid))


def test_intimidation_waits_for_the_defender():
    """“Ace of Hearts: Intimidation. Defender must match bid with all Hearts or back away from
    the fight with no more damage done to either side.”
    """
    out = _intimidate(game(character(hand="AH 9C", deck="5S 3H")))
    assert sv.awaiting_response(out.state) == (0, "intimidation", "sal")
    assert "compare" not in _kinds(out)


def test_a_gm_character_who_backs_away_ends_the_fight_without_damage():
    """“or back away from the fight with no more damage done to either side”"""
    g = _intimidate(game(character(hand="AH 9C", deck="5S 3H"))).state
    out = sv.respond_to_ace(g, defender="sal", meets=False, rng=rng())
    assert "compare" not in _kinds(out)
    assert out.state.contest is None and out.state.gm_character("sal").wounds == 0


def test_a_gm_character_who_matches_fights_on():
    """“Defender must match bid with all Hearts”"""
    g = _intimidate(game(character(hand="AH 9C", deck="5S 3H"))).state
    out = sv.respond_to_ace(g, defender="sal", meets=True, rng=rng())
    assert out.state.gm_character("sal").wounds == 5


@pytest.mark.parametrize(("meets", "out"), [(False, True), (True, False)])
def test_lethal_blow_kills_a_defender_who_cannot_double_the_bid(meets, out):
    """“Ace of Clubs: Lethal blow. Defender must double the bid or die instantly.”"""
    g = _intimidate(game(character(hand="AC 2C", deck="9S 3H")), bid="AC 2C").state
    assert sv.awaiting_response(g) == (0, "lethal", "sal")
    g = sv.respond_to_ace(g, defender="sal", meets=meets, rng=rng()).state
    assert g.gm_character("sal").out is out


def test_intimidation_is_answered_before_the_lethal_blow():
    """“Defender must match bid with all Hearts or back away from the fight” Reading: backing
    away ends the fight before the lethal blow lands, so it is asked first.
    """
    g = _intimidate(game(character(hand="AH AC 2C", deck="9S 3H")), bid="AH AC 2C").state
    assert g.contest.attacks[0].pending == ("intimidation", "lethal")
    g = sv.respond_to_ace(g, defender="sal", meets=True, rng=rng()).state
    assert sv.awaiting_response(g) == (0, "lethal", "sal")


@pytest.mark.parametrize(
    ("defender", "kwargs", "message"),
    [
        ("vic", {"meets": True}, "Big Sal's to give"),
        ("sal", {}, "the GM rules"),
        ("sal", {"meets": True, "cards": cards("2H")}, "the GM rules"),
    ],
)
def test_ace_answers_come_from_the_right_defender(defender, kwargs, message):
    """“Defender must double the bid or die instantly.” Reading: only the defender of that attack
    answers, with cards of his own hand.
    """
    g = _intimidate(game(character(hand="AH 9C", deck="5S 3H"))).state
    with pytest.raises(sv.SexAndViolenceError, match=message):
        sv.respond_to_ace(g, defender=defender, rng=rng(), **kwargs)


def _pvp(nico_hand, bid, vera_hand="10H 5H 2C", nico_deck="5S 3H 4H"):
    nico = character(hand=nico_hand, deck=nico_deck)
    vera = character(
        "p2",
        "Vera",
        archetype=sv.Archetype.FOOL,
        fields=(Suit.HEARTS,),
        hand=vera_hand,
        deck="7H 8H",
    )
    g = _contest(game(nico, vera), kind=VIOLENCE, targets=("p2",))
    return _bid(g, cards(bid)).state


def test_a_player_who_cannot_double_a_lethal_blow_dies():
    """“Ace of Clubs: Lethal blow. Defender must double the bid or die instantly.”"""
    g = _pvp("AC 6C", "AC 6C")
    with pytest.raises(sv.SexAndViolenceError, match="total 10; you need at least 14"):
        sv.respond_to_ace(g, defender="p2", cards=cards("10H"), rng=rng())
    with pytest.raises(sv.SexAndViolenceError, match="A player answers with cards"):
        sv.respond_to_ace(g, defender="p2", meets=False, rng=rng())
    out = sv.respond_to_ace(g, defender="p2", rng=rng())
    assert out.state.character("p2").dead and out.state.contest is None


def test_a_player_matches_intimidation_with_hearts_and_the_fight_goes_on():
    """“Defender must match bid with all Hearts”"""
    g = _pvp("AH 3C", "AH 3C")
    with pytest.raises(sv.SexAndViolenceError, match="only Hearts"):
        sv.respond_to_ace(g, defender="p2", cards=cards("2C"), rng=rng())
    out = sv.respond_to_ace(g, defender="p2", cards=cards("5H"), rng=rng())
    vera = out.state.character("p2")
    assert "5H" not in hand_codes(vera) and len(vera.hand) == 2
    compare = next(e for e in out.events if e.kind == "compare")
    assert (compare.data["total"], compare.data["outcome"]) == (4, "failure")


def test_a_defender_answers_within_his_own_expertise():
    """“Defender must match bid with all Hearts” “No expertise (no appropriate face card):
    Maximum bid of 1 card from you hand Jack-level expertise: Maximum bid of 2 cards from your
    hand Queen-level expertise: Maximum bid of 3 cards from your hand King-level expertise:
    Maximum bid of 4 cards from your hand” Reading: the answer is a bid, within the defender's
    limit.
    """
    g = _pvp("AH 3C", "AH 3C", vera_hand="2H 3H 5H")
    with pytest.raises(sv.SexAndViolenceError, match="at most 1 card"):
        sv.respond_to_ace(g, defender="p2", cards=cards("2H 3H"), rng=rng())


def test_a_bullseye_on_a_player_cannot_be_cancelled():
    """“Ace of Spades: Bullseye. This attack cannot be cancelled with a face card.”"""
    g = _pvp("AS 9C", "AS 9C", nico_deck="2D 3H")
    assert g.contest.wounds == (sv.WoundPacket("p2", 8, "p1", cancellable=False),)
    with pytest.raises(sv.SexAndViolenceError, match="Bullseye"):
        sv.cancel_wounds(g, player_id="p2", face_card=card("KH"), criterion_met=True, rng=rng())
