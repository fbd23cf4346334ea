"""A small WebSub hub on loopback for tests (a real HTTP server thread, like feedserver).

It does what the W3C Recommendation asks of a hub, no more:
- `POST /hub` with `hub.mode=subscribe|unsubscribe`, `hub.topic`, `hub.callback` (and
  `hub.secret`, `hub.lease_seconds`) is answered 202 Accepted; then, on a thread of its
  own, the hub verifies the intent: a GET to the callback with `hub.mode`, `hub.topic`,
  `hub.challenge` and (to subscribe) the `hub.lease_seconds` it grants, at most
  `max_lease_seconds`. The subscriber must answer 2xx echoing the challenge, or nothing
  changes. With `deny=True` the hub sends `hub.mode=denied` instead.
- `publish(topic, body)` POSTs the body to every verified callback of the topic, signed
  `X-Hub-Signature: sha256=<HMAC of the body with the subscription's secret>`, with the
  `Link` headers (rel=hub, rel=self) a delivery carries, and returns the answers.

    with WebSubHub() as hub:
        feed links to hub.url
        ... the subscriber subscribes ...
        hub.wait_for(lambda: hub.verified(topic))
        hub.publish(topic, feed_bytes)
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode

ALGORITHMS = {
    "sha1": hashlib.sha1,
    "sha256": hashlib.sha256,
    "sha384": hashlib.sha384,
    "sha512": hashlib.sha512,
}


@dataclass
class Subscription:
    topic: str
    callback: str
    secret: str | None
    lease_seconds: int


@dataclass
class Verification:
    mode: str
    topic: str
    callback: str
    status: int  # the subscriber's HTTP answer (0: no answer)
    echoed: bool  # it answered 2xx with the challenge


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address, owner: WebSubHub) -> None:
        self.owner = owner
        super().__init__(address, _Handler)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
        status = self.server.owner.request(form)
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()


class WebSubHub:
    def __init__(
        self, host: str = "127.0.0.1", max_lease_seconds: int = 86400, answer: int = 202
    ) -> None:
        self.max_lease_seconds = max_lease_seconds
        self.answer = answer  # the status the hub answers subscription requests with
        self.deny = False
        self.verify = True  # False: accept requests but never verify them (a lost hub)
        self.requests: list[dict[str, str]] = []
        self.verifications: list[Verification] = []
        self.subscriptions: dict[tuple[str, str], Subscription] = {}
        self._lock = threading.Condition()
        self._server = _Server((host, 0), self)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> WebSubHub:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/hub"

    # --- requests and verification of intent -----------------------------------------------
    def request(self, form: dict[str, str]) -> int:
        with self._lock:
            self.requests.append(form)
            self._lock.notify_all()
        mode, topic, callback = (form.get(f"hub.{k}", "") for k in ("mode", "topic", "callback"))
        if mode not in ("subscribe", "unsubscribe") or not topic or not callback:
            return 400
        if self.answer == 202 and self.verify:
            threading.Thread(target=self._verify, args=(form,), daemon=True).start()
        return self.answer

    def _verify(self, form: dict[str, str]) -> None:
        mode, topic, callback = form["hub.mode"], form["hub.topic"], form["hub.callback"]
        challenge = secrets.token_urlsafe(16)
        params = {"hub.mode": mode, "hub.topic": topic, "hub.challenge": challenge}
        lease = min(int(form.get("hub.lease_seconds") or 3600), self.max_lease_seconds)
        if self.deny and mode == "subscribe":
            params = {"hub.mode": "denied", "hub.topic": topic, "hub.reason": "not allowed here"}
        elif mode == "subscribe":
            params["hub.lease_seconds"] = str(lease)
        status, body = _get(callback + ("&" if "?" in callback else "?") + urlencode(params))
        echoed = 200 <= status < 300 and body == challenge.encode()
        with self._lock:
            self.verifications.append(
                Verification(params["hub.mode"], topic, callback, status, echoed)
            )
            if echoed and mode == "subscribe" and not self.deny:
                secret = form.get("hub.secret")
                self.subscriptions[(topic, callback)] = Subscription(topic, callback, secret, lease)
            elif echoed and mode == "unsubscribe":
                self.subscriptions.pop((topic, callback), None)
            self._lock.notify_all()

    def verified(self, topic: str, mode: str = "subscribe") -> list[Verification]:
        with self._lock:
            return [v for v in self.verifications if v.topic == topic and v.mode == mode]

    def wait_for(self, predicate: Callable[[], object], timeout: float = 5.0) -> bool:
        end = time.monotonic() + timeout
        with self._lock:
            while not predicate():
                left = end - time.monotonic()
                if left <= 0:
                    return False
                self._lock.wait(left)
        return True

    # --- content distribution --------------------------------------------------------------
    def publish(
        self,
        topic: str,
        body: bytes,
        *,
        content_type: str = "application/atom+xml",
        algorithm: str = "sha256",
        secret: str | None = None,
        signed: bool = True,
    ) -> list[tuple[str, int]]:
        """Deliver `body` to every subscriber of `topic`; (callback, status) for each.
        `secret` replaces the subscription's (a forged delivery); `signed=False` sends none."""
        with self._lock:
            targets = [s for s in self.subscriptions.values() if s.topic == topic]
        return [
            (s.callback, self.deliver(s, body, content_type, algorithm, secret, signed))
            for s in targets
        ]

    def deliver(self, sub, body, content_type, algorithm="sha256", secret=None, signed=True):
        headers = {
            "Content-Type": content_type,
            "Link": f'<{self.url}>; rel="hub", <{sub.topic}>; rel="self"',
        }
        key = secret if secret is not None else sub.secret
        if signed and key is not None:
            digest = hmac.new(key.encode(), body, ALGORITHMS[algorithm]).hexdigest()
            headers["X-Hub-Signature"] = f"{algorithm}={digest}"
        request = urllib.request.Request(sub.callback, data=body, headers=headers, method="POST")
        return _send(request)[0]


def _get(url: str) -> tuple[int, bytes]:
    return _send(urllib.request.Request(url))


def _send(request: urllib.request.Request) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()
    except OSError:
        return 0, b""
