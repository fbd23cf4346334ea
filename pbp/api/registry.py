"""The API's route table: every operation declares its models, access and status here.

    @operation("POST", "/campaigns/<slug>/turns", tag="turns", access="referee",
               body=EventIn, response=TurnOut, status=201)
    def post_event(call: Call, slug: str) -> TurnOut:
        "Post the event that opens the next turn."

One declaration feeds three things: the Flask route (pbp.api.dispatch runs it), the
OpenAPI document (pbp.api.openapi) and the permission matrix test. So no operation can
exist without a schema, and the document is never edited by hand.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from flask import Blueprint
from pydantic import BaseModel

from pbp.api.bearer import require_token
from pbp.db import Session
from pbp.models import User
from pbp.models.api import ApiToken

bp = Blueprint("api", __name__, url_prefix="/api/v1")

# Who may call: "public" anyone (a token is optional, and may show more); "user" anyone
# with a token; "member" / "player" / "referee" the campaign's, checked by the handler
# (pbp.services.campaigns.require_referee and its neighbours) as the pages check it.
Access = Literal["public", "user", "member", "player", "referee"]
ACCESS_TEXT = {
    "public": "Anyone; a token shows what its user may see.",
    "user": "Any token.",
    "member": "A token of a member of the campaign.",
    "player": "A player's token.",
    "referee": "The referee's token.",
}
_PARAM = re.compile(r"<(?:(\w+):)?(\w+)>")


@dataclass(frozen=True)
class Operation:
    name: str
    method: str
    rule: str
    handler: Callable[..., Any]
    tag: str
    access: Access
    summary: str
    description: str
    body: type[BaseModel] | None
    query: type[BaseModel] | None
    response: type[BaseModel]
    status: int
    paginated: bool

    @property
    def writes(self) -> bool:
        return self.method != "GET"

    @property
    def path_params(self) -> list[tuple[str, str]]:
        """(name, converter) for each path parameter, in order."""
        return [(name, conv or "string") for conv, name in _PARAM.findall(self.rule)]

    @property
    def openapi_path(self) -> str:
        return _PARAM.sub(lambda m: "{" + m.group(2) + "}", self.rule)


@dataclass
class Call:
    """What a handler gets besides its path parameters."""

    session: Session
    user: User | None
    token: ApiToken | None
    now: datetime
    body: Any = None
    query: Any = None
    after: int | None = None  # the decoded cursor of a paged list
    info: dict = field(default_factory=dict)

    @property
    def account(self) -> User:
        """The caller, in an operation whose access check has required a token."""
        return require_token(self.user)


OPERATIONS: list[Operation] = []


def operation(
    method: str,
    rule: str,
    *,
    tag: str,
    access: Access,
    response: type[BaseModel],
    body: type[BaseModel] | None = None,
    query: type[BaseModel] | None = None,
    status: int = 200,
    paginated: bool = False,
) -> Callable:
    """Register a handler as an API operation (see the module docstring)."""

    def register(handler: Callable) -> Callable:
        from pbp.api.dispatch import view_for
        from pbp.api.schemas import PageQuery

        doc = inspect.getdoc(handler) or ""
        summary, _, description = doc.partition("\n\n")
        op = Operation(
            name=handler.__name__,
            method=method,
            rule=rule,
            handler=handler,
            tag=tag,
            access=access,
            summary=summary.replace("\n", " "),
            description=description,
            body=body,
            query=query or (PageQuery if paginated else None),
            response=response,
            status=status,
            paginated=paginated,
        )
        if any(o.name == op.name for o in OPERATIONS):
            raise ValueError(f"two API operations are called {op.name}")
        OPERATIONS.append(op)
        bp.add_url_rule(rule, endpoint=op.name, view_func=view_for(op), methods=[method])
        return handler

    return register
