"""Rules 7-11: which notes count, who may take a position, and which position holds."""

from datetime import timedelta

from pbp.rules.noteworthy import (
    FlagKind,
    IgnoreReason,
    Note,
    Outcome,
    Ruling,
    RulingKind,
    Settings,
    Stance,
)
from tests.rules.noteworthy.worked_campaign import (
    ADA,
    BRAM,
    CYRA,
    DOV,
    ESME,
    FENN,
    at,
    cast,
    entry,
    note,
    play,
)


def challenge(entry_id=1, challenger=ADA, target_name="Bram", clock="10:00"):
    return entry(entry_id, challenger, 5, clock, "Challenging", text=f"Target: {target_name}")


def positions(result):
    return (
        sorted(p.character_id for p in result.supporters),
        sorted(p.character_id for p in result.opposers),
    )


def reasons(result):
    return {i.note_id: i.reason for i in result.ignored}


class TestRule7LateNotes:
    def test_late_note_after_the_close_is_ignored(self):
        """Noteworthy: “After a turn ends, no PC may post notes on entries from past turns;
        notes are permitted only on the current turn's entries.”"""
        c = challenge()
        notes = [note(10, c, CYRA, "22:59", "Support"), note(11, c, DOV, "23:01", "Support")]
        result = play([c], notes).challenges[0]
        assert positions(result) == ([CYRA], [])
        assert reasons(result) == {11: IgnoreReason.LATE}

    def test_late_note_after_the_fair_interval_is_ignored(self):
        """Noteworthy: “At the end of each turn, or after a fair interval specified by the
        referee, the referee reviews each PCs' challenge and tabulates the notes supporting or
        opposing it.”"""
        c = challenge(clock="10:00")
        notes = [note(10, c, CYRA, "12:00", "Support"), note(11, c, DOV, "12:01", "Oppose")]
        settings = Settings(fair_interval=timedelta(hours=2))
        result = play([c], notes, settings=settings).challenges[0]
        assert positions(result) == ([CYRA], [])
        assert reasons(result) == {11: IgnoreReason.LATE}
        assert "fair interval" in result.ignored[0].explanation

    def test_late_note_the_earlier_of_close_and_interval_applies(self):
        """Noteworthy: “At the end of each turn, or after a fair interval specified by the
        referee”: whichever comes first."""
        c = challenge(clock="20:00")
        notes = [note(10, c, CYRA, "23:30", "Support")]
        settings = Settings(fair_interval=timedelta(hours=5))
        assert reasons(play([c], notes, settings=settings).challenges[0]) == {10: IgnoreReason.LATE}

    def test_late_note_backdated_is_flagged_for_the_referee(self):
        """Noteworthy: “notes are permitted only on the current turn's entries.” A note dated
        in time but first seen after the close may be backdated: it counts and is flagged."""
        c = challenge()
        notes = [note(10, c, CYRA, "22:00", "Support", seen="23:40")]
        tally = play([c], notes)
        assert positions(tally.challenges[0]) == ([CYRA], [])
        assert [f.kind for f in tally.flags] == [FlagKind.BACKDATED_NOTE]
        assert tally.flags[0].note_id == 10

    def test_late_note_validity_ruling_settles_late_and_backdated_notes(self):
        """Noteworthy: “If a PC's position is ambiguous, the referee's interpretation is
        final.” The referee may count a late note or drop a backdated one."""
        c = challenge()
        notes = [
            note(10, c, CYRA, "23:30", "Support"),
            note(11, c, DOV, "22:00", "Oppose", seen="23:50"),
        ]
        rulings = [
            Ruling(RulingKind.NOTE_VALIDITY, 10, "count", "The feed was down."),
            Ruling(RulingKind.NOTE_VALIDITY, 11, "ignore", "Backdated."),
        ]
        tally = play([c], notes, rulings)
        assert positions(tally.challenges[0]) == ([CYRA], [])
        assert reasons(tally.challenges[0]) == {11: IgnoreReason.REFEREE}
        assert FlagKind.BACKDATED_NOTE not in [f.kind for f in tally.flags]

    def test_late_note_in_the_closing_minute_shows_seconds(self):
        """Noteworthy: “After a turn ends, no PC may post notes on entries from past turns”.
        A note published 40 seconds after a close at 23:00:05 reads "23:00:45, after the
        turn closed at 23:00:05", never "23:00, after ... 23:00" (issue 17, item 5)."""
        c = challenge()
        closing = at(5, "23:00") + timedelta(seconds=5)
        late = Note(11, 1, DOV, closing + timedelta(seconds=40), "Oppose", Stance.OPPOSE)
        result = play([c], [late], closing=closing).challenges[0]
        assert reasons(result) == {11: IgnoreReason.LATE}
        assert "23:00:45 UTC, after the turn closed at 2024-03-05 23:00:05 UTC." in (
            result.ignored[0].explanation
        )

    def test_late_note_in_another_minute_shows_minutes_only(self):
        """Noteworthy: “notes are permitted only on the current turn's entries.” Times in
        different minutes keep the short form."""
        c = challenge()
        late = Note(11, 1, DOV, at(5, "23:30") + timedelta(seconds=7), "Oppose", Stance.OPPOSE)
        result = play([c], [late]).challenges[0]
        assert result.ignored[0].explanation == (
            "Published 2024-03-05 23:30 UTC, after the turn closed at 2024-03-05 23:00 UTC."
        )

    def test_late_note_backdated_in_the_same_minute_shows_seconds(self):
        """Noteworthy: “notes are permitted only on the current turn's entries.” A note dated
        22:59:50 and first seen 23:00:20, after the close at 23:00:00: all three with seconds."""
        c = challenge()
        dated = at(5, "22:59") + timedelta(seconds=50)
        seen = at(5, "23:00") + timedelta(seconds=20)
        backdated = Note(11, 1, DOV, dated, "Oppose", Stance.OPPOSE, first_seen=seen)
        tally = play([c], [backdated])
        assert [f.message for f in tally.flags] == [
            "Note 11 is dated 2024-03-05 22:59:50 UTC but was first seen 2024-03-05 23:00:20 UTC, "
            "after the turn closed (2024-03-05 23:00:00 UTC); it counts unless the referee rules."
        ]

    def test_late_note_on_a_past_turns_entry_is_not_tallied(self):
        """Noteworthy: “notes are permitted only on the current turn's entries.”"""
        old = entry(1, ADA, 4, "10:00", "Challenging", text="Target: Bram")
        tally = play([old], [note(10, old, CYRA, "11:00", "Support", day=5)])
        assert tally.challenges == ()


