"""A Noteworthy turn's life: open (with the referee's event) -> closed -> resolved.

Only a resolved turn lets the next one open, so the loser of turn N can never act as
active in turn N+1. Every step is idempotent: a double click, two tabs or a retried
request advance exactly once (the unique turn number and a status check under a row lock).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from html import escape as html_escape
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session, col, select

from pbp import limits, links
from pbp.errors import Conflict, UserError
from pbp.limits import check_length
from pbp.models import (
    Campaign,
    Challenge,
    Character,
    Entry,
    Event,
    Membership,
    Ruling,
    Turn,
    User,
)
from pbp.rules import noteworthy as nw
from pbp.services import audit_actions as lines
from pbp.services import audit_log, mentions
from pbp.services.mail import chat
from pbp.services.mail.notifications import queue_event_notifications, queue_turn_results
from pbp.services.noteworthy import play_mail
from pbp.services.noteworthy import tally as tally_service
from pbp.services.noteworthy.ids import row_id, row_id_or_none

OUTCOME_CODES = {
    nw.Outcome.CHALLENGER_WINS: "challenger",
    nw.Outcome.TARGET_WINS: "target",
    nw.Outcome.NEEDS_RULING: "needs_ruling",
}


@dataclass(frozen=True)
class Tailored:
    """An event for one named character: an addition to the general text, or a
    replacement of it (Noteworthy: "may tailor different events to specific PCs")."""

    character_id: int
    mode: str  # "addition" | "replacement"
    text: str


def tailored_texts(items: Iterable[Any]) -> list[Tailored]:
    """The tailored texts of an event as a form or the API sends them (anything with
    character_id, mode and text)."""
    return [Tailored(t.character_id, t.mode, t.text) for t in items]


def audit(session: Session, campaign: Campaign, actor: User | None, line: lines.Line) -> None:
    """One typed line in the campaign's audit log (pbp.services.audit_actions)."""
    audit_log.record(session, line=line, actor=actor, campaign_id=campaign.id)


def latest_turn(*, session: Session, campaign: Campaign, lock: bool = False) -> Turn | None:
    query = (
        select(Turn)
        .where(Turn.campaign_id == campaign.id)
        .order_by(col(Turn.number).desc())
        .limit(1)
    )
    if lock:
        query = query.with_for_update()
    return session.exec(query).first()


def lock_campaign(session: Session, campaign: Campaign) -> None:
    """Serialize turn changes per campaign.

    PostgreSQL: a row lock. SQLite has no row locks: a no-op UPDATE takes the database's
    write lock now, before the turn is read; a writer that got in between makes SQLite
    refuse at once, which is reported as a conflict to retry rather than a crash.
    """
    if session.get_bind().dialect.name != "sqlite":
        session.exec(select(Campaign.id).where(Campaign.id == campaign.id).with_for_update())
        return
    try:
        session.execute(
            sa.update(Campaign)
            .where(col(Campaign.id) == campaign.id)
            .values(status=Campaign.status)
        )
    except sa.exc.OperationalError as exc:
        session.rollback()
        raise Conflict("another change to this campaign is in progress; try again") from exc


