"""Rules 1-6: moods, targets, when and by whom a challenge may be made."""

from pbp.rules.noteworthy import (
    FlagKind,
    InvalidReason,
    Outcome,
    Ruling,
    RulingKind,
    Settings,
    TargetMethod,
)
from tests.rules.noteworthy.worked_campaign import (
    ADA,
    BRAM,
    CYRA,
    DOV,
    ESME,
    at,
    cast,
    entry,
    note,
    play,
)


def kinds(tally):
    return [flag.kind for flag in tally.flags]


class TestRule1Mood:
    def test_mood_challenging_entry_is_a_challenge(self):
        """Noteworthy: “A blog entry with the "Current mood:" line "Challenging" constitutes a
        challenge.”"""
        tally = play([entry(1, ADA, 5, mood=" challenging! ", text="Target: Bram")])
        assert [(c.challenger_id, c.target_id, c.valid) for c in tally.challenges] == [
            (ADA, BRAM, True)
        ]

    def test_mood_missing_is_flagged_and_no_game_action(self):
        """Noteworthy: “Each blog entry you post must have a "Current mood:" line beneath the
        title.”"""
        settings = Settings(actions={"Scheming": "Plot"})
        tally = play([entry(1, ADA, 5, mood=None, text="Target: Bram")], settings=settings)
        assert tally.challenges == ()
        assert tally.actions == ()
        assert kinds(tally) == [FlagKind.MISSING_MOOD]
        assert tally.flags[0].entry_id == 1

    def test_mood_referee_defined_action_is_reported(self):
        """Noteworthy: “The referee may define other game actions appropriate to the setting,
        along with an identifying "Current mood:" line that indicates an entry is executing
        the action.”"""
        settings = Settings(actions={"Scheming": "Plot a scheme", "Feasting": "Hold a feast"})
        entries = [entry(1, ADA, 5, mood="SCHEMING."), entry(2, BRAM, 5, mood="Bored")]
        tally = play(entries, settings=settings)
        assert [(a.entry_id, a.character_id, a.action) for a in tally.actions] == [
            (1, ADA, "Plot a scheme")
        ]
        assert "Plot a scheme" in tally.actions[0].explanation

    def test_mood_referee_ruling_supplies_a_missing_mood(self):
        """Noteworthy: “Each blog entry you post must have a "Current mood:" line beneath the
        title.” The referee may read the mood instead (a ``mood`` ruling)."""
        ruling = Ruling(RulingKind.MOOD, 1, "Challenging", "Template lost the line.")
        tally = play([entry(1, ADA, 5, mood=None, text="Target: Bram")], rulings=[ruling])
        assert tally.challenges[0].target_id == BRAM
        assert FlagKind.MISSING_MOOD not in kinds(tally)
        assert tally.rulings[0].applied


class TestRule2Target:
    def test_target_names_exactly_one_character(self):
        """Noteworthy: “The challenger's entry must name exactly one target PC as the target
        of the challenge.”"""
        tally = play([entry(1, ADA, 5, "10:00", "Challenging", title="Cyra's lies")])
        challenge = tally.challenges[0]
        assert (challenge.target_id, challenge.target.method) == (CYRA, TargetMethod.NAMES)

    def test_target_ambiguous_needs_ruling_never_dropped(self):
        """Noteworthy: “The challenger's entry must name exactly one target PC as the target
        of the challenge.”"""
        challenge_entry = entry(1, ADA, 5, "10:00", "Challenging", text="Bram and Cyra lie.")
        notes = [note(10, challenge_entry, DOV, "11:00", "Support")]
        tally = play([challenge_entry], notes)
        challenge = tally.challenges[0]
        assert challenge.outcome is Outcome.NEEDS_RULING
        assert challenge.target.candidates == (BRAM, CYRA)
        assert FlagKind.NEEDS_TARGET in kinds(tally)
        assert tally.needs_ruling and not tally.complete
        assert all(c.active for c in tally.standings)

    def test_target_ruling_settles_an_ambiguous_target(self):
        """Noteworthy: “If a PC's position is ambiguous, the referee's interpretation is
        final.” The same holds for an ambiguous target."""
        challenge_entry = entry(1, ADA, 5, "10:00", "Challenging", text="Bram and Cyra lie.")
        notes = [note(10, challenge_entry, DOV, "11:00", "Support")]
        ruling = Ruling(RulingKind.TARGET, "1", CYRA, "Cyra is meant.")
        tally = play([challenge_entry], notes, [ruling])
        challenge = tally.challenges[0]
        assert (challenge.target_id, challenge.target.method) == (CYRA, TargetMethod.RULING)
        assert challenge.outcome is Outcome.CHALLENGER_WINS
        assert tally.status_of(CYRA) == "outsider"


