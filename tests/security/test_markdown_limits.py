"""Issue #16, item 3: every text a person submits has a length limit (pbp/limits.py), the
same in the web form, the API and the forum's preview; and the worst Markdown at that limit
renders in a fraction of a second, because the shapes that blew up (20,000 "[" took 38 s;
nested lists on one line overflowed the stack: a 500) are refused before rendering.
"""

from __future__ import annotations

import html
import time
from datetime import UTC, datetime

import pytest

from pbp import limits
from pbp.errors import UserError
from pbp.markup import TooIntricate, check_shape, render_markdown
from pbp.models import User
from pbp.services.accounts import logins as accounts
from pbp.services.noteworthy import hosted_blog, turns
from tests.factories import make_campaign, make_characters
from tests.helpers import AuthActions, make_token
from tests.markdown_shapes import longest_accepted, shapes

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
GENEROUS_S = 1.0  # CPU seconds; the benchmark shows the worst at well under 200 ms
# The worst shapes tests/bench/test_bench_markup.py found, and the ones that blew up.
WORST = (
    "lists nested to the limit",
    "lists nested by indentation",
    "'# a\\n'",
    "'---\\n'",
    "'*a* b\\n'",
    "'<b>x</b>'",
    "'&#123;'",
    "'['",
    "'*['",
    "'[^'",
    "'1. '",
    "'a\\n: b\\n'",
    "'<a '",
)
# Each was slow or crashed at full length; pbp refuses it, saying why.
PATHOLOGICAL = {
    "[": "[" * 20_000,
    "nested lists on one line": "1. " * 6_000,
    "a chain of definitions": "a\n: b\n" * 3_000,
    "unclosed tags": "<a " * 6_000,
    "abbreviations": "*[A]: x\n" * 2_000,
    "deep quotes": ">" * 5_000 + " a",
}


def _cpu_seconds(function, *args) -> float:
    """The fastest of three runs: a busy or throttled machine can stall one run (a single
    run of the worst shape, ~150 ms alone, once took 1.06 s beside another test run), but
    the blow-ups this guards against cost seconds every time."""
    timings = []
    for _ in range(3):
        start = time.process_time()
        function(*args)
        timings.append(time.process_time() - start)
    return min(timings)


@pytest.mark.parametrize("name", WORST)
def test_the_worst_known_shapes_at_the_limit_render_quickly(name):
    text = longest_accepted(shapes()[name], limits.POST_BODY)
    assert text, f"no text of shape {name} is accepted at all"
    seconds = _cpu_seconds(render_markdown, text)
    assert seconds < GENEROUS_S, f"{name}: {len(text):,} characters took {seconds:.2f} s"


@pytest.mark.parametrize("name", PATHOLOGICAL)
def test_shapes_that_blew_up_are_refused_quickly_with_a_reason(name):
    text = PATHOLOGICAL[name][: limits.POST_BODY]
    start = time.process_time()
    with pytest.raises(TooIntricate, match="too intricate to show quickly: "):
        render_markdown(text)
    assert time.process_time() - start < GENEROUS_S
    assert issubclass(TooIntricate, UserError)  # a 400 with the reason, never a 500


