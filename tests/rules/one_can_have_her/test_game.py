"""One Can Have Her: characters, rounds, rat notes and their secrecy, the end die, epilogues."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from pbp.rules import one_can_have_her as ochh
from pbp.rules.cards import Viewer, events_for
from tests.rules.one_can_have_her.builders import (
    FixedDie,
    conflicts,
    finish_round,
    flip_all,
    notes,
    rng,
    scenes,
    table,
    to_bonus,
)

GM_VIEW = Viewer.gm()


def _round(g, number):
    """Play whole rounds (no rats, the die never ends the game) up to round ``number``."""
    while g.round < number:
        g = finish_round(to_bonus(g))
    return g


# --- characters -------------------------------------------------------------------------------


def test_the_gm_has_chief_morton_and_lula():
    """“The GM has two characters that exist in every game: Police Chief Willie Morton and his
    daughter Ms. Lula Morton.”
    """
    assert ochh.GM_CHARACTERS == ("Police Chief Willie Morton", "Ms. Lula Morton")


def test_a_new_character_has_two_coolness_cards_and_eight_rat_notes():
    """“Each character will start with 2 Coolness Cards. The players should write their name (their
    own or their character's) on 8 notes of paper together with "Rat" on 4 of them and "Don't
    rat" on 4 notes.”
    """
    jake = table().player("p1")
    assert (jake.coolness, jake.rat_left, jake.dont_rat_left) == (2, 4, 4)


def test_nothing_on_a_sheet_is_secret():
    """“Nothing of the characters is secret, and all players should know the drives and dream future
    of all other characters.” Reading: the rat notes left are not part of the sheet, and stay
    hidden.
    """
    view = ochh.view_for(table(), Viewer.player("p2"))
    jake = view["players"][0]
    assert jake["drive"] == "find who framed Jake" and jake["future_with_lula"]
    assert "rat_left" not in jake


@pytest.mark.parametrize(
    ("player_id", "drive", "message"),
    [("gm", "revenge", "already taken"), ("p1", "revenge", "already taken"), ("p9", " ", "drive")],
)
def test_sheets_are_checked(player_id, drive, message):
    """“Each character will have a drive, something that's motivating him to act and to push himself
    forward.” Reading: every sheet names a drive, and each player and character name is used
    once.
    """
    g = ochh.add_player(
        ochh.new_game(),
        player_id="p1",
        character_name="Jake",
        archetype="Hardboiled Private Detective",
        drive="find his partner's killer",
        dream_woman="a nurse",
        future_with_lula="a farm",
    ).state
    with pytest.raises(ochh.OneCanHaveHerError, match=message):
        ochh.add_player(
            g,
            player_id=player_id,
            character_name="Lou",
            archetype="Corrupt Politician",
            drive=drive,
            dream_woman="a widow",
            future_with_lula="the mayor's office",
        )


def test_the_game_needs_two_players_and_then_no_new_characters():
    """“One Can Have Her is a game inspired by film noir for one game master (GM) and two or more
    players.” Reading: characters are made before the first scene.
    """
    lonely = ochh.add_player(
        ochh.new_game(),
        player_id="p1",
        character_name="Jake",
        archetype="Insecure Petty Thief",
        drive="pay his debt",
        dream_woman="a dancer",
        future_with_lula="Havana",
    ).state
    with pytest.raises(ochh.OneCanHaveHerError, match="two or more players"):
        ochh.start_game(lonely)
    with pytest.raises(ochh.OneCanHaveHerError, match="before the first scene"):
        ochh.add_player(
            table(),
            player_id="p9",
            character_name="X",
            archetype="Y",
            drive="Z",
            dream_woman="W",
            future_with_lula="V",
        )


@pytest.mark.parametrize("players", [2, 3, 4])
def test_the_opposition_pool_is_ten_per_player_and_coolness_starts_empty(players):
    """“He gets an amount of cards equal to the number of players times 10. Every opposition card
    used goes into the Coolness Pool.”
    """
    g = table(players)
    assert (g.opposition_pool, g.coolness_pool) == (10 * players, 0)
    assert (g.round, g.phase) == (1, ochh.Phase.ORDERING)


# --- rounds and scenes ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("number", "name"),
    [
        (1, "drive"),
        (2, "escalation"),
        (3, "escalation"),
        (4, "resolution"),
        (6, "resolution"),
        (7, "end"),
    ],
)
def test_round_names(number, name):
    """“Scene 1: Drive Scene Scenes 2-3: Escalation Scenes Scenes 4-6: Resolution Scenes Scene 7:
    End Scene”
    """
    assert ochh.round_name(number) == name


def test_the_table_names_the_rounds_scenes_so_pages_need_not_know_them():
    """“Scene 1: Drive Scene Scenes 2-3: Escalation Scenes Scenes 4-6: Resolution Scenes Scene 7:
    End Scene”
    """
    assert ochh.view_for(ochh.new_game(None), GM_VIEW)["round_name"] is None  # still setting up
    for number, name in ((1, "drive"), (3, "escalation"), (4, "resolution")):
        g = _round(table(), number)
        assert ochh.view_for(g, Viewer.player("p1"))["round_name"] == name


def test_scenes_open_in_the_gms_order_with_a_monologue():
    """“The GM decides the order the players get their scenes” and “Each scene should be introduced
    by the player, with a short in-character monologue describing where he is and what's going
    on.”
    """
    g = ochh.order_scenes(table(), order=["p2", "p1", "p3"]).state
    with pytest.raises(ochh.OneCanHaveHerError, match="It is Lou's scene next"):
        ochh.open_scene(g, player_id="p1", monologue="I'm an occasional drinker.")
    with pytest.raises(ochh.OneCanHaveHerError, match="monologue"):
        ochh.open_scene(g, player_id="p2", monologue="  ")
    g = ochh.open_scene(g, player_id="p2", monologue="She smelled like the Taj Mahal.").state
    assert g.scenes_opened == ("p2",) and g.monologues[0][1] == "p2"


def test_the_scene_order_names_everyone_once():
    """“Round - All PCs gets one scene during each round.”"""
    with pytest.raises(ochh.OneCanHaveHerError, match="exactly once"):
        ochh.order_scenes(table(), order=["p1", "p1", "p2"])


def test_no_rat_notes_before_the_resolution_rounds():
    """“Before each of the last four scenes the players hand over their rat notes to the GM.”"""
    with pytest.raises(ochh.OneCanHaveHerError, match="before resolution and end scenes"):
        ochh.hand_in_note(table(), player_id="p1", rat=True)


def test_no_end_die_outside_the_resolution_rounds():
    """“There's no risk of the game ending during the Escalation Scenes” and “Obviously you don't
    have to roll the die in scene 7 as it'll surely be the last scene of the game.”
    """
    with pytest.raises(ochh.OneCanHaveHerError, match="end die"):
        ochh.roll_end_die(to_bonus(table()), rng=FixedDie(1))


def test_rounds_one_to_three_go_straight_to_bonus_cards():
    """“There's no risk of the game ending during the Escalation Scenes, so the characters are free
    to get involved with Lula and follow their drives.”
    """
    g = conflicts(scenes(table()))
    assert g.phase is ochh.Phase.BONUS and not g.final


def test_a_round_ends_only_when_every_conflict_is_concluded():
    """“Each scene should contain one conflict per PC, and all conflicts will be resolved
    together.”
    """
    g = to_bonus(table())
    with pytest.raises(ochh.OneCanHaveHerError, match="Conflicts still open: r1-p1"):
        ochh.end_round(g)


def test_round_four_starts_with_notes_from_everyone():
    """“Before each Resolution Scene the players should hand over a rat note.” Reading: one note per
    player per round, handed in before the GM orders the scenes.
    """
    g = _round(table(), 4)
    assert g.phase is ochh.Phase.NOTES
    with pytest.raises(ochh.OneCanHaveHerError, match="cannot be ordered now"):
        ochh.order_scenes(g, order=["p1", "p2", "p3"])
    g = ochh.hand_in_note(g, player_id="p1", rat=True).state
    with pytest.raises(ochh.OneCanHaveHerError, match="already handed in"):
        ochh.hand_in_note(g, player_id="p1", rat=False)
    assert g.player("p1").rat_left == 3 and g.player("p1").dont_rat_left == 4
    g = notes(replace(g, notes=()), rats=[])
    assert g.phase is ochh.Phase.ORDERING


def test_a_player_without_that_note_left_cannot_hand_it_in():
    """“together with "Rat" on 4 of them and "Don't rat" on 4 notes” — a note used is gone."""
    g = _round(table(), 4)
    g = g.with_player(replace(g.player("p1"), rat_left=0))
    with pytest.raises(ochh.OneCanHaveHerError, match='no "Rat" note left'):
        ochh.hand_in_note(g, player_id="p1", rat=True)


@pytest.mark.parametrize(
    ("number", "die", "final"),
    [(4, 3, True), (4, 4, False), (5, 4, True), (5, 5, False), (6, 5, True), (6, 6, False)],
)
def test_the_end_die_ends_the_game_below_the_scene_number(number, die, final):
    """“Roll a six-sided die and see if the value is less than the scene number (4, 5 or 6). If it
    is the game ends, otherwise you'll have another round.”
    """
    g = to_bonus(_round(table(), number), die=die)
    assert g.end_roll == die and g.final is final
    g = finish_round(g)
    assert g.over is final and (g.round == number + 1) is not final


def test_scene_seven_always_ends_the_game_without_a_die():
    """“Obviously you don't have to roll the die in scene 7 as it'll surely be the last scene of the
    game.”
    """
    g = to_bonus(_round(table(), 7))
    assert g.final and g.end_roll is None
    assert finish_round(g).over


# --- rat notes and their secrecy --------------------------------------------------------------


def _round_four_with_rat(rat="p1"):
    return notes(_round(table(), 4), rats=[rat])


def test_only_the_gm_and_the_writer_see_which_note_was_handed_in():
    """“The main reason for using notes is that the players shouldn't know what the others are
    choosing, since that would take away the whole dilemma of knowing when to rat on the others.”
    """
    g = _round_four_with_rat()
    for viewer in (Viewer.player("p2"), Viewer.spectator()):
        shown = ochh.view_for(g, viewer)["notes"]
        assert shown["handed_in"] == {"p1": True, "p2": True, "p3": True}
        assert all(note["player_id"] != "p1" for note in shown.get("notes", []))
        assert "rat_left" not in ochh.view_for(g, viewer)["players"][0]
    assert ochh.view_for(g, Viewer.player("p1"))["notes"]["notes"] == [
        {"round": 4, "player_id": "p1", "rat": True}
    ]
    assert {"round": 4, "player_id": "p1", "rat": True} in ochh.view_for(g, GM_VIEW)["notes"][
        "notes"
    ]


def test_the_note_record_tells_others_only_that_a_note_was_handed_in():
    """“the players shouldn't know what the others are choosing”"""
    g = _round(table(), 4)
    event = ochh.hand_in_note(g, player_id="p1", rat=True).events[0]
    other = event.view_for(Viewer.player("p2"))
    assert other["text"] == "Jake hands the GM a rat note." and "rat" not in other["data"]
    assert '"Rat"' in event.view_for(GM_VIEW)["text"]


def test_a_ratted_on_player_learns_who_ratted_when_the_scenes_open():
    """“The character that's been ratted on will immediately realize who has sold him out” Reading:
    he learns it when the GM orders the round's scenes.
    """
    g = _round_four_with_rat()
    assert ochh.view_for(g, Viewer.player("p2"))["notes"]["ratted_on_by"] == {}
    out = ochh.order_scenes(g, order=["p1", "p2", "p3"])
    g = out.state
    assert ochh.view_for(g, Viewer.player("p2"))["notes"]["ratted_on_by"] == {"4": ["p1"]}
    assert ochh.view_for(g, Viewer.player("p1"))["notes"]["ratted_on_by"] == {}
    told = [
        e["text"] for e in events_for(out.events, Viewer.player("p2")) if e["kind"] == "ratted_on"
    ]
    assert told == ["Chief Morton's men come for Lou: Jake ratted on him."]
    assert all(e["kind"] != "ratted_on" for e in events_for(out.events, Viewer.player("p1")))


def test_every_note_is_shown_to_everyone_when_the_game_ends():
    """Reading: the notes' secrecy (“the players shouldn't know what the others are choosing”) ends
    with the game, when the epilogues reflect them.
    """
    g = finish_round(to_bonus(_round(table(), 4), rats=["p1"], die=1))
    assert g.over
    shown = ochh.view_for(g, Viewer.player("p3"))
    assert {"round": 4, "player_id": "p1", "rat": True} in shown["notes"]["notes"]
    assert shown["players"][0]["rat_left"] == 3


# --- the end ----------------------------------------------------------------------------------


def test_ratted_on_characters_lose_the_final_round_automatically():
    """“If the die says it's the last scene, there's no need to go through with conflict resolution
    for this character. He automatically loses the stakes and is either put behind bars or shot
    dead by the police.”
    """
    g = to_bonus(_round(table(), 4), rats=["p1"], die=1)
    lost = {c.id: (c.forfeited_by, c.concluder) for c in g.round_conflicts()}
    assert lost == {"r4-p1": ((), None), "r4-p2": ((0,), 1), "r4-p3": ((0,), 1)}
    with pytest.raises(ochh.OneCanHaveHerError, match="no turn left"):
        ochh.flip_turn(g, conflict_id="r4-p2", rng=rng())


def test_ratted_on_characters_fight_on_when_the_game_goes_on():
    """“If the character wasn't ratted on in this round, the conflict is played as normal.” Reading:
    when the die lets the game go on, the ratted-on character plays his conflict too (the police
    are merely hostile).
    """
    g = to_bonus(_round(table(), 4), rats=["p1"], die=6)
    assert all(not c.done for c in g.round_conflicts())


def test_in_pvp_the_side_not_ratted_on_wins_the_final_round():
    """“He automatically loses the stakes” Reading: in a player-vs-player conflict his opponent
    takes the stakes.
    """
    g = to_bonus(_round(table(), 4), rats=["p1"], die=1, pvp=[("p1", "p2")])
    assert (g.conflict("r4-p1").forfeited_by, g.conflict("r4-p1").concluder) == ((1,), 0)


@pytest.mark.parametrize(
    ("rats", "expected"),
    [
        ([], {"p1": "resolves_drive", "p2": "resolves_drive", "p3": "resolves_drive"}),
        (["p2"], {"p1": "bad_end", "p2": "gets_lula_and_drive", "p3": "bad_end"}),
        (["p1", "p3"], {"p1": "everyone_falls", "p2": "everyone_falls", "p3": "everyone_falls"}),
    ],
)
def test_epilogues_follow_the_final_rounds_notes(rats, expected):
    """“If the character wasn't ratted on during the round and didn't rat on anyone else, his
    epilogue should describe how he resolves his drive” “If he ratted on the others but wasn't
    ratted on he gets Ms. Lula Morton and resolves his drive.” “If more than one rat on the
    others, all of them end up in jail or die.”
    """
    g = finish_round(to_bonus(_round(table(), 4), rats=rats, die=1))
    assert {pid: e.value for pid, e in ochh.epilogues(g).items()} == expected
    assert ochh.view_for(g, Viewer.spectator())["epilogues"] == expected


def test_with_two_rats_no_card_is_played():
    """“If more than one rat on the others, all of them end up in jail or die.” Reading: everyone is
    ratted on, so no conflict is played in the final round.
    """
    g = to_bonus(_round(table(), 4), rats=["p1", "p3"], die=1)
    assert all(c.done and not c.results for c in g.round_conflicts())
    assert ochh.end_round(g).state.over


def test_epilogues_look_only_at_the_final_round():
    """“Characters that were ratted on during the end round meet a bad end.”"""
    g = finish_round(to_bonus(_round(table(), 4), rats=["p1"], die=6))
    g = finish_round(to_bonus(g, rats=[], die=1))
    assert g.over and set(ochh.epilogues(g).values()) == {ochh.Epilogue.RESOLVES_DRIVE}


def test_a_ratted_on_character_picks_jail_or_death():
    """“He automatically loses the stakes and is either put behind bars or shot dead by the police.
    The choice is up to the player”
    """
    g = to_bonus(_round(table(), 4), rats=["p1"], die=1)
    g = ochh.choose_fate(g, player_id="p2", fate=ochh.Fate.DEAD).state
    assert g.player("p2").fate is ochh.Fate.DEAD
    with pytest.raises(ochh.OneCanHaveHerError, match="Only a character ratted on"):
        ochh.choose_fate(g, player_id="p1", fate=ochh.Fate.JAIL)
    going_on = to_bonus(_round(table(), 4), rats=["p1"], die=6)
    with pytest.raises(ochh.OneCanHaveHerError, match="Only a character ratted on"):
        ochh.choose_fate(going_on, player_id="p2", fate=ochh.Fate.JAIL)


def test_the_gm_orders_the_epilogues_after_the_end():
    """“The GM decides the order of the epilogues.”"""
    g = to_bonus(_round(table(), 4), die=1)
    with pytest.raises(ochh.OneCanHaveHerError, match="after the game ends"):
        ochh.order_epilogues(g, order=["p1", "p2", "p3"])
    g = ochh.order_epilogues(finish_round(g), order=["p3", "p1", "p2"]).state
    assert g.epilogue_order == ("p3", "p1", "p2")


# --- coolness ---------------------------------------------------------------------------------


def _with_used_opposition():
    g = to_bonus(table())
    g = ochh.add_bonus_cards(g, conflict_id="r1-p1", side=ochh.GM, by=ochh.GM, counts=(0, 0, 2))
    g = flip_all(g.state, "r1-p1")
    if not g.conflict("r1-p1").done:
        g = ochh.gm_break_tie(g, conflict_id="r1-p1", side=ochh.GM).state
    return g


def test_players_award_coolness_from_the_pool_to_each_other():
    """“The players, not the GM, can award each other bonus cards from the Coolness Pool if they
    think another player does something cool or entertaining.” “Used Coolness Cards turn back
    into Opposition Cards”
    """
    g = table()
    with pytest.raises(ochh.OneCanHaveHerError, match="pool is empty"):
        ochh.award_coolness(g, giver="p1", receiver="p2")
    g = _with_used_opposition()
    assert g.coolness_pool == 2
    g = ochh.award_coolness(g, giver="p1", receiver="p2").state
    assert (g.coolness_pool, g.player("p2").coolness, g.player("p1").coolness) == (1, 3, 2)


@pytest.mark.parametrize(
    ("giver", "receiver", "message"),
    [("gm", "p2", "Only players"), ("p1", "gm", "Only players"), ("p1", "p1", "not to yourself")],
)
def test_the_gm_never_awards_or_receives_coolness(giver, receiver, message):
    """“The players, not the GM, can award each other bonus cards from the Coolness Pool”"""
    with pytest.raises(ochh.OneCanHaveHerError, match=message):
        ochh.award_coolness(_with_used_opposition(), giver=giver, receiver=receiver)


# --- storage ----------------------------------------------------------------------------------


def _stage(stage):
    g = table()
    if stage == "start":
        return g
    g = _round(g, 4)
    if stage == "notes":
        return ochh.hand_in_note(g, player_id="p2", rat=True).state
    g = to_bonus(g, rats=["p2"], die=1)
    if stage == "flipping":
        return ochh.flip_turn(g, conflict_id="r4-p2", rng=rng()).state
    return g if stage == "bonus" else finish_round(g)


@pytest.mark.parametrize("stage", ["start", "notes", "bonus", "flipping", "over"])
def test_the_game_round_trips_through_json(stage):
    """Reading: a stored game (a forum thread's state) reads back unchanged at every stage; the
    rules say nothing of storage.
    """
    g = _stage(stage)
    assert ochh.Game.from_dict(json.loads(json.dumps(g.to_dict()))) == g
