"""Hypothesis properties of the tally: order-free, deaf to ineligible notes, fair on ties."""

from dataclasses import replace
from datetime import timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from pbp.rules.noteworthy import (
    Character,
    Entry,
    Note,
    Outcome,
    Revision,
    Ruling,
    RulingKind,
    Stance,
    Status,
    TurnInput,
    read_stance,
    tally_turn,
)
from tests.rules.noteworthy.worked_campaign import START

# Timing is the benchmark's business; a loaded CI machine must not fail a property.
PROPERTY = settings(deadline=None)

NAMES = ("Ada", "Bram", "Cyra", "Dov", "Esme", "Fenn", "Gil", "Hana", "Ivo", "Jun")
TEXTS = ("Support", "Oppose", "+1", "-1", "I support this.", "Hm.", "Support. -1", "Stance: oppose")
CLOSES = START + timedelta(hours=20)
NUMBER = 5


def minutes(n: int):
    return START + timedelta(minutes=n)


@st.composite
def casts(draw, min_active=3):
    size = draw(st.integers(min_active, len(NAMES)))
    active = draw(st.lists(st.booleans(), min_size=size, max_size=size))
    active[:min_active] = [True] * min_active
    order = draw(st.permutations(range(size)))
    return tuple(
        Character(i + 1, NAMES[i], Status.ACTIVE if active[k] else Status.OUTSIDER)
        for k, i in enumerate(order)
    )


@st.composite
def challenge_entries(draw, cast):
    ids = [c.id for c in cast]
    pairs = draw(
        st.lists(st.tuples(st.sampled_from(ids), st.sampled_from(ids)), min_size=1, max_size=6)
    )
    names = {c.id: c.name for c in cast}
    return [
        Entry(
            id=100 + k,
            owner_id=challenger,
            turn=NUMBER,
            published=minutes(k),
            mood="Challenging",
            text=f"Target: {names[target]}",
        )
        for k, (challenger, target) in enumerate(pairs)
    ]


@st.composite
def turns(draw, min_active=3):
    """A turn past the opening turns with challenges and notes at distinct times."""
    cast = draw(casts(min_active))
    entries = draw(challenge_entries(cast))
    count = draw(st.integers(0, 40))
    times = draw(st.lists(st.integers(0, 1300), min_size=count, max_size=count, unique=True))
    authors = st.one_of(st.none(), st.integers(1, len(cast) + 1))
    notes = []
    for index, moment in enumerate(times):
        text = draw(st.sampled_from(TEXTS))
        seen = draw(st.sampled_from([None, 5, 200]))
        notes.append(
            Note(
                id=1000 + index,
                entry_id=draw(st.sampled_from(entries)).id,
                author_id=draw(authors),
                published=minutes(moment),
                text=text,
                stance=read_stance(text).stance,
                arrival=draw(st.integers(0, 5)),
                first_seen=None if seen is None else minutes(moment + seen),
            )
        )
    return TurnInput(NUMBER, CLOSES, cast, tuple(entries), tuple(notes))


def outcomes(tally):
    return (
        [(c.entry_id, c.outcome) for c in tally.challenges],
        tally.standings,
        tally.final and tally.final.winner_id,
    )


@PROPERTY
@given(data=st.data())
def test_property_reordering_notes_with_distinct_times_never_changes_the_tally(data):
    """Noteworthy: “the PC's most recent note holds sway.” Only the notes' times decide, never
    the order the service happens to list them in."""
    turn = data.draw(turns())
    shuffled = data.draw(st.permutations(turn.notes))
    reversed_entries = tuple(reversed(turn.entries))
    assert tally_turn(replace(turn, notes=tuple(shuffled), entries=reversed_entries)) == (
        tally_turn(turn)
    )


