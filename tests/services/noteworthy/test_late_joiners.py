"""Noteworthy issue 17, item 2: a character added to the roster mid-turn, and the history's
three views (turn table, chart, standings) agreeing over the worked campaign.

The rules resolve a turn against the standings at its start; a character added later is in
none of them. The history is read three ways -- the turn-by-turn table, the SVG chart and
the standings table -- and all three must tell the same story of every character.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from jinja2 import Environment, FileSystemLoader

from pbp.models import Challenge, Character, Turn
from pbp.rules import noteworthy as nw
from pbp.services import campaigns
from pbp.services.noteworthy import history, hosted_blog, svg_chart, turns
from pbp.services.noteworthy import tally as tally_service
from tests.factories import make_campaign, make_characters
from tests.rules.noteworthy import worked_campaign as wc

T0 = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)
SVG = "{http://www.w3.org/2000/svg}"
TEMPLATES = Environment(
    loader=FileSystemLoader(Path(__file__).resolve().parents[3] / "templates"), autoescape=True
)


# -- the three views -------------------------------------------------------------------------


def table_view(h: history.History) -> dict[tuple[str, int], tuple[str, int, int]]:
    """(name, turn) -> (status cell, won, lost) as the turn-by-turn table prints them."""
    html = TEMPLATES.from_string(
        '{% from "history/_tables.html" import turns_grid %}{{ turns_grid(h) }}'
    ).render(h=h)
    cells = {}
    rows = re.findall(r'<tr><th scope="row">(.*?)</th>(.*?)</tr>', html, re.S)
    for name, row in rows:
        if name == "Active at the start":
            continue
        for turn, cell in zip(h.turns, re.findall(r"<td[^>]*>(.*?)</td>", row, re.S), strict=True):
            text = cell.strip()
            marks = re.search(r"W(\d+) L(\d+)", text)
            won, lost = (int(marks[1]), int(marks[2])) if marks else (0, 0)
            cells[name, turn.number] = (text.split("<")[0].strip(), won, lost)
    return cells


def chart_view(h: history.History) -> dict[tuple[str, int], tuple[str, int, int]]:
    """(name, turn) -> (status, won, lost) as the chart's cell tooltips say them."""
    root = ET.fromstring(svg_chart.standings_chart(h))
    cells = {}
    for title in root.iter(f"{SVG}title"):
        found = re.match(r"(.+), turn (\d+): (.*)", title.text or "")
        if not found:
            continue
        name, number, rest = found[1], int(found[2]), found[3]
        status = "—" if rest == "not in the game yet" else rest.split(" at the start")[0]
        marks = re.search(r"won (\d+), lost (\d+)", rest)
        won, lost = (int(marks[1]), int(marks[2])) if marks else (0, 0)
        cells[name, number] = (status, won, lost)
    return cells


def standings_view(h: history.History) -> dict[str, tuple[int, int]]:
    """name -> (won, lost) as the standings table prints them."""
    html = TEMPLATES.from_string(
        '{% from "history/_tables.html" import standings_table %}{{ standings_table(h) }}'
    ).render(h=h)
    rows = re.findall(r'<tr><th scope="row">(.*?)</th>(.*?)</tr>', html, re.S)
    totals = {}
    for name, row in rows:
        cells = re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
        totals[name] = (int(cells[3]), int(cells[4]))
    return totals


def assert_views_agree(h: history.History) -> dict[str, tuple[int, int]]:
    """The table and the chart show the same cell for everyone in every turn, and the
    standings' totals are the sums of those cells."""
    table, chart = table_view(h), chart_view(h)
    assert table == chart
    totals = standings_view(h)
    for person in h.characters:
        cells = [table[person.name, turn.number] for turn in h.turns]
        assert totals[person.name] == (sum(c[1] for c in cells), sum(c[2] for c in cells))
        for status, won, lost in cells:
            if status == "—":  # not in the game: no win or loss to show anywhere
                assert (won, lost) == (0, 0)
    return totals


# -- the worked campaign, resolved turn by turn ----------------------------------------------


