"""The demo's accounts (issue #27 item 8: a real install must never serve them).

`pbp demo` makes every account under the domain demo.invalid (reserved: RFC 2606 and 6761,
no mailbox can exist there), each with the password it prints for anyone to read.
`pbp serve` refuses a database that holds such an account unless told `--demo`.
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from pbp.models import User

DEMO_DOMAIN = "demo.invalid"


def is_demo_email(email: str) -> bool:
    return email.strip().lower().endswith("@" + DEMO_DOMAIN)


def count(*, engine: Engine) -> int:
    """How many of the demo's accounts the database holds."""
    with Session(engine) as session:
        query = (
            select(sa.func.count())
            .select_from(User)
            .where(sa.func.lower(col(User.email)).like("%@" + DEMO_DOMAIN))
        )
        return session.exec(query).one()
