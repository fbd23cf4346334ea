"""Every Noteworthy test quotes the rules text it checks, and quotes it exactly."""

import importlib
import inspect
import re
from pathlib import Path

import pytest

RULES_TEXT = Path("/work/shared/rules/noteworthy.txt")
MODULES = [
    "tests.rules.test_noteworthy_text",
    "tests.rules.test_noteworthy_challenges",
    "tests.rules.test_noteworthy_notes",
    "tests.rules.test_noteworthy_outcomes",
    "tests.rules.test_noteworthy_campaign",
    "tests.rules.test_noteworthy_properties",
]
QUOTE = re.compile(r"“(.+?)”", re.DOTALL)


def _squash(text: str) -> str:
    return " ".join(text.split())


def _tests():
    for name in MODULES:
        module = importlib.import_module(name)
        for _, member in inspect.getmembers(module):
            if inspect.isclass(member) and member.__name__.startswith("Test"):
                candidates = inspect.getmembers(member, inspect.isfunction)
            elif inspect.isfunction(member):
                candidates = [(member.__name__, member)]
            else:
                continue
            for test_name, function in candidates:
                if test_name.startswith("test_"):
                    yield f"{name}.{function.__qualname__}", function


@pytest.mark.skipif(not RULES_TEXT.exists(), reason="the rules text is not on this machine")
def test_every_noteworthy_test_quotes_the_rules_text_verbatim():
    """Noteworthy tests cite the rule they check; a misquote would cite a rule that isn't."""
    rules = _squash(RULES_TEXT.read_text(encoding="utf-8"))
    problems = []
    found = 0
    for name, function in _tests():
        found += 1
        quotes = QUOTE.findall(function.__doc__ or "")
        if not quotes:
            problems.append(f"{name}: no quote")
        problems += [f"{name}: {q!r}" for q in quotes if _squash(q) not in rules]
    assert found > 50
    assert problems == []
