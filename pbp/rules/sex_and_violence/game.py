"""Sex & Violence (crime-fiction card RPG): characters, the opening hand, sessions, secrecy.

Every action is a pure function ``game (+ rng) -> Outcome(game, events)``; illegal actions raise
:class:`SexAndViolenceError`. This module is the public face of the ruleset and re-exports the
contest, mayhem and replenishing actions from its siblings:

* ``state``     – the frozen state and its JSON form
* ``contest``   – contests, bids, the top card
* ``aces``      – the aces of sex and violence scenes
* ``mayhem``    – wounds, cancelling, death
* ``replenish`` – flipping face cards, appeals, stacking the deck
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from pbp.rules.cards import (
    KING,
    Card,
    Deck,
    Event,
    Outcome,
    Suit,
    Viewer,
    describe_cards,
    encode_cards,
    number_deck,
)
from pbp.rules.sex_and_violence.aces import SEX_ACES, VIOLENCE_ACES, AceEffect, ace_effect
from pbp.rules.sex_and_violence.contest import (
    awaiting_response,
    bid,
    open_contest,
    respond_to_ace,
)
from pbp.rules.sex_and_violence.hand import draw_into_hand, shuffle_new_deck, take_from_deck
from pbp.rules.sex_and_violence.mayhem import (
    CANCEL_CRITERIA,
    cancel_wounds,
    criterion_holds,
    pending_wounds,
    take_wounds,
)
from pbp.rules.sex_and_violence.replenish import (
    appeal_to_archetype,
    flip_to_draw,
    flip_to_restore_face,
    flip_to_restore_hand,
    stack_deck,
)
from pbp.rules.sex_and_violence.state import (
    Archetype,
    Attack,
    Character,
    Contest,
    ContestKind,
    Game,
    GmCharacter,
    Settings,
    SexAndViolenceError,
    Slot,
    Stage,
    WoundPacket,
    build_sideboard,
)

__all__ = [
    "CANCEL_CRITERIA",
    "SEX_ACES",
    "VIOLENCE_ACES",
    "AceEffect",
    "Archetype",
    "Attack",
    "Character",
    "Contest",
    "ContestKind",
    "Game",
    "GmCharacter",
    "Settings",
    "SexAndViolenceError",
    "Slot",
    "Stage",
    "WoundPacket",
    "ace_effect",
    "add_character",
    "add_gm_character",
    "appeal_to_archetype",
    "awaiting_response",
    "bid",
    "build_sideboard",
    "cancel_wounds",
    "criterion_holds",
    "end_scene",
    "end_session",
    "flip_to_draw",
    "flip_to_restore_face",
    "flip_to_restore_hand",
    "hand_visible_to",
    "keep_opening_hand",
    "new_game",
    "open_contest",
    "pending_wounds",
    "respond_to_ace",
    "stack_deck",
    "swap_opening_card",
    "take_wounds",
    "view_for",
    "Card",
    "Deck",
    "Event",
    "KING",
    "Outcome",
    "Suit",
    "Viewer",
    "describe_cards",
    "draw_into_hand",
    "encode_cards",
    "number_deck",
    "shuffle_new_deck",
    "take_from_deck",
]


def new_game(settings: Settings | None = None) -> Game:
    return Game(settings=settings or Settings())


def add_gm_character(game: Game, *, gm_id: str, name: str) -> Outcome[Game]:
    """Mayhem: a GM-controlled opponent, who survives up to ten wounds."""
    if game.is_player(gm_id) or any(npc.id == gm_id for npc in game.gm_characters):
        raise SexAndViolenceError(f"The id {gm_id!r} is already taken.")
    npc = GmCharacter(gm_id, name)
    event = Event(kind="gm_character", text=f"{name} enters the story.", data={"id": gm_id})
    return Outcome(replace(game, gm_characters=(*game.gm_characters, npc)), (event,))


def add_character(
    game: Game,
    *,
    player_id: str,
    name: str,
    archetype: Archetype,
    criminal_background: str,
    redeeming_quality: str,
    angle: str,
    fields: Iterable[Suit],
    rng: random.Random,
) -> Outcome[Game]:
    """Characters (Parts I and II) and Playing the Game: build the sideboard, shuffle the
    character's own 40-card deck (aces and 2–10) and draw a hand of ten."""
    if game.is_player(player_id) or any(npc.id == player_id for npc in game.gm_characters):
        raise SexAndViolenceError(f"Player {player_id!r} already has a character.")
    for label, text in (
        ("a name", name),
        ("a criminal background", criminal_background),
        ("a redeeming quality", redeeming_quality),
        ("an angle", angle),
    ):
        if not text.strip():
            raise SexAndViolenceError(f"Your character needs {label}.")
    sideboard = build_sideboard(fields, keep_both_jacks=game.settings.two_fields_keep_both_jacks)
    character = Character(
        player_id=player_id,
        name=name,
        archetype=archetype,
        criminal_background=criminal_background,
        redeeming_quality=redeeming_quality,
        angle=angle,
        sideboard=sideboard,
        opening_swap_open=True,
    )
    character = shuffle_new_deck(character, number_deck(), rng)
    game = replace(game, characters=(*game.characters, character))
    character, events = draw_into_hand(game, character, game.settings.hand_limit, rng, "deal")
    created = Event(
        kind="character",
        text=(
            f"{name}, {archetype.label} ({archetype.suit.label}), {angle}; sideboard: "
            f"{describe_cards(slot.card for slot in sideboard)}."
        ),
        owner=player_id,
    )
    return Outcome(game.with_character(character), (created, *events))


