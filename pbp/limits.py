"""How long a text a person may submit, in one place.

The web forms (through the services), the API's schemas and the forum's preview all read
these, so a text refused on one is refused on all. A Markdown text also has to render
quickly at its limit (pbp.markup bounds the shapes that do not).
"""

from __future__ import annotations

from pbp.errors import UserError

ENTRY_TITLE = 1000
ENTRY_BODY = 20_000  # Markdown, built-in blog entries
NOTE_BODY = 20_000  # Markdown
FATE = 4000  # the fate a note wishes on the loser
POST_BODY = 20_000  # Markdown, forum posts
EVENT_TEXT = 20_000  # a turn's event, and each tailored part
FINAL_NOTICE = 20_000
SHEET_JSON = 20_000  # a character sheet, as JSON
CONSEQUENCE = 4000
RULING_REASON = 4000
INVITE_DAYS = 14  # how long an invitation link works, unless the referee says
MAX_INVITE_DAYS = 90
PASSWORD_MIN = 10  # characters; a few words make a good one
PASSWORD_MAX = 200  # hashing a longer one is work an attacker chooses
DISPLAY_NAME = 120
EMAIL = 320  # RFC 5321's longest address


class TextTooLong(UserError):
    """A submitted text longer than its limit."""


def check_length(text: str | None, limit: int, what: str) -> str:
    """*text* unchanged, or TextTooLong saying by how much it is over."""
    text = text or ""
    if len(text) > limit:
        raise TextTooLong(
            f"{what} may be at most {limit:,} characters; this one has {len(text):,}: "
            f"shorten it by {len(text) - limit:,}"
        )
    return text
