"""The referee's dashboard: events, turns, tallies, rulings, roster and endgame.

Every action is a POST that redirects back (no double submission on reload); each is
idempotent in the services, so a double click or a retried request changes nothing twice.
"""

from __future__ import annotations

from datetime import datetime

from flask import Blueprint, current_app, flash, redirect, render_template, request, url_for

from pbp.db import get_session
from pbp.errors import UserError
from pbp.models import utcnow
from pbp.services import campaigns, invites, roster
from pbp.services.cards import tables as cards
from pbp.services.forum import threads, visibility
from pbp.services.mail import send as mail_send
from pbp.services.mail.outbox import outbox_counts
from pbp.services.mail.settings import MailSettings
from pbp.services.noteworthy import cadence, dashboard, referee, turns
from pbp.web.access import current_account, login_required, require_referee

bp = Blueprint("referee", __name__, url_prefix="/c/<slug>/referee")

# (kind, what it decides in words) for the ruling form's choices.
RULING_KINDS = referee.RULING_KINDS


# The dashboards show open invitation links: no Referer or cache may carry them away.
TOKEN_PAGE_HEADERS = {"Referrer-Policy": "no-referrer", "Cache-Control": "no-store"}


def now() -> datetime:
    """The web layer's clock; tests may set PBP_CLOCK to a callable."""
    return current_app.config.get("PBP_CLOCK", utcnow)()


def _campaign(slug: str):
    session = get_session()
    campaign = campaigns.get_campaign(session=session, slug=slug)
    require_referee(campaign)
    return session, campaign


def _mail() -> MailSettings:
    return MailSettings.from_config(current_app.config)


def _back(slug: str, message: str | None = None, anchor: str = ""):
    if message:
        flash(message, "ok")
    return redirect(url_for("referee.board", slug=slug) + anchor)


def _int(name: str, *, required: bool = True) -> int | None:
    raw = (request.form.get(name) or "").strip()
    if not raw and not required:
        return None
    try:
        return int(raw)
    except ValueError as exc:
        raise UserError(f"{name.replace('_', ' ')} must be a whole number") from exc


@bp.get("/")
@login_required
def board(slug: str):
    session, campaign = _campaign(slug)
    if campaign.ruleset != "noteworthy":
        return _forum_board(session, campaign)
    view = dashboard.dashboard(session=session, campaign=campaign)
    return render_template(
        "referee/dashboard.html",
        outbox=outbox_counts(session=session, campaign_id=campaign.id),
        campaign=campaign,
        view=view,
        ruling_kinds=RULING_KINDS,
        time_zones=cadence.time_zones(),
        invites=_invite_links(session, campaign),
    ), TOKEN_PAGE_HEADERS


def _invite_links(session, campaign):
    return invites.open_invite_links(
        session=session,
        campaign=campaign,
        secret_key=current_app.secret_key,
        base_url=current_app.config["PBP_BASE_URL"],
        now=now(),
    )


def _forum_board(session, campaign):
    """A forum GM's dashboard: members and invitations, scenes, sheets, card tables, start
    and end, outbox and audit log; nothing of Noteworthy's turns, moods or feeds."""
    gm = visibility.viewer_for(session=session, campaign=campaign, user=current_account())
    return render_template(
        "referee/forum_gm.html",
        campaign=campaign,
        members=threads.members(session=session, campaign=campaign),
        invites=_invite_links(session, campaign),
        characters=campaigns.characters(session=session, campaign=campaign),
        threads=threads.list_threads(session=session, campaign=campaign, viewer=gm),
        tables=(
            cards.list_tables(session=session, campaign=campaign, viewer=gm)
            if campaign.ruleset in cards.CARD_RULESETS
            else None
        ),
        outbox=outbox_counts(session=session, campaign_id=campaign.id),
    ), TOKEN_PAGE_HEADERS


def _sender():
    return mail_send.sender_for_app(current_app)


@bp.post("/event")
@login_required
def post_event(slug: str):
    session, campaign = _campaign(slug)
    turn = referee.open_turn(
        session=session,
        campaign=campaign,
        actor=current_account(),
        now=now(),
        text=request.form.get("text", ""),
        tailored=_tailored(session, campaign),
        deadline_hours=_int("deadline_hours", required=False),
        expected_number=_int("expected_number"),
        mail=_mail(),
        sender=_sender(),
    )
    session.commit()
    return _back(slug, f"Turn {turn.number} is open; every player's notification is queued.")


def _tailored(session, campaign) -> list[turns.Tailored]:
    tailored = []
    for character in campaigns.characters(session=session, campaign=campaign):
        text = (request.form.get(f"tailor_{character.id}") or "").strip()
        if text:
            mode = request.form.get(f"mode_{character.id}", "addition")
            tailored.append(turns.Tailored(character.id, mode, text))
    return tailored


@bp.post("/queue")
@login_required
def queue_event(slug: str):
    """The next turn's event, kept until the scheduler opens the turn at the deadline."""
    session, campaign = _campaign(slug)
    queued = referee.queue_event(
        session=session,
        campaign=campaign,
        actor=current_account(),
        text=request.form.get("text") or "",
        tailored=_tailored(session, campaign),
    )
    session.commit()
    return _back(slug, "Next event queued." if queued.text else "Queued event cleared.")


@bp.post("/close")
@login_required
def close(slug: str):
    session, campaign = _campaign(slug)
    turn = referee.close(session=session, campaign=campaign, actor=current_account(), now=now())
    session.commit()
    return _back(slug, f"Turn {turn.number} is closed: notes no longer count.")


