"""Card games played in forum threads (Sex & Violence, One Can Have Her): the server owns
every deck, deals with the campaign's verifiable seed, records every card, keeps secrets.

* Secrecy: the stored state (`CardGame.state`) holds every deck in order, every hand and every
  rat note. It leaves this module only through the engine's ``view_for(state, viewer)``, and
  the record (`CardEvent.events`) only through ``events_for(events, viewer)``. Pages, the JSON
  view, the forum posts announcing each move (and so the forum's feed, export and email) and
  the export get nothing else. The one exception is `export_game` once the campaign has ended
  and its seed is public: anyone could then recompute every deal, so the full record is
  published for checking (`verify_card_export`).
* Randomness: the action that takes a game to version N draws from
  ``dice.derive_rng(seed, f"cards:{game_id}:{N}")`` with the campaign's secret seed.
* One action at a time: the game row is locked (PostgreSQL) and stored only if its version is
  still the one the action was computed from, so two simultaneous actions never both apply.
  An illegal action raises the engine's `RulesError` before anything is written.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

import sqlalchemy as sa
from sqlmodel import Session, col, select

from pbp import links
from pbp.errors import REFUSALS, Conflict, Forbidden, NotFound, UserError
from pbp.models import Campaign, User
from pbp.models.cards import CARD_RULESETS, CardEvent, CardGame
from pbp.models.forum import Thread
from pbp.rules import dice
from pbp.rules.cards import Card, CardError, Event, RulesError, Viewer, events_for
from pbp.services.cards.actions import GM, Actor, Ruleset, apply_action, ruleset_for
from pbp.services.forum import posts, rolls, visibility
from pbp.services.forum.drafts import Draft
from pbp.services.forum.threads import ThreadSummary, get_thread, list_threads, members
from pbp.services.mail.settings import MailSettings

EXPORT_FORMAT = "pbp-cards-export-1"
ALGORITHM = "pbp-cards-1: dice.derive_rng(seed, 'cards:{game_id}:{seq}') per action"
CREATE = "create"


def rng_message(game_id: int, seq: int) -> str:
    """The HMAC message of the generator for the action numbered ``seq`` of a game."""
    return f"cards:{game_id}:{seq}"


# -- who is looking --------------------------------------------------------------------------


def card_viewer(viewer: rolls.Viewer) -> Viewer:
    """The forum's viewer as the engines know it: the GM, a player (by user id) or nobody."""
    if viewer.is_gm:
        return Viewer.gm()
    if viewer.is_member and viewer.user_id is not None:
        return Viewer.player(str(viewer.user_id))
    return Viewer.spectator()


def actor_for(viewer: rolls.Viewer) -> Actor | None:
    if viewer.is_gm:
        return Actor(GM)
    if viewer.is_member and viewer.user_id is not None:
        return Actor(str(viewer.user_id))
    return None


# -- reading ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class LogEntry:
    seq: int
    created_at: datetime
    actor: str
    action: str
    events: tuple[dict[str, Any], ...]


@dataclass(frozen=True)
class TableView:
    """A card table as one viewer may see it: only the engine's redacted view and events."""

    game_id: int
    thread_id: int
    ruleset: str
    ruleset_name: str
    version: int
    me: str | None
    is_gm: bool
    view: dict[str, Any]
    log: tuple[LogEntry, ...]
    names: dict[str, str]


def visible_thread(
    *, session: Session, campaign: Campaign, thread_id: int, viewer: rolls.Viewer
) -> Thread:
    """The thread, if the viewer may read it (the forum's rule): else NotFound."""
    visibility.require_forum(campaign)
    thread, _ = get_thread(session=session, campaign=campaign, thread_id=thread_id, viewer=viewer)
    return thread


@dataclass(frozen=True)
class TableSummary:
    thread: ThreadSummary
    game: CardGame


def list_tables(
    *, session: Session, campaign: Campaign, viewer: rolls.Viewer
) -> list[TableSummary]:
    """The card tables in threads the viewer may read, latest activity first."""
    visibility.require_forum(campaign)
    threads = list_threads(session=session, campaign=campaign, viewer=viewer)
    games = {
        g.thread_id: g
        for g in session.exec(select(CardGame).where(CardGame.campaign_id == campaign.id))
    }
    return [TableSummary(t, games[t.id]) for t in threads if t.id in games]


