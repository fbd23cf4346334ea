"""The referee's actions on a Noteworthy game: one function per action, holding every check
of that action and the mail it causes. The dashboard's forms and the API both call these
and only translate what comes in and goes out, so neither can skip a rule.

Each function checks that `actor` is the campaign's referee (the pages and the API check
it too, before reading the form; this is the check a script cannot forget), takes the
clock as `now`, and is idempotent by its parameters: a retried request changes nothing
twice. `mail` (MailSettings) queues the mail in the caller's transaction; `sender`, when
given, delivers it as soon as that transaction commits (the scheduler's sweep sends
whatever it misses).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlmodel import Session, col, select

from pbp import limits
from pbp.errors import Conflict, UserError
from pbp.limits import check_length
from pbp.models import Blog, Campaign, Character, Ruling, Turn, User
from pbp.rules import noteworthy as nw
from pbp.services import audit_actions as lines
from pbp.services import audit_log, campaigns, lookups
from pbp.services.mail.notifications import (
    event_batch_key,
    final_batch_key,
    queue_final_notice,
    results_batch_key,
)
from pbp.services.mail.outbox import outbox_counts, outbox_messages
from pbp.services.mail.settings import MailSettings
from pbp.services.noteworthy import (
    blog_settings,
    cadence,
    commenters,
    dashboard,
    reminders,
    turns,
)

# (kind, what it decides in words) for the ruling form's choices.
RULING_KINDS = [
    (k.value, lines.RULING_WORDS.get(k.value, k.value.replace("_", " "))) for k in nw.RulingKind
]


def _check(session: Session, campaign: Campaign, actor: User | None, doing: str) -> None:
    campaigns.require_referee(session=session, campaign=campaign, user=actor, doing=doing)


def _current(session: Session, campaign: Campaign, number: int | None) -> Turn | None:
    """The current turn; with `number`, refused unless that is the current turn (a script
    naming an older turn is told so, not redirected)."""
    current = turns.latest_turn(session=session, campaign=campaign)
    if number is None:
        return current
    if current is None or current.number != number:
        lookups.get_turn(session=session, campaign=campaign, number=number)  # 404 first
        latest = f"turn {current.number} is" if current else "no turn is open"
        raise Conflict(f"turn {number} is not the current turn ({latest})")
    return current


# -- turns --------------------------------------------------------------------------------


def open_turn(
    *,
    session: Session,
    campaign: Campaign,
    actor: User | None,
    now: datetime,
    text: str,
    tailored: Sequence[turns.Tailored] = (),
    deadline_hours: int | None = None,
    expected_number: int | None = None,
    mail: MailSettings | None = None,
    sender=None,
) -> Turn:
    """Post the event that opens the next turn. Without `deadline_hours` the turn closes
    on the campaign's cadence (none for a manual one). Every player's notification leaves
    in one batch right after the commit, so all learn of it at once."""
    _check(session, campaign, actor, "post an event")
    if deadline_hours is not None and not 1 <= deadline_hours <= 24 * 366:
        raise UserError("a turn lasts from 1 hour to a year: give the deadline in hours")
    deadline: datetime | None
    if deadline_hours:
        deadline = now + timedelta(hours=deadline_hours)
    else:
        deadline = cadence.deadline_after(
            now, campaign.settings.get("cadence", {}), campaign.time_zone
        )
    turn = turns.post_event(
        session=session,
        campaign=campaign,
        text=text,
        actor=actor,
        now=now,
        tailored=list(tailored),
        deadline=deadline,
        expected_number=expected_number,
        mail=mail,
    )
    if sender is not None:
        sender.send_after_commit(session=session, batch_key=event_batch_key(turn))
    return turn


@dataclass(frozen=True)
class QueuedEvent:
    text: str
    tailored: list[turns.Tailored]


def queued_event(*, session: Session, campaign: Campaign, actor: User | None) -> QueuedEvent:
    """The next turn's event as the referee queued it (empty when none is)."""
    _check(session, campaign, actor, "see the queued event")
    kept = campaign.settings.get("queued_event") or {}
    return QueuedEvent(
        kept.get("text", ""), [turns.Tailored(**t) for t in kept.get("tailored", [])]
    )


