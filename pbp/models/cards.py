"""The card games' tables: one `CardGame` per forum thread and its append-only `CardEvent`
record (issue "Card games played in forum threads").

`CardGame.state` is the engine's ``Game.to_dict()`` – every deck in order, every hand, every
rat note – so it never leaves the server except through the engine's ``view_for`` (see
pbp.services.cards.tables). `version` counts the actions applied; an action is stored only if the
version it was computed from is still current (optimistic locking), so two simultaneous
actions can never both apply.

`CardEvent` is one applied action: who did it, its parameters (enough to replay it with the
campaign's seed once that is revealed), and the events the engine explained it with, each
with its audience (owner, ``gm_may_read``, ``secret``). Row ``seq`` 0 is the game's creation;
row ``seq`` N took the game from version N-1 to N and drew its randomness from
``dice.derive_rng(seed, f"cards:{game_id}:{N}")``. No code path updates or deletes a row.
"""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from sqlmodel import Field, SQLModel

from pbp.models.base import RowId, _choices, _created, _fk, _json

CARD_RULESETS = ("sex-and-violence", "one-can-have-her")


class CardGame(SQLModel, table=True):
    """A card game played in a forum thread: the engine's whole state and its version."""

    __tablename__ = "card_game"
    __table_args__ = (_choices("ruleset", CARD_RULESETS),)

    id: RowId = Field(default=None, primary_key=True)
    campaign_id: int = _fk("campaign.id")
    thread_id: int = _fk("forum_thread.id", unique=True)
    ruleset: str = Field(max_length=40)
    state: dict = _json()
    version: int = Field(default=0)
    created_by: int | None = _fk("user.id", nullable=True, ondelete="SET NULL")
    created_at: datetime = _created()
    updated_at: datetime = _created()


class CardEvent(SQLModel, table=True):
    """One applied action of a card game and the engine's events for it (append-only)."""

    __tablename__ = "card_event"
    __table_args__ = (sa.UniqueConstraint("game_id", "seq"),)

    id: RowId = Field(default=None, primary_key=True)
    game_id: int = _fk("card_game.id")
    seq: int
    actor_id: int | None = _fk("user.id", nullable=True, ondelete="SET NULL")
    # The engine's name for the actor: "gm", or a player id (the user id as a string).
    actor: str = Field(max_length=40)
    action: str = Field(max_length=40)
    params: dict = _json()
    # [Event.to_dict(), ...]: each event with its public text, private text and audience.
    events: list = _json(list)
    created_at: datetime = _created()


def _refuse_change(_mapper, _connection, target: CardEvent) -> None:
    raise sa.exc.InvalidRequestError(
        f"card event {target.game_id}/{target.seq} is part of the game's record and cannot be "
        "changed"
    )


sa.event.listen(CardEvent, "before_update", _refuse_change)
sa.event.listen(CardEvent, "before_delete", _refuse_change)
