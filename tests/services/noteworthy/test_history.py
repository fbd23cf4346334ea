"""Standings and history, and the SVG chart drawn from them.

`play_campaign` plays three turns through the real services; the export and web tests
use it too.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

import pytest
import sqlalchemy as sa

from pbp.models import Campaign, Character, Entry
from pbp.services import campaigns
from pbp.services.noteworthy import history, hosted_blog, svg_chart, turns
from tests.factories import make_campaign, make_characters

DAY = timedelta(days=1)
HOUR = timedelta(hours=1)
T0 = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)
HOSTILE = '<script>alert("x")</script> Fay'
SVG = "{http://www.w3.org/2000/svg}"


@dataclass
class Game:
    campaign: Campaign
    chars: dict[str, Character]
    entries: dict[str, Entry]


def _entry(session, who, title, body, mood, at):
    return hosted_blog.store_entry(
        session=session, character=who, title=title, body_markdown=body, mood=mood, now=at
    )


def _note(session, entry, who, body, at, stance=None, fate=None):
    return hosted_blog.store_note(
        session=session,
        entry=entry,
        author=who,
        body_markdown=body,
        now=at,
        stance=stance,
        fate=fate,
    )


def _finish(session, campaign, opened, consequences=None):
    turns.close_turn(session=session, campaign=campaign, actor=None, now=opened + DAY / 2)
    turns.resolve_turn(
        session=session,
        campaign=campaign,
        actor=None,
        now=opened + DAY / 2,
        consequences=consequences,
    )


def play_campaign(session, name: str = "The Long Night", referee=None) -> Game:
    """A prologue before any turn. Turn 1: Ada beats Bram (2 for, 1 against). Turn 2:
    Cleo challenges Ada and loses on a 0-0 tie. Turn 3: open, one quiet entry. A player
    named `HOSTILE` writes a note."""
    campaign = make_campaign(session, name=name, referee=referee, settings={"opening_turns": 0})
    ada, bram, cleo, dov, eli, fay = make_characters(
        session, campaign, ("Ada", "Bram", "Cleo", "Dov", "Eli", HOSTILE)
    )
    chars = {"ada": ada, "bram": bram, "cleo": cleo, "dov": dov, "eli": eli, "fay": fay}
    prologue = _entry(session, eli, "Before it all", "Quiet days.", "Nostalgic", T0 - HOUR)
    turns.post_event(
        session=session,
        campaign=campaign,
        text="A body in the canal.\n\nNobody saw a thing.",
        actor=None,
        now=T0,
        tailored=[turns.Tailored(ada.id, "addition", "You saw <b>Bram</b> there.")],
    )
    duel = _entry(session, ada, "I challenge Bram", "Bram is a fraud.", "Challenging", T0 + HOUR)
    for who, stance in ((cleo, "support"), (dov, "support"), (eli, "oppose")):
        _note(session, duel, who, "So.", T0 + 2 * HOUR, stance=stance)
    _note(session, duel, fay, "How dramatic.", T0 + 3 * HOUR, fate="Bram sails <i>away</i>.")
    reply = _entry(
        session,
        bram,
        "Lies",
        "See [my map](map.html), [the docks](/docks) and [the paper](https://example.com/x).",
        "Defiant",
        T0 + 2 * HOUR,
    )
    _finish(session, campaign, T0, {duel.id: "Bram is exiled <b>forever</b>."})

    t2 = T0 + DAY
    turns.post_event(
        session=session, campaign=campaign, text="The mayor falls.", actor=None, now=t2
    )
    revenge = _entry(session, cleo, "I challenge Ada", "Ada must fall.", "Challenging", t2 + HOUR)
    _finish(session, campaign, t2)

    t3 = T0 + 2 * DAY
    turns.post_event(session=session, campaign=campaign, text="Fog.", actor=None, now=t3)
    quiet = _entry(session, dov, "Quiet", "Nothing to see.", "Watchful", t3 + HOUR)
    session.flush()
    entries = {
        "prologue": prologue,
        "duel": duel,
        "reply": reply,
        "revenge": revenge,
        "quiet": quiet,
    }
    return Game(campaign, chars, entries)


def grow(session, game: Game, characters: int = 4, more_turns: int = 3) -> None:
    """More characters and more turns: what a query count must not notice."""
    t = T0 + 2 * DAY
    _finish(session, game.campaign, t)
    for k in range(characters):
        campaigns.add_character(session=session, campaign=game.campaign, name=f"Extra {k}")
    for n in range(more_turns):
        t += DAY
        turns.post_event(session=session, campaign=game.campaign, text="More.", actor=None, now=t)
        _entry(session, game.chars["eli"], f"Day {n}", "Still here.", "Tired", t + HOUR)
        _finish(session, game.campaign, t)
    session.flush()


@contextmanager
def count_selects(engine):
    """The SELECT statements sent to the database inside the block."""
    seen: list[str] = []

    def listen(_conn, _cursor, statement, *_args):
        if statement.lstrip().upper().startswith("SELECT"):
            seen.append(statement)

    sa.event.listen(engine, "before_cursor_execute", listen)
    try:
        yield seen
    finally:
        sa.event.remove(engine, "before_cursor_execute", listen)


@pytest.fixture
def game(db_session) -> Game:
    return play_campaign(db_session)


def test_standings_follow_the_turns(db_session, game):
    story = history.campaign_history(session=db_session, campaign=game.campaign)
    c = game.chars
    one, two, three = story.turns
    assert [t.number for t in story.turns] == [1, 2, 3]
    assert one.standings[c["ada"].id].won == 1 and one.standings[c["ada"].id].made == 1
    bram = one.standings[c["bram"].id]
    assert (bram.status, bram.status_after, bram.received, bram.lost) == (
        "active",
        "outsider",
        1,
        1,
    )
    assert two.standings[c["bram"].id].status == "outsider"
    cleo = two.standings[c["cleo"].id]
    assert (cleo.made, cleo.lost, cleo.status_after) == (1, 1, "outsider")
    assert two.standings[c["ada"].id].won == 1 and two.standings[c["ada"].id].received == 1
    assert three.status == "open" and three.standings[c["dov"].id].status_after is None
    assert [t.active for t in story.turns] == [6, 5, 4]


def test_bouts_carry_counts_outcomes_and_consequences(db_session, game):
    story = history.campaign_history(session=db_session, campaign=game.campaign)
    (duel,) = story.turns[0].bouts
    assert (duel.supporters, duel.opposers, duel.outcome) == (2, 1, "challenger")
    assert duel.winner_id == game.chars["ada"].id and duel.loser_id == game.chars["bram"].id
    assert duel.consequence == "Bram is exiled <b>forever</b>."
    (revenge,) = story.turns[1].bouts
    assert revenge.outcome == "target" and revenge.winner_id == game.chars["ada"].id
    assert story.turns[0].eliminated == (game.chars["bram"].id,)


def test_totals_and_order_read_as_a_staircase(db_session, game):
    story = history.campaign_history(session=db_session, campaign=game.campaign)
    names = [p.name for p in story.characters]
    # Active characters first (by name), then outsiders from the latest to fall.
    assert names == [HOSTILE, "Ada", "Dov", "Eli", "Cleo", "Bram"]
    ada = next(t for t in story.totals if t.person.name == "Ada")
    assert (ada.made, ada.received, ada.won, ada.lost, ada.outsider_from) == (1, 1, 2, 0, None)
    falls = {t.person.name: t.outsider_from for t in story.totals}
    assert falls["Bram"] == 1 and falls["Cleo"] == 2
    assert story.name(game.chars["cleo"].id) == "Cleo" and story.name(None) == "(nobody)"


def test_history_reads_three_queries_whatever_the_size(db_session, engine, game):
    with count_selects(engine) as small:
        history.campaign_history(session=db_session, campaign=game.campaign)
    grow(db_session, game)
    with count_selects(engine) as big:
        story = history.campaign_history(session=db_session, campaign=game.campaign)
    assert len(story.turns) == 6 and len(story.characters) == 10
    assert len(small) == len(big) == 3


def _turn(number, standings, result=None, status="resolved", turn_id=None):
    return SimpleNamespace(
        id=turn_id or number,
        number=number,
        status=status,
        opened_at=T0 + number * DAY,
        resolved_at=T0 + number * DAY if status == "resolved" else None,
        start_standings=standings,
        result=result or {},
    )


def test_final_counts_as_a_win_and_a_loss_and_late_joiners_are_absent():
    people = [
        SimpleNamespace(id=i, name=n, slug=n.lower(), status=s)
        for i, n, s in ((1, "Ann", "winner"), (2, "Ben", "outsider"), (3, "Cy", "outsider"),
                        (4, "Di", "active"))
    ]  # fmt: skip
    final = {"endgame": {"phase": "won", "winner_id": 1}, "eliminated": [2]}
    story = history.build_history(
        people,
        [_turn(7, {"1": "active", "2": "active", "3": "outsider"}, final)],
        [],
    )
    (turn,) = story.turns
    assert turn.winner_id == 1
    assert turn.standings[1] == history.Standing("active", "winner", 0, 0, 1, 0)
    assert turn.standings[2] == history.Standing("active", "outsider", 0, 0, 0, 1)
    assert turn.standings[3].status_after == "outsider" and turn.standings[3].lost == 0
    assert turn.standings[4].status is None  # joined after the turn opened
    assert [p.name for p in story.characters][0] == "Ann"


def test_turns_without_a_snapshot_carry_the_previous_standings():
    people = [SimpleNamespace(id=1, name="Ann", slug="ann", status="outsider")]
    challenge = SimpleNamespace(
        turn_id=1,
        entry_id=9,
        challenger_id=1,
        target_id=5,
        outcome="target",
        consequence=None,
    )
    story = history.build_history(people, [_turn(1, {}), _turn(2, {})], [challenge])
    first, second = story.turns
    assert first.standings[1].status == "active" and first.standings[1].status_after == "outsider"
    assert second.standings[1].status == "outsider"


# --- the chart ----------------------------------------------------------------------------


def _svg(text: str) -> ET.Element:
    return ET.fromstring(text)  # fails on anything not well-formed, an unescaped name first


def test_chart_is_an_accessible_image(db_session, game):
    story = history.campaign_history(session=db_session, campaign=game.campaign)
    root = _svg(svg_chart.standings_chart(story, title="Standings", id_prefix="c1"))
    assert root.get("role") == "img"
    assert root.get("aria-labelledby") == "c1-title c1-desc"
    assert root.find(f"{SVG}title").get("id") == "c1-title"
    desc = root.find(f"{SVG}desc")
    assert desc.get("id") == "c1-desc"
    assert "6 characters over 3 turns" in desc.text and "Bram: outsider since turn 1" in desc.text
    cells = [t.text for t in root.iter(f"{SVG}title")]
    assert any(t.startswith("Bram, turn 1: active at the start") and "outsider after" in t
               for t in cells)  # fmt: skip


def test_chart_marks_wins_and_losses_with_glyphs(db_session, game):
    story = history.campaign_history(session=db_session, campaign=game.campaign)
    text = svg_chart.standings_chart(story)
    cells = [g for g in _svg(text).iter(f"{SVG}g") if g.get("class") == "cell"]
    assert len(cells) == 6 * (3 + 1)  # three turns and the standing now
    marks = [t.text for g in cells for t in g.iter(f"{SVG}text")]
    assert sorted(marks) == ["▲", "▲", "✕", "✕"]  # Ada twice; Bram and Cleo once each


def test_chart_escapes_every_name(db_session, game):
    story = history.campaign_history(session=db_session, campaign=game.campaign)
    text = svg_chart.standings_chart(story, title='Standings of <b>"Noir"</b>')
    assert "<script" not in text and "<b>" not in text
    assert "&lt;script&gt;" in text
    labels = "".join(_svg(text).itertext())
    assert HOSTILE in labels  # shown as text, not run


def test_empty_history_still_draws_a_labelled_chart():
    root = _svg(svg_chart.standings_chart(history.History((), (), ())))
    assert root.find(f"{SVG}desc").text == "No turns have been played yet."
