"""The rules' own error base: every refusal a ruleset makes derives from `RulesError`.

The rules import nothing outside themselves and the standard library, so this is not a
`pbp.errors.UserError`; pbp.errors lists both in `REFUSALS`, and the web layer, the API and
the CLI turn either into a clear message for the person who caused it.
"""

from __future__ import annotations


class RulesError(Exception):
    """An action, roll, sheet or setting the rules do not allow.

    The message is written for the player or referee: it says what to do instead.
    """

    #: The answer the web layer gives (422: the request asked for something the rules refuse;
    #: pbp.errors.REFUSAL_STATUSES).
    status = 422