def swap_opening_card(
    game: Game, *, player_id: str, card: Card, rng: random.Random
) -> Outcome[Game]:
    """Playing the Game: discard the highest or the lowest card of the opening hand, draw a
    replacement, then shuffle the discarded card back into the deck. Once, before anything
    else the player does. Aces count 1, so an ace is a lowest card."""
    character = game.living(player_id)
    if not character.opening_swap_open:
        raise SexAndViolenceError("The opening swap is only possible right after the deal.")
    ranks = [slot.card.rank for slot in character.hand]
    if card not in character.usable_cards or card.rank not in (min(ranks), max(ranks)):
        raise SexAndViolenceError(
            "You may only swap your highest or your lowest card "
            f"(rank {max(ranks)} or {min(ranks)})."
        )
    hand = list(character.hand)
    hand.remove(Slot(card))
    character = replace(character, hand=tuple(hand), opening_swap_open=False)
    character, (new,), events = take_from_deck(character, 1, rng, "opening swap")
    character = replace(
        character,
        hand=(*character.hand, Slot(new)),
        deck=character.deck.shuffle_in((card,), rng),
    )
    events.append(
        Event(
            kind="swap",
            text=f"{character.name} swaps one card of the opening hand.",
            owner=player_id,
            private_text=f"{character.name} swaps the {card.name} for the {new.name}.",
            private_data={"returned": card.code, "drawn": new.code},
            gm_may_read=game.settings.gm_sees_hands,
        )
    )
    return Outcome(game.with_character(character), tuple(events))


def keep_opening_hand(game: Game, *, player_id: str) -> Outcome[Game]:
    character = game.living(player_id)
    character = replace(character, opening_swap_open=False)
    event = Event(kind="keep", text=f"{character.name} keeps the opening hand.", owner=player_id)
    return Outcome(game.with_character(character), (event,))


def end_scene(game: Game) -> Outcome[Game]:
    """Stacking the deck is allowed once per scene; a new scene allows it again."""
    characters = tuple(replace(c, stacked_this_scene=False) for c in game.characters)
    event = Event(kind="scene_end", text="The scene ends.")
    return Outcome(replace(game, characters=characters), (event,))


def end_session(game: Game) -> Outcome[Game]:
    """Kings unflip at the end of a game session, "provided that your character isn't in the
    middle of some action"; appeals to the archetype (once per session) become available."""
    busy = set()
    if game.contest is not None:
        busy = {game.contest.player_id, *game.contest.targets}
    characters = []
    for character in game.characters:
        if character.player_id not in busy:
            sideboard = tuple(
                Slot(slot.card) if slot.card.rank == KING else slot for slot in character.sideboard
            )
            character = replace(character, sideboard=sideboard)
        characters.append(replace(character, appealed_this_session=False, stacked_this_scene=False))
    event = Event(kind="session_end", text="The session ends; flipped Kings are restored.")
    return Outcome(replace(game, characters=tuple(characters)), (event,))


def hand_visible_to(game: Game, player_id: str, viewer: Viewer) -> bool:
    """Secrets: a hand is seen by its player, and by the GM when the campaign allows it."""
    return viewer.is_player(player_id) or (viewer.is_gm and game.settings.gm_sees_hands)


def view_for(game: Game, viewer: Viewer) -> dict[str, Any]:
    """What ``viewer`` may see: others' hands only as counts, no deck order for anyone."""
    return {
        "ruleset": "sex_and_violence",
        "settings": game.settings.to_dict(),
        "characters": [_character_view(game, c, viewer) for c in game.characters],
        "gm_characters": [npc.to_dict() for npc in game.gm_characters],
        "contest": game.contest.to_dict() if game.contest else None,
        "awaiting_response": awaiting_response(game),
    }


def _character_view(game: Game, character: Character, viewer: Viewer) -> dict[str, Any]:
    shown = replace(character, deck=Deck()).to_dict()
    del shown["deck"]
    shown["deck_count"] = len(character.deck)
    shown["hand_size"] = len(character.hand)
    shown["flipped_in_hand"] = character.flipped_in_hand
    if not hand_visible_to(game, character.player_id, viewer):
        shown["hand"] = None
    shown["usable_cards"] = (
        encode_cards(character.usable_cards) if shown["hand"] is not None else None
    )
    return shown
