"""Each campaign's content version: a counter bumped after every commit that changed what
the campaign's pages show, so a rendered page can be cached under it (pbp.web.page_cache).

Session events do the bookkeeping, so no write path can forget it: `after_flush` notes the
campaigns of the rows written (entries, notes, events, turns, characters, rulings, aliases
and anything else carrying a campaign id), `after_commit` keeps them, and the end of the
transaction bumps their counters.

The bump runs in a transaction of its own, after the commit, for two reasons:
- order: a page read before the bump is cached under the old number, which nobody asks
  for once the bump lands; bumping inside the writer's transaction on PostgreSQL would
  let a reader take the new number with the old rows, before the commit shows;
- locks: the writer holds its row locks until its commit; taking the campaign row's lock
  at the end as well could deadlock against a referee action that locks the campaign
  first (pbp.services.noteworthy.turns.lock_campaign). Alone, the bump holds nothing else.
If a process dies between the commit and the bump, pages stay stale only until the cache's
time limit (PBP_PAGE_CACHE_SECONDS) or the next change.

Core `update()` statements skip the ORM's flush; the ones pbp runs touch nothing a cached
page shows (poll state, claims, outbox, tokens, card games).
"""

from __future__ import annotations

import logging

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.orm import Session

from pbp.models import Campaign, Entry, Turn
from pbp.models import Character as CharacterRow

log = logging.getLogger(__name__)
_KEY = "pbp_changed_campaigns"
_COMMITTED = "pbp_committed_campaigns"


def _value(obj, name: str):
    """The attribute, read without a query where possible; a deleted row can't be read back."""
    state = sa.inspect(obj)
    if name in state.dict:
        return state.dict[name]
    if name == "id" and state.identity:
        return state.identity[0]
    if state.deleted or state.was_deleted or name not in state.mapper.attrs:
        return None
    return getattr(obj, name)  # an expired row changed without being read first


def _campaigns_of(session: Session, objects) -> set[int]:
    found: set[int] = set()
    entry_ids: set[int] = set()
    character_ids: set[int] = set()
    turn_ids: set[int] = set()
    for obj in objects:
        if isinstance(obj, Campaign):
            found.add(_value(obj, "id"))
        elif _value(obj, "campaign_id") is not None:
            found.add(_value(obj, "campaign_id"))
        elif _value(obj, "turn_id") is not None:  # events, challenges, most entries
            turn_ids.add(_value(obj, "turn_id"))
        elif _value(obj, "character_id") is not None:  # entries outside turns, blogs
            character_ids.add(_value(obj, "character_id"))
        elif _value(obj, "entry_id") is not None:  # notes, entry revisions
            entry_ids.add(_value(obj, "entry_id"))
    conn = session.connection()
    if entry_ids:
        character_ids |= set(
            conn.scalars(sa.select(Entry.character_id).where(Entry.id.in_(entry_ids)).distinct())
        )
    if character_ids:
        found |= set(
            conn.scalars(
                sa.select(CharacterRow.campaign_id).where(CharacterRow.id.in_(character_ids))
            )
        )
    if turn_ids:
        found |= set(conn.scalars(sa.select(Turn.campaign_id).where(Turn.id.in_(turn_ids))))
    found.discard(None)
    return found


@event.listens_for(Session, "after_flush")
def _remember(session: Session, _context) -> None:
    dirty = [obj for obj in session.dirty if session.is_modified(obj)]
    changed = [*session.new, *dirty, *session.deleted]
    if changed:
        session.info.setdefault(_KEY, set()).update(_campaigns_of(session, changed))


@event.listens_for(Session, "after_commit")
def _committed(session: Session) -> None:
    if session.in_nested_transaction():  # a savepoint: the real commit comes later
        return
    ids = session.info.pop(_KEY, None)
    if ids:
        session.info[_COMMITTED] = ids


@event.listens_for(Session, "after_transaction_end")
def _bump(session: Session, transaction) -> None:
    """After the outermost transaction, once its connection is back in the pool: bumping
    from after_commit would hold two connections per session, and a pool's worth of poll
    threads doing so would wait on each other until the pool timeout."""
    if transaction.parent is not None:
        return
    session.info.pop(_KEY, None)  # rolled back: nothing to bump
    ids = session.info.pop(_COMMITTED, None)
    if not ids:
        return
    bump = (
        sa.update(Campaign)
        .where(Campaign.id.in_(sorted(ids)))
        .values(content_version=Campaign.content_version + 1)
    )
    bind = session.get_bind()
    try:
        if isinstance(bind, sa.engine.Connection):  # a session inside someone's transaction
            bind.execute(bump)
            return
        with bind.begin() as conn:
            conn.execute(bump)
    except sa.exc.DBAPIError:
        # The change is committed: failing its caller now would invite a retry of a
        # write that succeeded. Cached pages age out within PBP_PAGE_CACHE_SECONDS.
        log.warning("content version of campaigns %s not bumped", sorted(ids), exc_info=True)
