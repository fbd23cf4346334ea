"""Sex & Violence, Mayhem: wounds flip the highest cards, face cards cancel, characters die."""

from __future__ import annotations

import pytest

from pbp.rules import sex_and_violence as sv
from pbp.rules.cards import Suit, Viewer
from tests.rules.sex_and_violence.builders import card, cards, character, game, rng

VIOLENCE = sv.ContestKind.VIOLENCE


def _lose(nico, bid, targets=("sal",), suit=Suit.CLUBS, extra=()):
    """Open a fight and bid ``bid``; the deck is rigged so the bid loses."""
    g = game(nico, *extra)
    g = sv.open_contest(g, player_id="p1", suit=suit, kind=VIOLENCE, targets=targets).state
    parsed = {k: cards(v) for k, v in bid.items()} if isinstance(bid, dict) else cards(bid)
    return sv.bid(g, player_id="p1", cards=parsed, rng=rng()).state


def _flipped(ch):
    return [slot.card.code for slot in ch.hand if slot.flipped]


def test_each_wound_flips_the_highest_card_and_aces_go_last():
    """“For every wound you receive, flip over the highest card in your hand” Reading: an ace
    counts 1, so it goes last.
    """
    g = _lose(character(hand="2C 9H 5D AH 7S", deck="6D 3C 4H"), "2C")
    assert sv.pending_wounds(g, "p1") == sv.WoundPacket("p1", 4, "sal")
    nico = sv.take_wounds(g, player_id="p1", rng=rng()).state.character("p1")
    assert _flipped(nico) == ["9H", "5D", "7S", "3C"]
    assert nico.usable_cards == cards("AH")
    assert len(nico.hand) == 5 and not nico.dead and nico.wounds_taken == 4


def test_the_player_picks_among_equally_high_cards():
    """“For every wound you receive, flip over the highest card in your hand” Reading: among
    equally high cards the player picks.
    """
    g = _lose(character(hand="2C 9H 9S 3D", deck="3S 4H"), "2C")
    default = sv.take_wounds(g, player_id="p1", rng=rng()).state.character("p1")
    chosen = sv.take_wounds(g, player_id="p1", rng=rng(), prefer=cards("9S"))
    assert _flipped(default) == ["9H"]
    assert _flipped(chosen.state.character("p1")) == ["9S"]


def test_a_character_left_without_a_card_to_bid_dies():
    """“If you run out of cards to bid (and you cannot flip any face card to cancel the attack),
    your character dies.”
    """
    g = _lose(character(hand="2C AH", deck="9D 4H 5H"), "2C")
    out = sv.take_wounds(g, player_id="p1", rng=rng())
    nico = out.state.character("p1")
    assert nico.dead and nico.usable_cards == () and len(nico.hand) == 2
    assert out.state.contest is None
    with pytest.raises(sv.SexAndViolenceError, match="is dead"):
        sv.open_contest(out.state, player_id="p1", suit=Suit.CLUBS)


def test_flipping_the_last_usable_card_is_running_out_of_cards():
    """“If you run out of cards to bid (and you cannot flip any face card to cancel the attack),
    your character dies.” “If the flipped card is part of your hand, then that card's "slot"
    is still counted as part of your hand, even if it's not usable.”
    """
    g = _lose(
        character(hand="2C 3H", deck="4D 5S 6S"),
        "2C",
    )
    nico = sv.take_wounds(g, player_id="p1", rng=rng()).state.character("p1")
    assert nico.dead


def test_the_wound_record_hides_which_cards_were_flipped_from_others():
    """“This is called your hand and should be kept hidden.”"""
    g = _lose(character(hand="2C 9H 5D", deck="4D 3S"), "2C")
    event = sv.take_wounds(g, player_id="p1", rng=rng()).events[0]
    assert event.view_for(Viewer.player("p1"))["data"]["flipped"] == ["9H", "5D"]
    assert "flipped" not in event.view_for(Viewer.player("p2"))["data"]
    assert "9 of Hearts" not in event.view_for(Viewer.player("p2"))["text"]


def test_a_survivor_cancels_with_diamonds():
    """“You may cancel all wounds incurred during a single attack by flipping a face card, so
    long as you meet the following criterion:” “Diamonds: You may cancel the attack if your
    archetype is the Survivor.”
    """
    nico = character(
        archetype=sv.Archetype.SURVIVOR, fields=(Suit.DIAMONDS,), hand="2C 9H", deck="6D 4H"
    )
    g = _lose(nico, "2C")
    out = sv.cancel_wounds(g, player_id="p1", face_card=card("KD"), rng=rng())
    nico = out.state.character("p1")
    assert nico.face(card("KD")).flipped and _flipped(nico) == []
    assert out.state.contest is None


def test_diamonds_cancel_only_for_the_survivor_unless_the_gm_rules_otherwise():
    """“Diamonds: You may cancel the attack if your archetype is the Survivor.” Reading: the GM
    may rule otherwise.
    """
    g = _lose(character(fields=(Suit.DIAMONDS,), hand="2C 9H", deck="6D 4H"), "2C")
    with pytest.raises(sv.SexAndViolenceError, match="only if your archetype is the Survivor"):
        sv.cancel_wounds(g, player_id="p1", face_card=card("JD"), rng=rng())
    out = sv.cancel_wounds(g, player_id="p1", face_card=card("JD"), criterion_met=True, rng=rng())
    assert out.state.contest is None


