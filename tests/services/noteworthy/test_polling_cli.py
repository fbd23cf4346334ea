"""`pbp poll --once`: a progress bar on stderr during the pass, then the summary table.

The command runs through click's CliRunner against the test database and a real loopback
feed server; the campaign is committed and deleted afterwards, as in test_polling.py.
"""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
import sqlalchemy as sa
from click.testing import CliRunner
from sqlmodel import Session, select

from pbp import create_app
from pbp.cli import PollProgress, cli
from pbp.models import Blog, Campaign, utcnow
from pbp.services import campaigns
from pbp.services.noteworthy import polling
from tests.feedserver import FeedServer

RSS = (
    '<?xml version="1.0" encoding="UTF-8"?>\n<rss version="2.0"><channel>'
    "<title>{name}</title><link>{base}/{name}/</link><description>d</description>"
    "<item><title>{name} writes</title><link>{base}/{name}/1.html</link>"
    "<guid isPermaLink='false'>{name}-1</guid><pubDate>Wed, 01 May 2024 10:00:00 GMT</pubDate>"
    "<description>Current mood: bold\nThe lamps gutter.</description></item>"
    "</channel></rss>"
)


@pytest.fixture
def server():
    with FeedServer("127.0.0.1") as srv:
        for name in ("ashby", "wick"):
            srv.add(
                f"/{name}.xml",
                body=RSS.format(name=name, base=srv.base_url).encode(),
                etag='"v1"',
                content_type="application/rss+xml",
            )
        srv.add("/marsh.xml", status=500, body=b"oops", content_type="text/plain")
        yield srv


@pytest.fixture
def game(engine, server):
    """(campaign slug, {name: blog id}) for three blogs: two feeds and one broken one."""
    with Session(engine, expire_on_commit=False) as session:
        tag = uuid.uuid4().hex[:8]
        referee = campaigns.create_user(
            session=session, email=f"ref-{tag}@cli.test", display_name="Ref"
        )
        campaign = campaigns.create_campaign(session=session, referee=referee, name=f"CLI {tag}")
        characters = {
            name: campaigns.add_character(
                session=session, campaign=campaign, name=name, feed_url=server.url(f"/{name}.xml")
            )
            for name in ("ashby", "wick", "marsh")
        }
        session.commit()
        blog_ids = {
            name: session.exec(select(Blog.id).where(Blog.character_id == c.id)).one()
            for name, c in characters.items()
        }
    yield campaign.slug, blog_ids
    with Session(engine) as session:
        session.execute(sa.delete(Campaign).where(Campaign.id == campaign.id))
        session.commit()


def run_poll(database_url, tmp_path, slug):
    env = {
        "DATABASE_URL": database_url,
        "PBP_INSTANCE_PATH": str(tmp_path),
        "SECRET_KEY": "s" * 40,
        "PBP_ALLOW_PRIVATE_FEEDS": "1",
    }
    return CliRunner().invoke(
        cli, ["poll", "--once", "--campaign", slug], env=env, catch_exceptions=False
    )


def table(output: str) -> dict[str, str]:
    rows = [line.rsplit(None, 1) for line in output.splitlines() if not line.startswith(" ")]
    return {label.strip(): value for label, value in rows}


def test_poll_once_prints_the_summary_and_a_progress_bar_on_stderr(
    engine, database_url, tmp_path, game
):
    slug, blog_ids = game
    result = run_poll(database_url, tmp_path, slug)
    assert result.exit_code == 0, result.output
    assert table(result.stdout) == {
        "feeds polled": "3",
        "fetched": "2",
        "not modified": "0",
        "changed entries": "0",
        "new entries": "2",
        "new notes": "0",
        "errors": "1",
    }
    (reason,) = [line for line in result.stdout.splitlines() if line.startswith("  blog")]
    assert reason.startswith(f"  blog {blog_ids['marsh']}: failed: ") and "HTTP 500" in reason
    # the bar: off a terminal click prints its label once, on stderr only
    assert result.stderr.count("polling 3 feeds") == 1
    assert "polling" not in result.stdout


def test_a_second_pass_right_after_finds_nothing_due(engine, database_url, tmp_path, game):
    slug, _ = game
    run_poll(database_url, tmp_path, slug)
    again = run_poll(database_url, tmp_path, slug)
    assert again.exit_code == 0
    assert table(again.stdout)["feeds polled"] == "0"
    assert again.stderr == ""  # no feed, no bar


def test_progress_is_called_once_per_feed_with_the_configured_lease(
    engine, database_url, tmp_path, game, server, request
):
    slug, blog_ids = game
    app = create_app(
        {
            "INSTANCE_PATH": tmp_path,
            "SECRET_KEY": "s" * 40,
            "DATABASE_URL": database_url,
            "ENGINE": engine,
            "PBP_ALLOW_PRIVATE_FEEDS": True,
            "PBP_POLL_LEASE_SECONDS": 90,
        }
    )
    request.addfinalizer(polling.app_fetcher(app).close)  # its event loop and connections
    polling.poll_once(app, slug=slug)  # first polls; now the two feeds answer 304
    with Session(engine) as session:  # due again
        session.execute(
            sa.update(Blog).where(Blog.id.in_(blog_ids.values())).values(next_poll_at=None)
        )
        session.commit()
    calls = []

    def progress(done, total, outcome):
        with Session(engine) as session:
            leases = session.exec(
                select(Blog.lease_until).where(Blog.id.in_(blog_ids.values()))
            ).all()
        calls.append((done, total, outcome.blog_id, leases))

    started = utcnow()
    outcomes = polling.poll_once(app, slug=slug, progress=progress)
    assert [(done, total) for done, total, _, _ in calls] == [(1, 3), (2, 3), (3, 3)]
    assert sorted(blog_id for _, _, blog_id, _ in calls) == sorted(blog_ids.values())
    assert sorted(o.blog_id for o in outcomes) == sorted(blog_ids.values())
    # the 304s' records are written at the end of the pass: until then their leases hold,
    # for PBP_POLL_LEASE_SECONDS from the claim
    _, _, _, leases = calls[0]
    held = [lease for lease in leases if lease is not None]
    assert len(held) >= 2
    for lease in held:
        assert started + timedelta(seconds=90) <= lease <= utcnow() + timedelta(seconds=90)


def test_the_progress_bar_draws_on_a_terminal(tmp_path):
    """click draws the bar itself only on a TTY; a pseudo-terminal stands in for one."""
    import os
    import pty

    leader, follower = pty.openpty()
    with open(follower, "w", closefd=True) as terminal:
        bar = PollProgress(terminal)
        for done in (1, 2):
            bar(done, 2, polling.PollOutcome(blog_id=done, status="not_modified"))
        bar.finish()
    drawn = b""
    while True:  # until the closed terminal's end (EIO on Linux)
        try:
            chunk = os.read(leader, 4096)
        except OSError:
            break
        if not chunk:
            break
        drawn += chunk
    os.close(leader)
    drawn = drawn.decode()
    assert "polling 2 feeds" in drawn and "2/2" in drawn and "blog 2: not_modified" in drawn
