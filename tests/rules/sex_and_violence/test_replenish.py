"""Sex & Violence: flipping face cards, appealing to the archetype, stacking the deck."""

from __future__ import annotations

import pytest

from pbp.rules import sex_and_violence as sv
from pbp.rules.cards import Suit
from tests.rules.sex_and_violence.builders import card, cards, character, game, hand_codes, rng

DECK = "2D 3D 4D 5D 6D 7D"


@pytest.mark.parametrize(("face", "drawn"), [("KC", 4), ("QC", 3), ("JC", 2)])
def test_a_flipped_face_card_draws_four_three_or_two(face, drawn):
    """“You may re-draw cards back into your hand at any time by flipping over a face card from
    your sideboard.” “Flipping a King allows you to draw 4 new cards. Flipping a Queen allows
    you to draw 3 new cards. Flipping a Jack enables you to draw 2 new cards.”
    """
    g = game(character(hand="9H", deck=DECK))
    nico = sv.flip_to_draw(g, player_id="p1", face_card=card(face), rng=rng()).state.character("p1")
    assert len(nico.hand) == 1 + drawn and nico.face(card(face)).flipped


def test_drawing_stops_at_ten_slots_counting_flipped_cards():
    """“If the flipped card is part of your hand, then that card's "slot" is still counted as
    part of your hand, even if it's not usable.”
    """
    hand = "AH 2H 3H 4H 5H 6H 7H 8H"
    g = game(character(hand=hand, flipped="AH 2H", deck=DECK))
    nico = sv.flip_to_draw(g, player_id="p1", face_card=card("KC"), rng=rng()).state.character("p1")
    assert len(nico.hand) == 10 and hand_codes(nico)[-2:] == ["2D", "3D"]


def test_a_full_hand_cannot_draw_even_with_flipped_cards():
    """“If the flipped card is part of your hand, then that card's "slot" is still counted as
    part of your hand, even if it's not usable.”
    """
    g = game(character(hand="AH 2H 3H 4H 5H 6H 7H 8H 9H 10H", flipped="AH 2H", deck=DECK))
    with pytest.raises(sv.SexAndViolenceError, match="flipped cards keep their slot"):
        sv.flip_to_draw(g, player_id="p1", face_card=card("JC"), rng=rng())


def test_a_flipped_face_card_cannot_be_flipped_again():
    """“If a card has been flipped, it is "unavailable" -- you are considered not to have that
    card in play at all.”
    """
    g = game(character(hand="9H", deck=DECK, faces_flipped="QC"))
    with pytest.raises(sv.SexAndViolenceError, match="already flipped"):
        sv.flip_to_draw(g, player_id="p1", face_card=card("QC"), rng=rng())


def test_a_face_card_restores_all_flipped_hand_cards():
    """“In place of re-drawing, you have the option of flipping a face card to restore all
    flipped cards from your hand or restore a flipped face card of lesser value (in other
    words, flip a King to unflip a queen, jack or all cards from your hand).”
    """
    g = game(character(hand="9H 8S 2C", flipped="9H 8S", deck=DECK))
    nico = sv.flip_to_restore_hand(g, player_id="p1", face_card=card("JC")).state.character("p1")
    assert nico.flipped_in_hand == 0 and nico.face(card("JC")).flipped
    with pytest.raises(sv.SexAndViolenceError, match="No card in your hand is flipped"):
        sv.flip_to_restore_hand(game(character(hand="2C")), player_id="p1", face_card=card("KC"))


def test_a_face_card_restores_a_lesser_flipped_face_card():
    """“In place of re-drawing, you have the option of flipping a face card to restore all
    flipped cards from your hand or restore a flipped face card of lesser value (in other
    words, flip a King to unflip a queen, jack or all cards from your hand).”
    """
    g = game(character(faces_flipped="JC"))
    nico = sv.flip_to_restore_face(g, player_id="p1", face_card=card("QC"), restore=card("JC"))
    board = {s.card.code: s.flipped for s in nico.state.character("p1").sideboard}
    assert board == {"KC": False, "QC": True, "JC": False}


@pytest.mark.parametrize(
    ("flipped", "face", "restore", "message"),
    [
        ("QC", "JC", "QC", "lesser value"),
        ("KC", "QC", "KC", "Kings cannot be restored"),
        ("", "KC", "QC", "not flipped"),
    ],
)
def test_restoring_face_cards_follows_rank(flipped, face, restore, message):
    """“In place of re-drawing, you have the option of flipping a face card to restore all
    flipped cards from your hand or restore a flipped face card of lesser value (in other
    words, flip a King to unflip a queen, jack or all cards from your hand).” “Kings are the
    only cards that cannot be restored during the game. These are only unflipped at the end of
    a game session (provided that your character isn't in the middle of some action at the end
    of the session).”
    """
    g = game(character(faces_flipped=flipped))
    with pytest.raises(sv.SexAndViolenceError, match=message):
        sv.flip_to_restore_face(g, player_id="p1", face_card=card(face), restore=card(restore))


