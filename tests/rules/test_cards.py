"""Cards, decks, shuffling with an injected Random, and event redaction."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pbp.errors import REFUSALS, UserError
from pbp.rules.cards import (
    ACE,
    KING,
    Card,
    CardError,
    Deck,
    Event,
    RulesError,
    Suit,
    Viewer,
    decode_cards,
    encode_cards,
    events_for,
    face_cards,
    number_deck,
    remove_cards,
    shuffled,
    standard_deck,
)


def test_standard_deck_has_52_distinct_cards_13_per_suit():
    deck = standard_deck()
    assert len(deck) == len(set(deck)) == 52
    assert Counter(card.suit for card in deck) == {suit: 13 for suit in Suit}


def test_number_deck_is_aces_and_two_to_ten():
    deck = number_deck()
    assert len(deck) == 40
    assert {card.rank for card in deck} == set(range(1, 11))
    assert sum(card.is_ace for card in deck) == 4
    assert not any(card.is_face for card in deck)


def test_face_cards_are_king_queen_jack_of_the_suit():
    assert encode_cards(face_cards(Suit.HEARTS)) == ["KH", "QH", "JH"]


@pytest.mark.parametrize(
    ("code", "rank", "suit", "name"),
    [
        ("AS", ACE, Suit.SPADES, "Ace of Spades"),
        ("10H", 10, Suit.HEARTS, "10 of Hearts"),
        ("qc", 12, Suit.CLUBS, "Queen of Clubs"),
        ("KD", KING, Suit.DIAMONDS, "King of Diamonds"),
    ],
)
def test_card_codes_parse_and_name(code, rank, suit, name):
    card = Card.from_code(code)
    assert (card.rank, card.suit, card.name) == (rank, suit, name)
    assert Card.from_code(card.code) == card


@pytest.mark.parametrize("code", ["", "X", "1S", "14H", "ZS", "10X", "QQ"])
def test_bad_card_codes_raise_a_user_error(code):
    with pytest.raises(CardError, match="not a card|no card of rank"):
        Card.from_code(code)


def test_card_errors_are_refusals_for_the_web_layer():
    # The rules' own base (pbp.rules imports nothing from the rest of pbp); pbp.errors lists
    # it among the refusals the pages and the API show as a clear 400.
    assert issubclass(CardError, RulesError)
    assert RulesError in REFUSALS and not issubclass(RulesError, UserError)


def test_every_card_code_round_trips():
    assert decode_cards(encode_cards(standard_deck())) == standard_deck()


def test_colours_and_ace_values():
    ace = Card.from_code("AH")
    assert ace.is_red and ace.value_ace_low == 1 and ace.value_ace_high == 14
    assert not Card.from_code("AC").is_red
    assert Card.from_code("KD").value_ace_high == 13


def test_shuffle_uses_only_the_injected_random():
    first = shuffled(standard_deck(), random.Random(7))
    again = shuffled(standard_deck(), random.Random(7))
    other = shuffled(standard_deck(), random.Random(8))
    assert first == again
    assert first != other
    assert first != standard_deck()


def test_deck_draws_from_the_top_and_refuses_to_overdraw():
    deck = Deck(decode_cards(["AS", "2H", "3C"]))
    drawn, rest = deck.draw(2)
    assert encode_cards(drawn) == ["AS", "2H"]
    assert rest.to_list() == ["3C"]
    with pytest.raises(CardError, match="1 cards left; 2 cannot be drawn"):
        rest.draw(2)


def test_remove_cards_names_the_missing_card():
    pile = decode_cards(["AS", "2H"])
    assert remove_cards(pile, decode_cards(["2H"]), "your hand") == decode_cards(["AS"])
    with pytest.raises(CardError, match="The 3 of Clubs is not in your hand"):
        remove_cards(pile, decode_cards(["3C"]), "your hand")


@given(seed=st.integers(), cuts=st.lists(st.integers(0, 10), max_size=8))
def test_draws_and_shuffles_never_create_or_lose_cards(seed, cuts):
    rng = random.Random(seed)
    deck = Deck.shuffled_from(standard_deck(), rng)
    out: list[Card] = []
    for cut in cuts:
        if cut <= len(deck):
            drawn, deck = deck.draw(cut)
            out += drawn
        else:
            deck = deck.shuffle_in(out, rng)
            out = []
        assert Counter(deck.cards + tuple(out)) == Counter(standard_deck())


@given(seed=st.integers())
def test_shuffle_is_a_permutation(seed):
    assert sorted(encode_cards(shuffled(number_deck(), random.Random(seed)))) == sorted(
        encode_cards(number_deck())
    )


def _draw_event() -> Event:
    return Event(
        kind="draw",
        text="Nico drew 2 cards.",
        owner="p1",
        private_text="Nico drew 7H, 2S.",
        data={"count": 2},
        private_data={"cards": ["7H", "2S"]},
    )


def test_private_event_text_only_for_its_owner_and_the_gm():
    event = _draw_event()
    assert event.view_for(Viewer.player("p1"))["data"]["cards"] == ["7H", "2S"]
    assert event.view_for(Viewer.gm())["text"] == "Nico drew 7H, 2S."
    other = event.view_for(Viewer.player("p2"))
    assert other == {
        "kind": "draw",
        "text": "Nico drew 2 cards.",
        "data": {"count": 2},
        "owner": "p1",
    }
    assert "cards" not in event.view_for(Viewer.spectator())["data"]


def test_gm_may_be_kept_out_of_private_events():
    event = Event(kind="draw", text="drew", owner="p1", private_text="drew 7H", gm_may_read=False)
    assert event.view_for(Viewer.gm())["text"] == "drew"


def test_secret_events_are_left_out_for_other_viewers():
    secret = Event(kind="ratted_on", text="", owner="p1", private_text="Sam ratted.", secret=True)
    public = Event(kind="round", text="Round 4.")
    assert [e["text"] for e in events_for([secret, public], Viewer.player("p2"))] == ["Round 4."]
    assert [e["text"] for e in events_for([secret, public], Viewer.player("p1"))] == [
        "Sam ratted.",
        "Round 4.",
    ]


def test_events_round_trip_through_dicts():
    event = _draw_event()
    assert Event.from_dict(event.to_dict()) == event
