"""The OpenAPI 3.1 document, generated from the route table (pbp.api.registry) and the
pydantic models' JSON Schemas. Nothing here is written by hand about a single operation:
add an operation with `@operation` and it appears, with its schemas, parameters, access
and errors.
"""

from __future__ import annotations

from functools import cache
from typing import Literal

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from pbp.api import schemas
from pbp.api.registry import ACCESS_TEXT, OPERATIONS, Operation
from pbp.errors import REFUSAL_STATUSES
from pbp.rate_limits import CONTENT_OPERATIONS, DRAFT_OPERATIONS

REF = "#/components/schemas/{model}"
PROBLEM = "application/problem+json"
TAG_TEXT = {
    "account": "The token's owner.",
    "campaigns": "Campaigns: anyone may read them; anyone with an account may start one.",
    "characters": "The roster: characters, their blogs and the referee's view of them.",
    "turns": "Turns and the referee's events; the referee opens, closes and resolves them.",
    "tallies": "Noteworthy tallies, challenges and the referee's rulings.",
    "referee": "The referee's desk: settings, queued event, final notice, reminders, mail, audit.",
    "entries": "Entries on the characters' blogs, and a player's built-in blog.",
    "notes": "Notes (comments) on entries.",
    "forum": "Forum campaigns: threads, posts and their dice rolls.",
    "drafts": "Your own saved drafts of the entry, note and post forms; no one else reads them.",
    "search": "Search a campaign's entries, notes, forum posts and events.",
}
INTRO = """\
pbp's API does what the site's pages do, with the same permission checks.

**Tokens.** Make a personal token on [/account/tokens](/account/tokens) and send it as
`Authorization: Bearer <token>`. A *read* token may only GET; a *write* token may do
everything its owner may. Operations for the referee need the referee's token.

**Errors** are RFC 9457 problem details (`application/problem+json`); `detail` says what
to change, and `errors` lists each invalid field. 400: the request cannot be read; 409: the
game's state forbids it now; 422: refused for what it asks (the schema or the rules). The
pages answer a refused form with the same status.

**Lists** come in pages: `items` and `next_cursor`; pass `cursor=<next_cursor>` for the
next page (also in the `Link: rel="next"` header). A null `next_cursor` is the last page.

**Caching.** Every GET has an `ETag`; send it back in `If-None-Match` to get
`304 Not Modified` when nothing changed.

**Retries.** Send an `Idempotency-Key` header (e.g. a random UUID) with a write: a retry
with the same key returns the first answer and changes nothing more. A key used with a
different request is refused (422). Answers are kept for a day.
"""


def _page_model(item: type[BaseModel]) -> type[BaseModel]:
    from pydantic import create_model

    return create_model(
        f"{item.__name__.removesuffix('Out')}Page",
        __base__=schemas.Out,
        items=(list[item], ...),  # type: ignore[valid-type]  # a model made at run time
        next_cursor=(str | None, ...),
    )


_PAGES: dict[type, type[BaseModel]] = {}


def page_model(item: type[BaseModel]) -> type[BaseModel]:
    if item not in _PAGES:
        _PAGES[item] = _page_model(item)
    return _PAGES[item]


def _component_schemas() -> tuple[dict, dict]:
    models: list[tuple[type[BaseModel], Literal["serialization", "validation"]]] = [
        (schemas.Problem, "serialization")
    ]
    for op in OPERATIONS:
        out = page_model(op.response) if op.paginated else op.response
        models.append((out, "serialization"))
        if op.body is not None:
            models.append((op.body, "validation"))
    keys, defs = models_json_schema(models, ref_template=REF)
    return keys, defs.get("$defs", {})


def _parameters(op: Operation) -> list[dict]:
    params = []
    for name, converter in op.path_params:
        schema = (
            {"type": "integer", "minimum": 1, "maximum": schemas.MAX_ID}
            if converter == "int"
            else {"type": "string", "minLength": 1, "pattern": "^[^/]+$"}
        )
        params.append({"name": name, "in": "path", "required": True, "schema": schema})
    if op.query is not None:
        query = op.query.model_json_schema(ref_template=REF)
        required = set(query.get("required", []))
        for name, schema in query["properties"].items():
            description = schema.pop("description", None)
            schema.pop("title", None)
            param = {"name": name, "in": "query", "required": name in required, "schema": schema}
            if description:
                param["description"] = description
            params.append(param)
    if op.writes:
        params.append(
            {
                "name": "Idempotency-Key",
                "in": "header",
                "required": False,
                "description": "Makes a retry of this write return the first answer.",
                "schema": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 200,
                    "pattern": "^[\\x20-\\x7e]+$",
                },
            }
        )
    return params


