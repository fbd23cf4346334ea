"""Errors as RFC 9457 problem details (`application/problem+json`).

Every refusal says what to change: the message of the `UserError` a service raised (the
same words the pages show), or, for a body that failed validation, each field and why.
"""

from __future__ import annotations

import json
from http import HTTPStatus

from flask import Response, request
from pydantic import ValidationError
from werkzeug.exceptions import HTTPException, InternalServerError, default_exceptions

from pbp.db import WriteConflict
from pbp.errors import RulesError, UserError

PROBLEM_JSON = "application/problem+json"
API_PREFIX = "/api/v1"


class InvalidRequest(UserError):
    """A body, query or header that does not match the operation's schema."""

    def __init__(self, message: str, errors: list[dict], status: int = 422):
        super().__init__(message)
        self.errors = errors
        self.status = status


class UnsupportedMediaType(UserError):
    status = 415


def invalid(exc: ValidationError, where: str, status: int = 422) -> InvalidRequest:
    """Pydantic's errors, each with its place in the request, e.g. "body.title"."""
    errors = []
    for error in exc.errors(include_url=False, include_input=False):
        if error["type"] == "json_invalid":
            reason = error["msg"].removeprefix("Invalid JSON: ")
            return InvalidRequest(
                f"the request body is not valid JSON ({reason})",
                [{"location": where, "message": error["msg"]}],
                status=400,
            )
        location = ".".join([where, *(str(part) for part in error["loc"])])
        errors.append({"location": location, "message": error["msg"]})
    summary = "; ".join(f"{e['location']}: {e['message']}" for e in errors[:5])
    return InvalidRequest(f"the request does not fit the API's schema: {summary}", errors, status)


def problem(status: int, detail: str, *, errors=None, headers=None) -> Response:
    try:
        title = HTTPStatus(status).phrase
    except ValueError:
        title = "Error"
    body = {
        "type": "about:blank",
        "title": title,
        "status": status,
        "detail": detail,
        "instance": request.path,
    }
    if errors is not None:
        body["errors"] = errors
    response = Response(
        json.dumps(body, ensure_ascii=False), status=status, content_type=PROBLEM_JSON
    )
    response.headers["Cache-Control"] = "no-store"
    for name, value in (headers or {}).items():
        response.headers[name] = value
    return response


def _auth_headers(exc: UserError | RulesError) -> dict[str, str]:
    from pbp.services.accounts.tokens import InsufficientScope

    if exc.status == 401:
        challenge = 'Bearer realm="pbp"'
        if "Authorization" in request.headers:
            challenge += ', error="invalid_token"'
        return {"WWW-Authenticate": challenge}
    if isinstance(exc, InsufficientScope):
        return {"WWW-Authenticate": 'Bearer realm="pbp", error="insufficient_scope", scope="write"'}
    return {}


def user_error(exc: UserError | RulesError) -> Response:
    return problem(
        exc.status, str(exc), errors=getattr(exc, "errors", None), headers=_auth_headers(exc)
    )


def http_error(exc: HTTPException) -> Response:
    headers = {k: v for k, v in exc.get_headers() if k.lower() not in ("content-type",)}
    detail = {
        404: "there is nothing at this address in the API: see /api/v1/docs for every operation",
        405: f"{request.method} is not allowed here; allowed: {headers.get('Allow', 'none')}",
    }.get(exc.code or 500, exc.description or "")
    return problem(exc.code or 500, detail, headers=headers)


def conflict(_exc: Exception) -> Response:
    """A unique key taken by a request running at the same moment: retrying is safe."""
    return problem(409, "another change got in first and conflicts with this one; try again")


def server_error(_exc: Exception) -> Response:
    return problem(500, "something went wrong on pbp's side; the error is logged")


def is_api_request() -> bool:
    return request.path == API_PREFIX or request.path.startswith(API_PREFIX + "/")


def routing_error_handler(code: int, previous):
    """An app-wide handler for 404/405 that answers problem+json under /api/v1 and leaves
    every other address to the handler that was there before (or Flask's default).

    Routing errors happen before a blueprint is chosen, so the API blueprint's own handlers
    never see them."""

    def handle(exc: HTTPException):
        if is_api_request():
            return http_error(exc)
        if previous is not None:
            return previous(exc)
        return exc

    handle.__name__ = f"api_or_default_{code}"
    return handle


def attach(bp) -> None:
    """The blueprint's own handlers: every error an operation raises."""
    bp.register_error_handler(UserError, user_error)
    bp.register_error_handler(RulesError, user_error)
    bp.register_error_handler(HTTPException, http_error)
    bp.register_error_handler(WriteConflict, conflict)
    bp.register_error_handler(InternalServerError, server_error)


def register_routing_errors(app) -> None:
    for code in (404, 405):
        previous = app.error_handler_spec.get(None, {}).get(code, {}).get(default_exceptions[code])
        app.register_error_handler(code, routing_error_handler(code, previous))