def game_of_thread(*, session: Session, thread: Thread, lock: bool = False) -> CardGame | None:
    query = select(CardGame).where(CardGame.thread_id == thread.id)
    if lock:
        query = query.with_for_update()
    return session.exec(query).first()


def table_view(
    *, session: Session, campaign: Campaign, game: CardGame, viewer: rolls.Viewer
) -> TableView:
    ruleset = ruleset_for(game.ruleset)
    state = ruleset.load(game.state)
    seen = card_viewer(viewer)
    if seen.player_id is not None and seen.player_id not in ruleset.seated(state):
        seen = Viewer.spectator()  # a member without a seat sees what a spectator sees
    actor = actor_for(viewer)
    view = ruleset.view(state, seen)
    names = _member_names(session, campaign)
    return TableView(
        game_id=game.id,
        thread_id=game.thread_id,
        ruleset=game.ruleset,
        ruleset_name=ruleset.name,
        version=game.version,
        me=actor.id if actor else None,
        is_gm=seen.is_gm,
        view=view,
        log=tuple(_log(session, game, ruleset, seen, names)),
        names=names,
    )


def _log(
    session: Session, game: CardGame, ruleset: Ruleset, viewer: Viewer, names: dict[str, str]
) -> list[LogEntry]:
    entries = []
    for row in _record(session, game):
        shown = events_for((Event.from_dict(e) for e in row.events), viewer)
        if not shown:
            continue
        label = ruleset.actions[row.action].label if row.action in ruleset.actions else "Open"
        entries.append(
            LogEntry(row.seq, row.created_at, names.get(row.actor, "someone"), label, tuple(shown))
        )
    return entries


def _record(session: Session, game: CardGame) -> list[CardEvent]:
    query = select(CardEvent).where(CardEvent.game_id == game.id).order_by(col(CardEvent.seq))
    return list(session.exec(query))


def _member_names(session: Session, campaign: Campaign) -> dict[str, str]:
    names = {GM: "the GM"}
    for member in members(session=session, campaign=campaign):
        if member.role != "referee":
            names[str(member.user_id)] = member.name
    return names


# -- playing ---------------------------------------------------------------------------------


def create_game(
    *,
    session: Session,
    campaign: Campaign,
    thread: Thread,
    user: User,
    settings: dict[str, Any],
    mail: MailSettings,
    now: datetime,
) -> CardGame:
    """The GM opens a card table in a thread, with the ruleset's settings. The campaign's
    secret seed (and its published commitment) is made now if it has none, so every card
    is dealt from a seed committed to before the first deal."""
    _require_playable(session, campaign, user, gm=True)
    if campaign.ruleset not in CARD_RULESETS:
        raise NotFound(f"{campaign.name} is not played with cards")
    if thread.campaign_id != campaign.id:
        raise NotFound("there is no such thread")
    if game_of_thread(session=session, thread=thread) is not None:
        raise Conflict("this thread has a card table already")
    ruleset = ruleset_for(campaign.ruleset)
    game = ruleset.new_game(settings)
    stored_settings = game.settings.to_dict()
    rolls.ensure_secret(session=session, campaign=campaign, now=now)
    row = CardGame(
        campaign_id=campaign.id,
        thread_id=thread.id,
        ruleset=ruleset.key,
        state=game.to_dict(),
        version=0,
        created_by=user.id,
        created_at=now,
        updated_at=now,
    )
    try:
        with session.begin_nested():
            session.add(row)
    except sa.exc.IntegrityError:  # one table per thread, even for two GMs clicking at once
        raise Conflict("this thread has a card table already") from None
    opened = Event(kind="table", text=f"The GM opens a {ruleset.name} table in this thread.")
    _append(session, row, 0, user, Actor(GM), CREATE, {"settings": stored_settings}, [opened], now)
    _announce(session, campaign, thread, user, row, [opened], mail, now)
    session.flush()
    return row