def _problem(description: str, headers: dict | None = None) -> dict:
    response = {
        "description": description,
        "content": {PROBLEM: {"schema": {"$ref": REF.format(model="Problem")}}},
    }
    if headers:
        response["headers"] = headers
    return response


def _errors(op: Operation) -> dict:
    challenge = {"WWW-Authenticate": {"schema": {"type": "string"}}}
    errors = {
        "400": _problem(REFUSAL_STATUSES[400]),
        "401": _problem("No token, or one that is unknown or revoked.", challenge),
        "404": _problem("No such campaign, character, entry or turn."),
        "default": _problem("Any other error, as problem details."),
    }
    if op.access != "public" or op.writes:
        errors["403"] = _problem("You may not do this (the detail says who may).")
    if op.writes:
        errors["409"] = _problem(REFUSAL_STATUSES[409])
        errors["422"] = _problem(REFUSAL_STATUSES[422])
    if op.body is not None:
        errors["413"] = _problem("The body is larger than pbp accepts (1 MiB by default).")
        errors["415"] = _problem("The body is not JSON.")
    if op.name in CONTENT_OPERATIONS:
        errors["429"] = _problem("Too many posts from this account in a short time: wait.")
    if op.name in DRAFT_OPERATIONS:
        errors["429"] = _problem("Too many drafts saved by this account in a minute: wait.")
    return errors


def _success(op: Operation, keys: dict) -> dict:
    out = page_model(op.response) if op.paginated else op.response
    response: dict = {
        "description": "Created." if op.status == 201 else "The result.",
        "content": {"application/json": {"schema": keys[(out, "serialization")]}},
    }
    if not op.writes:
        response["headers"] = {
            "ETag": {"required": True, "schema": {"type": "string"}},
        }
        if op.paginated:
            response["headers"]["Link"] = {
                "description": 'The next page, as rel="next".',
                "schema": {"type": "string"},
            }
    return response


def _responses(op: Operation, keys: dict) -> dict:
    responses = {str(op.status): _success(op, keys), **_errors(op)}
    if not op.writes:
        responses["304"] = {"description": "Not modified since the ETag you sent."}
    return dict(sorted(responses.items(), key=lambda item: (item[0] == "default", item[0])))


def _operation(op: Operation, keys: dict) -> dict:
    doc: dict = {
        "operationId": op.name,
        "tags": [op.tag],
        "summary": op.summary,
        "description": "\n\n".join(
            p for p in (op.description, f"**Who:** {ACCESS_TEXT[op.access]}") if p
        ),
        "x-pbp-access": op.access,
        "parameters": _parameters(op),
        "responses": _responses(op, keys),
    }
    if op.access == "public":
        doc["security"] = [{}, {"bearer": []}]
    if op.body is not None:
        doc["requestBody"] = {
            "required": any(f.is_required() for f in op.body.model_fields.values()),
            "content": {"application/json": {"schema": keys[(op.body, "validation")]}},
        }
    return doc


@cache
def document() -> dict:
    """The whole document (the route table is fixed once the modules are imported)."""
    keys, defs = _component_schemas()
    paths: dict[str, dict] = {}
    for op in OPERATIONS:
        paths.setdefault(op.openapi_path, {})[op.method.lower()] = _operation(op, keys)
    tags = sorted({op.tag for op in OPERATIONS}, key=list(TAG_TEXT).index)
    return {
        "openapi": "3.1.0",
        "info": {"title": "pbp API", "version": "1", "description": INTRO},
        "servers": [{"url": "/api/v1"}],
        "tags": [{"name": t, "description": TAG_TEXT[t]} for t in tags],
        "paths": paths,
        "components": {
            "schemas": defs,
            "securitySchemes": {
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "A personal token from /account/tokens.",
                }
            },
        },
        "security": [{"bearer": []}],
    }