def _resolved_rows(characters, turn_inputs):
    """Turn and Challenge rows as resolve_turn writes them, from the rules' own tallies."""
    turn_rows, challenge_rows = [], []
    standings = tuple(characters)
    for index, turn_input in enumerate(turn_inputs):
        result = nw.tally_turn(replace(turn_input, characters=standings))
        row = Turn(
            id=index + 1,
            campaign_id=1,
            number=turn_input.number,
            status="resolved",
            opened_at=turn_input.opens,
            resolved_at=turn_input.closes,
            start_standings={str(c.id): c.status.value for c in standings},
            result=turns.summarize(result),
        )
        turn_rows.append(row)
        for c in result.challenges:
            outcome = "invalid" if not c.valid else "withdrawn" if c.withdrawn else None
            challenge_rows.append(
                Challenge(
                    entry_id=c.entry_id,
                    turn_id=row.id,
                    challenger_id=c.challenger_id,
                    target_id=c.target_id,
                    made_at=c.made_at,
                    outcome=outcome or turns.OUTCOME_CODES.get(c.outcome, "invalid"),
                )
            )
        standings = result.standings
    status = {c.id: c.status.value for c in standings}
    if result.endgame.winner_id is not None:
        status[result.endgame.winner_id] = "winner"
    people = [
        Character(id=c.id, campaign_id=1, name=c.name, slug=c.name.lower(), status=status[c.id])
        for c in standings
    ]
    return people, turn_rows, challenge_rows


def test_history_table_chart_and_standings_agree_over_the_worked_campaign():
    """Noteworthy: “The loser becomes an outsider and is no longer able to advance.” Over the
    worked campaign the turn table, the chart and the standings give every character the same
    wins and losses (Ada: 3 challenges and the final)."""
    h = history.build_history(*_resolved_rows(wc.CHARACTERS, wc.TURNS))
    totals = assert_views_agree(h)
    assert totals["Ada"] == (3, 0)
    assert totals["Bram"] == (0, 1) and totals["Cyra"] == (2, 1)


def _with_a_joiner(ruled_valid: bool):
    """The worked campaign with Gwen added during turn 5: she challenges Fenn at once and
    Cyra supports her; her own note on Ada's challenge would break its 2-1."""
    gwen = nw.Character(7, "Gwen")
    five = wc.TURNS[4]
    challenge = wc.entry(590, 7, 5, "14:00", "Challenging", text="Target: Fenn")
    notes = (
        wc.note(5901, challenge, wc.CYRA, "15:00", "Support."),
        wc.note(5902, five.entries[-2], 7, "15:30", "Oppose."),  # on Ada's challenge
    )
    rulings = (nw.Ruling(nw.RulingKind.VALIDITY, 590, "valid", "Gwen was invited."),)
    five = replace(
        five,
        joined=(gwen,),
        entries=(*five.entries, challenge),
        notes=(*five.notes, *notes),
        rulings=five.rulings + (rulings if ruled_valid else ()),
    )
    return (*wc.TURNS[:4], five, *wc.TURNS[5:])


def test_a_joiner_in_the_worked_campaign_cannot_challenge_or_take_a_position():
    """Noteworthy: “you may challenge one PC per turn” -- a PC in the game. Gwen, added during
    turn 5, is not in that turn's standings: her challenge is invalid ("joined after the turn
    opened") and her note on Ada's challenge is ignored, so Ada still wins 2-1."""
    tallies = nw.run_campaign(wc.CHARACTERS, _with_a_joiner(ruled_valid=False))
    five = tallies[4]
    gwen = five.challenge_for(590)
    assert not gwen.valid and gwen.invalid_reason is nw.InvalidReason.JOINED_LATE
    assert gwen.invalid_reason.value == "joined after the turn opened"
    ada = five.challenge_for(501)
    assert ada.outcome is nw.Outcome.CHALLENGER_WINS and len(ada.opposers) == 1
    assert {i.note_id: i.reason for i in ada.ignored}[5902] is nw.IgnoreReason.JOINED_LATE
    assert five.status_of(wc.FENN) is nw.Status.ACTIVE
    assert five.status_of(7) is nw.Status.ACTIVE  # in the game from turn 6 on


