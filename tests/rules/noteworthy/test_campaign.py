"""The worked campaign (tests/rules/noteworthy/worked_campaign.py), replayed turn by turn."""

from dataclasses import replace

import pytest

from pbp.rules.noteworthy import (
    EndgamePhase,
    FlagKind,
    IgnoreReason,
    InvalidReason,
    Outcome,
    Status,
    run_campaign,
    tally_turn,
)
from tests.rules.noteworthy import worked_campaign as wc


def _unread(turn):
    """The turn with no stance stored on its notes: the tally reads each note's text."""
    return replace(turn, notes=tuple(replace(note, stance=None) for note in turn.notes))


# Every campaign test runs twice: with the stance stored when each note arrived (what the
# service does) and with the tally reading the notes' text itself (its other path).
@pytest.fixture(scope="module", params=["stance stored at arrival", "stance read by the tally"])
def tallies(request):
    turns = wc.TURNS if request.param == "stance stored at arrival" else map(_unread, wc.TURNS)
    return run_campaign(wc.CHARACTERS, turns)


def ignored(tally, entry_id):
    return {i.note_id: i.reason for i in tally.challenge_for(entry_id).ignored}


def test_campaign_has_six_characters_and_at_least_eight_turns(tallies):
    """Noteworthy: “One referee and 6-24 players; playing time: weeks or months.”"""
    assert len(wc.CHARACTERS) == 6
    assert len(tallies) == len(wc.TURNS) >= 8


@pytest.mark.parametrize("turn", range(1, len(wc.TURNS) + 1))
def test_campaign_standings_after_every_turn(tallies, turn):
    """Noteworthy: “The loser becomes an outsider and is no longer able to advance.”"""
    tally = tallies[turn - 1]
    outsiders = {c.id for c in tally.standings if c.status is Status.OUTSIDER}
    assert tally.turn == turn
    assert outsiders == wc.EXPECTED_OUTSIDERS[turn - 1]
    assert tally.endgame.phase is wc.EXPECTED_PHASES[turn - 1]
    assert tally.complete


def test_campaign_turn1_early_challenge_invalid_and_missing_mood(tallies):
    """Noteworthy: “No challenges are permitted in the first two turns of the game.”"""
    tally = tallies[0]
    assert tally.challenge_for(101).invalid_reason is InvalidReason.OPENING_TURNS
    assert [f.entry_id for f in tally.flags if f.kind is FlagKind.MISSING_MOOD] == [150]
    assert not tally.provocation.recommended


def test_campaign_turn2_action_mood(tallies):
    """Noteworthy: “The referee may define other game actions appropriate to the setting”."""
    assert [(a.entry_id, a.action) for a in tallies[1].actions] == [(201, "Plot a scheme")]


def test_campaign_turn3_withdrawal(tallies):
    """Noteworthy: “You may withdraw your challenge before the end of a turn, but that still
    counts as your challenge for that turn. A withdrawn challenge has no effect.”"""
    challenge = tallies[2].challenge_for(301)
    assert challenge.withdrawn and challenge.outcome is Outcome.NO_EFFECT
    assert not tallies[2].provocation.recommended


def test_campaign_turn4_provocation_despite_a_challenging_note(tallies):
    """Noteworthy: “After the first two turns, if no PC makes a challenge in a turn, the
    referee should use a later turn's event to provoke a direct conflict and consequent
    challenges among at least two named PCs.”"""
    assert tallies[3].provocation.recommended
    assert [f.kind for f in tallies[3].flags] == [FlagKind.CHALLENGE_IN_NOTE]


def test_campaign_turn5_late_note_superseded_note_and_target_ruling(tallies):
    """Noteworthy: “notes are permitted only on the current turn's entries.”"""
    tally = tallies[4]
    assert ignored(tally, 501) == {5005: IgnoreReason.LATE, 5002: IgnoreReason.SUPERSEDED}
    assert tally.challenge_for(501).outcome is Outcome.CHALLENGER_WINS
    dov = tally.challenge_for(502)
    assert dov.target_id == wc.ESME and dov.target.candidates == (wc.ESME,)
    assert (len(dov.supporters), len(dov.opposers)) == (2, 2)
    assert dov.outcome is Outcome.TARGET_WINS
    assert [(f.text, f.allowed) for f in dov.fates] == [("Esme is exiled to the hills.", True)]


def test_campaign_turn5_without_the_ruling_needs_one(tallies):
    """Noteworthy: “The challenger's entry must name exactly one target PC as the target of
    the challenge.”"""
    turn = replace(wc.TURNS[4], characters=tallies[3].standings, rulings=())
    tally = tally_turn(turn)
    assert tally.challenge_for(502).target.candidates == (wc.ESME, wc.FENN)
    assert tally.challenge_for(502).outcome is Outcome.NEEDS_RULING
    assert not tally.complete
    assert tally.status_of(wc.DOV) is Status.ACTIVE


def test_campaign_turn6_mutual_challenge_and_outsiders_note(tallies):
    """Noteworthy: “If two PCs are challenging each other, you cannot support both sides.”"""
    tally = tallies[5]
    assert ignored(tally, 601) == {6003: IgnoreReason.BOTH_SIDES, 6005: IgnoreReason.OUTSIDER}
    assert [p.character_id for p in tally.challenge_for(601).supporters] == [wc.ADA]
    esme = tally.challenge_for(602)
    assert [p.character_id for p in esme.supporters] == [wc.FENN]
    assert [p.character_id for p in esme.opposers] == [wc.ADA]
    assert esme.outcome is Outcome.TARGET_WINS


def test_campaign_turn7_outsider_cannot_oppose(tallies):
    """Noteworthy: “An outsider still posts entries and notes normally, but cannot support or
    oppose challenges.”"""
    assert ignored(tallies[6], 701) == {7002: IgnoreReason.OUTSIDER}
    assert set(tallies[6].endgame.finalists) == {wc.ADA, wc.CYRA}


def test_campaign_turn8_final_tie_broken_by_the_referee(tallies):
    """Noteworthy: “After a fair interval the referee totals the votes and resolves the
    challenge normally; the winner of the challenge wins the game.”"""
    tally = tallies[7]
    votes = {side.finalist_id: len(side.votes) for side in tally.final.sides}
    assert votes == {wc.ADA: 2, wc.CYRA: 2}
    assert tally.final.winner_id == tally.endgame.winner_id == wc.WINNER
    assert tally.rulings[0].applied
    unruled = tally_turn(replace(wc.TURNS[7], characters=tallies[6].standings, rulings=()))
    assert unruled.endgame.phase is EndgamePhase.NEEDS_RULING
