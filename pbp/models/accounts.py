"""People: a user account."""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from sqlmodel import Field, SQLModel

from pbp.models.base import RowId, _created


class User(SQLModel, table=True):
    id: RowId = Field(default=None, primary_key=True)
    email: str = Field(max_length=320, unique=True)
    display_name: str = Field(max_length=120)
    password_hash: str | None = Field(default=None, max_length=400)
    created_at: datetime = _created()
    # Part of every login session's id (accounts.session_id): raising it at logout or a
    # password change ends every session made before, even a copied cookie.
    session_generation: int = Field(default=0, sa_column_kwargs={"server_default": "0"})
    # An account made on the open sign-up page works only once its owner followed the
    # link mailed to the address (PBP_SIGNUP=open); invited and operator-made accounts
    # never wait.
    awaiting_confirmation: bool = Field(
        default=False, sa_column_kwargs={"server_default": sa.false()}
    )
