"""pbp's own exceptions: each carries a message meant for the person who caused it.

The web layer turns `UserError` into a clear page or JSON problem with `status`;
the CLI prints the message on one line and exits non-zero. The rules have their own base,
`pbp.rules.errors.RulesError` (they import nothing from the rest of pbp); `REFUSALS` names
both, for every place that catches a refusal to show it to the user.
"""

from pbp.rules.errors import RulesError


class PbpError(Exception):
    """Base of every error pbp raises on purpose."""


class ConfigError(PbpError):
    """The environment or instance folder is unusable."""


class DatabaseError(PbpError):
    """The database cannot be reached or its schema does not match the code."""


class SchemaBehind(DatabaseError):
    def __init__(self, current: str | None, head: str):
        self.current, self.head = current, head
        super().__init__(
            f"the database schema is at {current or 'nothing'}, the code needs {head}: "
            "run `pbp db upgrade`"
        )


class UserError(PbpError):
    """Something a user did that pbp refuses, with the reason."""

    status = 400


class NotFound(UserError):
    status = 404


class Forbidden(UserError):
    status = 403


class Conflict(UserError):
    status = 409


#: Everything written for the person who caused it: pbp's refusals and the rules'. Both carry
#: `status`. Catch this, not `UserError` alone, wherever a rule may refuse.
REFUSALS: tuple[type[UserError], type[RulesError]] = (UserError, RulesError)

__all__ = [
    "REFUSALS",
    "Conflict",
    "ConfigError",
    "DatabaseError",
    "Forbidden",
    "NotFound",
    "PbpError",
    "RulesError",
    "SchemaBehind",
    "UserError",
]
