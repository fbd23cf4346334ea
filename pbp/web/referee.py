"""The referee's dashboard: events, turns, tallies, rulings, roster and endgame.

Every action is a POST that redirects back (no double submission on reload); each is
idempotent in the services, so a double click or a retried request changes nothing twice.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from flask import Blueprint, current_app, flash, redirect, render_template, request, url_for
from sqlmodel import select

from pbp import limits
from pbp.db import get_session
from pbp.errors import UserError
from pbp.limits import check_length
from pbp.models import Blog, Character, utcnow
from pbp.rules import noteworthy as nw
from pbp.services import audit_log as audit_words
from pbp.services import campaigns, invites
from pbp.services.cards import tables as cards
from pbp.services.forum import scenes as forum
from pbp.services.mail import send as mail_send
from pbp.services.mail.outbox import (
    MailSettings,
    event_batch_key,
    outbox_counts,
    outbox_messages,
    queue_final_notice,
    queue_reminder,
    queue_turn_results,
)
from pbp.services.noteworthy import blog_settings as blogs
from pbp.services.noteworthy import cadence, commenters, dashboard, turns
from pbp.web.access import current_account, login_required, require_referee

bp = Blueprint("referee", __name__, url_prefix="/c/<slug>/referee")

# (kind, what it decides in words) for the ruling form's choices.
RULING_KINDS = [
    (k.value, audit_words.RULING_WORDS.get(k.value, k.value.replace("_", " ")))
    for k in nw.RulingKind
]


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
        nw=nw,
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
    gm = forum.viewer_for(session=session, campaign=campaign, user=current_account())
    return render_template(
        "referee/forum_gm.html",
        campaign=campaign,
        members=forum.members(session=session, campaign=campaign),
        invites=_invite_links(session, campaign),
        characters=campaigns.characters(session=session, campaign=campaign),
        threads=forum.list_threads(session=session, campaign=campaign, viewer=gm),
        tables=(
            cards.list_tables(session=session, campaign=campaign, viewer=gm)
            if campaign.ruleset in cards.CARD_RULESETS
            else None
        ),
        outbox=outbox_counts(session=session, campaign_id=campaign.id),
    ), TOKEN_PAGE_HEADERS


@bp.post("/event")
@login_required
def post_event(slug: str):
    session, campaign = _campaign(slug)
    tailored = _tailored(session, campaign)
    hours = _int("deadline_hours", required=False)
    moment = now()
    deadline = moment + timedelta(hours=hours) if hours else None
    if deadline is None:
        deadline = cadence.deadline_after(
            moment, campaign.settings.get("cadence", {}), campaign.time_zone
        )
    turn = turns.post_event(
        session=session,
        campaign=campaign,
        text=request.form.get("text", ""),
        actor=current_account(),
        now=moment,
        tailored=tailored,
        deadline=deadline,
        expected_number=_int("expected_number"),
        mail=_mail(),
    )
    # Every player's mail leaves in one batch right after the commit (simultaneous).
    mail_send.sender_for_app(current_app).send_after_commit(
        session=session, batch_key=event_batch_key(turn)
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
    text = (request.form.get("text") or "").strip()
    tailored = [t.__dict__ for t in _tailored(session, campaign)]
    settings = {k: v for k, v in campaign.settings.items() if k != "queued_event"}
    if text or tailored:
        settings["queued_event"] = {"text": text, "tailored": tailored}
    campaign.settings = settings
    session.add(campaign)
    turns.audit(session, campaign, current_account(), "queue_event", queued=bool(text))
    session.commit()
    return _back(slug, "Next event queued." if text else "Queued event cleared.")


@bp.post("/close")
@login_required
def close(slug: str):
    session, campaign = _campaign(slug)
    turn = turns.close_turn(session=session, campaign=campaign, actor=current_account(), now=now())
    session.commit()
    return _back(slug, f"Turn {turn.number} is closed: notes no longer count.")


@bp.post("/reopen")
@login_required
def reopen(slug: str):
    session, campaign = _campaign(slug)
    turn = turns.reopen_turn(session=session, campaign=campaign, actor=current_account(), now=now())
    session.commit()
    return _back(slug, f"Turn {turn.number} is open again: notes count until it closes.")


@bp.post("/rule")
@login_required
def rule(slug: str):
    session, campaign = _campaign(slug)
    turn = turns.latest_turn(session=session, campaign=campaign)
    if turn is None:
        raise UserError("there is no turn to rule on yet")
    turns.add_ruling(
        session=session,
        campaign=campaign,
        turn=turn,
        kind=request.form.get("kind", ""),
        subject_id=_int("subject_id", required=False),
        value=_ruling_value(request.form.get("value", "")),
        reason=request.form.get("reason", ""),
        actor=current_account(),
        now=now(),
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
        int(key.removeprefix("consequence_")): value.strip()
        for key, value in request.form.items()
        if key.startswith("consequence_")
        and key.removeprefix("consequence_").isdigit()
        and value.strip()
    }
    turn, result = turns.resolve_turn(
        session=session,
        campaign=campaign,
        actor=current_account(),
        now=now(),
        consequences=consequences,
    )
    summary = "\n".join([*result.explanation, *consequences.values()])
    queue_turn_results(session=session, settings=_mail(), turn=turn, summary=summary, now=now())
    session.commit()
    return _back(slug, f"Turn {turn.number} is resolved.")


@bp.post("/final-notice")
@login_required
def final_notice(slug: str):
    session, campaign = _campaign(slug)
    text = (request.form.get("text") or "").strip()
    if not text:
        raise UserError("the final notice needs some text")
    check_length(text, limits.FINAL_NOTICE, "the final notice")
    campaign.settings = {**campaign.settings, "final_notice": text}
    session.add(campaign)
    turns.audit(session, campaign, current_account(), "final_notice")
    queue_final_notice(session=session, settings=_mail(), campaign=campaign, text=text, now=now())
    session.commit()
    return _back(slug, "The final notice is published and mailed.")


@bp.post("/characters")
@login_required
def add_character(slug: str):
    session, campaign = _campaign(slug)
    aliases = [a.strip() for a in request.form.get("aliases", "").split(",") if a.strip()]
    feed_url = blogs.checked_feed_address(
        session=session,
        url=request.form.get("feed_url"),
        allow_private=current_app.config["PBP_ALLOW_PRIVATE_FEEDS"],
    )
    character = campaigns.add_character(
        session=session,
        campaign=campaign,
        name=request.form.get("name", ""),
        feed_url=feed_url,
        aliases=aliases,
    )
    turns.audit(session, campaign, current_account(), "add_character", name=character.name)
    session.commit()
    return _back(slug, f"{character.name} joins the roster.", "#roster")


@bp.post("/alias")
@login_required
def map_commenter(slug: str):
    session, campaign = _campaign(slug)
    character_id = _int("character_id")
    character = session.get(Character, character_id)
    if character is None or character.campaign_id != campaign.id:
        raise UserError("choose a character of this campaign")
    mapped = commenters.map_commenter(
        session=session,
        campaign=campaign,
        character=character,
        kind=request.form.get("kind", "name"),
        value=request.form.get("value", ""),
    )
    turns.audit(session, campaign, current_account(), "map_commenter", character=character_id)
    session.commit()
    return _back(slug, f"Mapped; {mapped} waiting note(s) now count.", "#commenters")


@bp.post("/poll/<int:blog_id>")
@login_required
def poll_now(slug: str, blog_id: int):
    """Ask the scheduler to poll this feed on its next pass (within a minute)."""
    session, campaign = _campaign(slug)
    blog = session.exec(
        select(Blog).join(Character).where(Blog.id == blog_id, Character.campaign_id == campaign.id)
    ).first()
    if blog is None or blog.kind != "external":
        raise UserError("that is not an external blog of this campaign")
    blog.next_poll_at = now()
    session.add(blog)
    session.commit()
    return _back(slug, "The feed will be polled within a minute.", "#roster")


@bp.post("/settings")
@login_required
def settings(slug: str):
    session, campaign = _campaign(slug)
    opening = _int("opening_turns")
    interval = _int("fair_interval_hours", required=False)
    moods = {}
    for line in request.form.get("custom_moods", "").splitlines():
        if "=" in line:
            mood, action = (part.strip() for part in line.split("=", 1))
            if mood and action:
                moods[mood] = action
    time_zone = (request.form.get("time_zone") or campaign.time_zone).strip()
    turn_cadence = cadence.validate(
        {
            "kind": request.form.get("cadence", "manual"),
            "at": request.form.get("cadence_at", ""),
            "hours": request.form.get("cadence_hours") or 0,
        },
        time_zone,
    )
    merged = {
        **campaign.settings,
        "opening_turns": opening,
        "fair_interval_hours": interval,
        "custom_moods": moods,
        "cadence": turn_cadence,
    }
    campaign.time_zone = time_zone
    try:
        nw.Settings(
            opening_turns=opening,
            actions=moods,
            fair_interval=timedelta(hours=interval) if interval else None,
        )
    except nw.RulesError as exc:
        raise UserError(str(exc)) from exc
    campaign.settings = merged
    session.add(campaign)
    turns.audit(session, campaign, current_account(), "settings", **merged)
    session.commit()
    return _back(slug, "Settings saved.", "#settings")


@bp.post("/remind")
@login_required
def remind(slug: str):
    """One click: a reminder to every player who has not posted an entry this turn
    (Noteworthy: "In a turn, you post at least one in-character entry")."""
    session, campaign = _campaign(slug)
    view = dashboard.dashboard(session=session, campaign=campaign)
    moment = now()
    sent = 0
    for row in view.roster:
        if row.character in view.missing_posters and row.player is not None:
            queue_reminder(
                session=session,
                settings=_mail(),
                campaign=campaign,
                turn=view.turn,
                character=row.character,
                player=row.player,
                now=moment,
            )
            sent += 1
    turns.audit(session, campaign, current_account(), "remind", count=sent)
    mail_send.sender_for_app(current_app).send_after_commit(session=session)
    session.commit()
    return _back(slug, f"Reminder queued for {sent} player(s).")


@bp.get("/outbox")
@login_required
def outbox(slug: str):
    session, campaign = _campaign(slug)
    status = request.args.get("status") or None
    return render_template(
        "referee/outbox.html",
        campaign=campaign,
        counts=outbox_counts(session=session, campaign_id=campaign.id),
        messages=outbox_messages(session=session, campaign_id=campaign.id, status=status),
        status=status,
    )


@bp.get("/audit")
@login_required
def audit_log(slug: str):
    session, campaign = _campaign(slug)
    lines = audit_words.audit_lines(session=session, campaign=campaign)
    return render_template("referee/audit.html", campaign=campaign, lines=lines)
