"""Sex & Violence: characters, hands, contests, aces, mayhem, replenishing, the state.

The facade: `from pbp.rules import sex_and_violence` gives the names of `game`, the ruleset's
entry point; `aces`, `contest`, `hand`, `mayhem`, `replenish`, `state` hold the rest.
"""

# The entry point's own __all__ is the list: the facade repeats none of it.
from pbp.rules.sex_and_violence.game import *  # noqa: F403
from pbp.rules.sex_and_violence.game import __all__ as __all__
