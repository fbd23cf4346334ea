"""Sex & Violence: characters, sideboards, the opening hand, sessions, secrecy, storage."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from pbp.rules import sex_and_violence as sv
from pbp.rules.cards import Suit, Viewer, events_for, number_deck
from tests.rules.sex_and_violence.builders import (
    card,
    cards,
    character,
    codes,
    game,
    hand_codes,
    rest_of_deck,
    rng,
)


def _new(fields=(Suit.CLUBS, Suit.HEARTS), seed=1):
    return sv.add_character(
        sv.new_game(),
        player_id="p1",
        name="Nico Greer",
        archetype=sv.Archetype.WARRIOR,
        criminal_background="disabled cop turned vigilante",
        redeeming_quality="bends but does not break the law",
        angle="ex-cop",
        fields=fields,
        rng=rng(seed),
    )


# --- sideboard -------------------------------------------------------------------------------


def test_one_field_gives_king_queen_and_jack():
    """“Choose one field where you wish your character to be the "best of the best." Now, place
    the King, Queen and Jack of that suit in front of you.”
    """
    assert codes(s.card for s in sv.build_sideboard([Suit.SPADES])) == ["KS", "QS", "JS"]


def test_two_fields_follow_nico_greers_example():
    """“If you wish for your character to excel in two fields, you may do so my sacrificing your
    King - remove it and replace it with another Queen of a chosen suit.” “He will end up with
    the following four cards: Queen of Clubs, Queen of Hearts, Jack of Clubs, Jack of Hearts.”
    Reading: the example's two Jacks.
    """
    board = sv.build_sideboard([Suit.CLUBS, Suit.HEARTS])
    assert sorted(codes(s.card for s in board)) == ["JC", "JH", "QC", "QH"]


def test_two_fields_literal_reading_keeps_one_jack():
    """“If you wish for your character to excel in two fields, you may do so my sacrificing your
    King - remove it and replace it with another Queen of a chosen suit.” Reading: the GM
    option that follows the rule's words (one Jack) rather than Nico Greer's example.
    """
    board = sv.build_sideboard([Suit.CLUBS, Suit.HEARTS], keep_both_jacks=False)
    assert sorted(codes(s.card for s in board)) == ["JC", "QC", "QH"]


def test_three_fields_give_three_jacks():
    """“If you wish to excel in three areas, you lose both your King and Queen and may replace
    them with two Jacks of any suit. You may not be proficient in all four areas.”
    """
    board = sv.build_sideboard([Suit.CLUBS, Suit.HEARTS, Suit.SPADES])
    assert sorted(codes(s.card for s in board)) == ["JC", "JH", "JS"]


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        (list(Suit), "not excel in all four"),
        ([], "one, two or three"),
        ([Suit.CLUBS, Suit.CLUBS], "only once"),
    ],
)
def test_illegal_fields_are_refused(fields, message):
    """“You may not be proficient in all four areas.” Reading: one, two or three different
    fields.
    """
    with pytest.raises(sv.SexAndViolenceError, match=message):
        sv.build_sideboard(fields)


# --- expertise -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "faces_flipped", "suit", "limit"),
    [
        ((Suit.CLUBS,), "", Suit.CLUBS, 4),
        ((Suit.CLUBS,), "KC", Suit.CLUBS, 3),
        ((Suit.CLUBS,), "KC QC", Suit.CLUBS, 2),
        ((Suit.CLUBS,), "KC QC JC", Suit.CLUBS, 1),
        ((Suit.CLUBS, Suit.HEARTS), "", Suit.HEARTS, 3),
        ((Suit.CLUBS, Suit.HEARTS, Suit.SPADES), "", Suit.SPADES, 2),
        ((Suit.CLUBS,), "", Suit.DIAMONDS, 1),
    ],
)
def test_expertise_is_the_best_unflipped_face_card_not_a_sum(fields, faces_flipped, suit, limit):
    """“No expertise (no appropriate face card): Maximum bid of 1 card from you hand Jack-level
    expertise: Maximum bid of 2 cards from your hand Queen-level expertise: Maximum bid of 3
    cards from your hand King-level expertise: Maximum bid of 4 cards from your hand”
    “Expertise is not cumulative. If you have (for example) the King, Queen and Jack of Clubs
    and you're performing an act of violence, you may bid a maximum of 4 cards, not 9 cards (
    4+3+2).” “If a card has been flipped, it is "unavailable" -- you are considered not to
    have that card in play at all.”
    """
    ch = character(fields=fields, faces_flipped=faces_flipped)
    assert ch.expertise(suit)[0] == limit


def test_expertise_explains_a_flipped_queen():
    """“If a card has been flipped, it is "unavailable" -- you are considered not to have that
    card in play at all.” Reading: the limit's explanation names the flipped card.
    """
    ch = character(fields=(Suit.CLUBS, Suit.HEARTS), faces_flipped="QC")
    assert ch.expertise(Suit.CLUBS) == (
        2,
        "your Jack of Clubs gives expertise in Clubs; your Queen of Clubs is flipped",
    )


# --- the deal and the opening swap ------------------------------------------------------------


def test_a_new_character_draws_ten_from_an_own_40_card_deck():
    """“Every player (except for the Game Master) should now have a set of three to four cards
    face-up in his or her sideboard, as well as a deck containing all the numbered cards and
    the four aces.” “Each player should draw ten (10) cards from their own deck. This is
    called your hand and should be kept hidden.”
    """
    g = _new().state
    nico = g.character("p1")
    assert len(nico.hand) == 10 and len(nico.deck) == 30
    assert Counter(nico.all_cards()) == Counter(number_deck())
    assert nico.opening_swap_open


def test_the_deal_is_reproducible_from_the_injected_random():
    """Reading: the shuffle comes from the random source passed in, so a stored game replays; the
    rules say nothing.
    """
    assert hand_codes(_new(seed=5).state.character("p1")) == hand_codes(
        _new(seed=5).state.character("p1")
    )
    assert hand_codes(_new(seed=5).state.character("p1")) != hand_codes(
        _new(seed=6).state.character("p1")
    )


def test_character_needs_a_sheet():
    """“Third, despite a societal status as a "bad person," the character must possess a
    redeeming quality”
    """
    with pytest.raises(sv.SexAndViolenceError, match="redeeming quality"):
        sv.add_character(
            sv.new_game(),
            player_id="p1",
            name="Nico",
            archetype=sv.Archetype.WARRIOR,
            criminal_background="thief",
            redeeming_quality=" ",
            angle="boxer",
            fields=[Suit.CLUBS],
            rng=rng(),
        )


def test_player_ids_are_unique():
    """Reading: one character per player, a bookkeeping rule of the service."""
    g = _new().state
    with pytest.raises(sv.SexAndViolenceError, match="already has a character"):
        sv.add_character(
            g,
            player_id="p1",
            name="Again",
            archetype=sv.Archetype.FOOL,
            criminal_background="x",
            redeeming_quality="y",
            angle="z",
            fields=[Suit.HEARTS],
            rng=rng(),
        )


HAND = "AS 2S 4S 9H 10H AC 6C 4D 7D 8D"


def _opening(deck_top="3H"):
    deck = deck_top + " " + rest_of_deck(HAND, deck_top)
    return game(character(hand=HAND, deck=deck, opening_swap_open=True))


def test_swapping_the_highest_card_draws_first_then_shuffles_it_back():
    """“You may discard either your highest card or your lowest card and draw a replacement. This
    discarded card is then shuffled back into the deck and play may commence.”
    """
    g = sv.swap_opening_card(_opening(), player_id="p1", card=card("10H"), rng=rng()).state
    nico = g.character("p1")
    assert "10H" not in hand_codes(nico) and "3H" in hand_codes(nico)
    assert len(nico.hand) == 10 and card("10H") in nico.deck.cards
    assert Counter(nico.all_cards()) == Counter(number_deck())


def test_an_ace_counts_as_the_lowest_card_for_the_swap():
    """“You may discard either your highest card or your lowest card and draw a replacement. This
    discarded card is then shuffled back into the deck and play may commence.” Reading: an ace
    is the lowest card (“aces count as 1”).
    """
    g = sv.swap_opening_card(_opening(), player_id="p1", card=card("AC"), rng=rng()).state
    assert "AC" not in hand_codes(g.character("p1"))


def test_only_the_highest_or_lowest_card_may_be_swapped():
    """“You may discard either your highest card or your lowest card and draw a replacement. This
    discarded card is then shuffled back into the deck and play may commence.”
    """
    with pytest.raises(sv.SexAndViolenceError, match="highest or your lowest"):
        sv.swap_opening_card(_opening(), player_id="p1", card=card("6C"), rng=rng())


def test_the_swap_is_once_and_only_right_after_the_deal():
    """“You may discard either your highest card or your lowest card and draw a replacement. This
    discarded card is then shuffled back into the deck and play may commence.” Reading: once,
    before play commences.
    """
    g = sv.swap_opening_card(_opening(), player_id="p1", card=card("AS"), rng=rng()).state
    with pytest.raises(sv.SexAndViolenceError, match="right after the deal"):
        sv.swap_opening_card(g, player_id="p1", card=card("10H"), rng=rng())
    kept = sv.keep_opening_hand(_opening(), player_id="p1").state
    with pytest.raises(sv.SexAndViolenceError, match="right after the deal"):
        sv.swap_opening_card(kept, player_id="p1", card=card("10H"), rng=rng())


def test_any_other_action_closes_the_opening_swap():
    """“This discarded card is then shuffled back into the deck and play may commence.” Reading:
    any other action starts play and closes the swap.
    """
    g = _opening()
    g = sv.open_contest(g, player_id="p1", suit=Suit.CLUBS).state
    g = sv.bid(g, player_id="p1", cards=cards("6C"), rng=rng()).state
    assert not g.character("p1").opening_swap_open


# --- sessions and scenes ----------------------------------------------------------------------


def test_kings_unflip_at_the_end_of_a_session_but_not_queens():
    """“Kings are the only cards that cannot be restored during the game. These are only
    unflipped at the end of a game session (provided that your character isn't in the middle
    of some action at the end of the session).” Reading: only Kings are unflipped then.
    """
    g = game(character(faces_flipped="KC QC", appealed_this_session=True, stacked_this_scene=True))
    nico = sv.end_session(g).state.character("p1")
    assert [(s.card.code, s.flipped) for s in nico.sideboard] == [
        ("KC", False),
        ("QC", True),
        ("JC", False),
    ]
    assert not nico.appealed_this_session and not nico.stacked_this_scene


def test_a_king_stays_flipped_for_a_character_in_the_middle_of_an_action():
    """“Kings are the only cards that cannot be restored during the game. These are only
    unflipped at the end of a game session (provided that your character isn't in the middle
    of some action at the end of the session).”
    """
    g = game(character(hand="5C", deck="9C", faces_flipped="KC"))
    g = sv.open_contest(g, player_id="p1", suit=Suit.CLUBS).state
    nico = sv.end_session(g).state.character("p1")
    assert nico.face(card("KC")).flipped


def test_a_new_scene_allows_stacking_again():
    """“At any lull in the action (but no more than once during a scene), you may exchange any of
    the cards in your hand for an equal number of cards from your deck.”
    """
    g = game(character(stacked_this_scene=True))
    assert not sv.end_scene(g).state.character("p1").stacked_this_scene


# --- secrecy ----------------------------------------------------------------------------------


def _table(settings=None):
    nico = character("p1", "Nico", hand="7H 2S 9D", deck="3C 4C 5C")
    vera = character("p2", "Vera", archetype=sv.Archetype.FOOL, fields=(Suit.HEARTS,))
    return game(nico, vera, settings=settings)


def test_a_player_sees_his_own_hand():
    """“This is called your hand and should be kept hidden.”"""
    view = sv.view_for(_table(), Viewer.player("p1"))
    assert [s["card"] for s in view["characters"][0]["hand"]] == ["7H", "2S", "9D"]


def test_another_player_sees_only_counts_never_the_hand():
    """“This is called your hand and should be kept hidden.”"""
    view = sv.view_for(_table(), Viewer.player("p2"))
    nico = view["characters"][0]
    assert nico["hand"] is None and nico["usable_cards"] is None
    assert (nico["hand_size"], nico["flipped_in_hand"]) == (3, 0)
    text = json.dumps(nico)
    assert not any(code in text for code in ("7H", "2S", "9D"))


def test_the_gm_sees_hands_only_when_the_campaign_allows_it():
    """“This is called your hand and should be kept hidden.” Reading: whether the GM sees hands
    is a campaign setting.
    """
    assert sv.view_for(_table(), Viewer.gm())["characters"][0]["hand"] is not None
    closed = sv.Settings(gm_sees_hands=False)
    assert sv.view_for(_table(closed), Viewer.gm())["characters"][0]["hand"] is None


def test_nobody_sees_the_deck_order():
    """“The total of these cards is then compared to the top card of your deck” Reading: the deck
    order is hidden from everyone, or the top card would be known in advance.
    """
    for viewer in (Viewer.player("p1"), Viewer.player("p2"), Viewer.gm(), Viewer.spectator()):
        nico = sv.view_for(_table(), viewer)["characters"][0]
        assert "deck" not in nico and nico["deck_count"] == 3
        assert not any(code in json.dumps(nico) for code in ("3C", "4C", "5C"))


def test_the_draw_record_shows_others_only_how_many_cards():
    """“This is called your hand and should be kept hidden.”"""
    events = _new().events
    mine = events_for(events, Viewer.player("p1"))
    theirs = events_for(events, Viewer.player("p2"))
    assert len(mine[-1]["data"]["cards"]) == 10
    assert theirs[-1]["data"] == {"count": 10}


# --- storage ----------------------------------------------------------------------------------


def test_a_game_in_the_middle_of_a_contest_round_trips_through_json():
    """Reading: a stored game reads back unchanged, even mid-contest; the rules say nothing of
    storage.
    """
    g = game(
        character("p1", hand="AH 5C 9C", deck="2C 3C 4C 6C", faces_flipped="QC"),
        character("p2", "Vera", hand="2H", deck="3H"),
    )
    g = sv.open_contest(
        g, player_id="p1", suit=Suit.CLUBS, kind=sv.ContestKind.VIOLENCE, targets=["p2"]
    ).state
    g = sv.bid(g, player_id="p1", cards=cards("AH 5C"), rng=rng()).state
    assert g.contest is not None and g.contest.attacks[0].pending == ("intimidation",)
    assert sv.Game.from_dict(json.loads(json.dumps(g.to_dict()))) == g
