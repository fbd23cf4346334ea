"""Schemathesis against the running app: every operation of the OpenAPI document, with
data that fits the schema and data that does not, as the referee and as a player.

It must find no server error and no response that breaks the document (status, content
type, headers, body). It runs on a scratch database of its own, seeded with a Noteworthy
campaign, because the fuzzer's writes commit (the "poll now" operation opens its own
connections) and would otherwise leak into other tests.

Figures go to stdout: `pytest -s tests/api/test_schemathesis.py`.
"""

from __future__ import annotations

import os
import time
from collections import Counter, defaultdict
from datetime import UTC, datetime

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from sqlmodel import Session

from pbp import create_app, migrate
from pbp.api import OPERATIONS
from pbp.db import make_engine
from pbp.services import campaigns
from pbp.services.accounts import tokens as api_tokens
from pbp.services.cards import tables as cards
from pbp.services.forum import posts, rolls
from pbp.services.forum.drafts import Draft
from pbp.services.mail.settings import MailSettings
from pbp.services.noteworthy import hosted_blog, turns
from tests.helpers import wire

MODES = (schemathesis.GenerationMode.POSITIVE, schemathesis.GenerationMode.NEGATIVE)
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]
# Per operation and mode: about 850 requests in all. PBP_FUZZ_EXAMPLES=200 for a long run.
EXAMPLES = int(os.environ.get("PBP_FUZZ_EXAMPLES", 12))
NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)

pytestmark = pytest.mark.slow


@pytest.fixture
def scratch(database_url, tmp_path):
    """A new empty database of the same kind as the test database, migrated."""
    if database_url.startswith("sqlite"):
        engine, drop = make_engine(f"sqlite:///{tmp_path / 'fuzz.sqlite3'}"), None
    else:
        from tests.helpers import create_scratch_postgres

        url, drop = create_scratch_postgres(database_url)
        engine = make_engine(url)
    migrate.upgrade(engine)
    yield engine
    engine.dispose()
    if drop:
        drop()


def seed(engine) -> dict:
    """A running Noteworthy campaign (turn 1 open, challenges allowed, Ada challenging
    Bram) and a forum campaign with a thread whose post rolled dice."""
    with Session(engine, expire_on_commit=False) as session:
        referee = campaigns.create_user(session=session, email="ref@fuzz.test", display_name="Ref")
        player = campaigns.create_user(session=session, email="ada@fuzz.test", display_name="Ada")
        campaign = campaigns.create_campaign(
            session=session, referee=referee, name="Fuzz", settings={"opening_turns": 0}
        )
        cast = {
            name: campaigns.add_character(
                session=session,
                campaign=campaign,
                name=name,
                user=player if name == "Ada" else None,
            )
            for name in ("Ada", "Bram", "Cleo", "Dov", "Eli", "Fay")
        }
        turns.post_event(session=session, campaign=campaign, text="Go.", actor=None, now=NOW)
        entry = hosted_blog.store_entry(
            session=session,
            character=cast["Ada"],
            title="Pistols",
            body_markdown="Target: Bram",
            mood="Challenging",
            now=NOW,
        )
        forum_game = campaigns.create_campaign(
            session=session, referee=referee, name="Fuzz forum", ruleset="one"
        )
        campaigns.add_character(session=session, campaign=forum_game, name="Ada", user=player)
        post = posts.create_thread(
            session=session,
            campaign=forum_game,
            author=player,
            title="Docks",
            draft=Draft(body="Waiting.\n/roll 2d6"),
            mail=MailSettings("http://pbp.test", "s" * 32, "pbp <pbp@localhost>"),
            now=NOW,
        )
        roll = rolls.rolls_of_posts(session=session, post_ids=[post.id])[post.id][0]
        table = _card_table(session, referee, player)
        tokens = {
            role: api_tokens.create_token(
                session=session, user=user, name="fuzz", scope="write", now=NOW
            ).text
            for role, user in (("referee", referee), ("player", player))
        }
        session.commit()
    known = {"slug": campaign.slug, "number": 1, "entry_id": entry.id, "character": "ada"}
    forum_known = {
        "slug": forum_game.slug,
        "thread_id": post.thread_id,
        "post_id": post.id,
        "roll_id": roll.id,
    }
    return {"tokens": tokens, "known": known, "forum": forum_known, "cards": table}


def _card_table(session, referee, player) -> dict:
    """A Sex & Violence scene with an open table and Ada's character: valid moves (a GM
    character, a contest, a bid) then reach the engine and change the table."""
    game = campaigns.create_campaign(
        session=session, referee=referee, name="Fuzz cards", ruleset="sex-and-violence"
    )
    campaigns.add_character(session=session, campaign=game, name="Ada", user=player)
    mail = MailSettings("http://pbp.test", "s" * 32, "pbp <pbp@localhost>")
    post = posts.create_thread(
        session=session, campaign=game, author=referee, title="Bar", draft=Draft(body="Smoke."),
        mail=mail, now=NOW,
    )  # fmt: skip
    cards.open_table(
        session=session, campaign=game, thread_id=post.thread_id, user=referee, settings={},
        mail=mail, now=NOW,
    )  # fmt: skip
    return {"slug": game.slug, "thread_id": post.thread_id}


