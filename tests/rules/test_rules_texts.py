"""The rules texts are found beside the checkout, and their absence fails a CI run."""

from pathlib import Path

import pytest

from tests.rules.rules_texts import RULES_DIR, rules_text

CHECKOUT = Path(__file__).resolve().parents[2]


def test_the_rules_texts_are_read_from_beside_the_checkout():
    """Reading: the texts live in ../shared/rules/ next to the checkout, not at a machine path."""
    assert RULES_DIR.resolve() == (CHECKOUT.parent / "shared" / "rules").resolve()
    assert "/work/" not in str(RULES_DIR.relative_to(CHECKOUT))


def test_a_missing_rules_text_fails_under_ci(monkeypatch, tmp_path):
    """Reading: with CI set, a missing text fails the run instead of skipping the check."""
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="missing"):
        rules_text("noteworthy.txt", rules_dir=tmp_path)


def test_a_missing_rules_text_skips_elsewhere(monkeypatch, tmp_path):
    """Reading: on a machine without the texts (and without CI) the quote checks skip."""
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="missing"):
        rules_text("noteworthy.txt", rules_dir=tmp_path)


def test_a_present_rules_text_is_read_whitespace_normalised(tmp_path):
    """Reading: quotes are compared with runs of whitespace squashed to one space."""
    (tmp_path / "x.txt").write_text("one\n  two\tthree\n", encoding="utf-8")
    assert rules_text("x.txt", rules_dir=tmp_path) == "one two three"