def queue_event(
    *,
    session: Session,
    campaign: Campaign,
    actor: User | None,
    text: str,
    tailored: Sequence[turns.Tailored] = (),
) -> QueuedEvent:
    """Keep the next turn's event until the scheduler opens the turn at the deadline; with
    no text and nothing tailored, clear it."""
    _check(session, campaign, actor, "queue an event")
    text = (text or "").strip()
    check_length(text, limits.EVENT_TEXT, "an event")
    known = {c.id for c in campaigns.characters(session=session, campaign=campaign)}
    for item in tailored:
        if item.character_id not in known:
            raise UserError("a tailored event is for a character of this campaign")
        if item.mode not in ("addition", "replacement"):
            raise UserError("a tailored event is an addition or a replacement")
        check_length(item.text.strip(), limits.EVENT_TEXT, "a tailored event")
    kept = [t.__dict__ for t in tailored]
    settings = {k: v for k, v in campaign.settings.items() if k != "queued_event"}
    if text or kept:
        settings["queued_event"] = {"text": text, "tailored": kept}
    campaign.settings = settings
    session.add(campaign)
    turns.audit(session, campaign, actor, lines.EventQueued(queued=bool(text)))
    session.flush()
    return QueuedEvent(text, list(tailored))


def close(
    *,
    session: Session,
    campaign: Campaign,
    actor: User | None,
    now: datetime,
    number=None,
    mail: MailSettings | None = None,
    sender=None,
) -> Turn:
    """Close the current turn: notes stop counting, the tally is frozen; the campaign's
    chat channels are told right after the commit."""
    _check(session, campaign, actor, "close a turn")
    _current(session, campaign, number)
    was_open = turns.latest_turn(session=session, campaign=campaign)
    turn = turns.close_turn(session=session, campaign=campaign, actor=actor, now=now, mail=mail)
    if sender is not None and was_open is not None and turn.closed_at == now:
        sender.send_after_commit(session=session, batch_key=f"closed:{turn.id}:")
    return turn


def reopen(
    *, session: Session, campaign: Campaign, actor: User | None, now: datetime, number=None
) -> Turn:
    """Open a closed, unresolved turn again."""
    _check(session, campaign, actor, "reopen a turn")
    _current(session, campaign, number)
    return turns.reopen_turn(session=session, campaign=campaign, actor=actor, now=now)


def rule(
    *,
    session: Session,
    campaign: Campaign,
    actor: User | None,
    now: datetime,
    kind: str,
    subject_id: int | None,
    value,
    reason: str,
    number: int | None = None,
    mail: MailSettings | None = None,
) -> Ruling:
    """Overrule a reading of the tally on turn `number` (the current turn when None)."""
    _check(session, campaign, actor, "rule")
    if number is None:
        turn = turns.latest_turn(session=session, campaign=campaign)
        if turn is None:
            raise UserError("there is no turn to rule on yet")
    else:
        turn = lookups.get_turn(session=session, campaign=campaign, number=number)
    if isinstance(value, str):
        value = value.strip() or None
    return turns.add_ruling(
        session=session,
        campaign=campaign,
        turn=turn,
        kind=kind,
        subject_id=subject_id,
        value=value,
        reason=reason or "",
        actor=actor,
        now=now,
        mail=mail,
    )