def test_no_server_errors_and_no_schema_violations(scratch, tmp_path):
    world = seed(scratch)
    app = create_app(
        {
            "TESTING": True,
            "INSTANCE_PATH": tmp_path / "instance",
            "SECRET_KEY": "fuzz-" + "s" * 40,
            "ENGINE": scratch,
            "PBP_BASE_URL": "http://pbp.test",
            "PBP_FETCH_CONNECT_TIMEOUT": 0.5,
            "PBP_FETCH_READ_TIMEOUT": 1,
            "PBP_CONTENT_LIMIT": "100000 per minute",  # the fuzzer posts far faster than people
        }
    )
    wire(app)
    schema = schemathesis.openapi.from_wsgi("/api/v1/openapi.json", app)
    statuses: Counter = Counter()
    by_operation: dict[str, Counter] = defaultdict(Counter)
    started, operations, skipped = time.monotonic(), 0, []
    for result in schema.get_all_operations():
        operation = result.ok()
        operations += 1
        parameters = list(operation.iter_parameters())
        names = {p.name for p in parameters if p.location == "path"}
        known = world["forum"] if "/forum" in operation.path else world["known"]
        known = world["cards"] if operation.path.endswith("/cards/moves") else known
        pinned = {k: v for k, v in known.items() if k in names}
        for mode in MODES:
            if not mode.is_positive and not negatable(operation, parameters):
                skipped.append(operation.label)
                continue
            cases = st.one_of(
                operation.as_strategy(mode, path_parameters=pinned),
                operation.as_strategy(mode),
            )
            fuzz(app, cases, world["tokens"], statuses, by_operation[operation.label])
        if operation.label == "POST /campaigns/{slug}/forum/threads/{thread_id}/posts":
            fuzz(app, valid_posts(operation, pinned), world["tokens"], statuses,
                 by_operation[operation.label])  # fmt: skip
        if operation.path.endswith("/cards/moves"):
            fuzz(app, valid_moves(operation, pinned), world["tokens"], statuses,
                 by_operation[operation.label])  # fmt: skip
    elapsed = time.monotonic() - started
    print(
        f"\nschemathesis: {operations} operations, {sum(statuses.values())} requests in "
        f"{elapsed:.0f} s; statuses {dict(sorted(statuses.items()))}; "
        f"no invalid input possible for {skipped}"
    )
    assert operations == len(OPERATIONS)  # every operation, none missing from the document
    assert not any(status >= 500 for status in statuses)
    assert statuses[200] and statuses[201]  # the pinned resources reached real work
    # The typed forum and card operations are reached with valid bodies, not only refused.
    for label in (
        "POST /campaigns/{slug}/forum/threads/{thread_id}/cards/moves",
        "POST /campaigns/{slug}/forum/threads/{thread_id}/posts",
        "GET /campaigns/{slug}/forum/threads/{thread_id}/posts",
        "GET /campaigns/{slug}/forum/rolls/{roll_id}",
    ):
        assert any(200 <= code < 300 for code in by_operation[label]), (label, by_operation[label])


LETTERS = st.text(alphabet="abcdefghijklmnopqrstuvwxyz ", min_size=1, max_size=30).filter(str.strip)


def valid_moves(operation, pinned):
    """Moves the rules allow at the seeded table (the GM's characters, a contest, Ada's
    character), so the typed bodies reach the engine and the typed view comes back."""
    body = st.one_of(
        st.builds(lambda n: {"action": "add_gm_character", "params": {"name": n}}, LETTERS),
        st.sampled_from([{"action": "end_scene"}, {"action": "end_session", "params": {}}]),
        st.builds(
            lambda n, fields: {
                "action": "create_character",
                "params": {
                    "name": n, "archetype": "fool", "criminal_background": "Fence",
                    "redeeming_quality": "Kind", "angle": "debts", "fields": fields,
                },
            },
            LETTERS,
            st.sampled_from([["C"], ["H", "S"], ["D", "C", "H"]]),
        ),
    )  # fmt: skip
    return body.map(
        lambda b: operation.Case(path_parameters=pinned, body=b, media_type="application/json")
    )


def valid_posts(operation, pinned):
    """Posts with a roll of each kind the ONE campaign takes: the typed result comes back."""
    rolls = ["/roll 2d6+1", "/roll one check skill=8", "/roll one quick skill=8 vs=6"]
    body = st.builds(
        lambda text, roll, audience: {"body": f"{text}\n{roll}", "audience": audience},
        LETTERS,
        st.sampled_from(rolls),
        st.sampled_from(["all", "gm"]),
    )
    return body.map(
        lambda b: operation.Case(path_parameters=pinned, body=b, media_type="application/json")
    )


def negatable(operation, parameters) -> bool:
    """Whether any input can be made invalid: a string path segment cannot (any text but
    "/" is a valid slug, and a "/" changes the address, not the parameter)."""
    if operation.body or any(p.location != "path" for p in parameters):
        return True
    return any(p.definition.get("schema", {}).get("type") == "integer" for p in parameters)


def fuzz(app, cases, tokens, statuses: Counter, mine: Counter) -> None:
    @given(case=cases, role=st.sampled_from(sorted(tokens)))
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        derandomize=True,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    def run(case, role):
        case.headers = {**(case.headers or {}), "Authorization": f"Bearer {tokens[role]}"}
        response = case.call(app=app)
        statuses[response.status_code] += 1
        mine[response.status_code] += 1
        case.validate_response(response, checks=CHECKS)

    run()
