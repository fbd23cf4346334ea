"""The OpenAPI document as JSON, and as a page people read (rendered on the server from
the same document: no JavaScript, no assets from elsewhere)."""

from __future__ import annotations

import hashlib
import json

from flask import Response, render_template, request
from markupsafe import Markup

from pbp.api.openapi import document
from pbp.api.registry import bp
from pbp.markup import render_markdown

REF_PREFIX = "#/components/schemas/"


@bp.get("/openapi.json")
def openapi_json():
    body = json.dumps(document(), ensure_ascii=False, indent=1).encode()
    return _cached(body, "application/json")


@bp.get("/docs")
def docs_page():
    doc = document()
    page = render_template(
        "api/docs.html",
        doc=doc,
        intro=Markup(render_markdown(doc["info"]["description"])),
        groups=_groups(doc),
        schemas=doc["components"]["schemas"],
        describe=describe,
        markdown=lambda text: Markup(render_markdown(text or "")),
    )
    return _cached(page.encode(), "text/html; charset=utf-8")


def _cached(body: bytes, content_type: str) -> Response:
    etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
    headers = {"ETag": etag, "Cache-Control": "public, max-age=300"}
    if request.headers.get("If-None-Match", "").strip() in (etag, "W/" + etag):
        return Response(status=304, headers=headers)
    return Response(body, content_type=content_type, headers=headers)


def _groups(doc: dict) -> list[dict]:
    """Operations by tag, in the document's tag order."""
    groups = {t["name"]: {"tag": t, "operations": []} for t in doc["tags"]}
    for path, methods in doc["paths"].items():
        for method, op in methods.items():
            groups[op["tags"][0]]["operations"].append(
                {"method": method.upper(), "path": path, **op}
            )
    return list(groups.values())


def describe(schema: dict) -> Markup:
    """A schema in a few words, with links to the named models ("array of EntryOut")."""
    if "$ref" in schema:
        name = schema["$ref"].removeprefix(REF_PREFIX)
        return Markup('<a href="#schema-{0}">{0}</a>').format(name)
    if "anyOf" in schema:
        return Markup(" or ").join(describe(s) for s in schema["anyOf"])
    kind = schema.get("type")
    if kind == "array":
        return Markup("array of ") + describe(schema.get("items", {}))
    if "enum" in schema:
        return Markup(" | ").join(json.dumps(v) for v in schema["enum"])
    if "const" in schema:
        return Markup("{}").format(json.dumps(schema["const"]))
    words = [kind or "any value"]
    if schema.get("format"):
        words[0] += f" ({schema['format']})"
    if schema.get("minLength") == 1:
        words.append("not empty")
    elif "minLength" in schema:
        words.append(f"at least {schema['minLength']} characters")
    limits = {
        "maxLength": "at most {} characters",
        "minimum": "≥ {}",
        "maximum": "≤ {}",
        "maxItems": "at most {} items",
    }
    words += [text.format(schema[key]) for key, text in limits.items() if key in schema]
    return Markup("{}").format(", ".join(words))