def resolve(
    *,
    session: Session,
    campaign: Campaign,
    actor: User | None,
    now: datetime,
    consequences: dict[int, str] | None = None,
    number: int | None = None,
    mail: MailSettings | None = None,
    sender=None,
) -> tuple[Turn, nw.Tally]:
    """Apply a closed turn's outcomes (losers become outsiders) and mail every player the
    results: the tally's explanation and the consequences the referee wrote. The results
    leave in one batch right after the commit, as an event's mail does."""
    _check(session, campaign, actor, "resolve a turn")
    _current(session, campaign, number)
    kept = {k: v.strip() for k, v in (consequences or {}).items() if v and v.strip()}
    turn, result = turns.resolve_turn(
        session=session, campaign=campaign, actor=actor, now=now, consequences=kept, mail=mail
    )
    if sender is not None:
        sender.send_after_commit(session=session, batch_key=results_batch_key(turn))
    return turn, result


def publish_final_notice(
    *,
    session: Session,
    campaign: Campaign,
    actor: User | None,
    now: datetime,
    text: str,
    mail: MailSettings | None = None,
    sender=None,
) -> str:
    """The end of the game, shown on the campaign and mailed to everyone in it, in one
    batch right after the commit. Mailed once per person, however often it is published
    again."""
    _check(session, campaign, actor, "publish the final notice")
    text = (text or "").strip()
    if not text:
        raise UserError("the final notice needs some text")
    check_length(text, limits.FINAL_NOTICE, "the final notice")
    campaign.settings = {**campaign.settings, "final_notice": text}
    session.add(campaign)
    turns.audit(session, campaign, actor, lines.FinalNotice())
    if mail is not None:
        queue_final_notice(session=session, settings=mail, campaign=campaign, text=text, now=now)
    session.flush()
    if sender is not None:
        sender.send_after_commit(session=session, batch_key=final_batch_key(campaign))
    return text


def remind(
    *,
    session: Session,
    campaign: Campaign,
    actor: User | None,
    now: datetime,
    mail: MailSettings,
    sender=None,
) -> int:
    """A reminder to every player who has not posted an entry this turn (Noteworthy: "In a
    turn, you post at least one in-character entry"); returns how many were queued."""
    _check(session, campaign, actor, "send reminders")
    turn = turns.latest_turn(session=session, campaign=campaign)
    if turn is None:
        return 0
    sent = reminders.remind_missing(
        session=session, campaign=campaign, turn=turn, mail=mail, now=now, actor=actor
    )
    if sender is not None:
        sender.send_after_commit(session=session)
    return sent


# -- settings -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Settings:
    opening_turns: int
    fair_interval_hours: int | None
    custom_moods: dict[str, str]
    time_zone: str
    cadence: dict


def settings_of(*, session: Session, campaign: Campaign, actor: User | None) -> Settings:
    """The campaign's rules settings and turn cadence, as the settings form shows them."""
    _check(session, campaign, actor, "see the settings")
    kept = {**campaigns.NOTEWORTHY_DEFAULTS, **campaign.settings}
    return Settings(
        opening_turns=kept["opening_turns"],
        fair_interval_hours=kept["fair_interval_hours"],
        custom_moods=dict(kept["custom_moods"] or {}),
        time_zone=campaign.time_zone,
        cadence=kept.get("cadence") or {"kind": "manual"},
    )


def save_settings(
    *,
    session: Session,
    campaign: Campaign,
    actor: User | None,
    opening_turns: int,
    fair_interval_hours: int | None,
    custom_moods: dict[str, str],
    time_zone: str | None,
    turn_cadence: dict,
) -> Settings:
    """Change the rules settings (checked by the rules) and the turn cadence."""
    _check(session, campaign, actor, "change the settings")
    time_zone = (time_zone or campaign.time_zone).strip()
    hours = turn_cadence.get("hours") or 0
    if isinstance(hours, str):
        try:
            hours = int(hours.strip() or 0)
        except ValueError as exc:
            raise UserError("the hours between turns must be a whole number") from exc
    checked = cadence.validate({**turn_cadence, "hours": hours}, time_zone)
    moods = {k.strip(): v.strip() for k, v in custom_moods.items() if k.strip() and v.strip()}
    try:
        nw.Settings(
            opening_turns=opening_turns,
            actions=moods,
            fair_interval=timedelta(hours=fair_interval_hours) if fair_interval_hours else None,
        )
    except (nw.RulesError, OverflowError) as exc:
        raise UserError(str(exc)) from exc
    merged = {
        **campaign.settings,
        "opening_turns": opening_turns,
        "fair_interval_hours": fair_interval_hours,
        "custom_moods": moods,
        "cadence": checked,
    }
    campaign.time_zone = time_zone
    campaign.settings = merged
    session.add(campaign)
    turns.audit(session, campaign, actor, lines.SettingsChanged(settings=merged))
    session.flush()
    return settings_of(session=session, campaign=campaign, actor=actor)


