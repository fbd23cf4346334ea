"""Rules 12-15: majorities and standings, provocation, the endgame and referee rulings."""

from pbp.rules.noteworthy import (
    RULING_FOR_FLAG,
    EndgamePhase,
    Flag,
    FlagKind,
    IgnoreReason,
    Outcome,
    Ruling,
    RulingKind,
    Status,
)
from tests.rules.noteworthy.worked_campaign import (
    ADA,
    BRAM,
    CYRA,
    DOV,
    ESME,
    FENN,
    cast,
    entry,
    note,
    play,
)


def challenge(entry_id, challenger, target_name, clock="10:00"):
    return entry(entry_id, challenger, 5, clock, "Challenging", text=f"Target: {target_name}")


def outsiders(tally):
    return {c.id for c in tally.standings if c.status is Status.OUTSIDER}


class TestRule12Majority:
    def test_majority_wins_challenger_advances_target_becomes_outsider(self):
        """Noteworthy: “The majority wins; ties favor the target. The winner of the challenge
        advances in the setting in a way specified by the referee.”"""
        c = challenge(1, ADA, "Bram")
        notes = [
            note(10, c, CYRA, "11:00", "Support"),
            note(11, c, DOV, "11:00", "Support"),
            note(12, c, ESME, "11:00", "Oppose"),
        ]
        tally = play([c], notes)
        assert tally.challenges[0].outcome is Outcome.CHALLENGER_WINS
        assert outsiders(tally) == {BRAM}
        assert tally.advanced == (ADA,) and tally.eliminated == (BRAM,)
        assert "2 support, 1 oppose" in tally.challenges[0].explanation[-1]

    def test_majority_against_the_challenger_makes_them_an_outsider(self):
        """Noteworthy: “The loser becomes an outsider and is no longer able to advance.”"""
        c = challenge(1, ADA, "Bram")
        notes = [note(10, c, CYRA, "11:00", "Oppose"), note(11, c, DOV, "11:00", "Support")]
        notes.append(note(12, c, ESME, "11:00", "-1"))
        tally = play([c], notes)
        assert tally.challenges[0].outcome is Outcome.TARGET_WINS
        assert outsiders(tally) == {ADA}

    def test_majority_ties_favour_the_target_zero_zero_included(self):
        """Noteworthy: “The majority wins; ties favor the target.”"""
        c = challenge(1, ADA, "Bram")
        assert play([c]).challenges[0].outcome is Outcome.TARGET_WINS
        tied = [note(10, c, CYRA, "11:00", "Support"), note(11, c, DOV, "11:00", "Oppose")]
        tally = play([c], tied)
        assert tally.challenges[0].outcome is Outcome.TARGET_WINS
        assert "tie favours the target" in tally.challenges[0].explanation[-1]

    def test_majority_all_challenges_resolve_against_the_turns_start(self):
        """Noteworthy: “The loser becomes an outsider and is no longer able to advance.” All
        of a turn's challenges use the standings at its start; losing any one is enough."""
        a = challenge(1, ADA, "Bram", "09:00")  # Ada wins against Bram
        c = challenge(2, CYRA, "Ada", "09:30")  # ... but loses to Cyra the same turn
        b = challenge(3, BRAM, "Dov", "09:40")  # Bram, losing this turn, still wins here
        notes = [
            note(10, a, DOV, "10:00", "Support"),
            note(11, c, DOV, "10:00", "Support"),
            note(12, b, ESME, "10:00", "Support"),
        ]
        tally = play([a, c, b], notes)
        assert [r.outcome for r in tally.challenges] == [Outcome.CHALLENGER_WINS] * 3
        assert outsiders(tally) == {ADA, BRAM, DOV}
        assert tally.advanced == (ADA, CYRA, BRAM)

    def test_majority_tiebreak_ruling_overrides_the_default(self):
        """Noteworthy: “The majority wins; ties favor the target.” Unless the referee rules."""
        c = challenge(1, ADA, "Bram")
        tally = play([c], [], [Ruling(RulingKind.TIEBREAK, 1, "challenger")])
        assert tally.challenges[0].outcome is Outcome.CHALLENGER_WINS
        not_tied = [note(10, c, CYRA, "11:00", "Oppose")]
        tally = play([c], not_tied, [Ruling(RulingKind.TIEBREAK, 1, ADA)])
        assert tally.challenges[0].outcome is Outcome.TARGET_WINS
        assert not tally.rulings[0].applied
        assert FlagKind.RULING_NOT_APPLIED in [f.kind for f in tally.flags]


