"""Loopback servers for issue #31's channels: a chat webhook (Discord-, Slack- or
Matrix-style) and a Web Push service, both real HTTP on 127.0.0.1.

`HookServer` records every POST (path, headers, body, `time.perf_counter()` on arrival)
and answers each path as told (status, headers, a delay). `PushService` is one, plus a
browser's side of a subscription: the test makes the subscription's own ECDH key pair and
auth secret, as a browser does, so only it can decrypt what pbp pushed (RFC 8291, with
`http_ece`), and it checks the VAPID header names pbp's key (RFC 8292).

    with HookServer() as hooks:
        url = hooks.url("/api/webhooks/1/abc")
        ...
        assert hooks.posts[0].json["content"]
"""

from __future__ import annotations

import base64
import json
import os
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import http_ece
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec


@dataclass
class Post:
    path: str
    headers: dict[str, str]
    body: bytes
    at: float  # time.perf_counter() when it arrived

    @property
    def json(self) -> dict:
        return json.loads(self.body)


@dataclass
class Answer:
    status: int = 204
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    delay: float = 0.0


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        owner = self.server.owner
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        arrived = time.perf_counter()
        with owner.lock:
            owner.posts.append(Post(self.path, dict(self.headers.items()), body, arrived))
            answer = owner.answers.get(self.path.split("?")[0], owner.default)
        if answer.delay:
            owner.stopping.wait(answer.delay)
        self.send_response(answer.status)
        for name, value in answer.headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(answer.body)))
        self.end_headers()
        if answer.body:
            self.wfile.write(answer.body)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, owner: HookServer) -> None:
        self.owner = owner
        super().__init__(("127.0.0.1", 0), _Handler)

    def handle_error(self, request, client_address) -> None:
        """A client giving up (its deadline) is expected; stay quiet."""


class HookServer:
    def __init__(self, default: Answer | None = None) -> None:
        self.posts: list[Post] = []
        self.answers: dict[str, Answer] = {}
        self.default = default or Answer()
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self._server = _Server(self)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def __enter__(self) -> HookServer:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def answer(self, path: str, **how) -> None:
        self.answers[path] = Answer(**how)

    def to(self, path: str) -> list[Post]:
        return [p for p in self.posts if p.path.split("?")[0] == path]

    def texts(self) -> str:
        """Everything posted, as text (what a secrecy test searches)."""
        return "\n".join(p.body.decode("utf-8", "replace") for p in self.posts)


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Browser:
    """A browser's side of one push subscription: its key pair and auth secret."""

    def __init__(self) -> None:
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.auth = os.urandom(16)

    @property
    def p256dh(self) -> str:
        raw = self.key.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )
        return _b64(raw)

    @property
    def auth_secret(self) -> str:
        return _b64(self.auth)

    def read(self, post: Post) -> dict:
        """Decrypt one push (aes128gcm) as the browser would, and parse its JSON."""
        assert post.headers.get("Content-Encoding") == "aes128gcm", post.headers
        plain = http_ece.decrypt(
            post.body, private_key=self.key, auth_secret=self.auth, version="aes128gcm"
        )
        return json.loads(plain)


def vapid_claims(post: Post) -> tuple[dict, str]:
    """The VAPID JWT's claims and the `k=` public key of a push's Authorization header."""
    scheme, _, params = post.headers["Authorization"].partition(" ")
    assert scheme == "vapid", scheme
    fields = dict(part.strip().split("=", 1) for part in params.split(","))
    claims = json.loads(_unb64(fields["t"].split(".")[1]))
    return claims, fields["k"]
