"""A post as the form submits it, its text as stored, and its preview (nothing rolled)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from sqlmodel import Session

from pbp import limits
from pbp.limits import check_length
from pbp.rules import dice
from pbp.services.rendering import rendered

MAX_TITLE = 200


KINDS = {"ic": "In character", "ooc": "Out of character"}


AUDIENCES = {
    "all": "Everyone",
    "gm": "The GM only",
    "whisper": "A whisper: only the people named and the GM",
}


TOKEN = re.compile(r"[A-Za-z0-9_-]{8,64}")


# The lines `dice.find_roll_commands` reads: a /roll line outside fenced code.
_ROLL_LINE = re.compile(r"^ {0,3}/roll(?:\s|$)", re.IGNORECASE)


_FENCE = re.compile(r"^ {0,3}(```|~~~)")


@dataclass(frozen=True)
class Draft:
    """A post as submitted by the form."""

    body: str
    kind: str = "ic"
    audience: str = "all"
    recipient_ids: tuple[int, ...] = ()
    recipient_characters: tuple[str, ...] = ()  # slugs: a whisper to whoever plays them
    character_id: int | None = None
    roll_visibility: str = "public"
    client_token: str | None = None
    icon_id: int | None = None  # one of the character's icons (issue #33 item 1)


def strip_roll_lines(text: str) -> str:
    """The post's text without its ``/roll`` lines (they become `Roll` rows)."""
    kept, fenced = [], False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
        elif not fenced and _ROLL_LINE.match(line):
            continue
        kept.append(line)
    return "\n".join(kept).strip()


def typed_body(text: str | None) -> str:
    """A post's text as stored: one kind of line end, trimmed, within the limit."""
    body = (text or "").replace("\r\n", "\n").strip()
    return check_length(body, limits.POST_BODY, "a post")


def preview(*, session: Session, text: str) -> tuple[str, list[str]]:
    """What a post will look like: its HTML and the commands it will roll when posted.
    Nothing is rolled and nothing is stored; a bad command raises `RollError`. The same
    limit as posting applies, and no transaction stays open across the render."""
    body = typed_body(text)
    commands = [c.canonical() for c in dice.find_roll_commands(body)]
    return rendered(session=session, text=strip_roll_lines(body)), commands
