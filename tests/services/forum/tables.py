"""Shared set-up for the forum tests (no tests here): a table of a GM, three players with
characters and a stranger, and a helper to post as one of them."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlmodel import Session

from pbp.models import Campaign, Character, User
from pbp.models.forum import Post, Thread
from pbp.services import campaigns
from pbp.services.forum import posts, sheets
from pbp.services.forum.drafts import Draft
from pbp.services.forum.rolls import ANONYMOUS, Viewer
from pbp.services.mail.settings import MailSettings
from tests.factories import make_user

MAIL = MailSettings("http://pbp.test", "test-secret-key-" + "x" * 32, "pbp <pbp@pbp.test>")
T0 = datetime(2026, 7, 1, 20, 0, tzinfo=UTC)
MADE = T0 - timedelta(days=1)  # the campaign, and so its dice commitment, precede every post
_seq = itertools.count(1)
ONE_STATS = {"STR": 7, "INT": 7, "DEX": 9, "HLT": 6, "SPD": 6}


@dataclass
class Table:
    campaign: Campaign
    gm: User
    ada_user: User
    bram_user: User
    cleo_user: User
    stranger: User
    ada: Character
    bram: Character
    cleo: Character

    def viewer(self, user: User | None) -> Viewer:
        role = {
            self.gm.id: "referee",
            self.ada_user.id: "player",
            self.bram_user.id: "player",
            self.cleo_user.id: "player",
        }
        if user is None:
            return ANONYMOUS
        return Viewer(user.id, role.get(user.id))


def make_table(
    session: Session, *, ruleset: str = "one", users: list[User] | None = None, name=None
) -> Table:
    gm, ada_user, bram_user, cleo_user, stranger = users or [
        make_user(session, n) for n in ("Gail GM", "Ann", "Ben", "Cat", "Stan Stranger")
    ]
    campaign = campaigns.create_campaign(
        session=session,
        referee=gm,
        name=name or f"Forum Game {next(_seq)}",
        ruleset=ruleset,
        now=MADE,
    )
    chars = [
        campaigns.add_character(session=session, campaign=campaign, name=n, user=u)
        for n, u in (("Ada", ada_user), ("Bram", bram_user), ("Cleo", cleo_user))
    ]
    session.commit()
    return Table(campaign, gm, ada_user, bram_user, cleo_user, stranger, *chars)


def give_one_sheet(session: Session, table: Table, skills=None, lost: int = 0) -> None:
    sheets.save_sheet(
        session=session,
        campaign=table.campaign,
        character=table.ada,
        data={"stats": ONE_STATS, "skills": skills or {"Short Blade": 4}, "hit_points_lost": lost},
        actor=table.ada_user,
        membership=campaigns.membership(
            session=session, campaign=table.campaign, user=table.ada_user
        ),
        now=T0,
    )


def write(
    session: Session,
    table: Table,
    author: User,
    body: str,
    *,
    thread: Thread | None = None,
    title: str = "The docks",
    minutes: int = 0,
    **draft,
) -> Post:
    """Post as `author` (a new thread unless `thread` is given)."""
    if author.id == table.ada_user.id:
        draft.setdefault("character_id", table.ada.id)
    when = T0 + timedelta(minutes=minutes)
    if thread is None:
        return posts.create_thread(
            session=session,
            campaign=table.campaign,
            author=author,
            title=title,
            draft=Draft(body=body, **draft),
            mail=MAIL,
            now=when,
        )
    return posts.create_post(
        session=session,
        campaign=table.campaign,
        thread=thread,
        author=author,
        draft=Draft(body=body, **draft),
        mail=MAIL,
        now=when,
    )