class TestRule13Provocation:
    def test_provocation_after_a_turn_without_challenges(self):
        """Noteworthy: “After the first two turns, if no PC makes a challenge in a turn, the
        referee should use a later turn's event to provoke a direct conflict and consequent
        challenges among at least two named PCs.”"""
        tally = play([entry(1, ADA, 5, mood="Calm")])
        assert tally.provocation.recommended
        assert "at least two characters" in tally.provocation.explanation

    def test_provocation_not_in_the_opening_turns(self):
        """Noteworthy: “After the first two turns, if no PC makes a challenge in a turn”."""
        assert not play([], number=2).provocation.recommended
        assert play([], number=3).provocation.recommended

    def test_provocation_withdrawn_or_invalid_challenge_counts_as_made(self):
        """Noteworthy: “You may withdraw your challenge before the end of a turn, but that
        still counts as your challenge for that turn.”"""
        withdrawn = entry(
            1, ADA, 5, mood="Challenging", text="Target: Bram", revisions=[("11:00", "Calm")]
        )
        assert not play([withdrawn]).provocation.recommended
        self_challenge = entry(2, ADA, 5, mood="Challenging", text="Target: Ada")
        assert not play([self_challenge]).provocation.recommended

    def test_provocation_outsiders_challenge_is_not_made(self):
        """Noteworthy: “if no PC makes a challenge in a turn” -- an outsider cannot."""
        outsider = entry(1, BRAM, 5, mood="Challenging", text="Target: Ada")
        assert play([outsider], characters=cast(BRAM)).provocation.recommended


