"""Reading moods, stances and targets from text (rules 1, 2 and 9 at the text level)."""

import re

import pytest

from pbp.rules.noteworthy import (
    CHALLENGING_MOOD_PATTERN,
    Character,
    RulesError,
    Settings,
    Stance,
    Status,
    TargetMethod,
    detect_target,
    find_named_characters,
    is_challenging,
    normalize_mood,
    read_stance,
)
from tests.rules.noteworthy.worked_campaign import ADA, BRAM, CYRA, DOV, cast

CAST = cast()


class TestRule1MoodNormalization:
    @pytest.mark.parametrize(
        "raw",
        ["Challenging", "challenging", "  CHALLENGING  ", "Challenging!", "challenging :)",
         "*Challenging*", "Current mood: Challenging", "😠 Challenging 😠", "\tChallenging.\n",
         "current mood:challenging", "Challenged", "not challenging", "challenging (very)",
         "Unchallenging", "Chal lenging", "Current mood: current mood: challenging",
         "challenging_", "", "   ", "Current mood:", "Challenging Challenging"],
    )  # fmt: skip
    def test_the_pattern_pages_use_reads_the_mood_as_the_rules_do(self, raw):
        """Noteworthy: “By describing your mood as "Challenging," you issue a challenge to
        another PC.” The write page shows the target picker by this pattern (in the
        browser), so it must read a mood exactly as `is_challenging` does."""
        matches = re.search(CHALLENGING_MOOD_PATTERN, raw, re.IGNORECASE) is not None
        assert matches == is_challenging(raw)

    """Rule 1: the mood is read from its "Current mood:" value and normalized."""

    @pytest.mark.parametrize(
        "raw",
        ["Challenging", "challenging", "  CHALLENGING  ", "Challenging!", "challenging :)",
         "*Challenging*", "Current mood: Challenging", "😠 Challenging 😠", "\tChallenging.\n"],
    )  # fmt: skip
    def test_mood_challenging_in_any_decoration_marks_a_challenge(self, raw):
        """Noteworthy: “By describing your mood as "Challenging," you issue a challenge to
        another PC.” Case, surrounding punctuation and whitespace do not matter."""
        assert normalize_mood(raw) == "challenging"
        assert is_challenging(raw)

    @pytest.mark.parametrize(
        "raw", ["Challenged", "not challenging", "challenging (very)", "Unchallenging"]
    )
    def test_mood_other_words_are_not_challenging(self, raw):
        """Noteworthy: “A blog entry with the "Current mood:" line "Challenging" constitutes a
        challenge.” Only that mood does."""
        assert not is_challenging(raw)

    @pytest.mark.parametrize("raw", [None, "", "   ", "...", "Current mood:"])
    def test_mood_missing_or_empty_is_none(self, raw):
        """Noteworthy: “Each blog entry you post must have a "Current mood:" line beneath the
        title.” An empty value is no mood."""
        assert normalize_mood(raw) is None

    def test_mood_inner_whitespace_collapses(self):
        """Noteworthy: “The referee may define other game actions appropriate to the setting,
        along with an identifying "Current mood:" line”."""
        assert normalize_mood("  Quietly   Scheming! ") == "quietly scheming"

    def test_mood_settings_reject_actions_that_would_hide_a_challenge(self):
        """Noteworthy: “A blog entry with the "Current mood:" line "Challenging" constitutes a
        challenge.” so no action may claim that mood."""
        with pytest.raises(RulesError, match="Challenging"):
            Settings(actions={"Challenging!": "Duel"})
        with pytest.raises(RulesError):
            Settings(actions={"  ": "Nothing"})
        with pytest.raises(RulesError):
            Settings(opening_turns=-1)

    def test_mood_settings_normalize_action_moods(self):
        """Noteworthy: “The referee may define other game actions appropriate to the setting,
        along with an identifying "Current mood:" line”."""
        assert dict(Settings(actions={" SCHEMING! ": "Plot"}).actions) == {"scheming": "Plot"}


