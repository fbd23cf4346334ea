"""One Can Have Her (rules/one-can-have-her): rounds, scene conflicts, rat notes, the state.

The facade: `from pbp.rules import one_can_have_her` gives the names of `game`, the ruleset's
entry point; `conflict`, `state` hold the rest.
"""

# The entry point's own __all__ is the list: the facade repeats none of it.
from pbp.rules.one_can_have_her.game import *  # noqa: F403
from pbp.rules.one_can_have_her.game import __all__ as __all__
