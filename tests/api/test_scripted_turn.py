"""A script drives a whole Noteworthy turn through the API alone.

The referee creates the campaign, adds six characters whose blogs are feeds on a real
loopback server, plays two opening turns, posts turn 3's event, has every feed polled,
maps a commenter, reads the tally (an ambiguous challenge: it needs a ruling), rules on
the target and resolves. Only the accounts and their tokens are made outside the API.

The poller writes through its own connections, so this test commits for real (an app on
the plain engine) and deletes what it made afterwards.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlmodel import Session

from pbp import create_app
from pbp.models import Campaign, User
from pbp.services import campaigns
from pbp.services.accounts import tokens as api_tokens
from pbp.services.campaigns import slugify
from tests.feedserver import FeedServer
from tests.helpers import Api, wire

FIXTURES = Path(__file__).parent.parent / "adapters" / "fixtures"
SITE = "https://colonelmarsh.example.com"
POST = "/2024/04/03/on-the-matter-of-the-dukes-carriage/"
T0 = datetime(2024, 4, 1, 0, 0, tzinfo=UTC)
CAST = ("Colonel Marsh", "Lord Ashby", "Baroness Wick", "Duchess of Fenn", "Mr Gale", "Lady Vance")
EMPTY_RSS = (
    b'<?xml version="1.0"?><rss version="2.0"><channel><title>{name}</title>'
    b"<link>{base}</link><description>A blog</description></channel></rss>"
)


def marsh_feeds(base: str) -> tuple[bytes, bytes]:
    """Colonel Marsh's WordPress feed and its comment feed; his challenge names two
    characters, so its target needs the referee."""
    posts = (FIXTURES / "wordpress_rss.xml").read_bytes().replace(SITE.encode(), base.encode())
    posts = posts.replace(
        b'I challenge <a href="https://lord-ashby.dreamwidth.org/">Lord Ashby</a>: let him '
        b"be sent to the colonies.",
        b"Lord Ashby or Baroness Wick: one of them took the Duke's carriage.",
    )
    comments = (FIXTURES / "wordpress_post_comments.xml").read_bytes()
    return posts, comments.replace(SITE.encode(), base.encode())


@pytest.fixture
def committed(engine, tmp_path):
    """An app whose requests commit, a clock the test moves, and clean-up afterwards."""
    clock = {"now": T0}
    app = create_app(
        {
            "TESTING": True,
            "INSTANCE_PATH": tmp_path / "instance",
            "SECRET_KEY": "scripted-turn-" + "k" * 32,
            "ENGINE": engine,
            "PBP_ALLOW_PRIVATE_FEEDS": True,
            "PBP_BASE_URL": "http://pbp.test",
            "PBP_CLOCK": lambda: clock["now"],
        }
    )
    wire(app)
    made: dict[str, list] = {"users": [], "slugs": []}
    yield app, clock, made
    with Session(engine) as session:
        session.execute(sa.delete(Campaign).where(Campaign.slug.in_(made["slugs"])))
        session.execute(sa.delete(User).where(User.id.in_(made["users"])))
        session.commit()


def _accounts(engine, made) -> dict[str, str]:
    tokens = {}
    with Session(engine, expire_on_commit=False) as session:
        for role in ("referee", "reader"):
            user = campaigns.create_user(
                session=session, email=f"scripted-{role}@example.test", display_name=role
            )
            scope = "write" if role == "referee" else "read"
            issued = api_tokens.create_token(
                session=session, user=user, name="script", scope=scope, now=T0
            )
            tokens[role] = issued.text
            made["users"].append(user.id)
        session.commit()
    return tokens


def test_a_whole_turn_through_the_api(engine, committed):
    app, clock, made = committed
    tokens = _accounts(engine, made)
    api, ref = Api(app.test_client()), tokens["referee"]

    def ok(response, status=200):
        assert response.status_code == status, response.get_data(as_text=True)
        return response.get_json()

    def at(hours: float):
        clock["now"] = T0 + timedelta(hours=hours)

    with FeedServer("127.0.0.1") as server:
        # 1. The campaign and its six characters, every one blogging elsewhere.
        game = ok(api.post("/campaigns", token=ref, json={"name": "The Duke's Carriage"}), 201)
        made["slugs"].append(slug := game["slug"])
        assert game["role"] == "referee" and game["ruleset"] == "noteworthy"
        posts, comments = marsh_feeds(server.base_url)
        server.add("/marsh/feed/", body=posts, content_type="application/rss+xml")
        server.add(POST + "feed/", body=comments, content_type="application/rss+xml")
        ids = {}
        for name in CAST:
            path = "/marsh/feed/" if name == "Colonel Marsh" else f"/{len(ids)}/feed/"
            if name != "Colonel Marsh":
                body = EMPTY_RSS.replace(b"{name}", name.encode())
                server.add(path, body=body.replace(b"{base}", server.base_url.encode()))
            character = ok(
                api.post(
                    f"/campaigns/{slug}/characters",
                    token=ref,
                    json={"name": name, "feed_url": server.url(path)},
                ),
                201,
            )
            assert character["blog"]["kind"] == "external"
            ids[name] = character["id"]

        # 2. Two opening turns (no challenges allowed in them).
        for number in (1, 2):
            at(24 * (number - 1))
            turn = ok(
                api.post(
                    f"/campaigns/{slug}/turns",
                    token=ref,
                    json={"text": f"Evening {number}.", "expected_number": number},
                ),
                201,
            )
            assert turn["number"] == number and turn["status"] == "open"
            at(24 * (number - 1) + 12)
            ok(api.post(f"/campaigns/{slug}/turns/{number}/close", token=ref))
            ok(api.post(f"/campaigns/{slug}/turns/{number}/resolve", token=ref, json={}))

        # 3. Turn 3's event, then every blog polled after the evening's posts.
        at(48 + 9)
        ok(api.post(f"/campaigns/{slug}/turns", token=ref, json={"text": "The carriage."}), 201)
        at(48 + 13)
        polled = {
            name: ok(api.post(f"/campaigns/{slug}/characters/{slugify(name)}/poll", token=ref))
            for name in CAST
        }
        assert polled["Colonel Marsh"]["new_entries"] == 2
        assert polled["Colonel Marsh"]["new_notes"] == 2
        assert all(p["status"] == "ok" and p["error"] is None for p in polled.values())
        assert server.count(POST + "feed/") == 1

        # 4. WordPress comment feeds give a commenter's name only, which anyone can type,
        # so no note counts yet (issue #16). The referee reads the two and vouches for
        # them: Miss Pell is the Duchess of Fenn, and "Baroness Wick" really is she.
        for name, character in (("Miss Pell", "Duchess of Fenn"), ("Baroness Wick",) * 2):
            mapped = ok(
                api.post(
                    f"/campaigns/{slug}/commenters",
                    token=ref,
                    json={"character_id": ids[character], "kind": "name", "value": name},
                ),
                201,
            )
            assert mapped["mapped_notes"] == 1

    # 5. Close the turn and read the tally: the target is ambiguous.
    at(48 + 14)
    ok(api.post(f"/campaigns/{slug}/turns/3/close", token=ref))
    tally = ok(api.get(f"/campaigns/{slug}/turns/3/tally", token=ref))
    (challenge,) = tally["challenges"]
    assert challenge["challenger_id"] == ids["Colonel Marsh"]
    assert challenge["target_id"] is None and tally["needs_ruling"] is True
    assert any(f["kind"] == "target needs a ruling" for f in tally["flags"])
    refused = api.post(f"/campaigns/{slug}/turns/3/resolve", token=ref, json={})
    assert refused.status_code == 409 and "need a ruling" in refused.get_json()["detail"]

    # 6. The referee rules: the target is Lord Ashby. One support, one oppose: a tie.
    ruling = ok(
        api.post(
            f"/campaigns/{slug}/turns/3/rulings",
            token=ref,
            json={
                "kind": "target",
                "subject_id": challenge["entry_id"],
                "value": ids["Lord Ashby"],
                "reason": "The Colonel's letter to the Duke names Ashby.",
            },
        ),
        201,
    )
    assert ruling["value"] == ids["Lord Ashby"]
    tally = ok(api.get(f"/campaigns/{slug}/turns/3/tally", token=ref))
    (challenge,) = tally["challenges"]
    assert challenge["target_id"] == ids["Lord Ashby"] and not tally["needs_ruling"]
    assert [p["character_id"] for p in challenge["supporters"]] == [ids["Baroness Wick"]]
    assert [p["character_id"] for p in challenge["opposers"]] == [ids["Duchess of Fenn"]]
    assert challenge["outcome"] == "target wins"

    # 7. Resolve, with what the outcome means; the Colonel is an outsider now.
    consequence = "The Colonel retires to Bath."
    result = ok(
        api.post(
            f"/campaigns/{slug}/turns/3/resolve",
            token=ref,
            json={"consequences": [{"entry_id": challenge["entry_id"], "text": consequence}]},
        )
    )
    assert result["eliminated"] == [ids["Colonel Marsh"]]
    assert result["challenges"][0]["consequence"] == consequence
    marsh = ok(api.get(f"/campaigns/{slug}/characters/colonel-marsh", token=tokens["reader"]))
    assert marsh["status"] == "outsider"
    turn = ok(api.get(f"/campaigns/{slug}/turns/3", token=tokens["reader"]))
    assert turn["status"] == "resolved"
    public = ok(api.get(f"/campaigns/{slug}/turns/3/challenges"))
    assert public["items"][0]["consequence"] == consequence
    again = ok(api.post(f"/campaigns/{slug}/turns/3/resolve", token=ref, json={}))
    assert again["eliminated"] == [ids["Colonel Marsh"]]  # resolving twice changes nothing
