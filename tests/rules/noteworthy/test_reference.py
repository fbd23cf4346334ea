"""The tally gives exactly the tally of the engine before its speed work (issue #19 item 4).

tests/rules/noteworthy/reference.py keeps the earlier note ordering, grouping and position
pass verbatim; the faster ones must not change a single field of any tally: positions,
ignored notes and their order, flags, fates, rulings applied, explanations. Turns are
generated with every kind of odd data the service can feed in: ties in time and arrival,
ids of mixed types, rulings on notes, fates, late and backdated notes, edits into and out
of Challenging, late joiners, finals.
"""

import random
import re
from dataclasses import replace
from datetime import timedelta

from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from pbp.rules.noteworthy import (
    Character,
    Entry,
    IgnoredNote,
    IgnoreReason,
    Note,
    Position,
    Revision,
    Ruling,
    RulingKind,
    Settings,
    Stance,
    Status,
    TurnInput,
    engine,
    read_stance,
    run_campaign,
    tally_turn,
)
from pbp.rules.noteworthy.model import ignored_note, note_of, position
from tests.bench.test_bench_tally import build_turn, in_service_order
from tests.rules.noteworthy import reference
from tests.rules.noteworthy import worked_campaign as wc

NUMBER = 5
START = wc.START
CLOSES = START + timedelta(hours=20, seconds=15)  # seconds: a late note in its minute
NAMES = ("Ada", "Bram", "Cyra", "Dov", "Esme", "Fenn", "Gil", "Hana")
TEXTS = (
    "Support",
    "Oppose!",
    "+1",
    "-1",
    "I support this.",
    "Hm.",
    "Support. -1",
    "Oppose. +1",
    "+1 -1",
    "Stance: oppose",
    "Current mood: Challenging",
)
DIFFERENTIAL = settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def minutes(n: int):
    return START + timedelta(minutes=n)


@st.composite
def differential_turns(draw):
    size = draw(st.integers(2, len(NAMES)))
    cast = tuple(
        Character(i + 1, NAMES[i], draw(st.sampled_from([Status.ACTIVE] * 5 + [Status.OUTSIDER])))
        for i in range(size)
    )
    joined = tuple(Character(50 + i, f"Late{i}") for i in range(draw(st.integers(0, 2))))
    ids = [c.id for c in cast]
    # Owners and authors: characters (also as text, as from a form), late joiners, nobody.
    odd_people = [str(i) for i in ids] + [c.id for c in joined] + [None, 99]
    # Mostly the cast, so most challenges are live and most notes take part in them.
    people = st.one_of(*[st.sampled_from(ids)] * 6, st.sampled_from(odd_people))
    entries = []
    for k in range(draw(st.integers(1, 6))):
        owner = draw(people)
        target = draw(st.sampled_from(NAMES[:size] * 3 + ("Nobody",)))
        mood = draw(st.sampled_from(["Challenging", "Challenging", "Calm", None]))
        revisions = ()
        if draw(st.booleans()):
            revisions = (
                Revision(
                    minutes(draw(st.integers(0, 1400))),
                    draw(st.sampled_from(["Challenging", "Calm", None])),
                ),
            )
        entries.append(
            Entry(
                id=draw(st.sampled_from([100 + k, f"e{k}"])),
                owner_id=owner,
                turn=draw(st.sampled_from([NUMBER] * 5 + [NUMBER - 1])),
                published=minutes(draw(st.integers(0, 120))),
                mood=mood,
                text=f"{target} and Ada" if draw(st.integers(0, 4)) == 0 else f"Target: {target}",
                revisions=revisions,
            )
        )
    entry_ids = [e.id for e in entries] * 4 + [str(e.id) for e in entries] + [12345]
    mixed_ids = draw(st.booleans())
    notes = []
    for _ in range(draw(st.integers(0, 80))):
        text = draw(st.sampled_from(TEXTS))
        stored = draw(st.sampled_from(["read", "read", "read", None, "oppose", "junk"]))
        seen = draw(st.sampled_from([None, None, 5, 900, 900]))
        # Anywhere in the turn, early (before edits into Challenging), or at the close and
        # the fair interval's end (late in the deadline's own minute).
        moment = draw(
            st.one_of(st.integers(0, 1300), st.integers(0, 40), st.sampled_from([180, 1200, 1200]))
        )
        note_id = 1000 + draw(st.integers(0, 200))  # duplicates happen
        if mixed_ids and draw(st.booleans()):
            note_id = f"n{note_id}"
        notes.append(
            Note(
                id=note_id,
                entry_id=draw(st.sampled_from(entry_ids)),
                author_id=draw(people),
                published=minutes(moment) + timedelta(seconds=draw(st.sampled_from([0, 30]))),
                text=text,
                stance=read_stance(text).stance if stored == "read" else stored,
                arrival=draw(st.integers(0, 3)),
                first_seen=None if seen is None else minutes(moment + seen),
                author_label=draw(st.sampled_from(["", "a visitor"])),
                fate=draw(st.sampled_from([None, None, None, "exiled to the moon"])),
            )
        )
    subjects = [n.id for n in notes] + [e.id for e in entries] + [None, "missing"]
    values = st.one_of(
        st.sampled_from([*ids, *(str(i) for i in ids), None, 99, True, False]),
        st.sampled_from(["support", "oppose", "none", "count", "ignore", "valid", "invalid"]),
        st.sampled_from(["withdrawn", "not withdrawn", "challenger", "target", "Calm"]),
    )
    rulings = tuple(
        Ruling(draw(st.sampled_from(RulingKind)), draw(st.sampled_from(subjects)), draw(values))
        for _ in range(draw(st.integers(0, 4)))
    )
    fair = draw(st.sampled_from([None, None, timedelta(hours=3)]))
    return TurnInput(
        number=NUMBER,
        closes=draw(st.sampled_from([CLOSES, CLOSES, None])),
        characters=cast,
        entries=tuple(entries),
        notes=tuple(notes),
        rulings=rulings,
        settings=Settings(fair_interval=fair, actions={"Calm": "rest"}),
        joined=joined,
    )


