"""examples/bot.py runs against a live pbp (issue #35 item 6): a real HTTP server on
loopback, the bot as its own process with only `requests`. It accepts an invitation (with a
character), reads the scene, posts in character with a roll and whispers to the GM.

This test is how the example runs in .ci/run: the README's `pytest` runs it, on SQLite."""

from __future__ import annotations

import subprocess
import sys
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlmodel import Session, select
from werkzeug.serving import WSGIRequestHandler, make_server

from pbp import create_app, migrate
from pbp.db import make_engine
from pbp.models.forum import Post, PostRecipient, Roll
from pbp.services import campaigns
from pbp.services.accounts import logins
from pbp.services.accounts import tokens as api_tokens
from pbp.services.forum import gm, posts
from pbp.services.forum.drafts import Draft
from pbp.services.mail.settings import MailSettings

ROOT = Path(__file__).resolve().parents[2]
NOW = datetime.now(UTC).replace(tzinfo=None)
SECRET = "bot-secret-key-" + "x" * 32


class _Quiet(WSGIRequestHandler):
    def log_request(self, *args, **kwargs) -> None:
        pass


@pytest.fixture
def live(tmp_path):
    """pbp on a free loopback port, on a scratch SQLite database of its own."""
    engine = make_engine(f"sqlite:///{tmp_path / 'bot.sqlite3'}")
    migrate.upgrade(engine)
    app = create_app(
        {
            "TESTING": True,
            "INSTANCE_PATH": tmp_path / "instance",
            "SECRET_KEY": SECRET,
            "ENGINE": engine,
        }
    )
    server = make_server("127.0.0.1", 0, app, threaded=True, request_handler=_Quiet)
    url = f"http://127.0.0.1:{server.server_port}"
    app.config["PBP_BASE_URL"] = url
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield url, engine
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)
    engine.dispose()


def _seed(engine, url: str) -> dict:
    with Session(engine, expire_on_commit=False) as session:
        referee = campaigns.create_user(session=session, email="gm@bot.test", display_name="GM")
        bot = campaigns.create_user(session=session, email="bot@bot.test", display_name="Botty")
        game = campaigns.create_campaign(
            session=session, referee=referee, name="Rain City", ruleset="noir"
        )
        rook = campaigns.add_character(session=session, campaign=game, name="Rook")
        gm.start_campaign(session=session, campaign=game, actor=referee, now=NOW)
        posts.create_thread(
            session=session,
            campaign=game,
            author=referee,
            title="The docks",
            draft=Draft(body="Fog on the water."),
            mail=MailSettings(url, "s" * 32, "pbp <pbp@localhost>"),
            now=NOW,
        )
        issued = logins.create_invite(
            session=session,
            campaign=game,
            created_by=referee,
            secret_key=SECRET,
            base_url=url,
            now=NOW,
            character=rook,
        )
        token = api_tokens.create_token(
            session=session, user=bot, name="bot", scope="write", now=NOW
        ).text
        session.commit()
    return {"token": token, "invitation": issued.url, "bot": bot.id, "gm": referee.id}


def test_the_example_bot_joins_reads_rolls_and_whispers(live):
    url, engine = live
    world = _seed(engine, url)
    command = [
        sys.executable,
        str(ROOT / "examples" / "bot.py"),
        "--base-url", url,
        "--token", world["token"],
        "--invitation", world["invitation"],
        "--roll", "noir difficulty skill=8 # the lock",
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stderr + done.stdout
    out = done.stdout
    assert "joined Rain City as player" in out
    assert "GM: Fog on the water." in out  # it read the scene
    assert "rolled /roll noir difficulty skill=8 # the lock: the lock: Noir difficulty" in out
    assert "whispered to GM" in out
    with Session(engine) as session:
        mine = session.exec(select(Post).where(Post.author_id == world["bot"])).all()
        assert len(mine) == 2
        rolled = session.exec(select(Roll).where(Roll.roller_id == world["bot"])).one()
        assert rolled.typed == "/roll noir difficulty skill=8 # the lock"
        whisper = next(p for p in mine if p.audience == "whisper")
        to = session.exec(select(PostRecipient).where(PostRecipient.post_id == whisper.id)).all()
        assert [r.user_id for r in to] == [world["gm"]]
        assert all(p.character_id is not None for p in mine if p.audience == "all")
