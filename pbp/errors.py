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


#: What a refusal's status means, on the pages and in the API alike (issue #35 item 5); the
#: OpenAPI document and docs/api.md say the same words (tests/test_refusal_statuses.py).
REFUSAL_STATUSES = {
    400: "The request cannot be read: the body is not JSON, a query parameter or cursor is "
    "malformed, or a form is damaged. Fix the request itself.",
    409: "The request is fine, but the game's state forbids it now: the turn is open, the "
    "campaign has ended, the table changed since you read it (a stale `version`), someone "
    "else got in first. Read the state again; the same request may succeed later.",
    422: "The request was read and is refused for what it asks: a body outside the schema, "
    "or something the rules or pbp do not allow (a card move, a roll command, a sheet, a "
    "reused Idempotency-Key). The same request will always be refused: change what it asks.",
}


class UserError(PbpError):
    """Something a user did that pbp refuses, with the reason: 422, the request is refused
    for what it asks (`REFUSAL_STATUSES`)."""

    status = 422


class Malformed(UserError):
    """A request that cannot be read (a malformed header, a damaged form): 400."""

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
    "Malformed",
    "NotFound",
    "PbpError",
    "RulesError",
    "SchemaBehind",
    "UserError",
]
