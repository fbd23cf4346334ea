"""Browser tests: Debian's Chromium driven by Playwright against the real app.

The app is served by werkzeug on 127.0.0.1 (a free port) in a thread, on its OWN SQLite
database in a temporary folder, migrated with `pbp.migrate.upgrade`: the browser talks
to the server from another thread, so the rolled-back test connection of the other
tests cannot be shared. Everything here commits; each test makes its own campaign.

Playwright never downloads a browser here: it launches `/usr/bin/chromium`
(`apt-get install chromium`) with flags that keep Chromium off the network (no
component updates, sync or background requests). Without Playwright or Chromium the
tests are skipped with the reason, except under CI=true, where they fail.

Screenshots go to test-output/screenshots/ (gitignored); a failing test also leaves a
`FAILED-<test>-<n>.png` of each page it had open.
"""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import pytest
from sqlmodel import Session
from werkzeug.serving import WSGIRequestHandler, make_server

from pbp import create_app, migrate
from pbp.db import make_engine
from pbp.models import Campaign, utcnow
from pbp.services import campaigns
from pbp.services.noteworthy import turns
from tests.helpers import make_account

CHROMIUM = os.environ.get("PBP_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SCREENSHOTS = Path(__file__).resolve().parents[2] / "test-output" / "screenshots"
TIMEOUT_MS = 15_000  # generous: a busy machine hashes passwords (scrypt) slowly
_seq = itertools.count(1)


# --- Chromium ------------------------------------------------------------------------


def _unavailable(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"browser tests cannot run in CI: {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def chromium():
    """One Chromium for the whole run (each test gets fresh contexts: no shared cookies)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("the playwright package is not installed (pip install -e '.[test]')")
    if not os.access(CHROMIUM, os.X_OK):
        _unavailable(f"{CHROMIUM} is missing (apt-get install chromium)")
    from playwright.sync_api import expect

    expect.set_options(timeout=TIMEOUT_MS)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


# --- the live server -----------------------------------------------------------------


class _QuietHandler(WSGIRequestHandler):
    def log_request(self, *args, **kwargs) -> None:
        pass


@dataclass
class LiveServer:
    url: str
    app: object
    engine: object

    def session(self) -> Session:
        return Session(self.engine, expire_on_commit=False)


@pytest.fixture(scope="session")
def live_server(tmp_path_factory) -> Iterator[LiveServer]:
    root = tmp_path_factory.mktemp("live")
    database_url = f"sqlite:///{root / 'live.sqlite3'}"
    engine = make_engine(database_url)
    migrate.upgrade(engine)
    app = create_app(
        {
            "TESTING": True,  # mail goes to the instance folder, sent in the request
            "INSTANCE_PATH": root / "instance",
            "SECRET_KEY": "browser-secret-key-" + "x" * 32,
            "DATABASE_URL": database_url,
            "ENGINE": engine,
            "PBP_LOGIN_LIMIT": "1000 per minute",
        }
    )
    from pbp.web import player

    if "player" not in app.blueprints:
        app.register_blueprint(player.bp)
    server = make_server("127.0.0.1", 0, app, threaded=True, request_handler=_QuietHandler)
    url = f"http://127.0.0.1:{server.server_port}"
    app.config["PBP_BASE_URL"] = url  # invite links point at the live server
    thread = threading.Thread(target=server.serve_forever, name="live-server", daemon=True)
    thread.start()
    yield LiveServer(url, app, engine)
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)
    engine.dispose()


# --- pages ---------------------------------------------------------------------------


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report


@pytest.fixture
def new_page(chromium, live_server, request) -> Iterator[Callable[..., object]]:
    """`new_page(width=1100)`: a page in a fresh browser context (its own cookies).

    A Content-Security-Policy violation Chromium reports on a page fails the test: the
    pages must work under pbp's CSP (no inline scripts, handlers or styles). Blocked
    remote images are the policy working (PBP_BLOCK_REMOTE_IMAGES), not a fault."""
    contexts = []
    violations: list[str] = []

    def watch(message) -> None:
        if "Content Security Policy" in message.text and '"img-src ' not in message.text:
            violations.append(f"{message.location.get('url')}: {message.text}")

    def make(width: int = 1100, height: int = 900):
        context = chromium.new_context(
            base_url=live_server.url,
            viewport={"width": width, "height": height},
            is_mobile=width < 500,
            has_touch=width < 500,
        )
        context.set_default_timeout(TIMEOUT_MS)
        contexts.append(context)
        page = context.new_page()
        page.on("console", watch)
        return page

    yield make
    failed = getattr(request.node, "rep_call", None)
    if failed is not None and failed.failed:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        for n, context in enumerate(contexts):
            for page in context.pages:
                page.screenshot(path=SCREENSHOTS / f"FAILED-{request.node.name}-{n}.png")
    for context in contexts:
        context.close()
    assert violations == [], "the CSP blocked something:\n" + "\n".join(violations)


@pytest.fixture
def page(new_page):
    return new_page()


@pytest.fixture
def shoot() -> Callable[[object, str], Path]:
    """`shoot(page, "planet")` saves test-output/screenshots/planet.png (the whole page)."""

    def save(page, name: str) -> Path:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{name}.png"
        page.screenshot(path=path, full_page=True)
        return path

    return save


# --- committed test data through the services ----------------------------------------


@dataclass
class SeededGame:
    slug: str
    referee_email: str
    emails: dict[str, str] = field(default_factory=dict)  # character name -> player's email
    ids: dict[str, int] = field(default_factory=dict)  # character name -> character id
    entry_url: str = ""  # set by fixtures that post an entry


@pytest.fixture
def seed_game(live_server) -> Callable[..., SeededGame]:
    """A committed Noteworthy campaign whose turn `turn` is open now (earlier turns are
    closed and resolved in the past), each character with a player who can log in."""

    def seed(names=("Ada", "Bram", "Cleo"), *, turn: int = 1, opening_turns: int = 2):
        with live_server.session() as session:
            referee = make_account(session, "Referee")
            campaign = campaigns.create_campaign(
                session=session,
                referee=referee,
                name=f"Browser Game {next(_seq)}",
                settings={"opening_turns": opening_turns},
            )
            game = SeededGame(campaign.slug, referee.email)
            for name in names:
                player = make_account(session, name)
                character = campaigns.add_character(
                    session=session, campaign=campaign, name=name, user=player
                )
                game.emails[name], game.ids[name] = player.email, character.id
            _open_turns(session, campaign, turn)
            session.commit()
        return game

    return seed


def _open_turns(session: Session, campaign: Campaign, last: int) -> None:
    start = utcnow() - timedelta(hours=2 * last)
    for number in range(1, last + 1):
        opened = start + timedelta(hours=2 * (number - 1))
        turns.post_event(
            session=session, campaign=campaign, text=f"Event {number}.", actor=None, now=opened
        )
        if number < last:
            closed = opened + timedelta(hours=1)
            turns.close_turn(session=session, campaign=campaign, actor=None, now=closed)
            turns.resolve_turn(session=session, campaign=campaign, actor=None, now=closed)