@PROPERTY
@given(data=st.data())
def test_property_a_note_by_an_ineligible_character_never_changes_an_outcome(data):
    """Noteworthy: “Each PC still in the game (except the challenger and target) may, if he or
    she wishes, note clear support or opposition to the challenge.”"""
    turn = data.draw(turns())
    before = tally_turn(turn)
    challenge = data.draw(st.sampled_from(before.challenges))
    outsiders = [c.id for c in turn.characters if not c.active]
    unmapped = [None, 999]
    authors = [challenge.challenger_id, challenge.target_id, *outsiders, *unmapped]
    extra = Note(
        id=5000,
        entry_id=challenge.entry_id,
        author_id=data.draw(st.sampled_from(authors)),
        published=minutes(data.draw(st.integers(0, 1300))),
        text=(text := data.draw(st.sampled_from(TEXTS))),
        stance=read_stance(text).stance,
        arrival=data.draw(st.integers(0, 5)),
    )
    after = tally_turn(replace(turn, notes=(*turn.notes, extra)))
    assert outcomes(after) == outcomes(before)


@PROPERTY
@given(turn=turns())
def test_property_supporters_and_opposers_are_disjoint_eligible_and_unique(turn):
    """Noteworthy: “If a PC notes both support and opposition to the challenge, the PC's most
    recent note holds sway.” So each eligible character counts at most once per challenge."""
    active = {c.id for c in turn.characters if c.active}
    for challenge in tally_turn(turn).challenges:
        counted = [p.character_id for p in challenge.supporters + challenge.opposers]
        counted += [p.character_id for p in challenge.pending]
        assert len(counted) == len(set(counted))
        assert set(counted) <= active - {challenge.challenger_id, challenge.target_id}
        if not challenge.live:
            assert counted == []


def winners_over_readings(supporters: int, opposers: int, pending: int) -> set[Outcome]:
    """Who wins under every reading of the pending positions, worked out from the rules text
    alone: each ambiguous note may be read as support, opposition or neither."""
    found = set()
    for extra_support in range(pending + 1):
        for extra_oppose in range(pending - extra_support + 1):
            s, o = supporters + extra_support, opposers + extra_oppose
            found.add(Outcome.CHALLENGER_WINS if s > o else Outcome.TARGET_WINS)
    return found


def expected_outcome(supporters: int, opposers: int, pending: int) -> Outcome:
    winners = winners_over_readings(supporters, opposers, pending)
    return winners.pop() if len(winners) == 1 else Outcome.NEEDS_RULING


@PROPERTY
@given(turn=turns())
def test_property_a_tie_always_goes_to_the_target(turn):
    """Noteworthy: “The majority wins; ties favor the target.” Every live challenge with a
    target is checked, undecided ones and ones with ambiguous notes included: the outcome is
    decided exactly when every reading of the ambiguous notes gives the same winner."""
    for challenge in tally_turn(turn).challenges:
        if not challenge.live or challenge.target_id is None:
            assert challenge.outcome in (Outcome.NO_EFFECT, Outcome.NEEDS_RULING)
            continue
        counts = len(challenge.supporters), len(challenge.opposers), len(challenge.pending)
        assert challenge.outcome is expected_outcome(*counts)


@PROPERTY
@given(supporters=st.integers(0, 12), opposers=st.integers(0, 12), ambiguous=st.integers(0, 12))
def test_property_ambiguous_notes_decide_only_when_every_reading_agrees(
    supporters, opposers, ambiguous
):
    """Noteworthy: “If a PC's position is ambiguous, the referee's interpretation is final.”
    Any counts and any number of ambiguous notes: the tally names a winner only when every
    reading of the ambiguous notes gives that winner, and otherwise waits for a ruling."""
    size = 3 + supporters + opposers + ambiguous  # a silent third: two would be a final
    cast = tuple(Character(i, f"C{i}") for i in range(1, size + 1))
    texts = ["Support"] * supporters + ["Oppose"] * opposers + ["Support. -1"] * ambiguous
    challenge = Entry(1, 1, NUMBER, START, "Challenging", "", "Target: C2")
    notes = tuple(
        Note(10 + i, 1, 3 + i, minutes(i + 1), text, read_stance(text).stance)
        for i, text in enumerate(texts)
    )
    tally = tally_turn(TurnInput(NUMBER, CLOSES, cast, (challenge,), notes))
    result = tally.challenges[0]
    assert (len(result.supporters), len(result.opposers)) == (supporters, opposers)
    assert len(result.pending) == ambiguous
    assert result.outcome is expected_outcome(supporters, opposers, ambiguous)
    if result.outcome is Outcome.NEEDS_RULING:
        assert all(c.active for c in tally.standings)