def test_ordinary_writing_is_not_refused():
    story = (
        "# The night of the fire\n\n> *Said the captain:* we sail at dawn.\n\n"
        "- a [map](https://example.org/map) of the coast, with **notes**;\n"
        "- a knife ([the one from Brest](https://example.org/brest));\n"
        "  1. its sheath\n  2. its whetstone\n\n"
        "Term\n: what it means\n\n`/roll 2d6` is not rolled here. Line one\nline two.\n\n"
    )
    text = (story * (limits.ENTRY_BODY // len(story)))[: limits.ENTRY_BODY]
    check_shape(text)
    assert "<h1>The night of the fire</h1>" in render_markdown(text)


# -- the same limit in the form, the API and the preview ---------------------------------


@pytest.fixture
def auth(client, db_session):
    return AuthActions(client, db_session)


def _player(db_session, ruleset: str = "noteworthy"):
    campaign = make_campaign(db_session, ruleset=ruleset)
    (hero,) = make_characters(db_session, campaign, names=("Hero",))
    user = db_session.get(User, hero.user_id)
    user.password_hash = accounts.hash_password(AuthActions.password)
    if ruleset == "noteworthy":
        turns.post_event(session=db_session, campaign=campaign, text="Go.", actor=None, now=T0)
    db_session.commit()
    return campaign, user


def test_an_over_long_entry_is_refused_on_the_form_with_the_text_kept(auth, db_session):
    campaign, user = _player(db_session)
    auth.login(user)
    body = "word " * (limits.ENTRY_BODY // 5) + "one too many"
    page = auth.post(f"/c/{campaign.slug}/write", {"title": "Long", "mood": "Calm", "body": body})
    assert page.status_code == 422
    text = page.get_data(as_text=True)
    assert f"at most {limits.ENTRY_BODY:,} characters" in text
    assert html.escape(body, quote=False) in text  # what was typed is still in the form


def test_an_intricate_entry_is_refused_on_the_form_with_the_text_kept(auth, db_session):
    campaign, user = _player(db_session)
    auth.login(user)
    body = "[" * 5_000
    page = auth.post(
        f"/c/{campaign.slug}/write", {"title": "Brackets", "mood": "Calm", "body": body}
    )
    assert page.status_code == 422
    text = page.get_data(as_text=True)
    assert "too intricate to show quickly" in text and body in text


def test_the_api_refuses_an_over_long_or_intricate_entry_with_a_problem(client, db_session):
    campaign, user = _player(db_session)
    token = make_token(db_session, user)
    db_session.commit()
    headers = {"Authorization": f"Bearer {token}"}
    entry = {"title": "Long", "mood": "Calm", "body": "x" * (limits.ENTRY_BODY + 1)}
    refused = client.post(f"/api/v1/campaigns/{campaign.slug}/entries", json=entry, headers=headers)
    assert refused.status_code == 422  # the API's answer to a body its schema refuses
    assert refused.content_type == "application/problem+json"
    assert str(limits.ENTRY_BODY) in refused.get_data(as_text=True)
    intricate = {"title": "Brackets", "mood": "Calm", "body": "[" * 5_000}
    refused = client.post(
        f"/api/v1/campaigns/{campaign.slug}/entries", json=intricate, headers=headers
    )
    assert refused.status_code == 422
    assert "too intricate" in refused.get_json()["detail"]


def test_the_forum_preview_has_the_posting_limit(auth, db_session):
    campaign, user = _player(db_session, ruleset="one")
    auth.login(user)
    body = "x" * (limits.POST_BODY + 1)
    page = auth.post(
        f"/c/{campaign.slug}/forum/new", {"title": "Long", "body": body, "action": "preview"}
    )
    assert page.status_code == 422
    text = page.get_data(as_text=True)
    assert f"at most {limits.POST_BODY:,} characters" in text and body in text


def test_an_over_long_event_is_refused(db_session):
    campaign = make_campaign(db_session)
    with pytest.raises(UserError, match=f"at most {limits.EVENT_TEXT:,} characters"):
        turns.post_event(
            session=db_session,
            campaign=campaign,
            text="x" * (limits.EVENT_TEXT + 1),
            actor=None,
            now=T0,
        )


def test_an_over_long_note_is_refused_with_the_text_kept(auth, db_session):
    campaign, user = _player(db_session)
    other = make_characters(db_session, campaign, names=("Other",))[0]
    entry = hosted_blog.store_entry(
        session=db_session, character=other, title="Hi", body_markdown="Hi", mood="Calm", now=T0
    )
    db_session.commit()
    auth.login(user)
    body = "y" * (limits.NOTE_BODY + 1)
    page = auth.post(f"/c/{campaign.slug}/{other.slug}/{entry.id}/notes", {"body": body})
    assert page.status_code == 422
    text = page.get_data(as_text=True)
    assert f"at most {limits.NOTE_BODY:,} characters" in text and body in text