def test_an_appeal_draws_while_the_suit_matches_and_keeps_the_first_other_card():
    """“After performing a pre-defined task (determined by your character's archetype), you may
    draw the top card from the deck. If this card's suit is the same as your archetypes, keep
    that card and draw again. Continue until your hand is back up to 10 cards or until you
    draw an unrelated suit (this card is kept but you may not re-draw).”
    """
    g = game(character(hand="2H 3H 4H 5H 6H", deck="3C 7C 2S 9C"))
    out = sv.appeal_to_archetype(g, player_id="p1", rng=rng())
    nico = out.state.character("p1")
    assert hand_codes(nico)[5:] == ["3C", "7C", "2S"] and nico.appealed_this_session
    assert "Meditate" in out.events[0].text


def test_an_appeal_stops_when_the_hand_is_back_to_ten():
    """“After performing a pre-defined task (determined by your character's archetype), you may
    draw the top card from the deck. If this card's suit is the same as your archetypes, keep
    that card and draw again. Continue until your hand is back up to 10 cards or until you
    draw an unrelated suit (this card is kept but you may not re-draw).”
    """
    g = game(character(hand="2H 3H 4H 5H 6H 7H 8H 9H", deck="3C 7C 9C"))
    nico = sv.appeal_to_archetype(g, player_id="p1", rng=rng()).state.character("p1")
    assert len(nico.hand) == 10 and hand_codes(nico)[8:] == ["3C", "7C"]


def test_an_appeal_is_once_per_session_and_not_during_a_contest():
    """“You may appeal to your archetype in this way once per game session.” Reading: not in the
    middle of a contest.
    """
    g = game(character(hand="2H", deck="3C 7C 2S 9C 4D"))
    done = sv.appeal_to_archetype(g, player_id="p1", rng=rng()).state
    with pytest.raises(sv.SexAndViolenceError, match="already appealed"):
        sv.appeal_to_archetype(done, player_id="p1", rng=rng())
    assert sv.appeal_to_archetype(sv.end_session(done).state, player_id="p1", rng=rng())
    busy = sv.open_contest(g, player_id="p1", suit=Suit.HEARTS).state
    with pytest.raises(sv.SexAndViolenceError, match="Finish the contest"):
        sv.appeal_to_archetype(busy, player_id="p1", rng=rng())


def test_a_full_hand_has_nothing_to_replenish():
    """“You may also replenish your entire hand by appealing to your character's archetype.”
    Reading: a full hand has nothing to replenish.
    """
    g = game(character(hand="AH 2H 3H 4H 5H 6H 7H 8H 9H 10H", deck="3C"))
    with pytest.raises(sv.SexAndViolenceError, match="hand is full"):
        sv.appeal_to_archetype(g, player_id="p1", rng=rng())


def test_stacking_exchanges_cards_and_names_the_factors_to_announce():
    """“At any lull in the action (but no more than once during a scene), you may exchange any of
    the cards in your hand for an equal number of cards from your deck.” “The catch is that
    for every card you draw equal to or below 5, you must announce some factor that is
    affecting your character negatively. If the drawn card is above 5, you must announce some
    factor that is affecting your character in a positive way.”
    """
    g = game(character(hand="2C 9H 5D", deck="AS 8D 4H"))
    out = sv.stack_deck(g, player_id="p1", exchange=cards("2C 9H"), rng=rng())
    nico = out.state.character("p1")
    assert hand_codes(nico) == ["5D", "AS", "8D"]
    assert sorted(c.code for c in nico.deck.cards) == ["2C", "4H", "9H"]
    stack = out.events[-1]
    assert stack.data["factors"] == ["negative", "positive"]
    assert "1 negative and 1 positive" in stack.text and "Ace" not in stack.text


def test_five_is_negative_and_six_positive():
    """“The catch is that for every card you draw equal to or below 5, you must announce some
    factor that is affecting your character negatively. If the drawn card is above 5, you must
    announce some factor that is affecting your character in a positive way.”
    """
    g = game(character(hand="2C 9H", deck="5S 6S"))
    out = sv.stack_deck(g, player_id="p1", exchange=cards("2C 9H"), rng=rng())
    assert out.events[-1].data["factors"] == ["negative", "positive"]


def test_stacking_is_once_per_scene_without_flipped_cards_and_at_a_lull():
    """“At any lull in the action (but no more than once during a scene), you may exchange any of
    the cards in your hand for an equal number of cards from your deck.” “Flipped cards may
    not be exchanged in this manner.”
    """
    g = game(character(hand="2C 9H 5D", flipped="5D", deck="AS 8D 4H 7S"))
    with pytest.raises(sv.SexAndViolenceError, match="it is flipped"):
        sv.stack_deck(g, player_id="p1", exchange=cards("5D"), rng=rng())
    with pytest.raises(sv.SexAndViolenceError, match="Name the hand cards"):
        sv.stack_deck(g, player_id="p1", exchange=(), rng=rng())
    once = sv.stack_deck(g, player_id="p1", exchange=cards("2C"), rng=rng()).state
    with pytest.raises(sv.SexAndViolenceError, match="already stacked"):
        sv.stack_deck(once, player_id="p1", exchange=cards("9H"), rng=rng())
    assert sv.stack_deck(sv.end_scene(once).state, player_id="p1", exchange=cards("9H"), rng=rng())
    busy = sv.open_contest(g, player_id="p1", suit=Suit.HEARTS).state
    with pytest.raises(sv.SexAndViolenceError, match="lull"):
        sv.stack_deck(busy, player_id="p1", exchange=cards("2C"), rng=rng())