class TestNotesBeforeTheChallenge:
    def test_before_challenge_support_on_an_entry_later_edited_to_challenging_is_ignored(self):
        """Noteworthy: “The challenge is resolved through notes added to the challenge entry.”
        Notes written while the entry's mood was "sly" were added to no challenge: they are
        ignored, so 0-1 stays a loss instead of becoming 2-1 (issue 17, item 3)."""
        sly = entry(
            1,
            ADA,
            5,
            "10:00",
            "sly",
            text="Target: Bram",
            revisions=[("14:00", "Challenging")],
        )
        notes = [
            note(10, sly, CYRA, "11:00", "Support"),
            note(11, sly, DOV, "12:00", "Support"),
            note(12, sly, ESME, "15:00", "Oppose"),
        ]
        result = play([sly], notes).challenges[0]
        assert positions(result) == ([], [ESME])
        assert result.outcome is Outcome.TARGET_WINS
        assert reasons(result) == {
            10: IgnoreReason.BEFORE_CHALLENGE,
            11: IgnoreReason.BEFORE_CHALLENGE,
        }
        assert IgnoreReason.BEFORE_CHALLENGE.value == "written before the challenge was made"
        assert result.ignored[0].explanation.startswith(
            "Written 2024-03-05 11:00 UTC, before the challenge was made at 2024-03-05 14:00 UTC"
        )

    def test_before_challenge_a_stance_ruling_counts_the_note(self):
        """Noteworthy: “If a PC's position is ambiguous, the referee's interpretation is
        final.” A stance ruling on a note written before the challenge counts it."""
        sly = entry(
            1, ADA, 5, "10:00", "sly", text="Target: Bram", revisions=[("14:00", "Challenging")]
        )
        notes = [note(10, sly, CYRA, "11:00", "Support"), note(12, sly, ESME, "15:00", "Oppose")]
        rulings = [Ruling(RulingKind.STANCE, 10, "support", "Cyra saw it coming.")]
        result = play([sly], notes, rulings).challenges[0]
        assert positions(result) == ([CYRA], [ESME])
        assert reasons(result) == {}