def post_event(
    *,
    session: Session,
    campaign: Campaign,
    text: str,
    actor: User | None,
    now: datetime,
    tailored: Sequence[Tailored] = (),
    deadline: datetime | None = None,
    expected_number: int | None = None,
    mail=None,
) -> Turn:
    """Post the event that opens the next turn, in one transaction with the check that
    the previous turn is resolved and with every notification queued.

    `expected_number` makes a retried request idempotent: when that turn is already open
    with this event, it is returned instead of opening another one. `mail` (MailSettings)
    queues every player's notification in this same transaction.

    An event the referee queued for the schedule is for this turn, so posting any event
    uses it up (else a referee who posts by hand, say after ruling on a turn the schedule
    left waiting, would see the schedule post the queued one again a turn later).
    """
    if not text.strip() and not tailored:
        raise UserError("an event needs a description")
    check_length(text.strip(), limits.EVENT_TEXT, "an event")
    for item in tailored:
        check_length(item.text.strip(), limits.EVENT_TEXT, "a tailored event")
    lock_campaign(session, campaign)
    previous = latest_turn(session=session, campaign=campaign)
    if expected_number is not None and previous and previous.number == expected_number:
        return previous  # the same request again: already done
    if campaign.status == "ended":
        # Noteworthy: "The last PC left wins" -- the game is over; a new event would open
        # a turn nobody can play and set the campaign running again.
        raise Conflict("the game is over: a character has won, so no turn follows")
    if previous is not None and previous.status != "resolved":
        raise Conflict(
            f"turn {previous.number} is {previous.status}: close and resolve it before "
            "posting the next event"
        )
    number = previous.number + 1 if previous else 1
    if expected_number is not None and expected_number != number:
        raise Conflict(f"the next turn is {number}, not {expected_number}; reload the page")
    characters = list(session.exec(select(Character).where(Character.campaign_id == campaign.id)))
    turn = Turn(
        campaign_id=campaign.id,
        number=number,
        status="open",
        opened_at=now,
        deadline=deadline,
        start_standings={str(c.id): c.status for c in characters},
    )
    session.add(turn)
    try:
        session.flush()
    except sa.exc.IntegrityError as exc:  # a concurrent request opened it first
        session.rollback()
        raise Conflict(f"turn {number} was opened by another request; reload the page") from exc
    session.add(Event(turn_id=turn.id, mode="all", text=text.strip()))
    known = {c.id for c in characters}
    for item in tailored:
        if item.character_id not in known:
            raise UserError("a tailored event names a character who is not in this campaign")
        if item.mode not in ("addition", "replacement"):
            raise UserError("a tailored event is an addition or a replacement")
        session.add(
            Event(
                turn_id=turn.id,
                character_id=item.character_id,
                mode=item.mode,
                text=item.text.strip(),
            )
        )
    campaign.status = "running"
    campaign.settings = {k: v for k, v in campaign.settings.items() if k != "queued_event"}
    session.add(campaign)
    audit(session, campaign, actor, lines.EventPosted(turn=number, tailored=len(tailored)))
    session.flush()
    if mail is not None:
        queue_event_notifications(session=session, turn=turn, now=now, settings=mail)
        chat.turn_opened(session=session, settings=mail, turn=turn, general=text, now=now)
        _mail_event_mentions(session, campaign, turn, mail, now)
    return turn


def _mail_event_mentions(
    session: Session, campaign: Campaign, turn: Turn, mail, now: datetime
) -> None:
    """Issue #29 item 4: the players of the characters an event names with "@" are
    mailed, once per event. The general text is everyone's; a tailored text is read only by
    its character's player (and the referee), so it mentions no one else."""
    events = session.exec(select(Event).where(Event.turn_id == turn.id)).all()
    book = mentions.book_if_needed(
        session=session, campaign=campaign, texts=[e.text for e in events]
    )
    if book is None:
        return
    owners = {
        c.id: c.user_id
        for c in session.exec(select(Character).where(Character.campaign_id == campaign.id))
    }
    for event in events:
        found = mentions.link(html_escape(event.text, quote=False), book)
        if not found.mentioned:
            continue
        reader = owners.get(event.character_id) if event.character_id is not None else None

        def may_read(user: User, membership: Membership, event=event, reader=reader) -> bool:
            return event.character_id is None or user.id == reader or membership.role == "referee"

        mentions.queue_mentions(
            session=session,
            settings=mail,
            campaign=campaign,
            item=mentions.Item(
                key=f"event:{event.id}",
                what="the event" if event.character_id is None else "your part of the event",
                title=f"Turn {turn.number}",
                path=links.turn(campaign.slug, turn.number),
                html=found.html,
                by="The referee",
            ),
            mentioned=found.mentioned,
            author_user_id=None,
            may_read=may_read,
            now=now,
        )


