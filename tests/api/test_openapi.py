"""The OpenAPI document is generated from the route table, complete, and readable."""

from __future__ import annotations

import re

from pbp.api import OPERATIONS
from pbp.api.openapi import document


def _rules(app) -> set[tuple[str, str]]:
    found = set()
    for rule in app.url_map.iter_rules():
        if rule.endpoint.startswith("api.") and rule.endpoint not in (
            "api.openapi_json",
            "api.docs_page",
        ):
            path = re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", rule.rule.removeprefix("/api/v1"))
            found |= {(m, path) for m in rule.methods - {"HEAD", "OPTIONS"}}
    return found


def test_every_route_is_in_the_document_and_nothing_else(app):
    doc = document()
    documented = {(m.upper(), p) for p, ops in doc["paths"].items() for m in ops}
    assert documented == _rules(app)
    assert len(documented) == len(OPERATIONS)


def test_the_document_is_openapi_3_1_with_its_models(api):
    response = api.get("/openapi.json")
    assert response.status_code == 200 and response.mimetype == "application/json"
    doc = response.get_json()
    assert doc["openapi"] == "3.1.0"
    schemas = doc["components"]["schemas"]
    refs = set(re.findall(r'"#/components/schemas/([^"]+)"', response.get_data(as_text=True)))
    assert refs <= set(schemas), refs - set(schemas)
    post_entry = doc["paths"]["/campaigns/{slug}/entries"]["post"]
    assert post_entry["requestBody"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/EntryIn"
    }
    assert schemas["EntryIn"]["additionalProperties"] is False
    assert post_entry["x-pbp-access"] == "player"
    assert "Idempotency-Key" in {p["name"] for p in post_entry["parameters"]}
    problem = post_entry["responses"]["409"]["content"]["application/problem+json"]
    assert problem["schema"] == {"$ref": "#/components/schemas/Problem"}


def test_a_new_model_field_reaches_the_document():
    """Generated, not kept beside the code: the schema is the model's own."""
    from pbp.api import schemas

    doc = document()
    assert set(doc["components"]["schemas"]["NoteIn"]["properties"]) == set(
        schemas.NoteIn.model_fields
    )


def test_the_docs_page_renders_every_operation_without_outside_assets(api):
    response = api.get("/docs")
    page = response.get_data(as_text=True)
    assert response.status_code == 200 and response.mimetype == "text/html"
    for op in OPERATIONS:
        assert f'id="op-{op.name}"' in page
    assert 'id="schema-EntryIn"' in page
    assert not re.search(r'(src|href)="(https?:)?//', page)
    assert "<script" not in page
    etag = response.headers["ETag"]
    assert api.get("/docs", headers={"If-None-Match": etag}).status_code == 304
