"""Issue #16, item 10: private files in the instance folder, security headers on every
response, templates that run under `script-src 'self'; style-src 'self'`, and no remote
images in player content when PBP_BLOCK_REMOTE_IMAGES is on (the default)."""

from __future__ import annotations

import os
import re
import stat
from email.message import EmailMessage
from pathlib import Path

import pytest
import sqlalchemy as sa

from pbp import create_app
from pbp.config import load_config
from pbp.db import make_engine
from pbp.services.mail.send import FolderTransport

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"


@pytest.fixture
def loose_umask():
    """The common default (022) would leave new files world-readable."""
    old = os.umask(0o022)
    yield
    os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_instance_folder_is_created_private(tmp_path, loose_umask):
    instance = tmp_path / "instance"
    create_app({"INSTANCE_PATH": instance, "SECRET_KEY": "s" * 40})
    assert _mode(instance) == 0o700
    assert _mode(instance / "pbp.sqlite3") == 0o600  # made when the app made its engine


def test_the_sqlite_database_and_its_wal_files_are_private(tmp_path, loose_umask):
    path = tmp_path / "game.sqlite3"
    engine = make_engine(f"sqlite:///{path}")
    with engine.connect() as conn:  # WAL: -wal and -shm exist while a connection is open
        conn.execute(sa.text("CREATE TABLE seed (value TEXT)"))
        conn.execute(sa.text("INSERT INTO seed VALUES ('dice seed')"))
        conn.commit()
        files = [path, Path(f"{path}-wal"), Path(f"{path}-shm")]
        assert all(f.exists() for f in files)
        assert {f.name: _mode(f) for f in files} == {f.name: 0o600 for f in files}
    engine.dispose()


def test_an_existing_world_readable_database_is_tightened(tmp_path, loose_umask):
    path = tmp_path / "old.sqlite3"
    path.write_bytes(b"")
    path.chmod(0o644)
    make_engine(f"sqlite:///{path}").dispose()
    assert _mode(path) == 0o600


def test_outbox_messages_are_private(tmp_path, loose_umask):
    transport = FolderTransport(tmp_path / "outbox")
    message = EmailMessage()
    message["Message-ID"] = "<reset-1@pbp.test>"
    message["Subject"] = "Reset your password"
    message.set_content("https://pbp.test/reset/secret-token")
    with transport.connect() as connection:
        connection.send(message)
    (sent,) = (tmp_path / "outbox").glob("*.eml")
    assert _mode(sent) == 0o600
    assert _mode(tmp_path / "outbox") == 0o700


# --- headers -----------------------------------------------------------------------------


def _csp(response) -> dict[str, str]:
    policy = response.headers["Content-Security-Policy"]
    return dict(part.strip().split(" ", 1) for part in policy.split(";"))


@pytest.mark.parametrize(
    "path", ["/", "/login", "/no/such/page", "/static/pbp.css", "/api/v1/docs", "/api/v1/nope"]
)
def test_every_response_carries_the_security_headers(client, path):
    response = client.get(path)
    response.close()  # a static file's handle
    csp = _csp(response)
    assert csp["script-src"] == "'self'"
    assert csp["style-src"] == "'self'"
    assert csp["frame-ancestors"] == "'none'"
    assert csp["object-src"] == "'none'"
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Referrer-Policy"] == "same-origin"


def test_a_page_that_asks_for_no_referrer_keeps_it(client, auth):
    from tests.web.test_auth_reset import reset_path

    page = client.get(reset_path(auth.create_user()))
    assert page.headers["Referrer-Policy"] == "no-referrer"


_INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>", re.I)
_HANDLER = re.compile(r"<[^>]*\son[a-z]+\s*=", re.I)
_STYLE = re.compile(r"<style\b|\sstyle\s*=", re.I)
_JS_URL = re.compile(r"javascript:", re.I)


def _page_templates() -> list[Path]:
    """Every template a browser shows; mail/ holds emails (no CSP applies, and mail
    clients need inline styles), except mail/pages/, which are pages."""
    found = []
    for path in sorted(TEMPLATES.rglob("*")):
        if not path.is_file():
            continue
        parts = path.relative_to(TEMPLATES).parts
        if parts[0] == "mail" and parts[:2] != ("mail", "pages"):
            continue
        found.append(path)
    return found


def test_no_template_has_inline_scripts_handlers_or_styles():
    problems = []
    for path in _page_templates():
        text = path.read_text()
        for name, pattern in [
            ("inline <script>", _INLINE_SCRIPT),
            ("event handler attribute", _HANDLER),
            ("inline style", _STYLE),
            ("javascript: URL", _JS_URL),
        ]:
            for match in pattern.finditer(text):
                line = text.count("\n", 0, match.start()) + 1
                problems.append(f"{path.relative_to(TEMPLATES)}:{line}: {name}")
    assert problems == [], "these would be blocked by the CSP:\n" + "\n".join(problems)
    assert len(_page_templates()) > 40  # the scan did look at the templates


def test_the_scan_would_catch_each_kind():
    assert _INLINE_SCRIPT.search("<script>alert(1)</script>")
    assert not _INLINE_SCRIPT.search('<script src="/static/x.js" defer></script>')
    assert _HANDLER.search('<input onfocus="this.select()">')
    assert _STYLE.search("<style>p{}</style>") and _STYLE.search('<p style="x">')


# --- remote images ---------------------------------------------------------------------


def test_remote_images_are_blocked_by_default(client):
    sources = _csp(client.get("/"))["img-src"].split()
    assert sources == ["'self'", "data:"]


def test_remote_images_can_be_allowed(app_with):
    client = app_with(PBP_BLOCK_REMOTE_IMAGES=False).test_client()
    assert "https:" in _csp(client.get("/"))["img-src"].split()


@pytest.mark.parametrize("value, blocked", [("", True), ("1", True), ("0", False), ("off", False)])
def test_the_image_setting_reads_the_environment(tmp_path, value, blocked):
    env = {"SECRET_KEY": "k" * 40, "PBP_BLOCK_REMOTE_IMAGES": value}
    assert load_config(tmp_path, env)["PBP_BLOCK_REMOTE_IMAGES"] is blocked


def _entry_with_image(db_session, world) -> None:
    from pbp.services.noteworthy import hosted_blog
    from tests.helpers import API_NOW as NOW

    hosted_blog.store_entry(
        session=db_session,
        character=world.characters["Bram"],
        title="A postcard",
        body_markdown="![a harbour](https://tracker.example/p.png) ![ours](/static/x.png)",
        mood="calm",
        now=NOW,
    )
    db_session.commit()


def test_feeds_out_carry_no_remote_image_sources(client, db_session, world):
    """Feed readers ignore pbp's CSP: the Atom feed itself must not name the image."""
    _entry_with_image(db_session, world)
    feed = client.get(f"/c/{world.slug}/feed.atom").get_data(as_text=True)
    assert "a harbour" in feed  # the alt text stays
    assert "tracker.example" not in feed
    assert "/static/x.png" in feed  # pbp's own images stay


def test_feeds_keep_remote_images_when_allowed(app_with, db_session, world):
    client = app_with(PBP_BLOCK_REMOTE_IMAGES=False).test_client()
    _entry_with_image(db_session, world)
    feed = client.get(f"/c/{world.slug}/feed.atom").get_data(as_text=True)
    assert "https://tracker.example/p.png" in feed