class TestRule8Eligibility:
    def test_eligibility_challenger_target_outsider_and_unmapped_are_ignored(self):
        """Noteworthy: “Each PC still in the game (except the challenger and target) may, if
        he or she wishes, note clear support or opposition to the challenge.”"""
        c = challenge()
        notes = [
            note(10, c, ADA, "11:00", "Support"),
            note(11, c, BRAM, "11:01", "Oppose"),
            note(12, c, ESME, "11:02", "Oppose"),
            note(13, c, None, "11:03", "Oppose", label="lurker@example.org"),
            note(14, c, 99, "11:04", "Oppose"),
            note(15, c, CYRA, "11:05", "Support"),
        ]
        result = play([c], notes, characters=cast(ESME)).challenges[0]
        assert positions(result) == ([CYRA], [])
        assert reasons(result) == {
            10: IgnoreReason.CHALLENGER,
            11: IgnoreReason.TARGET,
            12: IgnoreReason.OUTSIDER,
            13: IgnoreReason.UNMAPPED,
            14: IgnoreReason.UNMAPPED,
        }
        unmapped = next(i for i in result.ignored if i.note_id == 13)
        assert "lurker@example.org" in unmapped.explanation

    def test_eligibility_uses_standings_at_the_turns_start(self):
        """Noteworthy: “An outsider still posts entries and notes normally, but cannot support
        or oppose challenges.” Someone losing this turn still had a voice in it."""
        first = challenge(1, ADA, "Bram", "09:00")
        second = challenge(2, CYRA, "Dov", "09:30")
        notes = [
            note(10, first, CYRA, "10:00", "Support"),
            note(11, second, BRAM, "10:00", "Support"),
        ]
        tally = play([first, second], notes)
        assert [c.outcome for c in tally.challenges] == [Outcome.CHALLENGER_WINS] * 2
        assert tally.status_of(BRAM) == tally.status_of(DOV) == "outsider"

    def test_eligibility_author_ruling_maps_an_unmapped_commenter(self):
        """Noteworthy: “all notes you post must be in the persona of your own character”; the
        referee can say which character an unmapped commenter is."""
        c = challenge()
        notes = [note(10, c, None, "11:00", "Support", label="cyra-alt")]
        result = play([c], notes, [Ruling(RulingKind.AUTHOR, 10, CYRA)]).challenges[0]
        assert positions(result) == ([CYRA], [])


