"""Issue #16, item 6: no request body bigger than PBP_MAX_REQUEST_BYTES (1 MiB) is read.

One 300 MB POST to the unsubscribe link (no login needed) raised a worker's memory by
620 MB. Now a body that declares its size is refused before anything reads it, and one
sent in chunks is cut off at the limit: a 413 page, or problem+json on the API.
"""

from __future__ import annotations

import json
import threading

import pytest
import requests
from werkzeug.serving import make_server

from pbp.config import load_config
from pbp.errors import ConfigError

MAX_REQUEST_BYTES = 1024 * 1024  # the default
OVER = MAX_REQUEST_BYTES + 1
UNSUBSCRIBE = "/mail/unsubscribe/not-even-a-token"


def test_the_default_limit_is_one_mebibyte_and_can_be_set(tmp_path):
    default = load_config(tmp_path, {"SECRET_KEY": "k" * 40})
    assert default["MAX_CONTENT_LENGTH"] == 1024 * 1024
    assert default["MAX_FORM_MEMORY_SIZE"] == 1024 * 1024
    set_ = load_config(tmp_path, {"SECRET_KEY": "k" * 40, "PBP_MAX_REQUEST_BYTES": "4096"})
    assert set_["MAX_CONTENT_LENGTH"] == set_["MAX_FORM_MEMORY_SIZE"] == 4096
    with pytest.raises(ConfigError, match="PBP_MAX_REQUEST_BYTES must be a whole number"):
        load_config(tmp_path, {"SECRET_KEY": "k" * 40, "PBP_MAX_REQUEST_BYTES": "1MB"})


def test_an_oversized_unsubscribe_post_gets_a_413_page(client):
    page = client.post(
        UNSUBSCRIBE, data=b"action=" + b"x" * OVER, content_type="application/x-www-form-urlencoded"
    )
    assert page.status_code == 413
    assert page.mimetype == "text/html"
    assert "larger than the 1 MiB pbp accepts" in page.get_data(as_text=True)


def test_a_body_just_under_the_limit_is_read(client):
    body = b"action=" + b"x" * (MAX_REQUEST_BYTES - 100)
    page = client.post(UNSUBSCRIBE, data=body, content_type="application/x-www-form-urlencoded")
    assert page.status_code != 413  # the link itself is bogus: its own refusal


def test_an_oversized_api_body_gets_problem_json(api, world):
    body = json.dumps({"title": "Long", "body": "x" * OVER, "mood": "calm"})
    answer = api.post(
        f"/campaigns/{world.slug}/entries",
        token=world.tokens["player"],
        data=body,
        content_type="application/json",
    )
    assert answer.status_code == 413
    assert answer.mimetype == "application/problem+json"
    problem = answer.get_json()
    assert problem["status"] == 413
    assert "1 MiB" in problem["detail"]


@pytest.fixture
def served(app):
    """The test app on a real loopback socket (werkzeug's server, as `pbp serve` runs)."""
    server = make_server("127.0.0.1", 0, app, threaded=False)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


def _chunks(total: int, size: int = 64 * 1024):
    yield b"action="
    sent = 0
    while sent < total:
        yield b"x" * size
        sent += size


def test_a_chunked_body_without_a_length_is_cut_off_at_the_limit(served):
    """No Content-Length to check up front: werkzeug stops reading past the limit."""
    answer = requests.post(
        served + UNSUBSCRIBE,
        data=_chunks(8 * MAX_REQUEST_BYTES),
        headers={"Content-Type": "application/x-www-form-urlencoded"},
        timeout=30,
    )
    assert answer.status_code == 413, answer.text
    assert "larger than the 1 MiB pbp accepts" in answer.text


def test_a_declared_oversized_body_is_refused_over_a_real_socket(served):
    answer = requests.post(
        served + "/api/v1/campaigns/any/entries",
        data=b"{" + b" " * (4 * MAX_REQUEST_BYTES) + b"}",
        headers={"Content-Type": "application/json"},
        timeout=30,
    )
    assert answer.status_code == 413
    assert answer.headers["Content-Type"] == "application/problem+json"


def test_a_small_chunked_body_is_read_whole(served):
    answer = requests.post(
        served + UNSUBSCRIBE,
        data=iter([b"action=", b"subscribe"]),
        headers={"Content-Type": "application/x-www-form-urlencoded"},
        timeout=30,
    )
    assert answer.status_code == 400  # the bogus link's own refusal, not a size refusal
    assert "unsubscribe link is damaged" in answer.text


def test_a_chunked_api_body_over_the_limit_gets_problem_json(served):
    answer = requests.post(
        served + "/api/v1/campaigns/any/entries",
        data=_chunks(2 * MAX_REQUEST_BYTES),
        headers={"Content-Type": "application/json"},
        timeout=30,
    )
    assert answer.status_code == 413
    assert answer.headers["Content-Type"] == "application/problem+json"
    assert "larger than the 1 MiB pbp accepts" in answer.json()["detail"]
