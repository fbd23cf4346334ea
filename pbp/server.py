"""Embedded mode (`pbp serve`, `pbp demo`): waitress in one process, the scheduler beside it.

Issue #28 item 3: waitress reads each request whole, headers and body, on its event loop
before a thread takes it, so a slow client costs a connection and never a thread. gunicorn's
threaded worker, which served here before, gives a thread to a connection as soon as its first
bytes arrive: eight clients sending their headers a line at a time held all eight threads and
`GET /` timed out. (The Procfile's gunicorn has the same weakness: there a buffering proxy is
required, deploy/nginx.conf.)

One process: the scheduler runs in it, once (the Procfile's scale-out mode runs the
scheduler in its own process instead).
"""

from __future__ import annotations

import gc
import logging
import resource
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable

from flask import Flask
from waitress.server import create_server

# Connections held at once, each costing a file descriptor and a few kB while its request is
# read (a slow client's included); past it new connections wait in the listen backlog.
CONNECTION_LIMIT = 1000
# An open connection that sends nothing for this long is closed.
IDLE_SECONDS = 60

log = logging.getLogger("pbp.server")
access = logging.getLogger("pbp.access")


def run_embedded(
    app: Flask,
    host: str,
    port: int,
    threads: int,
    with_scheduler: bool,
    graceful_timeout: float = 30,
) -> None:
    """Serve `app` until SIGINT or SIGTERM, then stop: requests being answered get
    waitress's few seconds to finish, a running scheduler job `graceful_timeout` seconds."""
    _log_to_stdout()
    _raise_open_files_limit(CONNECTION_LIMIT + 256)
    server = create_server(
        AccessLog(app),
        host=host,
        port=port,
        threads=threads,
        connection_limit=CONNECTION_LIMIT,
        channel_timeout=IDLE_SECONDS,
        # poll(), not select(): select() cannot watch descriptors numbered above 1023.
        asyncore_use_poll=True,
        # waitress buffers a body whole before the app sees it, so it must refuse a huge one
        # itself (to disk past 512 kB). Up to twice pbp's limit reaches pbp, which answers
        # with its own 413 page or problem+json; beyond that waitress answers a plain 413.
        max_request_body_size=_body_limit(app.config.get("MAX_CONTENT_LENGTH")),
        # X-Forwarded-* are pbp's to trust or ignore (PBP_TRUSTED_PROXIES, werkzeug's
        # ProxyFix); waitress would otherwise delete them before pbp sees them.
        clear_untrusted_proxy_headers=False,
        ident="pbp",
    )
    scheduler = _start_scheduler(app) if with_scheduler else None
    log.info("serving on http://%s:%s with %d threads", *_printable(host, port), threads)
    gc.freeze()  # why: post_fork in pbp/gunicorn_conf.py
    previous = signal.signal(signal.SIGTERM, _exit_on_signal)
    try:
        server.run()  # returns on SIGINT or SIGTERM, after closing the request threads
    finally:
        signal.signal(signal.SIGTERM, previous)
        if scheduler is not None:
            _stop_scheduler(scheduler, graceful_timeout)
    log.info("stopped")


def _body_limit(pbp_limit: int | None) -> int:
    return 2 * pbp_limit if pbp_limit is not None else 1024 * 1024 * 1024  # waitress's own


def _exit_on_signal(_signum, _frame) -> None:
    # waitress's loop stops on SystemExit (and on SIGINT's KeyboardInterrupt) and closes.
    raise SystemExit(0)


def _start_scheduler(app: Flask):
    from scheduler.jobs import start_background

    return start_background(app)


def _stop_scheduler(scheduler, timeout: float) -> None:
    """Stop the scheduler, waiting up to `timeout` seconds for a job that is running; the
    caller exits the process after that whatever the job does (as gunicorn killed a worker
    that outlived its graceful timeout)."""
    stopper = threading.Thread(target=scheduler.shutdown, daemon=True)
    stopper.start()
    stopper.join(timeout)
    if stopper.is_alive():
        log.warning("a scheduled job was still running after %g s: stopping without it", timeout)


def _printable(host: str, port: int) -> tuple[str, int]:
    return (f"[{host}]" if ":" in host else host), port


def _log_to_stdout() -> None:
    """pbp's server lines and one access-log line per request on standard output (as
    gunicorn's `--access-logfile -` printed them); waitress's own warnings on stderr."""
    for name in ("pbp.server", "pbp.access"):
        logger = logging.getLogger(name)
        if not logger.handlers:
            handler = logging.StreamHandler(sys.stdout)
            handler.setFormatter(logging.Formatter("%(message)s"))
            logger.addHandler(handler)
            logger.setLevel(logging.INFO)
            logger.propagate = False
    logging.getLogger("waitress").setLevel(logging.WARNING)


def _raise_open_files_limit(needed: int) -> None:
    """Each connection is a file descriptor: lift the soft limit (often 1024) toward
    `needed`, within the hard limit the system allows."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft >= needed:
        return
    target = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
    if target > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    if target < needed:
        log.warning(
            "open files limited to %d: fewer than %d connections can be held", target, needed
        )


class AccessLog:
    """WSGI middleware: one line per request, in the combined log format gunicorn wrote, with
    the milliseconds it took at the end."""

    def __init__(self, app: Callable) -> None:
        self.app = app

    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        started = time.monotonic()
        seen: dict[str, str] = {}

        def recording_start_response(status, headers, exc_info=None):
            seen["status"] = status.split(" ", 1)[0]
            seen["length"] = next(
                (value for name, value in headers if name.lower() == "content-length"), "-"
            )
            return start_response(status, headers, exc_info)

        body = self.app(environ, recording_start_response)
        try:
            yield from body
        finally:
            close = getattr(body, "close", None)
            if close is not None:
                close()
            access.info(
                '%s - - [%s] "%s %s %s" %s %s "%s" "%s" %dms',
                environ.get("REMOTE_ADDR", "-"),
                time.strftime("%d/%b/%Y:%H:%M:%S %z"),
                environ.get("REQUEST_METHOD", "-"),
                _path(environ),
                environ.get("SERVER_PROTOCOL", "-"),
                seen.get("status", "-"),
                seen.get("length", "-"),
                environ.get("HTTP_REFERER", "-"),
                environ.get("HTTP_USER_AGENT", "-"),
                (time.monotonic() - started) * 1000,
            )


def _path(environ: dict) -> str:
    query = environ.get("QUERY_STRING")
    path = environ.get("SCRIPT_NAME", "") + environ.get("PATH_INFO", "")
    return f"{path}?{query}" if query else path
