"""Sex & Violence: characters, sideboards, the opening hand, sessions, secrecy, storage."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from pbp.rules import sex_and_violence as sv
from pbp.rules.cards import Suit, Viewer, events_for, number_deck
from tests.rules.test_sex_and_violence_helpers import (
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
    assert codes(s.card for s in sv.build_sideboard([Suit.SPADES])) == ["KS", "QS", "JS"]


def test_two_fields_follow_nico_greers_example():
    board = sv.build_sideboard([Suit.CLUBS, Suit.HEARTS])
    assert sorted(codes(s.card for s in board)) == ["JC", "JH", "QC", "QH"]


def test_two_fields_literal_reading_keeps_one_jack():
    board = sv.build_sideboard([Suit.CLUBS, Suit.HEARTS], keep_both_jacks=False)
    assert sorted(codes(s.card for s in board)) == ["JC", "QC", "QH"]


def test_three_fields_give_three_jacks():
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
    ch = character(fields=fields, faces_flipped=faces_flipped)
    assert ch.expertise(suit)[0] == limit


def test_expertise_explains_a_flipped_queen():
    ch = character(fields=(Suit.CLUBS, Suit.HEARTS), faces_flipped="QC")
    assert ch.expertise(Suit.CLUBS) == (
        2,
        "your Jack of Clubs gives expertise in Clubs; your Queen of Clubs is flipped",
    )


# --- the deal and the opening swap ------------------------------------------------------------


def test_a_new_character_draws_ten_from_an_own_40_card_deck():
    g = _new().state
    nico = g.character("p1")
    assert len(nico.hand) == 10 and len(nico.deck) == 30
    assert Counter(nico.all_cards()) == Counter(number_deck())
    assert nico.opening_swap_open


def test_the_deal_is_reproducible_from_the_injected_random():
    assert hand_codes(_new(seed=5).state.character("p1")) == hand_codes(
        _new(seed=5).state.character("p1")
    )
    assert hand_codes(_new(seed=5).state.character("p1")) != hand_codes(
        _new(seed=6).state.character("p1")
    )


def test_character_needs_a_sheet():
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
    g = sv.swap_opening_card(_opening(), player_id="p1", card=card("10H"), rng=rng()).state
    nico = g.character("p1")
    assert "10H" not in hand_codes(nico) and "3H" in hand_codes(nico)
    assert len(nico.hand) == 10 and card("10H") in nico.deck.cards
    assert Counter(nico.all_cards()) == Counter(number_deck())


def test_an_ace_counts_as_the_lowest_card_for_the_swap():
    g = sv.swap_opening_card(_opening(), player_id="p1", card=card("AC"), rng=rng()).state
    assert "AC" not in hand_codes(g.character("p1"))


def test_only_the_highest_or_lowest_card_may_be_swapped():
    with pytest.raises(sv.SexAndViolenceError, match="highest or your lowest"):
        sv.swap_opening_card(_opening(), player_id="p1", card=card("6C"), rng=rng())


def test_the_swap_is_once_and_only_right_after_the_deal():
    g = sv.swap_opening_card(_opening(), player_id="p1", card=card("AS"), rng=rng()).state
    with pytest.raises(sv.SexAndViolenceError, match="right after the deal"):
        sv.swap_opening_card(g, player_id="p1", card=card("10H"), rng=rng())
    kept = sv.keep_opening_hand(_opening(), player_id="p1").state
    with pytest.raises(sv.SexAndViolenceError, match="right after the deal"):
        sv.swap_opening_card(kept, player_id="p1", card=card("10H"), rng=rng())


def test_any_other_action_closes_the_opening_swap():
    g = _opening()
    g = sv.open_contest(g, player_id="p1", suit=Suit.CLUBS).state
    g = sv.bid(g, player_id="p1", cards=cards("6C"), rng=rng()).state
    assert not g.character("p1").opening_swap_open


# --- sessions and scenes ----------------------------------------------------------------------


def test_kings_unflip_at_the_end_of_a_session_but_not_queens():
    g = game(character(faces_flipped="KC QC", appealed_this_session=True, stacked_this_scene=True))
    nico = sv.end_session(g).state.character("p1")
    assert [(s.card.code, s.flipped) for s in nico.sideboard] == [
        ("KC", False),
        ("QC", True),
        ("JC", False),
    ]
    assert not nico.appealed_this_session and not nico.stacked_this_scene


def test_a_king_stays_flipped_for_a_character_in_the_middle_of_an_action():
    g = game(character(hand="5C", deck="9C", faces_flipped="KC"))
    g = sv.open_contest(g, player_id="p1", suit=Suit.CLUBS).state
    nico = sv.end_session(g).state.character("p1")
    assert nico.face(card("KC")).flipped


def test_a_new_scene_allows_stacking_again():
    g = game(character(stacked_this_scene=True))
    assert not sv.end_scene(g).state.character("p1").stacked_this_scene


# --- secrecy ----------------------------------------------------------------------------------


def _table(settings=None):
    nico = character("p1", "Nico", hand="7H 2S 9D", deck="3C 4C 5C")
    vera = character("p2", "Vera", archetype=sv.Archetype.FOOL, fields=(Suit.HEARTS,))
    return game(nico, vera, settings=settings)


def test_a_player_sees_his_own_hand():
    view = sv.view_for(_table(), Viewer.player("p1"))
    assert [s["card"] for s in view["characters"][0]["hand"]] == ["7H", "2S", "9D"]


def test_another_player_sees_only_counts_never_the_hand():
    view = sv.view_for(_table(), Viewer.player("p2"))
    nico = view["characters"][0]
    assert nico["hand"] is None and nico["usable_cards"] is None
    assert (nico["hand_size"], nico["flipped_in_hand"]) == (3, 0)
    text = json.dumps(nico)
    assert not any(code in text for code in ("7H", "2S", "9D"))


def test_the_gm_sees_hands_only_when_the_campaign_allows_it():
    assert sv.view_for(_table(), Viewer.gm())["characters"][0]["hand"] is not None
    closed = sv.Settings(gm_sees_hands=False)
    assert sv.view_for(_table(closed), Viewer.gm())["characters"][0]["hand"] is None


def test_nobody_sees_the_deck_order():
    for viewer in (Viewer.player("p1"), Viewer.player("p2"), Viewer.gm(), Viewer.spectator()):
        nico = sv.view_for(_table(), viewer)["characters"][0]
        assert "deck" not in nico and nico["deck_count"] == 3
        assert not any(code in json.dumps(nico) for code in ("3C", "4C", "5C"))


def test_the_draw_record_shows_others_only_how_many_cards():
    events = _new().events
    mine = events_for(events, Viewer.player("p1"))
    theirs = events_for(events, Viewer.player("p2"))
    assert len(mine[-1]["data"]["cards"]) == 10
    assert theirs[-1]["data"] == {"count": 10}


# --- storage ----------------------------------------------------------------------------------


def test_a_game_in_the_middle_of_a_contest_round_trips_through_json():
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