@pytest.mark.parametrize("ruled_valid", [False, True])
def test_history_views_agree_with_a_joiner(ruled_valid):
    """Noteworthy: “The loser becomes an outsider and is no longer able to advance.” Whether
    the joiner's challenge is invalid or ruled valid, the turn table, the chart and the
    standings agree on her: no win shown in one view and hidden in another."""
    turn_inputs = _with_a_joiner(ruled_valid)
    people, turn_rows, challenge_rows = _resolved_rows(wc.CHARACTERS, turn_inputs)
    gwen = next(c for c in people if c.id == 7)
    for row in turn_rows[:5]:
        row.start_standings.pop("7", None)
    people = [c for c in people if c.id != 7] + [gwen]
    h = history.build_history(people, turn_rows, challenge_rows)
    totals = assert_views_agree(h)
    assert totals["Gwen"][0] == (1 if ruled_valid else 0)
    assert table_view(h)["Gwen", 5][0] == "joined"  # she made a challenge in it
    assert table_view(h)["Gwen", 4][0] == "—"


# -- through the services --------------------------------------------------------------------


@pytest.fixture
def game(db_session):
    campaign = make_campaign(db_session, settings={"opening_turns": 0})
    return campaign, make_characters(db_session, campaign, ("Ada", "Bram", "Cleo", "Dov"))


def test_a_character_added_mid_turn_cannot_challenge(db_session, game):
    """Noteworthy: “you may challenge one PC per turn” -- against the standings at the turn's
    start. Gwen, added after the event, challenges Bram with Cleo's support: her challenge is
    invalid and Bram stays in; the history shows no win for her anywhere."""
    campaign, (ada, bram, cleo, dov) = game
    turns.post_event(session=db_session, campaign=campaign, text="Fog.", actor=None, now=T0)
    gwen = campaigns.add_character(session=db_session, campaign=campaign, name="Gwen")
    duel = hosted_blog.store_entry(
        session=db_session,
        character=gwen,
        title="Bram must go",
        body_markdown="Bram is a fraud.",
        mood="Challenging",
        now=T0 + HOUR,
    )
    hosted_blog.store_note(
        session=db_session, entry=duel, author=cleo, body_markdown="Support", now=T0 + 2 * HOUR
    )
    turns.close_turn(session=db_session, campaign=campaign, actor=None, now=T0 + 5 * HOUR)
    _, result = turns.resolve_turn(
        session=db_session, campaign=campaign, actor=None, now=T0 + 6 * HOUR
    )
    challenge = result.challenge_for(duel.id)
    assert challenge.invalid_reason is nw.InvalidReason.JOINED_LATE
    db_session.refresh(bram)
    assert bram.status == "active"
    h = history.campaign_history(session=db_session, campaign=campaign)
    assert assert_views_agree(h)["Gwen"] == (0, 0)
    assert h.turns[0].bouts[0].outcome == "invalid"


def test_a_validity_ruling_lets_a_joiner_challenge(db_session, game):
    """Noteworthy: “If a PC's position is ambiguous, the referee's interpretation is final.”
    A validity ruling overrides "joined after the turn opened"; the joiner's notes on other
    challenges still take no position. The three history views agree on her win."""
    campaign, (ada, bram, cleo, dov) = game
    turn = turns.post_event(session=db_session, campaign=campaign, text="Fog.", actor=None, now=T0)
    gwen = campaigns.add_character(session=db_session, campaign=campaign, name="Gwen")
    duel = hosted_blog.store_entry(
        session=db_session,
        character=gwen,
        title="Bram must go",
        body_markdown="Bram is a fraud.",
        mood="Challenging",
        now=T0 + HOUR,
    )
    hosted_blog.store_note(
        session=db_session, entry=duel, author=cleo, body_markdown="Support", now=T0 + 2 * HOUR
    )
    turns.close_turn(session=db_session, campaign=campaign, actor=None, now=T0 + 5 * HOUR)
    turns.add_ruling(
        session=db_session,
        campaign=campaign,
        turn=turn,
        kind="validity",
        subject_id=duel.id,
        value="valid",
        reason="Invited before the event.",
        actor=None,
        now=T0 + 5 * HOUR,
    )
    assert (
        tally_service.tally(session=db_session, campaign=campaign, turn=turn)
        .challenge_for(duel.id)
        .valid
    )
    turns.resolve_turn(session=db_session, campaign=campaign, actor=None, now=T0 + 6 * HOUR)
    db_session.refresh(bram)
    assert bram.status == "outsider"
    h = history.campaign_history(session=db_session, campaign=campaign)
    assert assert_views_agree(h)["Gwen"] == (1, 0)
    assert table_view(h)["Gwen", 1][0] == "joined"