def play(
    *,
    session: Session,
    campaign: Campaign,
    thread: Thread,
    user: User,
    action: str,
    params: dict[str, Any],
    mail: MailSettings,
    now: datetime,
    expected_version: int | None = None,
) -> CardEvent:
    """Apply one action through the engine and store it, all in the caller's transaction.

    `expected_version` is the version the acting page showed: a form sent twice, or after
    someone else moved, is refused (409) instead of applying to a table its sender has not
    seen. Nothing is written unless the engine accepts the action.
    """
    viewer = _require_playable(session, campaign, user, gm=False)
    visible_thread(session=session, campaign=campaign, thread_id=thread.id, viewer=viewer)
    actor = actor_for(viewer)
    assert actor is not None
    row = game_of_thread(session=session, thread=thread, lock=True)
    if row is None or row.campaign_id != campaign.id:
        raise NotFound("this thread has no card table")
    if expected_version is not None and expected_version != row.version:
        raise Conflict(
            "the table has changed since you loaded it: look again, and repeat your move if it "
            "still makes sense"
        )
    secret = rolls.ensure_secret(session=session, campaign=campaign, now=now)
    if secret.revealed_at is not None:
        raise Conflict("the campaign has ended and its seed is public: no more cards are dealt")
    ruleset = ruleset_for(row.ruleset)
    base = row.version
    # The seed is read for the generator only; it never leaves the server before the end.
    rng = dice.derive_rng(bytes.fromhex(secret.seed), rng_message(row.id, base + 1))
    outcome = apply_action(ruleset, ruleset.load(row.state), action, actor, params, rng)
    _save_state(session, row, base, outcome.state.to_dict(), now)
    event = _append(session, row, base + 1, user, actor, action, params, outcome.events, now)
    _announce(session, campaign, thread, user, row, outcome.events, mail, now)
    session.flush()
    return event


def open_table(
    *,
    session: Session,
    campaign: Campaign,
    thread_id: int,
    user: User,
    settings: dict[str, Any],
    mail: MailSettings,
    now: datetime,
) -> CardGame:
    """The GM opens a card table in a thread they may read (`create_game`'s checks)."""
    viewer = visibility.viewer_for(session=session, campaign=campaign, user=user)
    thread = visible_thread(session=session, campaign=campaign, thread_id=thread_id, viewer=viewer)
    return create_game(
        session=session,
        campaign=campaign,
        thread=thread,
        user=user,
        settings=settings,
        mail=mail,
        now=now,
    )


def move(
    *,
    session: Session,
    campaign: Campaign,
    thread_id: int,
    user: User,
    action: str,
    params: dict[str, Any],
    mail: MailSettings,
    now: datetime,
    expected_version: int | None = None,
) -> CardEvent:
    """A member makes one move at a thread's table they may read (`play`'s checks)."""
    viewer = visibility.viewer_for(session=session, campaign=campaign, user=user)
    thread = visible_thread(session=session, campaign=campaign, thread_id=thread_id, viewer=viewer)
    return play(
        session=session,
        campaign=campaign,
        thread=thread,
        user=user,
        action=action,
        params=params,
        mail=mail,
        now=now,
        expected_version=expected_version,
    )


def table_of(
    *, session: Session, campaign: Campaign, thread_id: int, viewer: rolls.Viewer
) -> tuple[Thread, TableView | None]:
    """A thread the viewer may read and its table as they may see it (None: no table)."""
    thread = visible_thread(session=session, campaign=campaign, thread_id=thread_id, viewer=viewer)
    game = game_of_thread(session=session, thread=thread)
    if game is None:
        return thread, None
    return thread, table_view(session=session, campaign=campaign, game=game, viewer=viewer)


def card_label(code: str) -> dict[str, Any]:
    """A card code as the pages show it: name, symbol, colour."""
    try:
        card = Card.from_code(code)
    except CardError:
        return {"code": code, "name": code, "short": code, "red": False}
    short = code[:-1] + card.suit.symbol
    return {"code": code, "name": card.name, "short": short, "red": card.is_red}


