"""Embedded mode: gunicorn with one worker process and threads, the scheduler inside it.

One worker only: the scheduler lives in the worker, and several workers would each run
every job (the Procfile's scale-out mode runs the scheduler in its own process instead).
"""

from __future__ import annotations

import gc

from flask import Flask
from gunicorn.app.base import BaseApplication


def freeze_startup_objects(_server=None, _worker=None) -> None:
    """Move everything loaded at start-up out of the garbage collector's reach: a page
    that builds a few thousand objects otherwise triggers full collections over the whole
    app every dozen requests (150-230 ms each in the planet benchmark)."""
    gc.freeze()


class EmbeddedServer(BaseApplication):
    def __init__(self, app: Flask, options: dict, with_scheduler: bool):
        self.app, self.options, self.with_scheduler = app, options, with_scheduler
        super().__init__()

    def load_config(self) -> None:
        for key, value in self.options.items():
            self.cfg.set(key, value)
        self.cfg.set("post_fork", freeze_startup_objects)
        if self.with_scheduler:
            self.cfg.set("post_worker_init", self._start_scheduler)

    def _start_scheduler(self, _worker) -> None:
        from scheduler.jobs import start_background

        start_background(self.app)

    # types-gunicorn wants a WSGI callable typed with MutableMapping; Flask's __call__ says dict.
    def load(self) -> Flask:  # type: ignore[override]
        return self.app


def run_embedded(
    app: Flask,
    host: str,
    port: int,
    threads: int,
    with_scheduler: bool,
    graceful_timeout: int = 30,
) -> None:
    options = {
        "bind": f"{host}:{port}",
        "workers": 1,
        "threads": threads,
        "worker_class": "gthread",
        "accesslog": "-",
        "timeout": 60,
        "graceful_timeout": graceful_timeout,
    }
    EmbeddedServer(app, options, with_scheduler).run()