class TestRule9Stance:
    def test_stance_no_position_is_ignored_with_reason(self):
        """Noteworthy: “note clear support or opposition to the challenge.”"""
        c = challenge()
        result = play([c], [note(10, c, CYRA, "11:00", "How exciting!")]).challenges[0]
        assert positions(result) == ([], [])
        assert reasons(result) == {10: IgnoreReason.NO_POSITION}

    def test_stance_is_the_stored_reading_not_reread(self):
        """Noteworthy: “note clear support or opposition to the challenge.” The reading made
        on arrival is stored and used as is."""
        c = challenge()
        stored = Note(10, 1, CYRA, at(5, "11:00"), text="Support", stance=Stance.OPPOSE)
        unread = Note(11, 1, DOV, at(5, "11:00"), text="Support", stance=None, arrival=1)
        result = play([c], [stored, unread]).challenges[0]
        assert positions(result) == ([DOV], [CYRA])

    def test_stance_ambiguous_needs_a_ruling_when_it_could_swing(self):
        """Noteworthy: “If a PC's position is ambiguous, the referee's interpretation is
        final.”"""
        c = challenge()
        notes = [note(10, c, CYRA, "11:00", "Support. No: -1.")]
        tally = play([c], notes)
        result = tally.challenges[0]
        assert result.outcome is Outcome.NEEDS_RULING
        assert [p.character_id for p in result.pending] == [CYRA]
        assert FlagKind.AMBIGUOUS_STANCE in [f.kind for f in tally.flags]
        assert all(c.active for c in tally.standings)

    def test_stance_ambiguous_that_cannot_swing_leaves_the_outcome(self):
        """Noteworthy: “The majority wins; ties favor the target.” One unclear note cannot
        overturn a two-vote majority."""
        c = challenge()
        notes = [
            note(10, c, CYRA, "11:00", "+1 -1"),
            note(11, c, DOV, "11:00", "Oppose"),
            note(12, c, ESME, "11:00", "Oppose"),
        ]
        result = play([c], notes).challenges[0]
        assert result.outcome is Outcome.TARGET_WINS
        assert len(result.pending) == 1

    def test_stance_ambiguous_that_could_tie_one_nil_needs_a_ruling(self):
        """Noteworthy: “The majority wins; ties favor the target.” 1 support plus one note
        that reads both ways: read as opposition it is 1-1, a tie the target wins, so the
        challenger's win is not decided (issue 17, item 1)."""
        c = challenge()
        notes = [note(10, c, CYRA, "11:00", "Support"), note(11, c, DOV, "11:00", "+1 -1")]
        tally = play([c], notes)
        assert tally.challenges[0].outcome is Outcome.NEEDS_RULING
        assert all(character.active for character in tally.standings)

    def test_stance_ambiguous_that_could_tie_two_one_needs_a_ruling(self):
        """Noteworthy: “If a PC's position is ambiguous, the referee's interpretation is
        final.” 2-1 plus one note that reads both ways could end 2-2."""
        c = challenge()
        notes = [
            note(10, c, CYRA, "11:00", "Support"),
            note(11, c, DOV, "11:00", "Support"),
            note(12, c, ESME, "11:00", "Oppose"),
            note(13, c, FENN, "11:00", "+1 -1"),
        ]
        result = play([c], notes).challenges[0]
        assert result.outcome is Outcome.NEEDS_RULING
        ruled = play([c], notes, [Ruling(RulingKind.STANCE, 13, "oppose")]).challenges[0]
        assert ruled.outcome is Outcome.TARGET_WINS

    def test_stance_ruling_overrides_the_reading(self):
        """Noteworthy: “If a PC's position is ambiguous, the referee's interpretation is
        final.”"""
        c = challenge()
        notes = [note(10, c, CYRA, "11:00", "Support. No: -1."), note(11, c, DOV, "11:00", "+1")]
        rulings = [
            Ruling(RulingKind.STANCE, 10, "support"),
            Ruling(RulingKind.STANCE, 11, "none"),
        ]
        result = play([c], notes, rulings).challenges[0]
        assert positions(result) == ([CYRA], [])
        assert result.outcome is Outcome.CHALLENGER_WINS

    def test_stance_fate_is_kept_and_can_be_disallowed(self):
        """Noteworthy: “(Exception: A note cannot describe a fate that would remove any PC
        other than the target from the game.)”"""
        c = challenge()
        notes = [
            note(10, c, CYRA, "11:00", "Support", fate="Bram is exiled."),
            note(11, c, DOV, "11:00", "Support", fate="Esme dies too."),
        ]
        tally = play([c], notes, [Ruling(RulingKind.FATE_NOT_ALLOWED, 11, None, "Esme.")])
        fates = {f.note_id: (f.text, f.allowed) for f in tally.challenges[0].fates}
        assert fates == {10: ("Bram is exiled.", True), 11: ("Esme dies too.", False)}
        assert positions(tally.challenges[0]) == ([CYRA, DOV], [])