def _save_state(
    session: Session, row: CardGame, base: int, state: dict[str, Any], now: datetime
) -> None:
    """Store the new state only if nobody stored another since `base` (optimistic lock)."""
    result = cast(
        "sa.CursorResult[Any]",
        session.execute(
            sa.update(CardGame)
            .where(col(CardGame.id) == row.id, col(CardGame.version) == base)
            .values(state=state, version=base + 1, updated_at=now)
            .execution_options(synchronize_session=False)
        ),
    )
    if result.rowcount != 1:
        raise Conflict("someone else moved at the same moment: look at the table again")
    session.expire(row)


def _append(
    session: Session,
    row: CardGame,
    seq: int,
    user: User,
    actor: Actor,
    action: str,
    params: dict[str, Any],
    events,
    now: datetime,
) -> CardEvent:
    event = CardEvent(
        game_id=row.id,
        seq=seq,
        actor_id=user.id,
        actor=actor.id,
        action=action,
        params=_plain(params),
        events=[_plain(e.to_dict()) for e in events],
        created_at=now,
    )
    try:
        with session.begin_nested():
            session.add(event)
    except sa.exc.IntegrityError:
        raise Conflict("someone else moved at the same moment: look at the table again") from None
    return event


def _plain(value: Any) -> Any:
    """JSON as stored (tuples become lists), so a replay compares like with like."""
    return json.loads(json.dumps(value))


def _require_playable(
    session: Session, campaign: Campaign, user: User, *, gm: bool
) -> rolls.Viewer:
    visibility.require_forum(campaign)
    viewer = visibility.viewer_for(session=session, campaign=campaign, user=user)
    if not viewer.is_member:
        raise Forbidden(f"only members of {campaign.name} can play at its tables")
    if gm and not viewer.is_gm:
        raise Forbidden(f"only the GM of {campaign.name} can open a card table")
    if campaign.status == "ended":
        raise Conflict(f"{campaign.name} has ended; its tables are closed")
    return viewer


def _announce(
    session: Session,
    campaign: Campaign,
    thread: Thread,
    user: User,
    row: CardGame,
    events,
    mail: MailSettings,
    now: datetime,
) -> None:
    """Post the move's public text in the thread, as its player: the thread, its feed, its
    export and the watchers' email then carry the game, and never more than a spectator may
    see (``events_for(events, spectator)``). A thread nobody outside may read (a GM-only or
    whispered scene) gets a GM-only post, so a move never widens who sees the thread."""
    public = events_for(events, Viewer.spectator())
    lines = [" ".join(str(e["text"]).split()) for e in public]
    lines = [line for line in lines if line] or ["The table changed."]
    url = links.absolute(mail.base_url, links.card_table(campaign.slug, thread.id))
    body = f"**At the table** ([look]({url}))\n\n" + "\n".join(f"- {line}" for line in lines)
    seen_by_all = visibility.visible_posts(
        session=session, campaign=campaign, viewer=rolls.ANONYMOUS, thread=thread
    )
    posts.create_post(
        session=session,
        campaign=campaign,
        thread=thread,
        author=user,
        draft=Draft(body=body, kind="ooc", audience="all" if seen_by_all else "gm"),
        mail=mail,
        now=now,
    )


# -- export and verification -----------------------------------------------------------------


def export_game(
    *, session: Session, campaign: Campaign, game: CardGame, viewer: rolls.Viewer, now: datetime
) -> dict[str, Any]:
    """The table as JSON. Before the campaign ends: exactly what the viewer's page shows.
    After (the seed is public): the whole record – every action with its parameters, every
    event in full and the final state – so `verify_card_export` can replay every deal."""
    secret = rolls.get_secret(session=session, campaign=campaign)
    seed = rolls.revealed_seed(secret)
    view = table_view(session=session, campaign=campaign, game=game, viewer=viewer)
    data: dict[str, Any] = {
        "format": EXPORT_FORMAT,
        "exported_at": rolls.iso(now),
        "campaign": {"slug": campaign.slug, "name": campaign.name, "status": campaign.status},
        "game": {
            "id": game.id,
            "thread_id": game.thread_id,
            "ruleset": game.ruleset,
            "version": game.version,
        },
        "fairness": {
            "algorithm": ALGORITHM,
            "commitment": secret.commitment if secret else None,
            "committed_at": rolls.iso(secret.created_at) if secret else None,
            "seed": seed,
        },
        "view": view.view,
        "log": [
            {"seq": e.seq, "actor": e.actor, "action": e.action, "events": list(e.events)}
            for e in view.log
        ],
    }
    if seed is not None:
        data["state"] = game.state
        data["record"] = [
            {
                "seq": r.seq,
                "actor": r.actor,
                "action": r.action,
                "params": r.params,
                "events": r.events,
                "created_at": rolls.iso(r.created_at),
            }
            for r in _record(session, game)
        ]
    return data


