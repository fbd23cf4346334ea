"""People: a user account, and the failed logins counted against an address (issue #28 item 8)."""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from sqlmodel import Field, SQLModel

from pbp.models.base import RowId, _created, _time


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


class LoginFailure(SQLModel, table=True):
    """Wrong passwords lately given for one address, from anywhere (issue #28 item 8).

    Keyed by the address typed, not by the account: an address with no account counts
    and slows down the same way, so the login page does not tell who has an account.
    A row is forgotten once the address has had no failure for a while
    (pbp.services.accounts.backoff); it lives in the database, so every web process
    counts against the same row.
    """

    __tablename__ = "login_failure"

    email: str = Field(max_length=320, primary_key=True)
    failures: int = Field(default=0)
    last_failed_at: datetime = _time(nullable=False, index=True)
    # When the owner was last mailed about these failures: at most once per window.
    mailed_at: datetime | None = _time()
