"""The forum's tables: threads and posts, whispers, revisions, watches, sheets, and the
dice record (rolls and each campaign's secret seed).

Campaigns with a ruleset other than Noteworthy are played here (issue "Forum play with
dice no one can fake"). `Roll` is append-only: no code path updates or deletes a roll
(the mapper events below refuse it, and the 0002 migration adds database triggers), so
editing or deleting a post can neither change nor hide the dice it rolled.
"""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from sqlmodel import Field, SQLModel

from pbp.models.base import RowId, _choices, _created, _fk, _json, _time

POST_KINDS = ("ic", "ooc")  # in character, out of character
# "all": everyone who can read the forum; "gm": the author and the GM; "whisper": the
# author, the named recipients and the GM.
POST_AUDIENCES = ("all", "gm", "whisper")
# See pbp.services.forum.rolls.ROLL_VISIBILITY for the one-line definitions shown on the page.
ROLL_VISIBILITIES = ("public", "gm", "blind")

ROLL_ID_LENGTH = 32
CLIENT_TOKEN_LENGTH = 64


class Thread(SQLModel, table=True):
    """A scene: a titled sequence of posts. It keeps no "last post" time of its own: that
    would betray a hidden post's time; `forum.list_threads` reads it from visible posts."""

    __tablename__ = "forum_thread"
    __table_args__ = (sa.CheckConstraint("title <> ''", name="title_not_empty"),)

    id: RowId = Field(default=None, primary_key=True)
    campaign_id: int = _fk("campaign.id")
    title: str = Field(max_length=200)
    created_by: int | None = _fk("user.id", nullable=True, ondelete="SET NULL")
    created_at: datetime = _created()


class Post(SQLModel, table=True):
    """One post in a thread, in Markdown. The ``/roll`` lines are taken out of `body` when
    the post is submitted and stored as `Roll` rows, so no later edit can touch them.

    `client_token` is the hidden idempotency key of the form that made the post: a double
    submit of one form finds the first post instead of making a second.
    """

    __tablename__ = "forum_post"
    __table_args__ = (
        _choices("kind", POST_KINDS),
        _choices("audience", POST_AUDIENCES),
        sa.UniqueConstraint("author_id", "client_token"),
    )

    id: RowId = Field(default=None, primary_key=True)
    thread_id: int = _fk("forum_thread.id")
    author_id: int | None = _fk("user.id", nullable=True, ondelete="SET NULL")
    character_id: int | None = _fk("character.id", nullable=True, ondelete="SET NULL")
    kind: str = Field(default="ic", max_length=8)
    audience: str = Field(default="all", max_length=16)
    body: str = Field(default="", sa_type=sa.Text)
    body_html: str = Field(default="", sa_type=sa.Text)
    client_token: str | None = Field(default=None, max_length=CLIENT_TOKEN_LENGTH)
    created_at: datetime = _created()
    edited_at: datetime | None = _time()
    deleted_at: datetime | None = _time()
    # The icon its writer picked (issue #33 item 1); NULL: the character's default.
    icon_id: int | None = _fk("character_icon.id", nullable=True, ondelete="SET NULL")


class PostRevision(SQLModel, table=True):
    """Every version of a post's text, the first included: the GM's edit history."""

    __tablename__ = "forum_post_revision"

    id: RowId = Field(default=None, primary_key=True)
    post_id: int = _fk("forum_post.id")
    body: str = Field(default="", sa_type=sa.Text)
    edited_by: int | None = _fk("user.id", nullable=True, ondelete="SET NULL")
    created_at: datetime = _created()


class PostRecipient(SQLModel, table=True):
    """A named recipient of a whisper."""

    __tablename__ = "forum_post_recipient"
    __table_args__ = (sa.UniqueConstraint("post_id", "user_id"),)

    id: RowId = Field(default=None, primary_key=True)
    post_id: int = _fk("forum_post.id")
    user_id: int = _fk("user.id")


class Watch(SQLModel, table=True):
    """A member watching a thread: new posts they can read are emailed to them."""

    __tablename__ = "forum_watch"
    __table_args__ = (sa.UniqueConstraint("thread_id", "user_id"),)

    id: RowId = Field(default=None, primary_key=True)
    thread_id: int = _fk("forum_thread.id")
    user_id: int = _fk("user.id")
    created_at: datetime = _created()