class TestRule2TargetDetection:
    """Rule 2: a challenge names exactly one target character."""

    def test_target_explicit_line_wins_over_names_in_the_text(self):
        """Noteworthy: “The challenger's entry must name exactly one target PC as the target
        of the challenge.” An explicit "Target:" line is that naming."""
        reading = detect_target("Of Cyra and Dov", "**Target:** Bram.\nCyra, Dov", CAST, ADA)
        assert (reading.target_id, reading.method) == (BRAM, TargetMethod.EXPLICIT)

    def test_target_single_name_in_title_or_text(self):
        """Noteworthy: “The challenger's entry must name exactly one target PC as the target
        of the challenge.”"""
        assert detect_target("Bram's folly", "", CAST, ADA).target_id == BRAM
        assert detect_target("Untitled", "I saw what bram did.", CAST, ADA).target_id == BRAM

    def test_target_possessives_count_but_not_longer_words(self):
        """Noteworthy: “The challenger's entry must name exactly one target PC”: whole words
        only, possessives included."""
        assert detect_target("", "Dov’s ledger", CAST, ADA).target_id == DOV
        assert detect_target("", "Dovetail joints and Brambles", CAST, ADA).needs_ruling

    def test_target_challengers_own_name_does_not_count(self):
        """Noteworthy: “You cannot challenge yourself.” so the challenger's own name is no
        candidate when scanning names."""
        reading = detect_target("Ada speaks", "I, Ada, accuse Cyra.", CAST, ADA)
        assert reading.target_id == CYRA

    @pytest.mark.parametrize("text", ["Nobody in particular.", "Bram and Cyra conspire."])
    def test_target_none_or_several_names_need_a_ruling(self, text):
        """Noteworthy: “The challenger's entry must name exactly one target PC”. Zero or
        several candidates are flagged, never dropped."""
        reading = detect_target("", text, CAST, ADA)
        assert reading.needs_ruling
        assert reading.method is TargetMethod.UNRESOLVED
        assert "ruling" in reading.explanation

    def test_target_explicit_line_naming_nobody_needs_a_ruling(self):
        """Noteworthy: “The challenger's entry must name exactly one target PC”."""
        reading = detect_target("", "Target: the Moon\nBram did it.", CAST, ADA)
        assert reading.needs_ruling
        assert "the Moon" in reading.explanation

    def test_target_aliases_and_longest_name_win(self):
        """Noteworthy: “The challenger's entry must name exactly one target PC”: referee
        aliases name characters too, and "Vance Holt" is not "Vance"."""
        people = (*CAST, Character(7, "Vance"), Character(8, "Vance Holt"))
        aliases = {"the Duke": DOV, "ghost": 99}  # an alias to no character is ignored
        assert detect_target("", "The Duke's men", people, ADA, aliases).target_id == DOV
        assert detect_target("", "Vance  Holt's ship", people, ADA).target_id == 8
        assert find_named_characters("ghost of Vance", people, aliases) == (7,)

    def test_target_outsiders_are_still_named(self):
        """Noteworthy: “The loser becomes an outsider and is no longer able to advance.” An
        outsider named as the target is an invalid challenge, not an unnamed one."""
        people = (*CAST[:2], Character(9, "Zoë", Status.OUTSIDER))
        assert detect_target("", "Zoë must answer.", people, ADA).target_id == 9


class TestRule9StanceReading:
    """Rule 9: explicit markers give support or oppose; no marker, none; both, ambiguous."""

    @pytest.mark.parametrize(
        ("text", "stance"),
        [
            ("Support", Stance.SUPPORT),
            ("**Oppose.**", Stance.OPPOSE),
            ("Stance: support", Stance.SUPPORT),
            ("Stance = oppose, obviously", Stance.OPPOSE),
            ("+1", Stance.SUPPORT),
            ("-1 from me.", Stance.OPPOSE),
            ("I support this challenge.", Stance.SUPPORT),
            ("Well. I strongly oppose it.", Stance.OPPOSE),
            ("Support -- she had it coming.", Stance.SUPPORT),
            ("In character prose.\nOppose!\nMore prose.", Stance.OPPOSE),
        ],
    )
    def test_stance_explicit_markers(self, text, stance):
        """Noteworthy: “Each PC still in the game (except the challenger and target) may, if
        he or she wishes, note clear support or opposition to the challenge.”"""
        reading = read_stance(text)
        assert reading.stance is stance
        assert reading.markers

    @pytest.mark.parametrize(
        "text",
        [
            "",
            "Thanks for the support!",
            "Support from the guild arrived late.",
            "I do not support or oppose anything.",
            "The score was 2-1, then +10.",
            "Support?",
        ],
    )
    def test_stance_prose_without_a_clear_marker_is_none(self, text):
        """Noteworthy: “note clear support or opposition to the challenge.” Prose that only
        mentions support is no position."""
        assert read_stance(text).stance is Stance.NONE

    @pytest.mark.parametrize(
        "text", ["Support. Wait, no: -1", "+1\nOppose", "I support. I oppose."]
    )
    def test_stance_both_ways_is_ambiguous(self, text):
        """Noteworthy: “If a PC's position is ambiguous, the referee's interpretation is
        final.”"""
        reading = read_stance(text)
        assert reading.stance is Stance.AMBIGUOUS
        assert "ruling" in reading.explanation
