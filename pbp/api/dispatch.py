"""Running one API operation: who calls, what they sent, what they get back.

Reads get an `ETag` (a hash of the body) and answer `304 Not Modified` to a matching
`If-None-Match`. Writes need a write token, commit once, after the handler, and honour
`Idempotency-Key`: the answer is stored in the same transaction as the change, and a
retry with the key gets it back without running anything again.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from typing import Any

from flask import Response, current_app, request
from pydantic import BaseModel, ValidationError

from pbp import rate_limits
from pbp.api import bearer, problems
from pbp.api.registry import Call, Operation
from pbp.api.schemas import MAX_ID
from pbp.db import WriteConflict
from pbp.errors import Conflict, NotFound
from pbp.models import utcnow
from pbp.request_db import get_session
from pbp.services import idempotency
from pbp.services.accounts import tokens as api_tokens
from pbp.services.lookups import Page

JSON = "application/json"


def view_for(op: Operation):
    def view(**path):
        return dispatch(op, path)

    view.__name__ = op.name
    view.__doc__ = op.handler.__doc__
    return view


def now():
    return current_app.config.get("PBP_CLOCK", utcnow)()


def dispatch(op: Operation, path: dict) -> Response:
    _check_path(op, path)
    session = get_session()
    user, token = bearer.identify(session)
    if op.access != "public":
        bearer.require_token(user)
    if op.writes:
        api_tokens.require_scope(bearer.require_token_row(token), "write")
    if op.name in rate_limits.CONTENT_OPERATIONS:
        rate_limits.check_content(user)  # the same per-account budget as the pages
    if op.name in rate_limits.DRAFT_OPERATIONS:
        rate_limits.check_drafts(user)
    call = Call(session=session, user=user, token=token, now=now())
    call.query, call.after = _query(op)
    call.body = _body(op)
    if op.writes:
        return _write(op, call, path)
    return _read(op, call, path)


def _check_path(op: Operation, path: dict) -> None:
    """Ids the database cannot hold and text with NUL bytes name nothing that exists."""
    for name, converter in op.path_params:
        value = path[name]
        if converter == "int" and not 1 <= value <= MAX_ID:
            raise NotFound(f"there is no {name.replace('_', ' ')} {value}")
        if converter != "int" and "\x00" in value:
            raise NotFound(f"there is no {name.replace('_', ' ')} with that name")


def _query(op: Operation):
    if op.query is None:
        return None, None
    try:
        query = op.query.model_validate(request.args.to_dict())
    except ValidationError as exc:
        raise problems.invalid(exc, "query", status=400) from exc
    return query, decode_cursor(getattr(query, "cursor", None))


def _body(op: Operation) -> BaseModel | None:
    if op.body is None:
        return None
    raw = request.get_data()
    if not raw.strip() and not _requires_body(op.body):
        raw = b"{}"
    elif request.mimetype != JSON:
        raise problems.UnsupportedMediaType(
            f"send the body as JSON with 'Content-Type: {JSON}' "
            f"(this request's is {request.mimetype or 'missing'})"
        )
    try:
        return op.body.model_validate_json(raw)
    except ValidationError as exc:
        raise problems.invalid(exc, "body") from exc


def _requires_body(model: type[BaseModel]) -> bool:
    return any(f.is_required() for f in model.model_fields.values())


# -- cursors -------------------------------------------------------------------------------


def encode_cursor(after: int | None) -> str | None:
    if after is None:
        return None
    return base64.urlsafe_b64encode(f"after:{after}".encode()).decode().rstrip("=")


def decode_cursor(cursor: str | None) -> int | None:
    if cursor is None:
        return None
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        kind, _, value = text.partition(":")
        after = int(value)
        if kind != "after" or not 0 <= after <= MAX_ID:
            raise ValueError(kind)
    except (ValueError, binascii.Error, UnicodeDecodeError) as exc:
        raise problems.InvalidRequest(
            "this cursor was not made by this API: use the next_cursor of the previous page, "
            "or leave cursor out to start at the first page",
            [{"location": "query.cursor", "message": "unknown cursor"}],
            status=400,
        ) from exc
    return after


# -- reads ---------------------------------------------------------------------------------


def _read(op: Operation, call: Call, path: dict) -> Response:
    result = op.handler(call, **path)
    headers = {"Cache-Control": "private, no-cache", "Vary": "Authorization"}
    if op.paginated:
        payload, link = _page_payload(result)
        if link:
            headers["Link"] = link
    else:
        payload = result.model_dump(mode="json")
    body = _encode(payload)
    etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
    headers["ETag"] = etag
    if _matches(request.headers.get("If-None-Match"), etag):
        return Response(status=304, headers=headers)
    return Response(body, status=op.status, content_type=JSON, headers=headers)


def _page_payload(page: Page) -> tuple[dict, str | None]:
    cursor = encode_cursor(page.next_after)
    payload = {
        "items": [item.model_dump(mode="json") for item in page.items],
        "next_cursor": cursor,
    }
    link = None
    if cursor:
        args = {**request.args.to_dict(), "cursor": cursor}
        query = "&".join(f"{k}={_quote(v)}" for k, v in args.items())
        link = f'<{request.path}?{query}>; rel="next"'
    return payload, link


def _quote(value: str) -> str:
    from urllib.parse import quote

    return quote(value, safe="")


def _matches(header: str | None, etag: str) -> bool:
    """RFC 9110 weak comparison, as If-None-Match asks."""
    if not header:
        return False
    if header.strip() == "*":
        return True
    return any(tag.strip().removeprefix("W/") == etag for tag in header.split(","))


def _encode(payload) -> bytes:
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()


# -- writes --------------------------------------------------------------------------------


def _write(op: Operation, call: Call, path: dict) -> Response:
    key = request.headers.get("Idempotency-Key")
    if key is None:
        result = op.handler(call, **path)
        payload = result.model_dump(mode="json")
        call.session.commit()
        return _written(payload, op.status)
    record: dict[str, Any] = dict(
        session=call.session,
        user=call.user,
        key=idempotency.check_key(key),
        method=request.method,
        path=request.path[:2000],
        fingerprint=idempotency.request_hash(request.method, request.full_path, request.get_data()),
    )
    first = idempotency.find(**record, now=call.now)
    if first is not None:
        return _written(first.body, first.status, replayed=True)
    result = op.handler(call, **path)
    payload = result.model_dump(mode="json")
    try:
        idempotency.remember(**record, status=op.status, body=payload, now=call.now)
        call.session.commit()
    except WriteConflict as exc:
        # The same key in a request that committed first: answer as that one did.
        call.session.rollback()
        first = idempotency.find(**record, now=call.now)
        if first is None:
            raise Conflict("this change conflicts with another made at the same moment") from exc
        return _written(first.body, first.status, replayed=True)
    return _written(payload, op.status)


def _written(payload: dict, status: int, replayed: bool = False) -> Response:
    response = Response(_encode(payload), status=status, content_type=JSON)
    response.headers["Cache-Control"] = "no-store"
    if replayed:
        response.headers["Idempotent-Replayed"] = "true"
    return response
