"""A bot for a pbp forum game, with nothing but pbp's JSON API and `requests`.

It joins a campaign by accepting an invitation, reads its scene, posts in character with a
roll, and whispers to the GM::

    python examples/bot.py --base-url https://pbp.example --token "$TOKEN" \\
        --invitation https://pbp.example/invite/... --roll "2d6+1"

The token is a personal *write* token of the bot's account (make one at /account/tokens, or
`pbp token create EMAIL --scope write`). Every call is in docs/api.md and the OpenAPI
document at /api/v1/openapi.json. A refusal is a problem+json answer whose `detail` says
what to change: 400 the request cannot be read, 409 the game's state forbids it now (read
again), 422 refused for what it asks.
"""

from __future__ import annotations

import argparse
import sys
import uuid

import requests


class Pbp:
    """A thin client: one method per API call the bot makes."""

    def __init__(self, base_url: str, token: str) -> None:
        self.api = base_url.rstrip("/") + "/api/v1"
        self.http = requests.Session()
        self.http.headers["Authorization"] = f"Bearer {token}"

    def call(self, method: str, path: str, body: dict | None = None) -> dict:
        headers = {}
        if method != "GET":  # a retried write is answered once (Idempotency-Key)
            headers["Idempotency-Key"] = str(uuid.uuid4())
        answer = self.http.request(method, self.api + path, json=body, headers=headers, timeout=30)
        if answer.status_code >= 400:
            problem = answer.json()
            raise SystemExit(f"{method} {path}: {answer.status_code} {problem['detail']}")
        return answer.json()

    def accept(self, invitation: str) -> dict:
        return self.call("POST", "/invites/accept", {"invitation": invitation})

    def members(self, slug: str) -> list[dict]:
        return self.call("GET", f"/campaigns/{slug}/members")["members"]

    def first_thread(self, slug: str) -> dict:
        threads = self.call("GET", f"/campaigns/{slug}/forum/threads")["items"]
        if not threads:
            raise SystemExit("the campaign has no scene yet")
        return threads[0]

    def posts(self, slug: str, thread_id: int) -> list[dict]:
        return self.call("GET", f"/campaigns/{slug}/forum/threads/{thread_id}/posts")["items"]

    def post(self, slug: str, thread_id: int, **post) -> dict:
        return self.call("POST", f"/campaigns/{slug}/forum/threads/{thread_id}/posts", post)


def run(base_url: str, token: str, invitation: str, roll: str, say: str) -> dict:
    pbp = Pbp(base_url, token)
    me = pbp.call("GET", "/me")
    campaign = pbp.accept(invitation)
    slug = campaign["slug"]
    print(f"joined {campaign['name']} as {campaign['role']}")

    members = pbp.members(slug)
    mine = next(m for m in members if m["id"] == me["id"])
    gm = next(m for m in members if m["role"] == "referee")
    character = mine["characters"][0] if mine["characters"] else None

    scene = pbp.first_thread(slug)
    for post in pbp.posts(slug, scene["id"]):
        print(f"{post['author']}: {post['body']}")

    as_character = {"character_id": character["id"]} if character else {}
    posted = pbp.post(slug, scene["id"], body=f"{say}\n/roll {roll}", **as_character)
    for made in posted["rolls"]:
        print(f"rolled {made['command']}: {made['text']}")

    whispered = pbp.post(
        slug,
        scene["id"],
        body="Only you should know: I am a bot.",
        kind="ooc",
        audience="whisper",
        recipient_ids=[gm["id"]],
    )
    print(f"whispered to {', '.join(whispered['recipients'])}")
    return {"campaign": slug, "post": posted["id"], "whisper": whispered["id"]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base-url", required=True, help="e.g. https://pbp.example")
    parser.add_argument("--token", required=True, help="a write token of the bot's account")
    parser.add_argument("--invitation", required=True, help="the invitation link")
    parser.add_argument("--roll", default="2d6", help="what to roll, e.g. 2d6+1")
    parser.add_argument("--say", default="The bot steps out of the shadows.")
    args = parser.parse_args(argv)
    run(args.base_url, args.token, args.invitation, args.roll, args.say)
    return 0


if __name__ == "__main__":
    sys.exit(main())
