"""Noteworthy (rules/noteworthy.txt): the blog game's pure rules engine.

The facade: `from pbp.rules import noteworthy` gives the names of `engine`, the ruleset's
entry point; `challenges`, `context`, `final`, `model`, `positions`, `resolve` and `text`
hold the rest.
"""

# The entry point's own __all__ is the list: the facade repeats none of it.
from pbp.rules.noteworthy.engine import *  # noqa: F403
from pbp.rules.noteworthy.engine import __all__ as __all__
