"""Every ONE, Noir, Sex & Violence and One Can Have Her test quotes the sentence it checks.

Each quote (between “ and ”) must appear verbatim, whitespace-normalised, in its ruleset's text
(Noir: the Swedish original or the English digest). A test that checks a documented reading
rather than a sentence says so with a line starting "Reading:". Noteworthy has its own,
stricter check (test_noteworthy_quotes.py).
"""

from pathlib import Path

import pytest

from tests.rules.rules_texts import misquotes, rules_text

RULESETS = {
    "ONE": (["one.txt"], ["tests.rules.test_one", "tests.rules.test_one_combat"]),
    "Noir": (
        ["noir-sv.txt", "noir-en.md"],
        ["tests.rules.test_noir", "tests.rules.test_noir_extended"],
    ),
    "One Can Have Her": (
        ["one-can-have-her.txt"],
        [
            "tests.rules.test_one_can_have_her",
            "tests.rules.test_one_can_have_her_conflict",
            "tests.rules.test_one_can_have_her_properties",
        ],
    ),
    "Sex & Violence": (
        ["sex-and-violence.txt"],
        [
            "tests.rules.test_sex_and_violence",
            "tests.rules.test_sex_and_violence_contest",
            "tests.rules.test_sex_and_violence_mayhem",
            "tests.rules.test_sex_and_violence_properties",
            "tests.rules.test_sex_and_violence_replenish",
        ],
    ),
}


@pytest.mark.parametrize("ruleset", sorted(RULESETS))
def test_every_rules_test_quotes_its_rules_text_verbatim(ruleset):
    """Reading: a rules test cites the sentence it checks, or says which reading it checks."""
    names, modules = RULESETS[ruleset]
    texts = [rules_text(name) for name in names]
    found, problems = misquotes(modules, texts, readings_allowed=True)
    assert found > 10
    assert problems == []


def test_every_rules_test_module_is_in_the_quote_check():
    """Reading: a new ONE, Noir, S&V or OCHH test module is quote-checked too (helpers aside)."""
    prefixes = ("test_one", "test_noir", "test_sex_and_violence")
    helpers = {"test_one_can_have_her_helpers", "test_sex_and_violence_helpers"}
    here = {p.stem for p in Path(__file__).parent.glob("test_*.py") if p.stem.startswith(prefixes)}
    checked = {name.rsplit(".", 1)[1] for _, modules in RULESETS.values() for name in modules}
    assert here - helpers == checked