@PROPERTY
@given(cast=casts(min_active=4), data=st.data())
def test_property_equal_support_and_opposition_is_a_target_win(cast, data):
    """Noteworthy: “The majority wins; ties favor the target.” (zero-zero included)."""
    challenger, target, *others = [c for c in cast if c.active]
    voters = data.draw(st.permutations(others))
    half = data.draw(st.integers(0, len(voters) // 2))
    challenge = Entry(1, challenger.id, NUMBER, START, "Challenging", "", f"Target: {target.name}")
    notes = tuple(
        Note(10 + i, 1, voter.id, minutes(i + 1), stance=read_stance(text).stance)
        for i, (voter, text) in enumerate(
            [(v, "Support") for v in voters[:half]] + [(v, "Oppose") for v in voters[half:][:half]]
        )
    )
    tally = tally_turn(TurnInput(NUMBER, CLOSES, cast, (challenge,), notes))
    result = tally.challenges[0]
    assert len(result.supporters) == len(result.opposers) == half
    assert result.outcome is Outcome.TARGET_WINS
    assert tally.status_of(challenger.id) is Status.OUTSIDER


MOODS = st.one_of(st.none(), st.sampled_from(["Challenging", "Calm", "", "challenging!!", "?"]))
ANY_ID = st.one_of(st.none(), st.integers(-1, 12), st.sampled_from(["1", "x", ""]))
STORED = st.sampled_from([None, Stance.SUPPORT, "oppose", "junk"])
ANY_VALUE = st.one_of(ANY_ID, st.booleans(), st.sampled_from(["support", "valid", "target"]))


@settings(max_examples=200, deadline=None)
@given(
    cast=casts(min_active=0),
    number=st.integers(0, 9),
    closes=st.one_of(st.none(), st.just(CLOSES)),
    raw_entries=st.lists(
        st.tuples(ANY_ID, st.integers(0, 2000), MOODS, st.text(max_size=40), MOODS), max_size=6
    ),
    raw_notes=st.lists(
        st.tuples(ANY_ID, ANY_ID, st.integers(0, 2000), st.text(), STORED), max_size=12
    ),
    rulings=st.lists(st.builds(Ruling, st.sampled_from(RulingKind), ANY_ID, ANY_VALUE)),
)
def test_property_odd_data_never_crashes_the_tally(
    cast, number, closes, raw_entries, raw_notes, rulings
):
    """Noteworthy: “If a PC's position is ambiguous, the referee's interpretation is final.”
    Whatever arrives, the tally flags rather than raises."""
    entries = tuple(
        Entry(k, owner, number, minutes(t), mood, "", text, (Revision(minutes(t + 5), rev),))
        for k, (owner, t, mood, text, rev) in enumerate(raw_entries)
    )
    notes = tuple(
        Note(100 + k, entry_id, author, minutes(t), text, stance)
        for k, (entry_id, author, t, text, stance) in enumerate(raw_notes)
    )
    tally = tally_turn(TurnInput(number, closes, cast, entries, notes, tuple(rulings)))
    assert len(tally.rulings) == len(rulings)
    assert {c.id for c in tally.standings} == {c.id for c in cast}


@PROPERTY
@given(data=st.data())
def test_property_notes_listed_in_note_order_tally_as_in_any_order(data):
    """Noteworthy: “the PC's most recent note holds sway.” Notes listed as the service lists
    them (by time, arrival rising; several at one minute) tally as the same notes shuffled:
    the tally reads the first order without sorting, the second with."""
    turn = data.draw(turns())
    count = len(turn.notes)
    ties = data.draw(st.lists(st.integers(0, 3), min_size=count, max_size=count))
    tied = [
        replace(note, published=minutes(tie * 400)) if tie else note
        for note, tie in zip(turn.notes, ties, strict=True)
    ]
    listed = sorted(tied, key=lambda note: (note.published, note.id))
    listed = [replace(note, arrival=index) for index, note in enumerate(listed)]
    shuffled = data.draw(st.permutations(listed))
    assert tally_turn(replace(turn, notes=tuple(listed))) == tally_turn(
        replace(turn, notes=tuple(shuffled))
    )