@DIFFERENTIAL
@given(turn=differential_turns())
def test_tally_equals_the_tally_before_the_speed_work(turn):
    """Noteworthy: “the PC's most recent note holds sway” -- and every other reading the
    engine makes: nothing in a tally may differ from the earlier engine's."""
    assert tally_turn(turn) == reference.tally_turn(turn)


def test_worked_campaign_tallies_equal_the_tallies_before_the_speed_work():
    """The worked campaign, turn by turn, gives the same tallies as before."""
    standings = wc.CHARACTERS
    for turn in wc.TURNS:
        turn = replace(turn, characters=standings)
        expected = reference.tally_turn(turn)
        assert tally_turn(turn) == expected
        standings = expected.standings
    assert run_campaign(wc.CHARACTERS, wc.TURNS)[-1].standings == standings


def _paths_taken(turn, tally) -> set[str]:
    """What the tally's challenges show of the paths the speed work changed."""
    stored = {n.id for n in turn.notes if isinstance(n.stance, Stance) and not n.fate}
    seen = set()
    for challenge in tally.challenges:
        reasons = [str(i.reason) for i in challenge.ignored]
        flags = [str(f.kind) for f in challenge.flags]
        counts = {
            "positions": len(challenge.supporters + challenge.opposers),
            "pending": len(challenge.pending),
            "superseded": reasons.count("superseded"),
            "ignored otherwise": len(reasons) - reasons.count("superseded"),
            "backdated": flags.count("backdated note"),
            "fates": len(challenge.fates),
        }
        seen.update(name for name, count in counts.items() if count >= 2)
        seen.update(reasons)
        late = [i for i in challenge.ignored if i.reason == "late" and i.note_id in stored]
        if any(re.search(r"\d\d:\d\d:\d\d[^,]*, after", i.explanation) for i in late):
            seen.add("late in the deadline's minute")
    return seen