class Sheet(SQLModel, table=True):
    """A character's sheet for the campaign's ruleset (ONE: stats, skills, hit points
    lost; other rulesets: a free-form JSON object). Changes go to the AuditLog."""

    __tablename__ = "forum_sheet"

    id: RowId = Field(default=None, primary_key=True)
    character_id: int = _fk("character.id", unique=True)
    ruleset: str = Field(max_length=40)
    data: dict = _json()
    updated_by: int | None = _fk("user.id", nullable=True, ondelete="SET NULL")
    updated_at: datetime = _created()


class CampaignSecret(SQLModel, table=True):
    """The campaign's secret dice seed and its published SHA-256 commitment.

    The seed (hex) never leaves the server before `revealed_at` (the campaign's end);
    the commitment is shown on the forum's front page from the start.
    """

    __tablename__ = "campaign_secret"

    id: RowId = Field(default=None, primary_key=True)
    campaign_id: int = _fk("campaign.id", unique=True)
    seed: str = Field(max_length=128)
    commitment: str = Field(max_length=64)
    created_at: datetime = _created()
    revealed_at: datetime | None = _time()


class Roll(SQLModel, table=True):
    """One executed roll command, append-only.

    `id` is random and unguessable and is the HMAC message (`dice.derive_rng(seed, id)`);
    `number` counts the campaign's rolls from 1, so a missing roll shows as a gap when an
    export is verified. `result` is `RollResult.to_dict()`; `command` is its canonical
    command (named skills already resolved to a score), so the roll recomputes from
    (seed, id, command) alone.
    """

    __tablename__ = "forum_roll"
    __table_args__ = (
        _choices("visibility", ROLL_VISIBILITIES),
        sa.UniqueConstraint("campaign_id", "number"),
        sa.UniqueConstraint("post_id", "position"),
    )

    id: str = Field(primary_key=True, max_length=ROLL_ID_LENGTH)
    campaign_id: int = _fk("campaign.id")
    number: int
    post_id: int = _fk("forum_post.id", ondelete="RESTRICT")
    position: int
    roller_id: int | None = _fk("user.id", nullable=True, ondelete="SET NULL")
    character_id: int | None = _fk("character.id", nullable=True, ondelete="SET NULL")
    visibility: str = Field(default="public", max_length=16)
    command: str = Field(max_length=600)
    # The command as its poster typed it (issue #35 item 4); `command` is what pbp resolved
    # and rolled. "" for a roll stored before pbp kept it.
    typed: str = Field(default="", max_length=600, sa_column_kwargs={"server_default": ""})
    # How a named skill was resolved, e.g. "Short Blade 7 from Ada's sheet; wounded -2".
    note: str = Field(default="", max_length=500)
    result: dict = _json()
    created_at: datetime = _created()


def _refuse_change(_mapper, _connection, target: Roll) -> None:
    raise sa.exc.InvalidRequestError(
        f"roll {target.id} is part of the permanent dice record and cannot be changed"
    )


sa.event.listen(Roll, "before_update", _refuse_change)
sa.event.listen(Roll, "before_delete", _refuse_change)


class CombatStep(SQLModel, table=True):
    """One step of a ONE combat in a scene (issue #33 item 4): started, a plan declared, an
    attack resolved with the rolls of posts, the next segment, ended. `state` is the pure
    tracker's state after the step (pbp.rules.one.combat, as JSON): the service continues
    from the last step's state and can replay every step from the first to check it. A
    thread's combats follow each other ("start" ... "end"); the steps are its history."""

    __tablename__ = "forum_combat_step"
    __table_args__ = (sa.UniqueConstraint("thread_id", "number"),)

    id: RowId = Field(default=None, primary_key=True)
    thread_id: int = _fk("forum_thread.id")
    number: int
    kind: str = Field(max_length=16)  # start, declare, attack, next, end
    detail: dict = _json()
    state: dict = _json()
    text: str = Field(default="", sa_type=sa.Text)  # the step in words, as the page shows it
    actor_id: int | None = _fk("user.id", nullable=True, ondelete="SET NULL")
    created_at: datetime = _created()