def close_turn(
    *, session: Session, campaign: Campaign, actor: User | None, now: datetime, mail=None
) -> Turn:
    """Stop notes from counting and freeze the tally. Closing a closed turn is a no-op.
    With `mail` (MailSettings), the campaign's chat channels are told (issue #31)."""
    lock_campaign(session, campaign)
    turn = latest_turn(session=session, campaign=campaign)
    if turn is None:
        raise Conflict("there is no turn to close: post the first event")
    if turn.status != "open":
        return turn
    turn.status, turn.closed_at = "closed", now
    session.add(turn)
    audit(session, campaign, actor, lines.TurnClosed(turn=turn.number))
    session.flush()
    if mail is not None:
        chat.turn_closed(session=session, settings=mail, turn=turn, now=now)
    return turn


def reopen_turn(*, session: Session, campaign: Campaign, actor: User | None, now: datetime) -> Turn:
    """Open a closed turn again (the referee closed it too early); refused once resolved,
    since standings have changed by then. Audited. Reopening an open turn is a no-op.

    The turn's deadline is kept: if it has passed, a scheduled cadence closes the turn
    again at its next pass, so a referee reopening on a schedule sets a new deadline by
    posting no event but closing by hand."""
    lock_campaign(session, campaign)
    turn = latest_turn(session=session, campaign=campaign)
    if turn is None:
        raise Conflict("there is no turn to reopen")
    if turn.status == "resolved":
        raise Conflict(f"turn {turn.number} is resolved: its results stand and it cannot reopen")
    if turn.status == "open":
        return turn
    turn.status, turn.closed_at = "open", None
    session.add(turn)
    audit(session, campaign, actor, lines.TurnReopened(turn=turn.number, at=now.isoformat()))
    session.flush()
    return turn


# Rulings on a challenge entry that can name its target or make it count.
CHALLENGE_RULINGS = {nw.RulingKind.TARGET.value, nw.RulingKind.VALIDITY.value}


def add_ruling(
    *,
    session: Session,
    campaign: Campaign,
    turn: Turn,
    kind: str,
    subject_id: int | None,
    value,
    reason: str,
    actor: User | None,
    now: datetime,
    mail=None,
) -> Ruling:
    """Record a referee ruling on the turn; the latest ruling on a subject wins. With
    `mail` (MailSettings), a ruling that names a challenge's target (or makes it valid)
    mails that target, as a challenge naming them would have."""
    try:
        nw.RulingKind(kind)
    except ValueError as exc:
        raise UserError(f"unknown ruling kind {kind!r}") from exc
    if turn.status == "resolved":
        raise Conflict(f"turn {turn.number} is resolved; its rulings are final")
    ruling = Ruling(
        campaign_id=campaign.id,
        turn_id=turn.id,
        kind=kind,
        subject_type="turn" if subject_id is None else "item",
        subject_id=subject_id or 0,
        value={"value": value},
        reason=reason.strip(),
        referee_id=actor.id if actor else None,
        created_at=now,
    )
    session.add(ruling)
    audit(
        session,
        campaign,
        actor,
        lines.Ruled(turn=turn.number, kind=kind, subject=subject_id, value=value),
    )
    session.flush()
    if mail is not None and subject_id and kind in CHALLENGE_RULINGS:
        entry = session.get(Entry, subject_id)
        if entry is not None and entry.turn_id == turn.id:
            play_mail.entries_stored(session=session, mail=mail, entries=[entry], now=now)
    return ruling


