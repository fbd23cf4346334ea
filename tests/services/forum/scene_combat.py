"""Shared set-up for the ONE combat tests (no tests here): Larry and Curly from ONE's worked
example, with sheets, in a scene of a ONE campaign, and dice that show the faces a test
scripts (the forum's fair dice replaced for the test, so the example's rolls come up)."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import timedelta

from sqlmodel import Session

from pbp.models import Character, User
from pbp.models.forum import Thread
from pbp.rules import dice
from pbp.services import campaigns
from pbp.services.forum import posts, rolls, sheets
from pbp.services.forum.drafts import Draft
from tests.factories import make_user
from tests.services.forum.tables import MADE, MAIL, T0

# "Larry's Pertinent Numbers ... Short Blade: 8 ... Hit Points: 30 ... Speed: 7": HLT 10,
# DEX 6 (Base 2) + 6 levels. "Curly ... Short Blade: 10 ... Hit Points: 24 ... Speed: 9
# (reduced to 8 by the armor)": HLT 8, DEX 9 (Base 3) + 7 levels, armour AV 2 weighing 1.
LARRY = {
    "stats": {"STR": 6, "INT": 6, "DEX": 6, "HLT": 10, "SPD": 7},
    "skills": {"Short Blade": 6},
    "shield": "small",
}
CURLY = {
    "stats": {"STR": 5, "INT": 4, "DEX": 9, "HLT": 8, "SPD": 9},
    "skills": {"Short Blade": 7},
    "armour": {"value": 2, "weight": 1},
}
BLADE = '/roll one skill="Short Blade"'


class Script:
    """The faces the next rolls show, in order: each roll's generator takes its faces
    from here (a d6 face f is the draw f - 1, as `dice.draw_face` reads it)."""

    def __init__(self) -> None:
        self.faces: list[int] = []

    def rng(self, _seed: bytes, _roll_id: str) -> random.Random:
        script = self

        class Scripted(random.Random):
            def getrandbits(self, k: int) -> int:
                return script.faces.pop(0) - 1

        return Scripted(0)


@dataclass
class Scene:
    session: Session
    campaign: object
    thread: Thread
    gm: User
    larry_user: User
    curly_user: User
    larry: Character
    curly: Character
    script: Script
    minutes: int = 0

    def post(self, who: str, body: str, faces: list[int]) -> list[str]:
        """Post as Larry or Curly with the faces the post's rolls will show; their ids."""
        user, character = (
            (self.larry_user, self.larry) if who == "Larry" else (self.curly_user, self.curly)
        )
        self.script.faces.extend(faces)
        self.minutes += 1
        post = posts.create_post(
            session=self.session,
            campaign=self.campaign,
            thread=self.thread,
            author=user,
            draft=Draft(body=body, character_id=character.id),
            mail=MAIL,
            now=T0 + timedelta(minutes=self.minutes),
        )
        assert not self.script.faces, "every scripted face was rolled"
        made = rolls.rolls_of_posts(session=self.session, post_ids=[post.id])[post.id]
        return [r.id for r in sorted(made, key=lambda r: r.position)]


def make_scene(session: Session, monkeypatch) -> Scene:
    script = Script()
    monkeypatch.setattr(dice, "derive_rng", script.rng)
    gm, larry_user, curly_user = (make_user(session, n) for n in ("Moe GM", "Lou", "Cal"))
    campaign = campaigns.create_campaign(
        session=session, referee=gm, name="Three Stooges", ruleset="one", now=MADE
    )
    larry = campaigns.add_character(
        session=session, campaign=campaign, name="Larry", user=larry_user
    )
    curly = campaigns.add_character(
        session=session, campaign=campaign, name="Curly", user=curly_user
    )
    for character, user, data in ((larry, larry_user, LARRY), (curly, curly_user, CURLY)):
        sheets.save_sheet(
            session=session, campaign=campaign, character=character, data=data, actor=user,
            membership=campaigns.membership(session=session, campaign=campaign, user=user),
            now=T0,
        )  # fmt: skip
    opening = posts.create_thread(
        session=session, campaign=campaign, author=gm, title="The alley",
        draft=Draft(body="Larry and Curly face each other, weapons in hand."), mail=MAIL, now=T0,
    )  # fmt: skip
    thread = session.get(Thread, opening.thread_id)
    session.commit()
    return Scene(session, campaign, thread, gm, larry_user, curly_user, larry, curly, script)
