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
time limit (PBP_PAGE_CACHE_SECONDS) or the next change. A poll pass gathers its many short
store transactions' bumps in a `Batch` and runs them at most once a second.

Core `update()` statements skip the ORM's flush; the ones pbp runs touch nothing a cached
page shows (poll state, claims, outbox, tokens, card games, read marks: a member reading
a page must not rebuild it for everyone).
"""

from __future__ import annotations

import logging
import threading
import time

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.orm import Session
from sqlalchemy.orm.util import identity_key
from sqlmodel import col

from pbp.models import Campaign, Entry, Turn
from pbp.models import Character as CharacterRow

log = logging.getLogger(__name__)
_KEY = "pbp_changed_campaigns"
_COMMITTED = "pbp_committed_campaigns"
_OWNERS = "pbp_owners"
_KNOWN = "pbp_known_campaigns"
_BATCH = "pbp_bump_batch"


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


def known_campaign(session: Session, *, character_id: int, campaign_id: int) -> None:
    """Tell the bookkeeping a character's campaign, known to the caller (the poller read it
    with the blog), so the flushes of its rows need no query to find it. Kept until the
    end of the session's outermost transaction."""
    _know(session, {(CharacterRow, character_id): campaign_id})


def known_turns(session: Session, *, campaign_id: int, turn_ids: list[int]) -> None:
    """The same for turns the caller read as columns (pbp.services.noteworthy.ingest), so
    the entries it places in them need no query to find their campaign."""
    _know(session, {(Turn, turn_id): campaign_id for turn_id in turn_ids})


def _know(session: Session, owners: dict) -> None:
    session.info.setdefault(_KNOWN, {}).update(owners)
    _owners(session).update(owners)


def _owners(session: Session) -> dict:
    """(model, id) -> the campaign id (characters, turns) or character id (entries) found
    in this transaction: a character's campaign, a turn's and an entry's author never
    change, so each is looked up at most once per transaction, not once per flush.
    Forgotten at the end of every transaction, savepoints included: a row inserted in a
    savepoint that rolls back may see its id reused by the next insert (SQLite)."""
    found = session.info.get(_OWNERS)
    if found is None:
        found = session.info[_OWNERS] = dict(session.info.get(_KNOWN, {}))
    return found


def _owner_of(session: Session, owners: dict, model, ident: int, name: str):
    """The owner from what this transaction knows or has loaded, without a query; None if
    unknown. A row in the identity map (a turn the ingest read, an entry just inserted)
    answers if its attribute is loaded."""
    if (model, ident) in owners:
        return owners[model, ident]
    obj = session.identity_map.get(identity_key(model, ident))
    if obj is not None:
        value = sa.inspect(obj).dict.get(name)
        if value is not None:
            owners[model, ident] = value
            return value
    return None


def _look_up(session: Session, owners: dict, model, ids: set[int], name: str) -> set:
    """The owners of `ids`: known ones from memory, the rest in one query."""
    found, missing = set(), set()
    for ident in ids:
        value = _owner_of(session, owners, model, ident, name)
        if value is None:
            missing.add(ident)
        else:
            found.add(value)
    if missing:
        column = getattr(model, name)
        query = sa.select(model.id, column).where(model.id.in_(missing))
        for ident, value in session.connection().execute(query):
            owners[model, ident] = value
            found.add(value)
    found.discard(None)
    return found


def _campaigns_of(session: Session, objects) -> set[int]:
    found: set[int] = set()
    entry_ids: set[int] = set()
    character_ids: set[int] = set()
    turn_ids: set[int] = set()
    for obj in objects:
        if isinstance(obj, Campaign):
            found.add(_value(obj, "id"))
        elif (campaign_id := _value(obj, "campaign_id")) is not None:
            found.add(campaign_id)
        elif (turn_id := _value(obj, "turn_id")) is not None:  # events, challenges, entries
            turn_ids.add(turn_id)
        elif (character_id := _value(obj, "character_id")) is not None:  # entries, blogs
            character_ids.add(character_id)
        elif (entry_id := _value(obj, "entry_id")) is not None:  # notes, entry revisions
            entry_ids.add(entry_id)
    owners = _owners(session)
    if entry_ids:
        character_ids |= _look_up(session, owners, Entry, entry_ids, "character_id")
    if character_ids:
        found |= _look_up(session, owners, CharacterRow, character_ids, "campaign_id")
    if turn_ids:
        found |= _look_up(session, owners, Turn, turn_ids, "campaign_id")
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
    session.info.pop(_OWNERS, None)  # see _owners
    if transaction.parent is not None:
        return
    session.info.pop(_KNOWN, None)
    session.info.pop(_KEY, None)  # rolled back: nothing to bump
    ids = session.info.pop(_COMMITTED, None)
    if not ids:
        return
    batch = session.info.get(_BATCH)
    if batch is not None:
        batch.add(ids)
        return
    _bump_now(session.get_bind(), ids)


def _bump_now(bind, ids: set[int]) -> None:
    bump = (
        sa.update(Campaign)
        .where(col(Campaign.id).in_(sorted(ids)))
        .values(content_version=Campaign.content_version + 1)
    )
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


class Batch:
    """Bumps gathered from many short transactions and run together, for a poll pass: it
    stores hundreds of changed feeds, often of one campaign, and each store bumping on its
    own (a transaction on the campaign's row after its commit) costs a connection, a
    commit and a row lock the store threads queue on. The gathered campaigns are bumped
    once the last bump is `every` seconds old, and when the batch is closed: a cached page
    lags a stored change by about that long at most, and is still only ever bumped after
    the change's commit. Sessions join with `join`; thread-safe."""

    def __init__(self, engine, *, every: float = 1.0, clock=time.monotonic) -> None:
        self.engine, self.every, self.clock = engine, every, clock
        self._ids: set[int] = set()
        self._lock = threading.Lock()
        self._last = clock()

    def join(self, session: Session) -> None:
        """The session's commits add their campaigns here instead of bumping them."""
        session.info[_BATCH] = self

    def add(self, ids: set[int]) -> None:
        with self._lock:
            self._ids |= ids
            if self.clock() - self._last < self.every:
                return
            ids, self._ids, self._last = self._ids, set(), self.clock()
        _bump_now(self.engine, ids)

    def close(self) -> None:
        with self._lock:
            ids, self._ids = self._ids, set()
        if ids:
            _bump_now(self.engine, ids)