@dataclass(frozen=True)
class CardMismatch:
    seq: int | None
    what: str
    found: Any
    expected: Any


@dataclass(frozen=True)
class CardVerifyReport:
    checked: int
    mismatches: tuple[CardMismatch, ...]

    @property
    def ok(self) -> bool:
        return not self.mismatches

    def summary(self) -> str:
        if self.ok:
            return f"{self.checked} card actions verified"
        return f"{len(self.mismatches)} mismatches in {self.checked} card actions"


def verify_card_export(data: Any) -> CardVerifyReport:
    """Replay a finished table from its export: the seed must hash to the published
    commitment, the actions must be numbered 0..N, and each action, run through the engine
    with ``derive_rng(seed, f"cards:{game_id}:{seq}")``, must give exactly the recorded events,
    ending in the recorded state."""
    seed, game_id, ruleset, record = _export_parts(data)
    mismatches: list[CardMismatch] = []
    seqs = [r.get("seq") for r in record]
    if seqs != list(range(len(record))):
        mismatches.append(CardMismatch(None, "numbering", seqs, list(range(len(record)))))
        return CardVerifyReport(len(record), tuple(mismatches))
    first = record[0]
    if first.get("action") != CREATE:
        mismatches.append(CardMismatch(0, "action", first.get("action"), CREATE))
        return CardVerifyReport(len(record), tuple(mismatches))
    game = ruleset.new_game((first.get("params") or {}).get("settings") or {})
    for entry in record[1:]:
        seq = entry["seq"]
        rng = dice.derive_rng(seed, rng_message(game_id, seq))
        actor = Actor(str(entry.get("actor")))
        try:
            outcome = apply_action(
                ruleset, game, str(entry.get("action")), actor, entry.get("params"), rng
            )
        except (*REFUSALS, LookupError, TypeError, ValueError) as exc:  # a tampered record
            mismatches.append(CardMismatch(seq, "action refused", str(exc), "accepted"))
            break
        events = [_plain(e.to_dict()) for e in outcome.events]
        if events != entry.get("events"):
            mismatches.append(CardMismatch(seq, "events", entry.get("events"), events))
        game = outcome.state
    else:
        if _plain(game.to_dict()) != data.get("state"):
            mismatches.append(CardMismatch(None, "final state", data.get("state"), "the replay"))
    return CardVerifyReport(len(record), tuple(mismatches))


def _export_parts(data: Any) -> tuple[bytes, int, Ruleset, list[dict[str, Any]]]:
    if not isinstance(data, dict) or data.get("format") != EXPORT_FORMAT:
        raise UserError(f"this is not a pbp card table export ({EXPORT_FORMAT})")
    fairness, game = data.get("fairness") or {}, data.get("game") or {}
    seed_hex, commitment = fairness.get("seed"), fairness.get("commitment")
    if not seed_hex or "record" not in data:
        raise UserError(
            "this export has no seed and no record: they are published when the GM ends the "
            "campaign; export the table again after that"
        )
    try:
        seed = bytes.fromhex(seed_hex)
    except (TypeError, ValueError) as exc:
        raise UserError("the export's seed is not hexadecimal") from exc
    if dice.seed_commitment(seed) != commitment:
        raise UserError("the seed does not match the published commitment")
    record = data["record"]
    if not isinstance(record, list) or not record or not all(isinstance(r, dict) for r in record):
        raise UserError('the export\'s "record" must be a list of objects')
    if not isinstance(game.get("id"), int):
        raise UserError("the export does not say which game it is")
    try:
        ruleset = ruleset_for(str(game.get("ruleset")))
    except RulesError as exc:
        raise UserError(str(exc)) from exc
    return seed, game["id"], ruleset, record
