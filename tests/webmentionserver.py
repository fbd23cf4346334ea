"""A loopback site that takes part in Webmention for tests (issue #31 item 4): it serves
pages (GET, with the headers a test gives them) and records the Webmentions POSTed to its
endpoint, like a blog, or Bridgy Fed standing in for a Mastodon account.

    with MentionSite() as site:
        site.page("/post", "<html>…</html>", headers={"Link": '<…/webmention>; rel="webmention"'})
        site.received   # [{"source": …, "target": …}, …]
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, *args) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        site = self.server.site
        site.requests.append(("GET", self.path))
        found = site.pages.get(self.path)
        if found is None:
            self._answer(404, {}, b"not found")
            return
        status, headers, body = found
        self._answer(status, {"Content-Type": "text/html; charset=utf-8", **headers}, body)

    def do_POST(self) -> None:
        site = self.server.site
        site.requests.append(("POST", self.path))
        length = int(self.headers.get("Content-Length") or 0)
        form = parse_qs(self.rfile.read(length).decode())
        if self.path != site.endpoint_path:
            self._answer(404, {}, b"not found")
            return
        site.received.append({k: v[0] for k, v in form.items()})
        self._answer(202, {"Content-Type": "text/plain"}, b"accepted")

    def _answer(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, site: MentionSite) -> None:
        self.site = site
        super().__init__((site.host, 0), _Handler)


class MentionSite:
    def __init__(self, host: str = "127.0.0.1", endpoint_path: str = "/webmention") -> None:
        self.host, self.endpoint_path = host, endpoint_path
        self.pages: dict[str, tuple[int, dict[str, str], bytes]] = {}
        self.received: list[dict[str, str]] = []
        self.requests: list[tuple[str, str]] = []
        self._server: _Server | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None
        return f"http://{self.host}:{self._server.server_address[1]}"

    def url(self, path: str) -> str:
        return self.base_url + path

    @property
    def endpoint(self) -> str:
        return self.url(self.endpoint_path)

    def page(self, path: str, html: str, *, status: int = 200, headers=None) -> str:
        self.pages[path] = (status, dict(headers or {}), html.encode())
        return self.url(path)

    def __enter__(self) -> MentionSite:
        self._server = _Server(self)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()