@pytest.mark.parametrize("suit", [Suit.SPADES, Suit.HEARTS])
def test_spades_and_hearts_need_the_gms_confirmation(suit):
    """“Spades: You may cancel the attack if you are using a weapon of some kind. Hearts: You may
    cancel the attack if your redeeming quality comes into play.” Reading: pbp cannot see
    either, so the GM confirms.
    """
    g = _lose(character(fields=(suit,), hand="2C 9D", deck="6D 4H"), "2C")
    face = card("Q" + suit.value)
    with pytest.raises(sv.SexAndViolenceError, match="GM must confirm"):
        sv.cancel_wounds(g, player_id="p1", face_card=face, rng=rng())
    with pytest.raises(sv.SexAndViolenceError, match="can cancel an attack only if"):
        sv.cancel_wounds(g, player_id="p1", face_card=face, criterion_met=False, rng=rng())
    out = sv.cancel_wounds(g, player_id="p1", face_card=face, criterion_met=True, rng=rng())
    assert out.state.character("p1").face(face).flipped


def test_clubs_cancel_only_against_an_opponent_fought_before():
    """“Clubs: You may cancel the attack if you have fought your opponent before.”"""
    first = _lose(character(hand="2C 9D", deck="6D 4H"), "2C")
    with pytest.raises(sv.SexAndViolenceError, match="fought this opponent before"):
        sv.cancel_wounds(first, player_id="p1", face_card=card("KC"), rng=rng())
    again = _lose(character(hand="2C 9D", deck="6D 4H", fought=("sal",)), "2C")
    assert sv.cancel_wounds(again, player_id="p1", face_card=card("KC"), rng=rng()).state


def test_a_finished_fight_counts_as_fought_before():
    """“Clubs: You may cancel the attack if you have fought your opponent before.” Reading: read
    from the record of finished fights.
    """
    g = _lose(character(hand="2C 9D 8D 7D", deck="6D 4H 5H 3S"), "2C")
    g = sv.take_wounds(g, player_id="p1", rng=rng()).state
    assert g.character("p1").fought == ("sal",)


def test_a_flipped_face_card_cannot_cancel():
    """“You may cancel all wounds incurred during a single attack by flipping a face card, so
    long as you meet the following criterion:” “If a card has been flipped, it is
    "unavailable" -- you are considered not to have that card in play at all.”
    """
    nico = character(
        archetype=sv.Archetype.SURVIVOR,
        fields=(Suit.DIAMONDS,),
        faces_flipped="KD",
        hand="2C 9H",
        deck="6D 4H",
    )
    g = _lose(nico, "2C")
    with pytest.raises(sv.SexAndViolenceError, match="already flipped"):
        sv.cancel_wounds(g, player_id="p1", face_card=card("KD"), rng=rng())
    with pytest.raises(sv.SexAndViolenceError, match="no Ace of Spades in the sideboard"):
        sv.cancel_wounds(g, player_id="p1", face_card=card("AS"), rng=rng())


def test_each_attack_of_a_split_bid_is_cancelled_or_taken_on_its_own():
    """“You may cancel all wounds incurred during a single attack by flipping a face card”
    Reading: each part of a split bid is a single attack.
    """
    nico = character(hand="2C 2H 9S 9D 8S 8D", deck="5S 6S 7D 3H", fought=("sal",))
    g = _lose(nico, {"sal": "2C", "vic": "2H"}, targets=("sal", "vic"))
    assert [(p.opponent, p.amount) for p in g.contest.wounds] == [("sal", 3), ("vic", 4)]
    g = sv.cancel_wounds(g, player_id="p1", face_card=card("KC"), rng=rng()).state
    assert sv.pending_wounds(g, "p1") == sv.WoundPacket("p1", 4, "vic")
    with pytest.raises(sv.SexAndViolenceError, match="fought this opponent before"):
        sv.cancel_wounds(g, player_id="p1", face_card=card("QC"), rng=rng())
    out = sv.take_wounds(g, player_id="p1", rng=rng())
    nico = out.state.character("p1")
    assert _flipped(nico) == ["9S", "9D", "8S", "8D"] and nico.usable_cards == cards("7D")
    assert out.state.contest is None


def test_a_defending_player_takes_the_attackers_wounds():
    """“The difference is, that when the player's bid is compared to the top card, the difference
    becomes a number of "wounds" that are inflicted on the losing party.” “For every wound you
    receive, flip over the highest card in your hand”
    """
    vera = character("p2", "Vera", fields=(Suit.HEARTS,), hand="10H 9H 2S", deck="3S")
    g = game(character(hand="9C", deck="6D 4H"), vera)
    g = sv.open_contest(g, player_id="p1", suit=Suit.CLUBS, kind=VIOLENCE, targets=("p2",)).state
    g = sv.bid(g, player_id="p1", cards=cards("9C"), rng=rng()).state
    assert sv.pending_wounds(g, "p1") is None
    with pytest.raises(sv.SexAndViolenceError, match="no wounds waiting"):
        sv.take_wounds(g, player_id="p1", rng=rng())
    g = sv.take_wounds(g, player_id="p2", rng=rng()).state
    assert _flipped(g.character("p2")) == ["10H", "9H", "2S"] and g.character("p2").dead
    assert g.character("p2").fought == ("p1",)