# -- the roster's feeds and commenters ----------------------------------------------------


def poll_soon(
    *,
    session: Session,
    campaign: Campaign,
    actor: User | None,
    now: datetime,
    blog_id: int | None = None,
) -> int:
    """Ask the scheduler to poll one external blog of the campaign (`blog_id`), or every
    one, on its next pass (within a minute); returns how many are due now."""
    _check(session, campaign, actor, "poll the feeds")
    query = (
        select(Blog)
        .join(Character, col(Character.id) == Blog.character_id)
        .where(Character.campaign_id == campaign.id, Blog.kind == "external")
    )
    if blog_id is not None:
        query = query.where(Blog.id == blog_id)
    blogs = list(session.exec(query))
    if blog_id is not None and not blogs:
        raise UserError("that is not an external blog of this campaign")
    for blog in blogs:
        blog.next_poll_at = now
        session.add(blog)
    session.flush()
    return len(blogs)


def external_blog(
    *, session: Session, campaign: Campaign, actor: User | None, character_slug: str
) -> Blog:
    """The external blog of a character of the campaign, to poll now; refused for a blog on
    pbp (there is nothing to fetch)."""
    _check(session, campaign, actor, "poll the feeds")
    character = campaigns.character_by_slug(session=session, campaign=campaign, slug=character_slug)
    blog = blog_settings.blog_of(session=session, character=character)
    if blog.kind != "external":
        raise UserError("that is not an external blog of this campaign")
    return blog


def map_commenter(
    *,
    session: Session,
    campaign: Campaign,
    actor: User | None,
    character_id: int | None,
    kind: str,
    value: str,
) -> int:
    """Say which character a commenter on an external blog is; returns how many waiting
    notes now count for that character."""
    _check(session, campaign, actor, "map commenters")
    character = session.get(Character, character_id) if character_id else None
    if character is None or character.campaign_id != campaign.id:
        raise UserError("choose a character of this campaign")
    mapped = commenters.map_commenter(
        session=session, campaign=campaign, character=character, kind=kind, value=value
    )
    turns.audit(session, campaign, actor, lines.CommenterMapped(character=character_id))
    session.flush()
    return mapped


def unmapped_commenters(
    *, session: Session, campaign: Campaign, actor: User | None
) -> list[dashboard.Unmapped]:
    """Commenters whose notes wait for the referee to say who they are."""
    _check(session, campaign, actor, "see the unmapped commenters")
    return dashboard.unmapped_commenters(session=session, campaign=campaign)


# -- the referee's reads: outbox and audit log --------------------------------------------


@dataclass(frozen=True)
class Outbox:
    counts: dict[str, int]
    messages: list


def outbox(
    *, session: Session, campaign: Campaign, actor: User | None, status: str | None = None
) -> Outbox:
    """The campaign's mail: how many per state, and the newest messages (of `status`)."""
    _check(session, campaign, actor, "see the outbox")
    return Outbox(
        outbox_counts(session=session, campaign_id=campaign.id),
        outbox_messages(session=session, campaign_id=campaign.id, status=status),
    )


def audit_lines(
    *, session: Session, campaign: Campaign, actor: User | None
) -> list[audit_log.AuditLine]:
    """The campaign's audit log as sentences, newest first."""
    _check(session, campaign, actor, "read the audit log")
    return audit_log.audit_lines(session=session, campaign=campaign)