class TestRule14Endgame:
    FINAL_CAST = cast(BRAM, DOV, ESME, FENN)  # Ada and Cyra are the finalists

    def final(self, notes_spec, rulings=()):
        ada = entry(1, ADA, 5, "09:00", "Triumphant")
        cyra = entry(2, CYRA, 5, "09:00", "Determined")
        entries = {ADA: ada, CYRA: cyra}
        notes = [
            note(10 + i, entries[on], author, clock, text)
            for i, (on, author, clock, text) in enumerate(notes_spec)
        ]
        return play([ada, cyra], notes, rulings, characters=self.FINAL_CAST)

    def test_endgame_two_active_means_the_final_is_next(self):
        """Noteworthy: “When only two PCs are still active (that is, are not outsiders), the
        referee's final event sets up a conflict between the two characters.”"""
        three = cast(BRAM, DOV, ESME)  # Ada, Cyra and Fenn are active
        assert play([], characters=three).endgame.phase is EndgamePhase.IN_PLAY
        c = challenge(1, ADA, "Fenn")
        tally = play([c], [note(10, c, CYRA, "11:00", "+1")], characters=three)
        assert tally.endgame.phase is EndgamePhase.FINAL_NEXT
        assert set(tally.endgame.finalists) == {ADA, CYRA}
        assert not tally.provocation.recommended

    def test_endgame_outsiders_vote_and_majority_wins_the_game(self):
        """Noteworthy: “Each outsider may now post a note supporting one side or the other
        (but not both sides). Post the note to the entry of the PC you support.”"""
        tally = self.final(
            [
                (ADA, BRAM, "10:00", "Support"),
                (ADA, DOV, "10:00", "Support"),
                (CYRA, ESME, "10:00", "Support"),
                (ADA, CYRA, "10:00", "Support"),  # a finalist's note is no vote
            ]
        )
        assert tally.final.winner_id == ADA
        assert tally.endgame.phase is EndgamePhase.WON and tally.endgame.winner_id == ADA
        assert outsiders(tally) == {BRAM, CYRA, DOV, ESME, FENN}
        assert [i.reason for i in tally.final.ignored] == [IgnoreReason.FINALIST]
        votes = {side.finalist_id: len(side.votes) for side in tally.final.sides}
        assert votes == {ADA: 2, CYRA: 1}

    def test_endgame_later_note_moves_the_vote_support_for_both_keeps_the_latest(self):
        """Noteworthy: “Each outsider may now post a note supporting one side or the other
        (but not both sides).”"""
        tally = self.final(
            [
                (ADA, BRAM, "10:00", "Support"),
                (CYRA, BRAM, "12:00", "Support"),
                (ADA, DOV, "10:00", "Support"),
                (ADA, ESME, "10:00", "Oppose"),  # opposing Ada backs Cyra
            ]
        )
        votes = {side.finalist_id: len(side.votes) for side in tally.final.sides}
        assert votes == {ADA: 1, CYRA: 2}
        assert tally.final.winner_id == CYRA
        assert [i.reason for i in tally.final.ignored] == [IgnoreReason.BOTH_SIDES]

    def test_endgame_tie_is_reported_for_the_referee(self):
        """Noteworthy: “After a fair interval the referee totals the votes and resolves the
        challenge normally; the winner of the challenge wins the game.” A final has no target
        to favour, so a tie goes to the referee."""
        spec = [(ADA, BRAM, "10:00", "Support"), (CYRA, DOV, "10:00", "Support")]
        tally = self.final(spec)
        assert tally.final.winner_id is None
        assert tally.endgame.phase is EndgamePhase.NEEDS_RULING
        assert FlagKind.FINAL_TIE in [f.kind for f in tally.flags]
        assert outsiders(tally) == {BRAM, DOV, ESME, FENN}
        ruled = self.final(spec, [Ruling(RulingKind.TIEBREAK, None, CYRA)])
        assert ruled.endgame.winner_id == CYRA and outsiders(ruled) == {ADA, BRAM, DOV, ESME, FENN}

    def test_endgame_finalist_without_an_entry_is_flagged(self):
        """Noteworthy: “Each of the involved PCs posts an entry detailing his desired outcome
        of this conflict”."""
        ada = entry(1, ADA, 5, "09:00", "Triumphant")
        tally = play([ada], [note(10, ada, BRAM, "10:00", "+1")], characters=self.FINAL_CAST)
        assert FlagKind.NO_FINAL_ENTRY in [f.kind for f in tally.flags]
        assert tally.final.winner_id == ADA

    def test_endgame_last_character_left_wins(self):
        """Noteworthy: “The last PC left wins.”"""
        three = cast(BRAM, CYRA, DOV)  # Ada, Esme and Fenn are active
        ada, esme = challenge(1, ADA, "Fenn", "09:00"), challenge(2, ESME, "Fenn", "09:30")
        tally = play([ada, esme], [note(10, ada, ESME, "11:00", "Support")], characters=three)
        assert [c.outcome for c in tally.challenges] == [
            Outcome.CHALLENGER_WINS,
            Outcome.TARGET_WINS,
        ]
        assert outsiders(tally) == {BRAM, CYRA, DOV, ESME, FENN}
        assert tally.endgame.phase is EndgamePhase.WON and tally.endgame.winner_id == ADA
        one_left = play([], characters=cast(BRAM, CYRA, DOV, ESME, FENN))
        assert one_left.final is None
        assert one_left.endgame.phase is EndgamePhase.WON and one_left.endgame.winner_id == ADA

    def test_endgame_nobody_left_is_reported_for_a_ruling(self):
        """Noteworthy: “The last PC left wins.” If a mutual challenge takes out the last two,
        nobody is left and the referee decides."""
        a, b = challenge(1, ADA, "Bram", "09:00"), challenge(2, BRAM, "Ada", "09:30")
        two_active = cast(CYRA, DOV, ESME, FENN)
        # With two active the turn is a final, so stage it with three: Cyra abstains.
        three_active = cast(DOV, ESME, FENN)
        tally = play([a, b], characters=three_active)
        assert outsiders(tally) == {ADA, BRAM, DOV, ESME, FENN}
        assert tally.endgame.phase is EndgamePhase.WON  # Cyra is left
        nobody = play([], characters=cast(ADA, BRAM, CYRA, DOV, ESME, FENN))
        assert nobody.endgame.phase is EndgamePhase.NEEDS_RULING
        assert FlagKind.NO_ONE_LEFT in [f.kind for f in nobody.flags]
        ruled = play([], [], [Ruling(RulingKind.TIEBREAK, None, DOV)], characters=nobody.standings)
        assert ruled.endgame.winner_id == DOV
        assert play([a, b], characters=two_active).final is not None

    def test_endgame_mutual_loss_of_all_three_leaves_nobody(self):
        """Noteworthy: “The loser becomes an outsider and is no longer able to advance.”"""
        a = challenge(1, ADA, "Bram", "09:00")
        b = challenge(2, BRAM, "Cyra", "09:10")
        c = challenge(3, CYRA, "Ada", "09:20")
        notes = [note(10, a, DOV, "10:00", "Support")]  # Dov is an outsider: no vote
        tally = play([a, b, c], notes, characters=cast(DOV, ESME, FENN))
        assert outsiders(tally) == {ADA, BRAM, CYRA, DOV, ESME, FENN}
        assert tally.endgame.phase is EndgamePhase.NEEDS_RULING


