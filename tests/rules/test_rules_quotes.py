"""Every ONE, Noir, Sex & Violence and One Can Have Her test quotes the sentence it checks.

Each quote (between “ and ”) must appear verbatim, whitespace-normalised, in its ruleset's text
(Noir: the Swedish original or the English digest). A test that checks a documented reading
rather than a sentence says so with a line starting "Reading:". Noteworthy has its own,
stricter check (noteworthy/test_quotes.py).
"""

from pathlib import Path

import pytest

from tests.rules.rules_texts import misquotes, rules_text

RULESETS = {
    "ONE": (["one.txt"], ["tests.rules.one.test_checks", "tests.rules.one.test_combat"]),
    "Noir": (
        ["noir-sv.txt", "noir-en.md"],
        ["tests.rules.noir.test_resolution", "tests.rules.noir.test_extended"],
    ),
    "One Can Have Her": (
        ["one-can-have-her.txt"],
        [
            "tests.rules.one_can_have_her.test_game",
            "tests.rules.one_can_have_her.test_conflict",
            "tests.rules.one_can_have_her.test_properties",
        ],
    ),
    "Sex & Violence": (
        ["sex-and-violence.txt"],
        [
            "tests.rules.sex_and_violence.test_game",
            "tests.rules.sex_and_violence.test_contest",
            "tests.rules.sex_and_violence.test_mayhem",
            "tests.rules.sex_and_violence.test_properties",
            "tests.rules.sex_and_violence.test_replenish",
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
    """Reading: a new ONE, Noir, S&V or OCHH test module is quote-checked too (builders aside)."""
    here = Path(__file__).parent
    folders = ("one", "noir", "one_can_have_her", "sex_and_violence")
    found = {f"tests.rules.{d}.{p.stem}" for d in folders for p in (here / d).glob("test_*.py")}
    checked = {name for _, modules in RULESETS.values() for name in modules}
    assert found == checked