def resolve_turn(
    *,
    session: Session,
    campaign: Campaign,
    actor: User | None,
    now: datetime,
    consequences: dict[int, str] | None = None,
    mail=None,
) -> tuple[Turn, nw.Tally]:
    """Apply a closed turn's outcomes atomically: losers become outsiders, the winner of
    a final wins. Refused while any outcome needs a ruling. Resolving twice is a no-op.

    With `mail` (MailSettings), every player is mailed the results in the same
    transaction: the tally's explanation, then the consequences the referee wrote. The
    referee's resolve and the scheduler's both come here, so neither can forget it."""
    lock_campaign(session, campaign)
    turn = latest_turn(session=session, campaign=campaign)
    if turn is None or turn.status == "open":
        raise Conflict("close the turn before resolving it")
    rows = tally_service.load_turn(session=session, campaign=campaign, turn=turn)
    result = tally_service.tally_of(campaign, turn, rows)
    if turn.status == "resolved":
        return turn, result
    if result.needs_ruling:
        raise Conflict(
            f"turn {turn.number} has outcomes that need a ruling: "
            + "; ".join(f.message for f in result.flags)
        )
    _apply_standings(session, campaign, result)
    _record_challenges(session, turn, result, consequences or {})
    turn.status, turn.resolved_at = "resolved", now
    # The whole tally is kept: pages and the API show a resolved turn as it was resolved.
    turn.result = {**summarize(result), "tally": tally_service.record_of(campaign, rows, result)}
    session.add(turn)
    if result.endgame.phase is nw.EndgamePhase.WON:
        campaign.status = "ended"
        session.add(campaign)
    audit(
        session,
        campaign,
        actor,
        lines.TurnResolved(turn=turn.number, eliminated=list(result.eliminated)),
    )
    session.flush()
    if mail is not None:
        summary = "\n".join([*result.explanation, *(consequences or {}).values()])
        queue_turn_results(session=session, settings=mail, turn=turn, summary=summary, now=now)
        chat.turn_resolved(session=session, settings=mail, turn=turn, summary=summary, now=now)
    return turn, result


def _apply_standings(session: Session, campaign: Campaign, result: nw.Tally) -> None:
    by_id = {
        c.id: c for c in session.exec(select(Character).where(Character.campaign_id == campaign.id))
    }
    for standing in result.standings:
        character = by_id.get(row_id(standing.id))
        if character is not None and standing.status is nw.Status.OUTSIDER:
            character.status = "outsider"
            session.add(character)
    winner = result.endgame.winner_id
    if result.endgame.phase is nw.EndgamePhase.WON and winner in by_id:
        by_id[winner].status = "winner"
        session.add(by_id[winner])


def _record_challenges(session: Session, turn: Turn, result: nw.Tally, consequences) -> None:
    for challenge in result.challenges:
        if challenge.challenger_id is None:
            continue
        if not challenge.valid:
            outcome = "invalid"
        elif challenge.withdrawn:
            outcome = "withdrawn"
        else:
            outcome = OUTCOME_CODES.get(challenge.outcome, "invalid")
        row = session.exec(
            select(Challenge).where(Challenge.entry_id == challenge.entry_id)
        ).first()
        row = row or Challenge(
            entry_id=row_id(challenge.entry_id),
            turn_id=turn.id,
            challenger_id=row_id(challenge.challenger_id),
            made_at=challenge.made_at,
        )
        row.target_id = row_id_or_none(challenge.target_id)
        row.outcome = outcome
        row.consequence = consequences.get(challenge.entry_id) or row.consequence
        session.add(row)


def summarize(result: nw.Tally) -> dict:
    """The JSON kept on a resolved turn: what happened, in the tally's own words."""
    return {
        "challenges": [
            {
                "entry_id": c.entry_id,
                "challenger_id": c.challenger_id,
                "target_id": c.target_id,
                "valid": c.valid,
                "withdrawn": c.withdrawn,
                "supporters": [p.character_id for p in c.supporters],
                "opposers": [p.character_id for p in c.opposers],
                "outcome": c.outcome.value,
                "explanation": list(c.explanation),
            }
            for c in result.challenges
        ],
        "eliminated": list(result.eliminated),
        "advanced": list(result.advanced),
        "endgame": {
            "phase": result.endgame.phase.value,
            "winner_id": result.endgame.winner_id,
            "explanation": result.endgame.explanation,
        },
        "provocation": result.provocation.explanation if result.provocation.recommended else None,
        "explanation": list(result.explanation),
    }
