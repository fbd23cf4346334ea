"""A worked Noteworthy campaign (6 characters, 8 turns) and the builders it is written with.

Importable on purpose: the rules tests assert the standings after every turn, and the
dashboard tests replay the same campaign through the web. Every turn lasts one day: turn N
opens at day N 00:00 and closes at day N 23:00 (UTC).

What happens:

1. Opening turn: Ada's challenge of Bram is invalid; Esme's entry has no mood line.
2. Opening turn: Fenn's "Scheming" entry is a referee-defined action.
3. Cyra challenges Dov, then withdraws (mood edited before the close): no effect, no hint.
4. Nobody challenges (a "Challenging" note does not count): the referee is told to provoke.
5. Ada beats Bram 2-1 (Esme's late note ignored, Fenn's first note superseded); Dov's
   challenge names Esme and Fenn, a ruling picks Esme, and the 2-2 tie goes to Esme.
6. Mutual challenge Cyra <-> Esme: Ada backs Cyra on both entries, Fenn took both sides (only
   his later position counts), Bram's note is an outsider's. Esme loses both.
7. Ada beats Fenn 1-0 (Esme, now an outsider, cannot oppose): the final is next.
8. Final Ada vs Cyra: 2-2 among the outsiders after Esme moves her vote; the referee's
   tie-break ruling gives the game to Ada.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

from pbp.rules.noteworthy import (
    Character,
    EndgamePhase,
    Entry,
    Note,
    Revision,
    Ruling,
    RulingKind,
    Settings,
    Status,
    Tally,
    TurnInput,
    read_stance,
    tally_turn,
)

START = datetime(2024, 3, 1, tzinfo=UTC)
ADA, BRAM, CYRA, DOV, ESME, FENN = 1, 2, 3, 4, 5, 6


def cast(*outsiders: int) -> tuple[Character, ...]:
    """The six characters, with the given ids as outsiders."""
    names = {ADA: "Ada", BRAM: "Bram", CYRA: "Cyra", DOV: "Dov", ESME: "Esme", FENN: "Fenn"}
    return tuple(
        Character(cid, name, Status.OUTSIDER if cid in outsiders else Status.ACTIVE)
        for cid, name in names.items()
    )


def at(turn: int, clock: str = "12:00") -> datetime:
    """A moment during turn ``turn`` ("HH:MM" on that turn's day)."""
    hours, minutes = map(int, clock.split(":"))
    return START + timedelta(days=turn - 1, hours=hours, minutes=minutes)


def closes(turn: int) -> datetime:
    return at(turn, "23:00")


def entry(
    entry_id: int,
    owner: int | None,
    turn: int,
    clock: str = "10:00",
    mood: str | None = "Reflective",
    *,
    title: str = "",
    text: str = "",
    revisions: Iterable[tuple[str, str | None]] = (),
) -> Entry:
    """An entry; ``revisions`` are (clock, mood) pairs on the same day."""
    return Entry(
        id=entry_id,
        owner_id=owner,
        turn=turn,
        published=at(turn, clock),
        mood=mood,
        title=title or f"Entry {entry_id}",
        text=text,
        revisions=tuple(Revision(at(turn, when), new) for when, new in revisions),
    )


def note(
    note_id: int,
    on: Entry,
    author: int | None,
    clock: str,
    text: str,
    *,
    seen: str | None = None,
    label: str = "",
    fate: str | None = None,
    day: int | None = None,
) -> Note:
    """A note on ``on``, its stance read from ``text`` as the service does on arrival."""
    turn = on.turn if day is None else day
    return Note(
        id=note_id,
        entry_id=on.id,
        author_id=author,
        published=at(turn, clock),
        text=text,
        stance=read_stance(text).stance,
        arrival=note_id,
        first_seen=at(turn, seen) if seen else None,
        author_label=label,
        fate=fate,
    )


SETTINGS = Settings(actions={"Scheming": "Plot a scheme"}, aliases={"the Duke": DOV})
_DEFAULT = object()


def turn_input(
    number: int,
    entries: Iterable[Entry],
    notes: Iterable[Note] = (),
    rulings: Iterable[Ruling] = (),
    *,
    characters: tuple[Character, ...] = (),
    settings: Settings | None = None,
    closing: datetime | None | object = _DEFAULT,
) -> TurnInput:
    """A turn that closes at 23:00 on its day unless ``closing`` says otherwise."""
    return TurnInput(
        number=number,
        opens=at(number, "00:00"),
        closes=closes(number) if closing is _DEFAULT else closing,
        characters=characters,
        entries=tuple(entries),
        notes=tuple(notes),
        rulings=tuple(rulings),
        settings=settings or Settings(),
    )


def play(
    entries: Iterable[Entry],
    notes: Iterable[Note] = (),
    rulings: Iterable[Ruling] = (),
    *,
    number: int = 5,
    characters: tuple[Character, ...] | None = None,
    settings: Settings | None = None,
    closing: datetime | None | object = _DEFAULT,
) -> Tally:
    """Tally one turn (by default turn 5, past the opening turns, everyone active)."""
    return tally_turn(
        turn_input(
            number,
            entries,
            notes,
            rulings,
            characters=cast() if characters is None else characters,
            settings=settings,
            closing=closing,
        )
    )


def _turn(number: int, entries, notes=(), rulings=()) -> TurnInput:
    return turn_input(number, entries, notes, rulings, settings=SETTINGS)


def _everyone(turn: int, first_id: int, skip: Iterable[int] = ()) -> list[Entry]:
    """A quiet entry by each character not in ``skip``."""
    return [
        entry(first_id + cid, cid, turn, f"0{cid}:00", "Reflective", text="Another day.")
        for cid in (ADA, BRAM, CYRA, DOV, ESME, FENN)
        if cid not in skip
    ]


def _turn_1() -> TurnInput:
    early = entry(
        101, ADA, 1, "14:00", "Challenging", title="Bram lies", text="Target: Bram\nHe lied."
    )
    moodless = entry(150, ESME, 1, "15:00", None, text="I forgot my mood line.")
    notes = [note(1001, early, CYRA, "15:00", "Support.")]
    return _turn(1, [*_everyone(1, 110, skip=[ESME]), early, moodless], notes)


def _turn_2() -> TurnInput:
    scheme = entry(201, FENN, 2, "11:00", "Scheming", text="The docks will burn.")
    return _turn(2, [*_everyone(2, 210, skip=[FENN]), scheme])


def _turn_3() -> TurnInput:
    withdrawn = entry(
        301,
        CYRA,
        3,
        "10:00",
        "Challenging",
        text="Target: Dov\nDov stole the ledger.",
        revisions=[("15:00", "Regretful")],
    )
    notes = [note(3001, withdrawn, ADA, "10:30", "Support!")]
    return _turn(3, [*_everyone(3, 310, skip=[CYRA]), withdrawn], notes)


def _turn_4() -> TurnInput:
    entries = _everyone(4, 410)
    ada_entry = entries[0]
    notes = [note(4001, ada_entry, BRAM, "12:00", "Current mood: Challenging\nYou'll pay, Ada.")]
    return _turn(4, entries, notes)


def _turn_5() -> TurnInput:
    ada = entry(501, ADA, 5, "10:00", "Challenging", text="Target: Bram\nBram must fall.")
    dov = entry(
        502,
        DOV,
        5,
        "10:30",
        "Challenging",
        title="The Duke moves",
        text="Esme and Fenn plotted against me. One of them will answer for it.",
    )
    notes = [
        note(5001, ada, CYRA, "11:00", "Support."),
        note(5002, ada, FENN, "11:30", "+1"),
        note(5003, ada, DOV, "12:00", "I support this."),
        note(5004, ada, FENN, "13:00", "Oppose. I changed my mind."),
        note(5005, ada, ESME, "23:30", "Oppose!"),  # after the close: late
        note(5011, dov, ADA, "11:00", "Support"),
        note(5012, dov, FENN, "11:10", "Stance: support", fate="Esme is exiled to the hills."),
        note(5013, dov, CYRA, "12:00", "-1"),
        note(5014, dov, BRAM, "12:30", "I oppose this."),
    ]
    rulings = [Ruling(RulingKind.TARGET, 502, ESME, "Dov's grudge is with Esme.")]
    return _turn(5, [*_everyone(5, 510, skip=[ADA, DOV]), ada, dov], notes, rulings)


def _turn_6() -> TurnInput:
    cyra = entry(601, CYRA, 6, "10:00", "Challenging", text="Target: Esme")
    esme = entry(602, ESME, 6, "10:30", "Challenging", text="Target: Cyra")
    notes = [
        note(6001, cyra, ADA, "11:00", "Support."),
        note(6002, esme, ADA, "11:05", "Oppose!"),
        note(6003, cyra, FENN, "12:00", "Support."),
        note(6004, esme, FENN, "14:00", "Support."),
        note(6005, cyra, BRAM, "12:30", "Support."),
    ]
    rest = _everyone(6, 610, skip=[CYRA, ESME])
    return _turn(6, [*rest, cyra, esme], notes)


def _turn_7() -> TurnInput:
    ada = entry(
        701,
        ADA,
        7,
        "10:00",
        "Challenging",
        title="Fenn's treachery",
        text="I, Ada, have seen what Fenn did.",
    )
    notes = [
        note(7001, ada, CYRA, "11:00", "Support."),
        note(7002, ada, ESME, "11:30", "Oppose."),
    ]
    return _turn(7, [*_everyone(7, 710, skip=[ADA]), ada], notes)


def _turn_8() -> TurnInput:
    ada = entry(801, ADA, 8, "09:00", "Triumphant", text="I take the city.")
    cyra = entry(802, CYRA, 8, "09:30", "Determined", text="The city takes me.")
    notes = [
        note(8001, ada, BRAM, "10:00", "Support."),
        note(8002, cyra, DOV, "10:30", "Support."),
        note(8003, ada, ESME, "11:00", "+1"),
        note(8004, cyra, ESME, "15:00", "Support. I was wrong about Ada."),
        note(8005, ada, FENN, "16:00", "Support!"),
        note(8006, ada, CYRA, "16:30", "Support."),  # a finalist cannot vote
    ]
    rulings = [Ruling(RulingKind.TIEBREAK, None, ADA, "Ada's entry carried the city.")]
    others = _everyone(8, 810, skip=[ADA, CYRA])
    return _turn(8, [*others, ada, cyra], notes, rulings)


CHARACTERS = cast()
TURNS: tuple[TurnInput, ...] = (
    _turn_1(),
    _turn_2(),
    _turn_3(),
    _turn_4(),
    _turn_5(),
    _turn_6(),
    _turn_7(),
    _turn_8(),
)

# Outsiders after each turn (everyone else is active), and the endgame phase then.
EXPECTED_OUTSIDERS: tuple[frozenset[int], ...] = (
    frozenset(),
    frozenset(),
    frozenset(),
    frozenset(),
    frozenset({BRAM, DOV}),
    frozenset({BRAM, DOV, ESME}),
    frozenset({BRAM, DOV, ESME, FENN}),
    frozenset({BRAM, DOV, ESME, FENN, CYRA}),
)
EXPECTED_PHASES: tuple[EndgamePhase, ...] = (
    *[EndgamePhase.IN_PLAY] * 6,
    EndgamePhase.FINAL_NEXT,
    EndgamePhase.WON,
)
WINNER = ADA