class TestRule3OpeningTurns:
    def test_opening_turns_challenge_is_invalid(self):
        """Noteworthy: “No challenges are permitted in the first two turns of the game.”"""
        for number in (1, 2):
            challenge_entry = entry(1, ADA, number, "10:00", "Challenging", text="Target: Bram")
            notes = [note(10, challenge_entry, CYRA, "11:00", "Support")]
            tally = play([challenge_entry], notes, number=number)
            challenge = tally.challenges[0]
            assert challenge.invalid_reason is InvalidReason.OPENING_TURNS
            assert challenge.outcome is Outcome.NO_EFFECT
            assert challenge.supporters == ()
            assert all(c.active for c in tally.standings)

    def test_opening_turns_is_a_campaign_setting(self):
        """Noteworthy: “No challenges are permitted in the first two turns of the game.” The
        number is a campaign setting (default 2)."""
        challenge_entry = entry(1, ADA, 3, "10:00", "Challenging", text="Target: Bram")
        assert play([challenge_entry], number=3).challenges[0].valid
        longer = play([challenge_entry], number=3, settings=Settings(opening_turns=3))
        assert longer.challenges[0].invalid_reason is InvalidReason.OPENING_TURNS


class TestRule4OneChallengePerTurn:
    def test_one_challenge_per_turn_first_by_time_counts(self):
        """Noteworthy: “Thereafter, you may challenge one PC per turn, and you may be
        challenged by others any number of times per turn.”"""
        later = entry(1, ADA, 5, "12:00", "Challenging", text="Target: Cyra")
        first = entry(2, ADA, 5, "09:00", "Challenging", text="Target: Bram")
        also_bram = entry(3, DOV, 5, "10:00", "Challenging", text="Target: Bram")
        tally = play([later, first, also_bram])
        by_entry = {c.entry_id: c for c in tally.challenges}
        assert by_entry[2].valid and by_entry[3].valid
        assert by_entry[1].invalid_reason is InvalidReason.SECOND_CHALLENGE

    def test_one_challenge_per_turn_withdrawn_still_counts_and_has_no_effect(self):
        """Noteworthy: “You may withdraw your challenge before the end of a turn, but that
        still counts as your challenge for that turn. A withdrawn challenge has no effect.”"""
        withdrawn = entry(
            1, ADA, 5, "09:00", "Challenging", text="Target: Bram", revisions=[("12:00", "Calm")]
        )
        second = entry(2, ADA, 5, "13:00", "Challenging", text="Target: Cyra")
        notes = [note(10, withdrawn, DOV, "10:00", "Support"), note(11, second, DOV, "14:00", "+1")]
        tally = play([withdrawn, second], notes)
        first, other = tally.challenges
        assert first.withdrawn and first.valid and first.outcome is Outcome.NO_EFFECT
        assert first.supporters == () and first.ignored[0].reason == "challenge has no effect"
        assert other.invalid_reason is InvalidReason.SECOND_CHALLENGE
        assert all(c.active for c in tally.standings)

    def test_one_challenge_per_turn_revision_after_close_changes_nothing(self):
        """Noteworthy: “You may withdraw your challenge before the end of a turn”; an edit
        after the close is flagged and changes nothing."""
        challenge_entry = entry(
            1, ADA, 5, "09:00", "Challenging", text="Target: Bram", revisions=[("23:30", "Calm")]
        )
        notes = [note(10, challenge_entry, DOV, "10:00", "Support")]
        tally = play([challenge_entry], notes)
        assert not tally.challenges[0].withdrawn
        assert tally.challenges[0].outcome is Outcome.CHALLENGER_WINS
        assert FlagKind.LATE_REVISION in kinds(tally)

    def test_one_challenge_per_turn_edit_to_challenging_is_made_at_the_revision(self):
        """Noteworthy: “By describing your mood as "Challenging," you issue a challenge to
        another PC.” An entry edited to Challenging challenges from the edit's time."""
        edited = entry(
            1, ADA, 5, "08:00", "Calm", text="Target: Bram", revisions=[("14:00", "Challenging")]
        )
        direct = entry(2, ADA, 5, "12:00", "Challenging", text="Target: Cyra")
        tally = play([edited, direct])
        by_entry = {c.entry_id: c for c in tally.challenges}
        assert by_entry[1].made_at == at(5, "14:00")
        assert by_entry[2].valid
        assert by_entry[1].invalid_reason is InvalidReason.SECOND_CHALLENGE

    def test_one_challenge_per_turn_edit_to_challenging_after_close_is_no_challenge(self):
        """Noteworthy: “After a turn ends, no PC may post notes on entries from past turns”;
        likewise an edit to Challenging after the close makes no challenge that turn."""
        edited = entry(
            1, ADA, 5, "08:00", "Calm", text="Target: Bram", revisions=[("23:10", "Challenging")]
        )
        tally = play([edited])
        assert tally.challenges == ()
        assert kinds(tally) == [FlagKind.LATE_REVISION]

    def test_one_challenge_per_turn_renewed_challenge_stays_withdrawn(self):
        """Noteworthy: “You may withdraw your challenge before the end of a turn, but that
        still counts as your challenge for that turn.”"""
        flip = entry(
            1,
            ADA,
            5,
            "08:00",
            "Challenging",
            text="Target: Bram",
            revisions=[("09:00", "Calm"), ("10:00", "Challenging")],
        )
        tally = play([flip], [note(10, flip, CYRA, "11:00", "Support")])
        assert tally.challenges[0].withdrawn
        assert FlagKind.RENEWED_CHALLENGE in kinds(tally)
        assert tally.status_of(BRAM) == "active"

    def test_one_challenge_per_turn_withdrawal_by_ruling(self):
        """Noteworthy: “A withdrawn challenge has no effect.” A ``withdrawal`` ruling decides
        it either way."""
        challenge_entry = entry(1, ADA, 5, "09:00", "Challenging", text="Target: Bram")
        notes = [note(10, challenge_entry, DOV, "10:00", "Support")]
        tally = play([challenge_entry], notes, [Ruling(RulingKind.WITHDRAWAL, 1, True)])
        assert tally.challenges[0].withdrawn
        assert tally.challenges[0].outcome is Outcome.NO_EFFECT
        undo = entry(
            2, ADA, 5, "09:00", "Challenging", text="Target: Bram", revisions=[("10:00", "Calm")]
        )
        tally = play([undo], [], [Ruling(RulingKind.WITHDRAWAL, 2, "not withdrawn")])
        assert not tally.challenges[0].withdrawn
        assert tally.status_of(ADA) == "outsider"  # 0-0 tie: the target wins