@bp.post("/reopen")
@login_required
def reopen(slug: str):
    session, campaign = _campaign(slug)
    turn = referee.reopen(session=session, campaign=campaign, actor=current_account(), now=now())
    session.commit()
    return _back(slug, f"Turn {turn.number} is open again: notes count until it closes.")


@bp.post("/rule")
@login_required
def rule(slug: str):
    session, campaign = _campaign(slug)
    referee.rule(
        session=session,
        campaign=campaign,
        actor=current_account(),
        now=now(),
        kind=request.form.get("kind", ""),
        subject_id=_int("subject_id", required=False),
        value=_ruling_value(request.form.get("value", "")),
        reason=request.form.get("reason", ""),
        mail=_mail(),
    )
    session.commit()
    return _back(slug, "Ruling recorded; the tally below applies it.", "#tally")


def _ruling_value(raw: str):
    """Character ids arrive as digits; everything else (support, invalid…) as text."""
    raw = raw.strip()
    if raw.lstrip("-").isdigit():
        return int(raw)
    return {"": None, "true": True, "false": False}.get(raw.lower(), raw)


@bp.post("/resolve")
@login_required
def resolve(slug: str):
    session, campaign = _campaign(slug)
    consequences = {
        int(key.removeprefix("consequence_")): value
        for key, value in request.form.items()
        if key.startswith("consequence_") and key.removeprefix("consequence_").isdigit()
    }
    turn, _result = referee.resolve(
        session=session,
        campaign=campaign,
        actor=current_account(),
        now=now(),
        consequences=consequences,
        mail=_mail(),
        sender=_sender(),
    )
    session.commit()
    return _back(slug, f"Turn {turn.number} is resolved.")


@bp.post("/final-notice")
@login_required
def final_notice(slug: str):
    session, campaign = _campaign(slug)
    referee.publish_final_notice(
        session=session,
        campaign=campaign,
        actor=current_account(),
        now=now(),
        text=request.form.get("text") or "",
        mail=_mail(),
        sender=_sender(),
    )
    session.commit()
    return _back(slug, "The final notice is published and mailed.")


@bp.post("/characters")
@login_required
def add_character(slug: str):
    session, campaign = _campaign(slug)
    character = roster.add_character(
        session=session,
        campaign=campaign,
        actor=current_account(),
        name=request.form.get("name", ""),
        feed_url=request.form.get("feed_url"),
        aliases=request.form.get("aliases", "").split(","),
        allow_private=current_app.config["PBP_ALLOW_PRIVATE_FEEDS"],
    )
    session.commit()
    return _back(slug, f"{character.name} joins the roster.", "#roster")


@bp.post("/alias")
@login_required
def map_commenter(slug: str):
    session, campaign = _campaign(slug)
    mapped = referee.map_commenter(
        session=session,
        campaign=campaign,
        actor=current_account(),
        character_id=_int("character_id"),
        kind=request.form.get("kind", "name"),
        value=request.form.get("value", ""),
    )
    session.commit()
    return _back(slug, f"Mapped; {mapped} waiting note(s) now count.", "#commenters")


@bp.post("/poll/<int:blog_id>")
@login_required
def poll_now(slug: str, blog_id: int):
    """Ask the scheduler to poll this feed on its next pass (within a minute)."""
    session, campaign = _campaign(slug)
    referee.poll_soon(
        session=session, campaign=campaign, actor=current_account(), now=now(), blog_id=blog_id
    )
    session.commit()
    return _back(slug, "The feed will be polled within a minute.", "#roster")


@bp.post("/settings")
@login_required
def settings(slug: str):
    session, campaign = _campaign(slug)
    moods = {}
    for line in request.form.get("custom_moods", "").splitlines():
        if "=" in line:
            mood, action = (part.strip() for part in line.split("=", 1))
            moods[mood] = action
    referee.save_settings(
        session=session,
        campaign=campaign,
        actor=current_account(),
        opening_turns=_int("opening_turns"),
        fair_interval_hours=_int("fair_interval_hours", required=False),
        custom_moods=moods,
        time_zone=request.form.get("time_zone"),
        turn_cadence={
            "kind": request.form.get("cadence", "manual"),
            "at": request.form.get("cadence_at", ""),
            "hours": request.form.get("cadence_hours") or 0,
            "remind_hours": request.form.get("remind_hours", ""),
        },
    )
    session.commit()
    return _back(slug, "Settings saved.", "#settings")


@bp.post("/remind")
@login_required
def remind(slug: str):
    """One click: a reminder to every player who has not posted an entry this turn."""
    session, campaign = _campaign(slug)
    sent = referee.remind(
        session=session,
        campaign=campaign,
        actor=current_account(),
        now=now(),
        mail=_mail(),
        sender=_sender(),
    )
    session.commit()
    return _back(slug, f"Reminder queued for {sent} player(s).")


@bp.get("/outbox")
@login_required
def outbox(slug: str):
    session, campaign = _campaign(slug)
    status = request.args.get("status") or None
    box = referee.outbox(session=session, campaign=campaign, actor=current_account(), status=status)
    return render_template(
        "referee/outbox.html",
        campaign=campaign,
        counts=box.counts,
        messages=box.messages,
        status=status,
    )


@bp.get("/audit")
@login_required
def audit_log(slug: str):
    session, campaign = _campaign(slug)
    lines = referee.audit_lines(session=session, campaign=campaign, actor=current_account())
    return render_template("referee/audit.html", campaign=campaign, lines=lines)
