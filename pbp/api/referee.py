"""The referee's desk, as on the dashboard: settings, the queued event, the final notice,
reminders, a campaign-wide poll, the commenters waiting to be mapped, the outbox and the
audit log; and new invitations.

Each handler calls the dashboard's service function (pbp.services.noteworthy.referee,
pbp.services.accounts.logins) and only translates the body and the answer. The referee
check is the services' (pbp.services.campaigns.require_referee), not the pages'.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, cast

from flask import current_app

from pbp.api import schemas as s
from pbp.api.registry import Call, operation
from pbp.services import campaigns
from pbp.services.accounts import logins as accounts
from pbp.services.mail import send as mail_send
from pbp.services.mail.settings import MailSettings
from pbp.services.noteworthy import referee, turns

CAMPAIGN = "/campaigns/<slug>"


def _campaign(call: Call, slug: str):
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    # The services' own check (no page request state): Forbidden unless the referee.
    campaigns.require_referee(session=call.session, campaign=campaign, user=call.user)
    return campaign


def _mail() -> MailSettings:
    return MailSettings.from_config(current_app.config)


def _settings_out(kept: referee.Settings) -> s.SettingsIO:
    return s.SettingsIO(
        opening_turns=kept.opening_turns,
        fair_interval_hours=kept.fair_interval_hours,
        custom_moods=kept.custom_moods,
        time_zone=kept.time_zone,
        cadence=s.CadenceIO(**kept.cadence),
    )


@operation("GET", CAMPAIGN + "/settings", tag="referee", access="referee", response=s.SettingsIO)
def get_settings(call: Call, slug: str) -> s.SettingsIO:
    """The campaign's rules settings and turn cadence."""
    campaign = _campaign(call, slug)
    return _settings_out(
        referee.settings_of(session=call.session, campaign=campaign, actor=call.user)
    )


@operation(
    "PUT",
    CAMPAIGN + "/settings",
    tag="referee",
    access="referee",
    body=s.SettingsIO,
    response=s.SettingsIO,
)
def put_settings(call: Call, slug: str) -> s.SettingsIO:
    """Change the rules settings and the turn cadence (the rules check them)."""
    campaign = _campaign(call, slug)
    body = call.body
    kept = referee.save_settings(
        session=call.session,
        campaign=campaign,
        actor=call.user,
        opening_turns=body.opening_turns,
        fair_interval_hours=body.fair_interval_hours,
        custom_moods=body.custom_moods,
        time_zone=body.time_zone,
        turn_cadence={
            "kind": body.cadence.kind,
            "at": body.cadence.at or "",
            "hours": body.cadence.hours or 0,
            "remind_hours": body.cadence.remind_hours or 0,
        },
    )
    return _settings_out(kept)


def _queued_out(queued: referee.QueuedEvent) -> s.QueuedEventIO:
    return s.QueuedEventIO(
        text=queued.text,
        tailored=[
            s.TailoredIn(character_id=t.character_id, mode=cast(Any, t.mode), text=t.text)
            for t in queued.tailored
        ],
    )


@operation(
    "GET", CAMPAIGN + "/queued-event", tag="referee", access="referee", response=s.QueuedEventIO
)
def get_queued_event(call: Call, slug: str) -> s.QueuedEventIO:
    """The next turn's event as queued (empty when none is)."""
    campaign = _campaign(call, slug)
    return _queued_out(
        referee.queued_event(session=call.session, campaign=campaign, actor=call.user)
    )


@operation(
    "PUT",
    CAMPAIGN + "/queued-event",
    tag="referee",
    access="referee",
    body=s.QueuedEventIO,
    response=s.QueuedEventIO,
)
def queue_event(call: Call, slug: str) -> s.QueuedEventIO:
    """Queue the next turn's event: the scheduler opens the turn with it at the deadline.

    An empty text with nothing tailored clears it.
    """
    campaign = _campaign(call, slug)
    queued = referee.queue_event(
        session=call.session,
        campaign=campaign,
        actor=call.user,
        text=call.body.text,
        tailored=[turns.Tailored(t.character_id, t.mode, t.text) for t in call.body.tailored],
    )
    return _queued_out(queued)


@operation(
    "POST",
    CAMPAIGN + "/final-notice",
    tag="referee",
    access="referee",
    body=s.FinalNoticeIn,
    response=s.FinalNoticeOut,
)
def publish_final_notice(call: Call, slug: str) -> s.FinalNoticeOut:
    """Publish the end of the game on the campaign and mail it to everyone in it (once)."""
    campaign = _campaign(call, slug)
    text = referee.publish_final_notice(
        session=call.session,
        campaign=campaign,
        actor=call.user,
        now=call.now,
        text=call.body.text,
        mail=_mail(),
        sender=mail_send.sender_for_app(current_app),
    )
    return s.FinalNoticeOut(text=text)