class TestRule10MostRecentNote:
    def test_most_recent_note_holds_sway(self):
        """Noteworthy: “If a PC notes both support and opposition to the challenge, the PC's
        most recent note holds sway.”"""
        c = challenge()
        notes = [
            note(10, c, CYRA, "14:00", "Oppose"),
            note(11, c, CYRA, "11:00", "Support"),
            note(12, c, CYRA, "15:00", "Nice weather."),  # no position: does not supersede
        ]
        result = play([c], notes).challenges[0]
        assert positions(result) == ([], [CYRA])
        assert reasons(result) == {11: IgnoreReason.SUPERSEDED, 12: IgnoreReason.NO_POSITION}
        assert result.opposers[0].note_id == 10

    def test_most_recent_note_same_time_uses_arrival_order(self):
        """Noteworthy: “the PC's most recent note holds sway.” Same publication time: the one
        that arrived later."""
        c = challenge()
        first = Note(10, 1, CYRA, at(5, "11:00"), "Oppose", Stance.OPPOSE, arrival=7)
        second = Note(11, 1, CYRA, at(5, "11:00"), "Support", Stance.SUPPORT, arrival=8)
        result = play([c], [second, first]).challenges[0]
        assert positions(result) == ([CYRA], [])


class TestRule11MutualChallenges:
    def mutual(self):
        return challenge(1, ADA, "Bram", "09:00"), challenge(2, BRAM, "Ada", "09:30")

    def test_mutual_same_side_on_both_entries_counts_twice(self):
        """Noteworthy: “If two PCs are challenging each other, you cannot support both
        sides.” Supporting A's challenge and opposing B's is one side."""
        a, b = self.mutual()
        notes = [note(10, a, CYRA, "10:00", "Support"), note(11, b, CYRA, "10:05", "Oppose")]
        tally = play([a, b], notes)
        assert positions(tally.challenges[0]) == ([CYRA], [])
        assert positions(tally.challenges[1]) == ([], [CYRA])
        assert FlagKind.BOTH_SIDES not in [f.kind for f in tally.flags]
        assert tally.status_of(BRAM) == "outsider" and tally.status_of(ADA) == "active"

    def test_mutual_both_sides_only_the_most_recent_counts(self):
        """Noteworthy: “If two PCs are challenging each other, you cannot support both
        sides.”"""
        a, b = self.mutual()
        notes = [
            note(10, a, CYRA, "10:00", "Support"),  # A's side
            note(11, b, CYRA, "12:00", "Support"),  # B's side, later: holds
            note(12, a, DOV, "13:00", "Oppose"),  # B's side, later: holds
            note(13, b, DOV, "11:00", "Oppose"),  # A's side
            note(14, a, FENN, "10:00", "Support"),
        ]
        tally = play([a, b], notes)
        first, second = tally.challenges
        assert positions(first) == ([FENN], [DOV])
        assert positions(second) == ([CYRA], [])
        assert reasons(first)[10] is IgnoreReason.BOTH_SIDES
        assert reasons(second)[13] is IgnoreReason.BOTH_SIDES
        assert [f.kind for f in tally.flags].count(FlagKind.BOTH_SIDES) == 2
        # A's challenge: 1-1, tie to the target (B); B's challenge: 1-0 for B. A loses both.
        assert first.outcome is Outcome.TARGET_WINS
        assert second.outcome is Outcome.CHALLENGER_WINS
        assert tally.status_of(ADA) == "outsider" and tally.status_of(BRAM) == "active"

    def test_mutual_rule_does_not_apply_to_a_withdrawn_side(self):
        """Noteworthy: “A withdrawn challenge has no effect.” so no sides are taken on it."""
        a = challenge(1, ADA, "Bram", "09:00")
        b = entry(
            2, BRAM, 5, "09:30", "Challenging", text="Target: Ada", revisions=[("09:45", "Calm")]
        )
        notes = [note(10, a, CYRA, "10:00", "Support"), note(11, b, CYRA, "12:00", "Support")]
        tally = play([a, b], notes)
        assert positions(tally.challenges[0]) == ([CYRA], [])
        assert FlagKind.BOTH_SIDES not in [f.kind for f in tally.flags]
