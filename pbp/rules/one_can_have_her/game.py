"""One Can Have Her (a game noir by Jonas Karlsson): characters, rounds, rat notes, the end.

Pure functions ``game (+ rng) -> Outcome(game, events)``; illegal actions raise
:class:`OneCanHaveHerError`. A round runs: rat notes (rounds 4–7) → the GM orders the scenes
(ratted-on players learn who ratted on them) → each scene opens with its player's monologue
and sets a conflict → in resolution rounds the end die → bonus cards → flips → end of round.
The conflicts themselves are in :mod:`pbp.rules.one_can_have_her.conflict`.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from pbp.rules.cards import Deck, Event, Outcome, Viewer, events_for
from pbp.rules.one_can_have_her.conflict import (
    accept_stakes,
    add_bonus_cards,
    apply_final_round,
    check_stakes,
    conflicts_set,
    counts_ascend,
    flip_turn,
    gm_break_tie,
    in_conflict,
    set_stakes,
    start_conflict,
)
from pbp.rules.one_can_have_her.state import (
    CHIEF,
    FIRST_RAT_ROUND,
    GM,
    GM_CHARACTERS,
    LAST_ROUND,
    LULA,
    SUGGESTED_ARCHETYPES,
    ConclusionTieBreak,
    Conflict,
    Epilogue,
    Fate,
    Game,
    OneCanHaveHerError,
    Phase,
    Player,
    RatNote,
    Settings,
    Side,
    TurnResult,
    round_name,
)

__all__ = [
    "CHIEF",
    "GM",
    "GM_CHARACTERS",
    "LULA",
    "SUGGESTED_ARCHETYPES",
    "ConclusionTieBreak",
    "Conflict",
    "Epilogue",
    "Fate",
    "Game",
    "OneCanHaveHerError",
    "Phase",
    "Player",
    "RatNote",
    "Settings",
    "Side",
    "TurnResult",
    "accept_stakes",
    "add_bonus_cards",
    "add_player",
    "award_coolness",
    "check_stakes",
    "choose_fate",
    "counts_ascend",
    "end_round",
    "epilogues",
    "events_for",
    "flip_turn",
    "gm_break_tie",
    "hand_in_note",
    "in_conflict",
    "new_game",
    "open_scene",
    "order_epilogues",
    "order_scenes",
    "roll_end_die",
    "round_name",
    "set_stakes",
    "start_conflict",
    "start_game",
    "view_for",
    "Deck",
    "Event",
    "FIRST_RAT_ROUND",
    "LAST_ROUND",
    "Outcome",
    "Viewer",
    "apply_final_round",
    "conflicts_set",
]


def new_game(settings: Settings | None = None) -> Game:
    return Game(settings=settings or Settings())


def add_player(
    game: Game,
    *,
    player_id: str,
    character_name: str,
    archetype: str,
    drive: str,
    dream_woman: str,
    future_with_lula: str,
) -> Outcome[Game]:
    """Player Characters: the sheet, 2 Coolness cards and the 8 rat notes (4 "Rat", 4 "Don't
    rat"), written now so nobody can tell a choice from how long a note took to write."""
    if game.phase is not Phase.SETUP:
        raise OneCanHaveHerError("Characters are made before the first scene.")
    if player_id == GM or any(p.player_id == player_id for p in game.players):
        raise OneCanHaveHerError(f"The id {player_id!r} is already taken.")
    for label, text in (
        ("a name", character_name),
        ("a noir archetype", archetype),
        ("a drive", drive),
        ("a dream woman and future together", f"{dream_woman}{future_with_lula}"),
    ):
        if not text.strip():
            raise OneCanHaveHerError(f"The character sheet needs {label}.")
    settings = game.settings
    player = Player(
        player_id=player_id,
        character_name=character_name,
        archetype=archetype,
        drive=drive,
        dream_woman=dream_woman,
        future_with_lula=future_with_lula,
        coolness=settings.starting_coolness,
        rat_left=settings.rat_notes,
        dont_rat_left=settings.rat_notes,
    )
    event = Event(
        kind="character",
        text=f"{character_name}, {archetype}. Drive: {drive}",
        owner=player_id,
    )
    return Outcome(replace(game, players=(*game.players, player)), (event,))


def start_game(game: Game) -> Outcome[Game]:
    """ "He gets an amount of cards equal to the number of players times 10"; the Coolness pool
    starts empty. Round 1 (the drive scenes) begins with the GM ordering the scenes."""
    if game.phase is not Phase.SETUP:
        raise OneCanHaveHerError("The game has already started.")
    if len(game.players) < 2:
        raise OneCanHaveHerError("One Can Have Her needs a GM and two or more players.")
    pool = game.settings.opposition_per_player * len(game.players)
    game = replace(game, opposition_pool=pool, coolness_pool=0)
    return _start_round(
        game, 1, [Event(kind="start", text=f"The game begins; {pool} Opposition cards.")]
    )


def _start_round(game: Game, number: int, events: list[Event]) -> Outcome[Game]:
    phase = Phase.NOTES if number >= FIRST_RAT_ROUND else Phase.ORDERING
    game = replace(game, round=number, phase=phase, scene_order=(), scenes_opened=(), end_roll=None)
    need = " Every player hands in a rat note first." if phase is Phase.NOTES else ""
    text = f"Round {number} ({round_name(number)} scenes) begins.{need}"
    return Outcome(game, (*events, Event(kind="round", text=text, data={"round": number})))


def hand_in_note(game: Game, *, player_id: str, rat: bool) -> Outcome[Game]:
    """Scenes: before each of the last four scenes every player hands the GM a rat note.

    Only the GM learns which note it is; the others learn only that one was handed in.
    """
    if game.phase is not Phase.NOTES:
        raise OneCanHaveHerError("Rat notes are handed in before resolution and end scenes.")
    player = game.player(player_id)
    if any(note.player_id == player_id for note in game.notes_of_round(game.round)):
        raise OneCanHaveHerError("You have already handed in a note this round.")
    left = player.rat_left if rat else player.dont_rat_left
    label = "Rat" if rat else "Don't rat"
    if left <= 0:
        raise OneCanHaveHerError(f'You have no "{label}" note left.')
    player = replace(
        player,
        rat_left=player.rat_left - rat,
        dont_rat_left=player.dont_rat_left - (not rat),
    )
    game = game.with_player(player)
    game = replace(game, notes=(*game.notes, RatNote(game.round, player_id, rat)))
    events = [
        Event(
            kind="note",
            text=f"{player.character_name} hands the GM a rat note.",
            owner=player_id,
            private_text=f'{player.character_name} hands the GM a "{label}" note.',
            private_data={"rat": rat},
        )
    ]
    if len(game.notes_of_round(game.round)) == len(game.players):
        game = replace(game, phase=Phase.ORDERING)
        events.append(Event(kind="notes_in", text="Every note is in; the GM orders the scenes."))
    return Outcome(game, tuple(events))


def order_scenes(game: Game, *, order: Sequence[str]) -> Outcome[Game]:
    """Scene Introduction: the GM decides the order of the round's scenes. As the scenes open,
    Chief Morton's men arrive and every ratted-on player learns who ratted on him."""
    if game.phase is not Phase.ORDERING:
        raise OneCanHaveHerError("The scenes cannot be ordered now.")
    if sorted(order) != sorted(p.player_id for p in game.players):
        raise OneCanHaveHerError("Name every player exactly once in the scene order.")
    game = replace(game, scene_order=tuple(order), phase=Phase.SCENES)
    names = ", ".join(game.name(pid) for pid in order)
    events = [Event(kind="order", text=f"Scene order for round {game.round}: {names}.")]
    if game.round >= FIRST_RAT_ROUND:
        game = replace(game, revealed_rounds=(*game.revealed_rounds, game.round))
        events += _police_arrive(game)
    return Outcome(game, tuple(events))


def _police_arrive(game: Game) -> list[Event]:
    events = []
    for player in game.players:
        rats = game.ratted_on_by(player.player_id, game.round)
        if rats:
            names = ", ".join(game.name(rat) for rat in rats)
            events.append(
                Event(
                    kind="ratted_on",
                    text="",
                    owner=player.player_id,
                    private_text=f"Chief Morton's men come for {player.character_name}: "
                    f"{names} ratted on him.",
                    private_data={"rats": list(rats), "round": game.round},
                    secret=True,
                )
            )
    return events


def open_scene(game: Game, *, player_id: str, monologue: str) -> Outcome[Game]:
    """Scene Introduction: each scene opens with its player's in-character monologue, in the
    order the GM set."""
    if game.phase is not Phase.SCENES:
        raise OneCanHaveHerError("Scenes open once the GM has ordered them.")
    waiting = [pid for pid in game.scene_order if pid not in game.scenes_opened]
    if not waiting or waiting[0] != player_id:
        nxt = game.name(waiting[0]) if waiting else "nobody"
        raise OneCanHaveHerError(f"It is {nxt}'s scene next.")
    if not monologue.strip():
        raise OneCanHaveHerError("Open your scene with an introduction monologue.")
    game = replace(
        game,
        scenes_opened=(*game.scenes_opened, player_id),
        monologues=(*game.monologues, (game.round, player_id, monologue)),
    )
    event = Event(
        kind="scene",
        text=f"{game.name(player_id)}'s scene opens.",
        owner=player_id,
        data={"round": game.round},
    )
    game, more = conflicts_set(game)
    return Outcome(game, (event, *more))


def roll_end_die(game: Game, *, rng: random.Random) -> Outcome[Game]:
    """Scene Conflict: in a resolution scene, once every conflict is set, "Roll a six-sided die
    and see if the value is less than the scene number (4, 5 or 6). If it is the game ends"."""
    if game.phase is not Phase.END_ROLL:
        raise OneCanHaveHerError("The end die is rolled once every resolution conflict is set.")
    value = rng.randint(1, 6)
    final = value < game.round
    verdict = "the game ends after this round" if final else "the game goes on"
    events = [
        Event(
            kind="end_die",
            text=f"The end die shows {value} in scene {game.round}: {verdict}.",
            data={"value": value, "final": final},
        )
    ]
    game = replace(game, end_roll=value, final=final, phase=Phase.BONUS)
    if final:
        game, forfeits = apply_final_round(game)
        events += forfeits
    return Outcome(game, tuple(events))


def award_coolness(game: Game, *, giver: str, receiver: str) -> Outcome[Game]:
    """Coolness Cards: "The players, not the GM, can award each other bonus cards from the
    Coolness Pool"."""
    if game.phase in (Phase.SETUP, Phase.EPILOGUES):
        raise OneCanHaveHerError("Coolness cards are awarded during play.")
    if giver == GM or receiver == GM:
        raise OneCanHaveHerError("Only players award Coolness cards, and only to players.")
    game.player(giver)
    player = game.player(receiver)
    if giver == receiver:
        raise OneCanHaveHerError("Award Coolness cards to another player, not to yourself.")
    if game.coolness_pool <= 0:
        raise OneCanHaveHerError("The Coolness pool is empty.")
    game = game.with_player(replace(player, coolness=player.coolness + 1))
    game = replace(game, coolness_pool=game.coolness_pool - 1)
    text = f"{game.name(giver)} awards a Coolness card to {game.name(receiver)}."
    return Outcome(game, (Event(kind="coolness", text=text),))


def end_round(game: Game) -> Outcome[Game]:
    """The GM closes the round once every conflict is concluded; the game ends after a final
    round (the end die, or scene 7), otherwise the next round begins."""
    if game.phase not in (Phase.BONUS, Phase.FLIPPING):
        raise OneCanHaveHerError("The round ends after its conflicts are played.")
    open_ones = [c.id for c in game.round_conflicts() if not c.done]
    if open_ones:
        raise OneCanHaveHerError(f"Conflicts still open: {', '.join(open_ones)}.")
    if not game.final and game.round < LAST_ROUND:
        return _start_round(game, game.round + 1, [])
    game = replace(game, phase=Phase.EPILOGUES)
    endings = epilogues(game)
    lines = "; ".join(f"{game.name(pid)}: {ending.text}" for pid, ending in endings.items())
    event = Event(
        kind="game_over",
        text=f"The game ends. Every rat note is revealed. {lines}",
        data={
            "notes": [note.to_dict() for note in game.notes],
            "epilogues": {pid: ending.value for pid, ending in endings.items()},
        },
    )
    return Outcome(game, (event,))


def epilogues(game: Game) -> dict[str, Epilogue]:
    """Ending the Game, judged on the final round's notes: more than one rat → everyone ends
    in jail or dead; ratted on → bad end; ratted and not ratted on → Lula and the drive;
    neither → resolves the drive."""
    rats = game.rats(game.round)
    endings = {}
    for player in game.players:
        pid = player.player_id
        if len(rats) > 1:
            endings[pid] = Epilogue.EVERYONE_FALLS
        elif game.ratted_on_by(pid, game.round):
            endings[pid] = Epilogue.BAD_END
        elif pid in rats:
            endings[pid] = Epilogue.GETS_LULA_AND_DRIVE
        else:
            endings[pid] = Epilogue.RESOLVES_DRIVE
    return endings


def choose_fate(game: Game, *, player_id: str, fate: Fate) -> Outcome[Game]:
    """A ratted-on character ends in jail or dead, "depending on the player's wishes"."""
    player = game.player(player_id)
    ratted_on = game.final and bool(game.ratted_on_by(player_id, game.round))
    if not ratted_on:
        raise OneCanHaveHerError("Only a character ratted on in the final round picks his end.")
    game = game.with_player(replace(player, fate=fate))
    text = f"{player.character_name} ends {'in jail' if fate is Fate.JAIL else 'dead'}."
    return Outcome(game, (Event(kind="fate", text=text, owner=player_id),))


def order_epilogues(game: Game, *, order: Sequence[str]) -> Outcome[Game]:
    """Ending the Game: "The GM decides the order of the epilogues"."""
    if not game.over:
        raise OneCanHaveHerError("Epilogues come after the game ends.")
    if sorted(order) != sorted(p.player_id for p in game.players):
        raise OneCanHaveHerError("Name every player exactly once in the epilogue order.")
    names = ", ".join(game.name(pid) for pid in order)
    event = Event(kind="epilogue_order", text=f"Epilogues: {names}.")
    return Outcome(replace(game, epilogue_order=tuple(order)), (event,))


def view_for(game: Game, viewer: Viewer) -> dict[str, Any]:
    """What ``viewer`` may see. Sheets and pools are public. Rat notes: the GM sees all; a
    player sees his own, that others handed one in, and – once the round's scenes open – who
    ratted on him; everyone sees every note when the game ends. Face-down cards and deck order
    are hidden from everyone, the GM included."""
    shown = replace(game, players=(), notes=(), conflicts=()).to_dict()
    shown["players"] = [_player_view(game, p, viewer) for p in game.players]
    shown["notes"] = _notes_view(game, viewer)
    shown["conflicts"] = [_conflict_view(c) for c in game.conflicts]
    shown["in_conflict"] = {
        p.player_id: (c.id if (c := in_conflict(game, p.player_id)) else None) for p in game.players
    }
    # Scene Order, so the table shows which scenes these are without knowing the rules.
    shown["round_name"] = round_name(game.round) if game.round else None
    if game.over:
        shown["epilogues"] = {pid: e.value for pid, e in epilogues(game).items()}
    return shown


def _player_view(game: Game, player: Player, viewer: Viewer) -> dict[str, Any]:
    shown = player.sheet()
    if viewer.is_gm or viewer.is_player(player.player_id) or game.over:
        shown["rat_left"] = player.rat_left
        shown["dont_rat_left"] = player.dont_rat_left
    return shown


def _notes_view(game: Game, viewer: Viewer) -> dict[str, Any]:
    handed = {
        p.player_id: any(n.player_id == p.player_id for n in game.notes_of_round(game.round))
        for p in game.players
    }
    if viewer.is_gm or game.over:
        return {"handed_in": handed, "notes": [note.to_dict() for note in game.notes]}
    shown: dict[str, Any] = {"handed_in": handed}
    if viewer.player_id is not None:
        own = [n.to_dict() for n in game.notes if n.player_id == viewer.player_id]
        shown["notes"] = own
        shown["ratted_on_by"] = {
            str(number): list(rats)
            for number in game.revealed_rounds
            if (rats := game.ratted_on_by(viewer.player_id, number))
        }
    return shown


def _conflict_view(conflict: Conflict) -> dict[str, Any]:
    """Flipped turns show their cards; unflipped turns show only how many cards they hold."""
    flipped = len(conflict.results)
    shown = replace(conflict, deck=Deck()).to_dict()
    del shown["deck"]
    shown["deck_count"] = len(conflict.deck)
    for side in shown["sides"]:
        side["counts"] = [len(cards) for cards in side["turns"]]
        side["turns"] = [cards if i < flipped else None for i, cards in enumerate(side["turns"])]
    return shown