class TestRule5SelfAndOutsiders:
    def test_self_challenge_is_invalid(self):
        """Noteworthy: “You cannot challenge yourself.”"""
        tally = play([entry(1, ADA, 5, mood="Challenging", text="Target: Ada")])
        assert tally.challenges[0].invalid_reason is InvalidReason.SELF

    def test_outsider_cannot_challenge(self):
        """Noteworthy: “The loser becomes an outsider and is no longer able to advance.”"""
        challenge_entry = entry(1, BRAM, 5, mood="Challenging", text="Target: Ada")
        notes = [note(10, challenge_entry, CYRA, "11:00", "Support")]
        tally = play([challenge_entry], notes, characters=cast(BRAM))
        assert tally.challenges[0].invalid_reason is InvalidReason.CHALLENGER_OUTSIDER
        assert tally.status_of(ADA) == "active"

    def test_challenge_against_outsider_is_invalid(self):
        """Noteworthy: “Losing PCs become outsiders, unaffected by ongoing events”."""
        tally = play(
            [entry(1, ADA, 5, mood="Challenging", text="Target: Bram")], characters=cast(BRAM)
        )
        assert tally.challenges[0].invalid_reason is InvalidReason.TARGET_OUTSIDER
        assert tally.status_of(ADA) == "active"


class TestRule6OwnBlog:
    def test_own_blog_challenging_inside_a_note_is_not_a_challenge(self):
        """Noteworthy: “You cannot issue a challenge in a note to another PC's entry, only on
        your own blog.”"""
        host = entry(1, BRAM, 5, mood="Calm", text="A quiet day.")
        notes = [note(10, host, ADA, "11:00", "Current mood: Challenging\nTarget: Bram")]
        tally = play([host], notes)
        assert tally.challenges == ()
        assert kinds(tally) == [FlagKind.CHALLENGE_IN_NOTE]
        assert tally.provocation.recommended

    def test_own_blog_entry_not_on_a_characters_blog_is_invalid(self):
        """Noteworthy: “You cannot issue a challenge in a note to another PC's entry, only on
        your own blog.”"""
        tally = play([entry(1, None, 5, mood="Challenging", text="Target: Bram")])
        assert tally.challenges[0].invalid_reason is InvalidReason.NOT_A_CHARACTER_BLOG
        assert tally.challenges[0].challenger_id is None
        assert ESME in [c.id for c in tally.standings]
