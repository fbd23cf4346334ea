"""A player hides their own entry while its turn is open (issue #27 item 2: "A player can
withdraw (hide) their own entry while its turn is open. Its revisions stay for the
referee.")

Not the rules' withdrawal of a challenge (hosted_blog.withdraw_entry: a mood revision, the
entry stays, and "that still counts as your challenge for that turn"). A hidden entry:

- leaves the planet, the character page, the turn page, the Atom feeds, the digest, the
  archive and the API's entry list; its page and its notes answer 404 to everyone but its
  author and the referee, who see it marked "hidden by its author", the referee with every
  version pbp kept (its revisions are never deleted);
- leaves the tally: the turn is tallied as if it had never been posted. Notes on it no
  longer count (for positions, or as notes written); a character whose only entry is
  hidden has posted nothing this turn (and is reminded);
- is never a challenge: an entry that is or ever was Challenging (in any version) cannot be
  hidden. Noteworthy: a withdrawn challenge "still counts as your challenge for that
  turn"; hiding one would free its author to challenge again, so the player withdraws it
  instead (the mood changed away), and the referee can rule on it;
- takes no more notes, edits or withdrawal.

Only while the entry's turn is open: the tally of a closed or resolved turn is the one the
referee rules on, and it must not change under them. It cannot be undone by its author.
Every read that shows entries to players adds `SHOWN`; the referee's dashboard lists the
turn's hidden entries (`hidden_in_turn`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlmodel import Session, col, select

from pbp.errors import NotFound, UserError
from pbp.models import Campaign, Character, Entry, EntryRevision, User
from pbp.services import audit_actions as lines
from pbp.services import audit_log, campaigns, lookups
from pbp.services.noteworthy import hosted_blog, play

#: The condition every read of entries shown to players adds.
SHOWN = col(Entry.hidden_at).is_(None)


def hide_entry(
    *, session: Session, actor: User | None, campaign: Campaign, entry_id: int, now: datetime
) -> Entry:
    """Hide the actor's own entry `entry_id`, while its turn is open; audited."""
    character, entry = hosted_blog.own_entry(
        session=session,
        actor=actor,
        campaign=campaign,
        entry_id=entry_id,
        refusal="only the entry's author can hide it",
    )
    turn = play.open_turn(session=session, campaign=campaign)
    if turn is None or entry.turn_id != turn.id:
        raise UserError(
            "an entry can be hidden only while its turn is open; this one's turn has ended "
            "(the referee can rule on it)"
        )
    if play.was_challenge(session=session, entry=entry):
        raise UserError(
            "a challenge cannot be hidden: withdraw it instead (change its mood); the rules "
            "say it still counts as your challenge this turn"
        )
    entry.hidden_at = now
    session.add(entry)
    hidden = lines.EntryHidden(entry.id, character.id, turn=turn.number, title=entry.title)
    audit_log.record(session, line=hidden, actor=actor, campaign_id=campaign.id, now=now)
    session.flush()
    return entry


def may_see(*, session: Session, campaign: Campaign, entry: Entry, user: User | None) -> bool:
    """Whether `user` may read `entry`: anyone a shown one, only its author and the
    campaign's referee a hidden one."""
    if entry.hidden_at is None:
        return True
    if user is None:
        return False
    author = session.get(Character, entry.character_id)
    if author is not None and author.user_id == user.id:
        return True
    member = campaigns.membership(session=session, campaign=campaign, user=user)
    return member is not None and member.role == "referee"


def check_visible(*, session: Session, campaign: Campaign, entry: Entry, user: User | None) -> None:
    """NotFound, as for an entry that does not exist, unless `user` may read `entry`."""
    if not may_see(session=session, campaign=campaign, entry=entry, user=user):
        raise NotFound(f"there is no entry {entry.id} in {campaign.name}")


def visible_entry(
    *, session: Session, campaign: Campaign, entry_id: int, user: User | None
) -> lookups.EntryRow:
    """The entry, as lookups.get_entry, if `user` may read it."""
    row = lookups.get_entry(session=session, campaign=campaign, entry_id=entry_id)
    check_visible(session=session, campaign=campaign, entry=row.entry, user=user)
    return row


def versions(*, session: Session, entry: Entry) -> list[EntryRevision]:
    """Every version pbp kept of the entry, oldest first (the referee's to read)."""
    return list(
        session.exec(
            select(EntryRevision)
            .where(EntryRevision.entry_id == entry.id)
            .order_by(col(EntryRevision.seen_at), col(EntryRevision.id))
        )
    )


def hidden_in_turn(*, session: Session, turn_id: int) -> list[Any]:
    """The turn's hidden entries as (id, character_id, title, hidden_at) rows."""
    return list(
        session.exec(
            select(Entry.id, Entry.character_id, Entry.title, Entry.hidden_at)
            .where(Entry.turn_id == turn_id, col(Entry.hidden_at).is_not(None))
            .order_by(col(Entry.hidden_at), col(Entry.id))
        )
    )