def test_fixed_generated_turns_reach_the_changed_paths_and_tally_as_before():
    """The same comparison on fixed sets of generated turns, which must reach every path the
    speed work changed (several counted, superseded, ignored and backdated notes and fates in
    one challenge; each reason to ignore a note), or the comparison proves little.

    Which turns a seed gives can change with what else the process has imported (seen: the
    same seed reached "pending" alone and missed it after the service tests were collected),
    so up to five seeded sets are compared until every path has been reached.
    """
    several = {"positions", "pending", "superseded", "ignored otherwise", "backdated", "fates"}
    reasons = {"late", "challenger", "target", "outsider", "no position", "unmapped author"}
    seen: set[str] = set()

    for attempt in range(5):

        @seed(attempt)
        @settings(max_examples=300, deadline=None, database=None)
        @given(turn=differential_turns())
        def compare(turn):
            tally = tally_turn(turn)
            assert tally == reference.tally_turn(turn)
            seen.update(_paths_taken(turn, tally))

        compare()
        if several | reasons <= seen:
            break
    assert several | reasons <= seen


def test_a_late_note_in_the_deadlines_minute_is_worded_as_before():
    """Noteworthy: "After a turn ends, no PC may post notes on entries from past turns." A
    note 15 seconds after the close is late, and its words show seconds, as before."""
    cast = tuple(Character(i + 1, NAMES[i]) for i in range(4))
    challenge = Entry(100, 1, NUMBER, minutes(0), "Challenging", text="Target: Bram")
    notes = tuple(
        Note(1000 + k, 100, author, CLOSES + timedelta(seconds=15 * k), "+1", Stance.SUPPORT, k)
        for k, author in enumerate((3, 4, 3))
    )
    turn = TurnInput(NUMBER, CLOSES, cast, (challenge,), notes)
    tally = tally_turn(turn)
    assert tally == reference.tally_turn(turn)
    late = [i.explanation for i in tally.challenges[0].ignored if i.reason == "late"]
    closed = "after the turn closed at 2024-03-01 20:00:15 UTC."
    assert late == [
        f"Published 2024-03-01 20:00:30 UTC, {closed}",
        f"Published 2024-03-01 20:00:45 UTC, {closed}",
    ]


def test_fast_constructors_make_the_same_records_as_the_classes():
    """position, ignored_note and note_of set the slots directly: the records must equal
    (and hash like) the ones the classes make, with every field set."""
    moment = START + timedelta(minutes=3)
    pairs = [
        (
            position(3, 10, Stance.SUPPORT, moment, "Cyra supports."),
            Position(3, 10, Stance.SUPPORT, moment, "Cyra supports."),
        ),
        (
            ignored_note(10, None, IgnoreReason.LATE, "Late."),
            IgnoredNote(10, None, IgnoreReason.LATE, "Late."),
        ),
        (
            note_of(10, 100, 3, moment, "+1", Stance.SUPPORT, 10, moment, "Cyra", None),
            Note(10, 100, 3, moment, "+1", Stance.SUPPORT, 10, moment, "Cyra", None),
        ),
    ]
    for fast, made in pairs:
        assert fast.__class__ is made.__class__
        assert fast == made and hash(fast) == hash(made) and repr(fast) == repr(made)


@DIFFERENTIAL
@given(turn=differential_turns())
def test_notes_in_the_services_order_tally_as_before(turn):
    """The service passes notes by id, ids in arrival order: the order the engine's
    presorted path takes without sorting (whenever no note stops it)."""
    by_time = sorted(turn.notes, key=lambda note: note.published)
    notes = (replace(note, id=100 + i, arrival=100 + i) for i, note in enumerate(by_time))
    ordered = replace(turn, notes=tuple(notes))
    assert tally_turn(ordered) == reference.tally_turn(ordered)


def test_a_crowded_turn_in_the_services_order_takes_the_presorted_path():
    """The bench's crowded turn (small size), as the service passes it: grouped without a
    sort, and the same tally as before."""
    turn = in_service_order(build_turn(6, 300, random.Random(2004)))
    entries = sorted(turn.entries, key=lambda e: e.published)
    assert engine._presorted(turn.notes, entries) is not None
    assert tally_turn(turn) == reference.tally_turn(turn)
