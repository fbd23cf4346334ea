"""The campaign's audit log as sentences a referee reads: "Ada posted the event for turn 4,
tailored for 2 characters", not `post_event {"turn": 4, "tailored": 2}`.

Every action pbp records has a sentence here; an action without one (from a newer or older
version) still reads as words, never as a raw identifier. The raw detail stays in the
database and the referee's export.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlmodel import Session, col, select

from pbp.models import AuditLog, Campaign, Character, User

LIMIT = 500

RULING_WORDS = {
    "target": "the target of a challenge",
    "stance": "the stance of a note",
    "author": "who wrote a note",
    "validity": "whether a challenge is valid",
    "note_validity": "whether a late or backdated note counts",
    "withdrawal": "whether a challenge was withdrawn",
    "tiebreak": "a tie",
    "fate_not_allowed": "a desired fate it does not allow",
    "mood": "the mood of an entry",
    "drop": "a character dropping out",
}


@dataclass(frozen=True)
class AuditLine:
    at: datetime
    who: str
    sentence: str


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _names(ids: Iterable[Any], characters: Mapping[Any, str]) -> str:
    names = [characters.get(i, "a character") for i in ids or []]
    return ", ".join(names) if names else "nobody"


def _outsiders(detail: dict[str, Any], characters: Mapping[Any, str]) -> str:
    ids = detail.get("eliminated") or []
    if not ids:
        return "nobody became an outsider"
    return f"{_names(ids, characters)} became {'an outsider' if len(ids) == 1 else 'outsiders'}"


def _character(detail: dict[str, Any], characters: Mapping[Any, str]) -> str:
    return characters.get(detail.get("character_id"), "a character")


def _sentence(row: AuditLog, characters: Mapping[Any, str]) -> str:
    d = row.detail or {}
    turn = d.get("turn")
    sentences: dict[str, Callable[[], str]] = {
        "post_event": lambda: (
            f"posted the event for turn {turn}"
            + (f", tailored for {_plural(d['tailored'], 'character')}" if d.get("tailored") else "")
        ),
        "queue_event": lambda: (
            "queued the next event" if d.get("queued") else "cleared the queued event"
        ),
        "close_turn": lambda: f"closed turn {turn}",
        "reopen_turn": lambda: f"reopened turn {turn}",
        "resolve_turn": lambda: f"resolved turn {turn}; " + _outsiders(d, characters),
        "ruling": lambda: (
            f"ruled on {RULING_WORDS.get(d.get('kind', ''), 'a question')} in turn {turn}"
        ),
        "final_notice": lambda: "published the final notice",
        "add_character": lambda: f"added {d.get('name', 'a character')} to the roster",
        "map_commenter": lambda: (
            f"matched a commenter to {characters.get(d.get('character'), 'a character')}"
        ),
        "commenter_identity_declared": lambda: (
            f"gave {len(d.get('uris') or [])} profile address"
            f"{'' if len(d.get('uris') or []) == 1 else 'es'} as "
            f"{characters.get(d.get('character_id'), 'a character')}'s commenter identity"
        ),
        "settings": lambda: "changed the campaign's settings",
        "remind": lambda: f"reminded {_plural(d.get('count', 0), 'player')} to write",
        "schedule_waiting": lambda: (
            f"the schedule could not open turn {turn}: {d.get('reason', 'it was waiting')}"
        ),
        "blog_changed": lambda: (
            f"changed the blog of {characters.get(d.get('character_id'), 'a character')}"
        ),
        "entry.hidden": lambda: (
            f"hid {_character(d, characters)}'s entry “{d.get('title') or '(untitled)'}” "
            f"in turn {turn}: out of the tally and of the players' sight"
        ),
        "feed_moved": lambda: "a blog's feed moved to a new address",
        "feed_alert": lambda: "a blog's feed stopped answering",
        "websub_refused": lambda: (
            "refused what a blog's WebSub hub pushed: " + str(d.get("reason", "over its bounds"))
        ),
        "invite.created": lambda: (
            f"made an invitation for a {d.get('role', 'player')}"
            + (
                f" to play {characters[d['character_id']]}"
                if d.get("character_id") in characters
                else ""
            )
        ),
        "invite.accepted": lambda: f"joined as {d.get('role', 'player')}",
        "invite.resent": lambda: (
            "sent an invitation again"
            + (", valid for another two weeks" if d.get("renewed") else "")
        ),
        "character.renamed": lambda: (
            f"renamed {d.get('before', 'a character')} to {_character(d, characters)}"
        ),
        "character.aliases": lambda: f"changed the aliases of {_character(d, characters)}",
        # Dropping out is a ruling: the character is an outsider from then on.
        "character.dropped": lambda: (
            f"ruled that {_character(d, characters)} dropped out of the game, an outsider "
            "from now on" + (f" ({d['reason']})" if d.get("reason") else "")
        ),
        "character.handed_over": lambda: (
            f"handed {_character(d, characters)} to "
            + ("another member" if d.get("to") else "a new player, with an invitation")
        ),
        "character.made": lambda: f"made their character {_character(d, characters)}",
        "forum.start": lambda: "started the campaign and published the dice commitment",
        "forum.end": lambda: "ended the campaign and revealed the dice seed",
        "post.delete": lambda: "deleted a post",
        "sheet.update": lambda: "updated a character sheet",
    }
    make = sentences.get(row.action)
    if make is None:
        return "did something pbp has no words for yet (" + row.action.replace("_", " ") + ")"
    return make()


def audit_lines(*, session: Session, campaign: Campaign) -> list[AuditLine]:
    """The newest 500 lines of the campaign's audit log, newest first, in words."""
    rows = list(
        session.exec(
            select(AuditLog)
            .where(AuditLog.campaign_id == campaign.id)
            .order_by(col(AuditLog.created_at).desc(), col(AuditLog.id).desc())
            .limit(LIMIT)
        )
    )
    actor_ids = {r.actor_id for r in rows if r.actor_id}
    actors = {
        u.id: u.display_name
        for u in session.exec(select(User).where(col(User.id).in_(actor_ids or [-1])))
    }
    characters = {
        c.id: c.name
        for c in session.exec(select(Character).where(Character.campaign_id == campaign.id))
    }
    return [
        AuditLine(
            at=r.created_at,
            who=actors.get(r.actor_id, "someone") if r.actor_id else "pbp",
            sentence=_sentence(r, characters),
        )
        for r in rows
    ]