class TestRule15Rulings:
    def test_the_ruling_a_flag_suggests_settles_it(self):
        """Noteworthy: “If a PC's position is ambiguous, the referee's interpretation is
        final.” The referee's form starts from the ruling the flag asks for, on its note."""
        c = challenge(1, ADA, "Bram")
        notes = [note(10, c, CYRA, "11:00", "Support. No: -1.")]
        (flag,) = [f for f in play([c], notes).flags if f.kind is FlagKind.AMBIGUOUS_STANCE]
        kind, subject = flag.suggested_ruling
        assert (kind, subject) == (RulingKind.STANCE, 10)
        settled = play([c], notes, [Ruling(kind, subject, "support")])
        assert FlagKind.AMBIGUOUS_STANCE not in [f.kind for f in settled.flags]
        assert [p.character_id for p in settled.challenges[0].supporters] == [CYRA]

    def test_each_flag_suggests_a_ruling_about_its_entry_or_note(self):
        """Noteworthy: “the referee's interpretation is final”: for the flags one ruling
        settles, the suggestion names that ruling and the entry or note flagged; the final's
        tie is about the whole game."""
        for kind, (ruling, about) in RULING_FOR_FLAG.items():
            flag = Flag(kind, "x", entry_id=1, note_id=2)
            expected = {"entry": 1, "note": 2, None: None}[about]
            assert flag.suggested_ruling == (ruling, expected)
        assert Flag(FlagKind.FINAL_TIE, "x").suggested_ruling == (RulingKind.TIEBREAK, None)
        unsettled = Flag(FlagKind.CHALLENGE_IN_NOTE, "x", note_id=7)
        assert unsettled.suggested_ruling == (None, 7)

    def test_rulings_override_and_are_listed(self):
        """Noteworthy: “If a PC's position is ambiguous, the referee's interpretation is
        final.” Every ruling is applied and listed with its effect."""
        c = challenge(1, ADA, "Bram")
        notes = [
            note(10, c, None, "11:00", "Support", label="anon"),
            note(11, c, DOV, "11:00", "hmm"),
        ]
        rulings = [
            Ruling(RulingKind.AUTHOR, 10, CYRA),
            Ruling(RulingKind.STANCE, 11, "support"),
            Ruling(RulingKind.VALIDITY, 1, "invalid", "Posted from a borrowed account."),
        ]
        tally = play([c], notes, rulings)
        assert tally.challenges[0].invalid_reason == "ruled invalid by the referee"
        assert all(r.applied for r in tally.rulings)
        valid = play([c], notes, rulings[:2] + [Ruling(RulingKind.VALIDITY, 1, True)])
        assert [p.character_id for p in valid.challenges[0].supporters] == [CYRA, DOV]

    def test_rulings_on_unknown_subjects_or_bad_values_are_flagged_not_raised(self):
        """Noteworthy: “the referee's interpretation is final” -- but a mistyped ruling must
        not pass silently."""
        c = challenge(1, ADA, "Bram")
        rulings = [
            Ruling(RulingKind.TARGET, 999, CYRA),
            Ruling(RulingKind.TARGET, 1, 4242),
            Ruling(RulingKind.STANCE, 10, "maybe"),
            Ruling(RulingKind.VALIDITY, 1, "perhaps"),
        ]
        tally = play([c], [note(10, c, CYRA, "11:00", "Support")], rulings)
        assert [r.applied for r in tally.rulings] == [False] * 4
        assert [f.kind for f in tally.flags] == [FlagKind.RULING_NOT_APPLIED] * 4
        assert tally.challenges[0].target_id == BRAM
        assert tally.challenges[0].outcome is Outcome.CHALLENGER_WINS

    def test_rulings_later_ruling_on_the_same_subject_wins(self):
        """Noteworthy: “the referee's interpretation is final” -- the latest one."""
        c = challenge(1, ADA, "Bram")
        rulings = [
            Ruling(RulingKind.TIEBREAK, 1, "challenger"),
            Ruling(RulingKind.TIEBREAK, 1, "target"),
        ]
        tally = play([c], [], rulings)
        assert tally.challenges[0].outcome is Outcome.TARGET_WINS
        assert [r.applied for r in tally.rulings] == [False, True]
        assert FlagKind.RULING_NOT_APPLIED not in [f.kind for f in tally.flags]
        assert FENN in {ch.id for ch in tally.standings}
