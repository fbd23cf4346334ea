"""Benchmark: tally a crowded Noteworthy turn (prints figures, asserts only correctness).

Full size: 24 characters, 24 challenges (half of them in mutual pairs), 5,000 notes whose
stances were read on arrival. What is timed is the pure rules, ``tally_turn`` (the service
builds its input from five queries first; see pbp/services/tally.py). Its target is an
instruction count, which holds on any machine: at most 30 M instructions in the service's
order (tests/bench/test_bench_instructions.py; an open turn is tallied on every planet,
character and entry view). The times here are printed beside their baseline.
The baseline in the same run is the engine before that speed work, kept verbatim in
tests/rules/noteworthy/reference.py (its tallies must be equal, and are asserted so here);
the runs of the two alternate, so a busy machine slows both alike. The baseline shares the
engine's record classes, so it got faster too when Position and IgnoredNote became named
tuples: the ratio understates the gain (a run of the commit before #19's work on the
same machine is the fair comparison). A plain loop that only
counts support is printed as the floor. The notes come shuffled, the worst case for the
engine's sorts; the service passes them in id order, and ids follow arrival, which mostly
follows publication: the same notes in that order are timed too (``in the service's
order``). ``PBP_BENCH_SCALE=small`` gives a quick smoke size for CI. Run with::

    pytest tests/bench/test_bench_tally.py -o addopts="" -s
"""

import os
import random
import statistics
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from pbp.rules.noteworthy import (
    Character,
    Entry,
    Note,
    Stance,
    TurnInput,
    read_stance,
    tally_turn,
)
from tests.rules.noteworthy import reference as noteworthy_reference

# Full size: 101 alternating runs each (about 1.3 s): a median of 21 (0.25 s) moved by 10%
# when the machine had a busy moment, as right after the poll benchmark's 20,000 feeds.
SCALES = {"full": (24, 5_000, 101), "small": (6, 300, 3)}
START = datetime(2024, 3, 1, tzinfo=UTC)
CLOSES = START + timedelta(hours=23)
TEXTS = ("Support.", "Oppose!", "+1", "-1", "I support this.", "How dramatic.", "Support. -1")


def _scale() -> tuple[int, int, int]:
    return SCALES[os.environ.get("PBP_BENCH_SCALE", "full")]


def _targets(size: int) -> list[int]:
    """Half the characters challenge each other in pairs; the rest challenge in a ring."""
    half = size // 2 - (size // 2) % 2
    targets = [k ^ 1 for k in range(half)]
    ring = list(range(half, size))
    targets += [ring[(i + 1) % len(ring)] for i in range(len(ring))]
    return targets


def build_turn(size: int, note_count: int, rng: random.Random) -> TurnInput:
    characters = tuple(Character(k, f"Hero{k:02d}") for k in range(size))
    entries = tuple(
        Entry(
            id=100 + k,
            owner_id=k,
            turn=5,
            published=START + timedelta(minutes=k),
            mood="Challenging",
            text=f"Target: Hero{target:02d}",
        )
        for k, target in enumerate(_targets(size))
    )
    readings = {text: read_stance(text).stance for text in TEXTS}
    notes = []
    for index in range(note_count):
        text = rng.choice(TEXTS)
        author = rng.randrange(size) if rng.random() > 0.02 else None
        notes.append(
            Note(
                id=10_000 + index,
                entry_id=rng.choice(entries).id,
                author_id=author,
                published=START + timedelta(minutes=30 + rng.randrange(23 * 60)),
                text=text,
                stance=readings[text],
                arrival=index,
                author_label="" if author is not None else "anonymous",
            )
        )
    rng.shuffle(notes)
    return TurnInput(5, CLOSES, characters, entries, tuple(notes))


def in_service_order(turn: TurnInput) -> TurnInput:
    """The same notes as the tally service passes them: by id, ids given in arrival order,
    and (as a comment feed is polled) arrival in publication order."""
    by_time = sorted(turn.notes, key=lambda note: (note.published, note.id))
    notes = tuple(
        replace(note, id=10_000 + index, arrival=10_000 + index)
        for index, note in enumerate(by_time)
    )
    return replace(turn, notes=notes)


def count_supporting_notes(notes) -> dict:
    """The plain loop the tally is compared with: count support per entry, nothing more."""
    counts: dict = {}
    for note in notes:
        if note.stance is Stance.SUPPORT:
            counts[note.entry_id] = counts.get(note.entry_id, 0) + 1
    return counts


def _alternating_ms(functions, argument, runs: int, clock) -> list[list[float]]:
    """Each function's timings, the functions taking turns run by run."""
    timings = [[] for _ in functions]
    for _ in range(runs):
        for function, found in zip(functions, timings, strict=True):
            start = clock()
            function(argument)
            found.append((clock() - start) * 1000)
    return timings


def test_bench_tally_crowded_turn():
    size, note_count, runs = _scale()
    turn = build_turn(size, note_count, random.Random(2004))
    tally = tally_turn(turn)

    assert len(tally.challenges) == size
    assert all(c.valid and not c.withdrawn for c in tally.challenges)
    accounted = sum(
        len(c.supporters) + len(c.opposers) + len(c.pending) + len(c.ignored)
        for c in tally.challenges
    )
    assert accounted == note_count
    assert tally == noteworthy_reference.tally_turn(turn)
    ordered = in_service_order(turn)
    assert tally_turn(ordered) == noteworthy_reference.tally_turn(ordered)

    # CPU time is the headline: the machine is shared, and wall time counts other processes.
    # The fastest run shows what the code costs when nothing else competes for the CPU.
    lines = [
        f"\nNoteworthy tally: {size} characters, {size} challenges, {note_count} notes; "
        f"{runs} runs each"
    ]
    functions = (tally_turn, noteworthy_reference.tally_turn)
    for label, clock in (("CPU time", time.process_time), ("wall time", time.perf_counter)):
        tally_runs, before_runs = _alternating_ms(functions, turn, runs, clock)
        (loop_runs,) = _alternating_ms((count_supporting_notes,), turn.notes, runs, clock)
        ordered_runs, ordered_before = _alternating_ms(functions, ordered, runs, clock)
        tally_ms, before_ms = statistics.median(tally_runs), statistics.median(before_runs)
        ordered_ms = statistics.median(ordered_runs)
        lines.append(
            f"  {label:9}: tally_turn median {tally_ms:6.2f} ms (fastest {min(tally_runs):.2f});"
            f" before #19 {before_ms:6.2f} ms (fastest {min(before_runs):.2f});"
            f" ratio {tally_ms / before_ms:4.2f} x; plain counting loop"
            f" {statistics.median(loop_runs):4.2f} ms\n"
            f"  {'':9}  in the service's order: tally_turn median {ordered_ms:6.2f} ms;"
            f" before #19 {statistics.median(ordered_before):6.2f} ms;"
            f" ratio {ordered_ms / statistics.median(ordered_before):4.2f} x"
        )
    print("\n".join(lines))
