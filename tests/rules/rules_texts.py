"""The rules texts the rules tests quote, read from beside the checkout (../shared/rules/).

Where a text is missing the quote checks skip on a developer's machine, but fail when the
environment variable CI is set: a CI run that silently skipped them would check nothing.
"""

from __future__ import annotations

import importlib
import inspect
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

# tests/rules/rules_texts.py -> parents[2] is the checkout; the texts sit beside it.
RULES_DIR = Path(__file__).resolve().parents[2] / ".." / "shared" / "rules"
QUOTE = re.compile(r"“(.+?)”", re.DOTALL)
READING = re.compile(r"^\s*Reading:", re.MULTILINE)


def squash(text: str) -> str:
    return " ".join(text.split())


def rules_text(name: str, *, rules_dir: Path = RULES_DIR) -> str:
    """The named rules text, whitespace-normalised; skip (or fail under CI) if it is absent."""
    path = rules_dir / name
    if not path.is_file():
        message = f"the rules text {path} is missing (it belongs beside the checkout)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return squash(path.read_text(encoding="utf-8"))


def rule_tests(module_names: list[str]) -> Iterator[tuple[str, object]]:
    """Every test function of these modules, including methods of Test classes."""
    for name in module_names:
        module = importlib.import_module(name)
        for _, member in inspect.getmembers(module):
            if inspect.isclass(member) and member.__name__.startswith("Test"):
                candidates = inspect.getmembers(member, inspect.isfunction)
            elif inspect.isfunction(member) and member.__module__ == name:
                candidates = [(member.__name__, member)]
            else:
                continue
            for test_name, function in candidates:
                if test_name.startswith("test_"):
                    yield f"{name}.{function.__qualname__}", function


def misquotes(
    module_names: list[str], texts: list[str], *, readings_allowed: bool
) -> tuple[int, list[str]]:
    """(tests found, problems): a test without a quote (or, where allowed, a "Reading:" mark),
    or a quote that is not verbatim, whitespace-normalised, in any of the texts."""
    found, problems = 0, []
    for name, function in rule_tests(module_names):
        found += 1
        doc = function.__doc__ or ""
        quotes = QUOTE.findall(doc)
        if not quotes and not (readings_allowed and READING.search(doc)):
            problems.append(f"{name}: no quote" + (" or 'Reading:'" if readings_allowed else ""))
        problems += [f"{name}: {q!r}" for q in quotes if not any(squash(q) in t for t in texts)]
    return found, problems