@operation(
    "POST", CAMPAIGN + "/reminders", tag="referee", access="referee", response=s.RemindersOut
)
def send_reminders(call: Call, slug: str) -> s.RemindersOut:
    """Remind every player with no entry this turn (at most once an hour each)."""
    campaign = _campaign(call, slug)
    sent = referee.remind(
        session=call.session,
        campaign=campaign,
        actor=call.user,
        now=call.now,
        mail=_mail(),
        sender=mail_send.sender_for_app(current_app),
    )
    return s.RemindersOut(queued=sent)


@operation("POST", CAMPAIGN + "/poll", tag="referee", access="referee", response=s.PollAllOut)
def poll_all(call: Call, slug: str) -> s.PollAllOut:
    """Ask the scheduler to poll every external blog of the campaign on its next pass
    (within a minute). To wait for one blog's result, poll that character instead."""
    campaign = _campaign(call, slug)
    due = referee.poll_soon(session=call.session, campaign=campaign, actor=call.user, now=call.now)
    return s.PollAllOut(due=due)


@operation(
    "GET",
    CAMPAIGN + "/commenters/unmapped",
    tag="referee",
    access="referee",
    response=s.UnmappedListOut,
)
def unmapped_commenters(call: Call, slug: str) -> s.UnmappedListOut:
    """Commenters on external blogs whose notes wait until you say who they are."""
    campaign = _campaign(call, slug)
    rows = referee.unmapped_commenters(session=call.session, campaign=campaign, actor=call.user)
    return s.UnmappedListOut(
        commenters=[
            s.UnmappedOut(name=r.name, uri=r.uri, notes=r.notes, claims=r.claims) for r in rows
        ]
    )


@operation(
    "GET",
    CAMPAIGN + "/outbox",
    tag="referee",
    access="referee",
    query=s.OutboxQuery,
    response=s.OutboxOut,
)
def get_outbox(call: Call, slug: str) -> s.OutboxOut:
    """The campaign's mail: counts per state and the newest messages (no bodies)."""
    campaign = _campaign(call, slug)
    box = referee.outbox(
        session=call.session, campaign=campaign, actor=call.user, status=call.query.status
    )
    return s.OutboxOut(
        counts=box.counts,
        messages=[
            s.OutboxMessageOut(
                id=m.id,
                kind=m.kind,
                recipient=m.recipient,
                subject=m.subject,
                status=m.status,
                attempts=m.attempts,
                last_error=m.last_error,
                created_at=m.created_at,
                sent_at=m.sent_at,
            )
            for m in box.messages
        ],
    )


@operation("GET", CAMPAIGN + "/audit", tag="referee", access="referee", response=s.AuditOut)
def get_audit_log(call: Call, slug: str) -> s.AuditOut:
    """The audit log in sentences: who did what, and when."""
    campaign = _campaign(call, slug)
    lines = referee.audit_lines(session=call.session, campaign=campaign, actor=call.user)
    return s.AuditOut(
        lines=[s.AuditLineOut(at=line.at, who=line.who, sentence=line.sentence) for line in lines]
    )


@operation(
    "POST",
    CAMPAIGN + "/invites",
    tag="characters",
    access="referee",
    body=s.InviteIn,
    response=s.InviteOut,
    status=201,
)
def create_invite(call: Call, slug: str) -> s.InviteOut:
    """Make a single-use invitation link, mailed when `email` is given.

    With `character`, the player takes that character (one still waiting for its player).
    """
    campaign = _campaign(call, slug)
    body = call.body
    character = accounts.character_to_invite(
        session=call.session, campaign=campaign, slug=body.character
    )
    issued = accounts.create_invite(
        session=call.session,
        campaign=campaign,
        created_by=call.account,
        secret_key=str(current_app.secret_key),
        base_url=current_app.config["PBP_BASE_URL"],
        now=call.now,
        character=character,
        email=body.email or None,
        role=body.role,
        ttl=timedelta(days=body.days),
        mail_from=current_app.config.get("MAIL_FROM"),
        sender=mail_send.sender_for_app(current_app),
    )
    i = issued.invite
    return s.InviteOut(
        id=i.id,
        email=i.email,
        role=cast(Any, i.role),  # the CHECK constraint's values
        character=character.slug if character else None,
        expires_at=i.expires_at,
        url=issued.url,
    )
