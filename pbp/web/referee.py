"""The referee's dashboard: events, turns, tallies, rulings, roster and endgame.

Every action is a POST declared with `pbp.web.actions.action`: it redirects back (no
double submission on reload), a form that creates or mails carries a one-time token (a
double click changes nothing twice), and a refused form comes back on the dashboard with
what was typed and the reason beside it (status 422).
"""

from __future__ import annotations

from flask import Blueprint, current_app, render_template, request, url_for

from pbp.inputs.referee import consequences, custom_moods, ruling_value
from pbp.request_db import get_session
from pbp.services import campaigns, invites, roster
from pbp.services.cards import tables as cards
from pbp.services.forum import characters as forum_characters
from pbp.services.forum import threads, visibility
from pbp.services.mail.outbox import outbox_counts
from pbp.services.noteworthy import cadence, dashboard, referee, turns
from pbp.web.access import current_account, login_required, require_referee
from pbp.web.actions import Act, action, now

bp = Blueprint("referee", __name__, url_prefix="/c/<slug>/referee")

# (kind, what it decides in words) for the ruling form's choices.
RULING_KINDS = referee.RULING_KINDS


# The dashboards show open invitation links: no Referer or cache may carry them away.
TOKEN_PAGE_HEADERS = {"Referrer-Policy": "no-referrer", "Cache-Control": "no-store"}


def _campaign(slug: str):
    session = get_session()
    campaign = campaigns.get_campaign(session=session, slug=slug)
    require_referee(campaign)
    return session, campaign


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
        without_character=forum_characters.players_without_character(
            session=session, campaign=campaign
        ),
        threads=threads.list_threads(session=session, campaign=campaign, viewer=gm),
        tables=(
            cards.list_tables(session=session, campaign=campaign, viewer=gm)
            if campaign.ruleset in cards.CARD_RULESETS
            else None
        ),
        outbox=outbox_counts(session=session, campaign_id=campaign.id),
    ), TOKEN_PAGE_HEADERS


def _back(slug: str, anchor: str = "") -> str:
    return url_for("referee.board", slug=slug) + anchor


@action(bp, "/event", role="referee", creates=True, page="referee.board")
def post_event(act: Act, slug: str):
    turn = referee.open_turn(
        session=act.session,
        campaign=act.campaign,
        actor=act.account,
        now=act.now,
        text=act.text("text"),
        tailored=_tailored(act),
        deadline_hours=act.number("deadline_hours", required=False),
        expected_number=act.number("expected_number"),
        mail=act.mail,
        sender=act.sender,
    )
    message = f"Turn {turn.number} is open; every player's notification is queued."
    return act.done(_back(slug), message)


def _tailored(act: Act) -> list[turns.Tailored]:
    tailored = []
    for character in campaigns.characters(session=act.session, campaign=act.campaign):
        text = act.text(f"tailor_{character.id}").strip()
        if text:
            mode = act.form.get(f"mode_{character.id}", "addition")
            tailored.append(turns.Tailored(character.id, mode, text))
    return tailored


@action(bp, "/queue", role="referee", page="referee.board")
def queue_event(act: Act, slug: str):
    """The next turn's event, kept until the scheduler opens the turn at the deadline."""
    queued = referee.queue_event(
        session=act.session,
        campaign=act.campaign,
        actor=act.account,
        text=act.text("text"),
        tailored=_tailored(act),
    )
    return act.done(_back(slug), "Next event queued." if queued.text else "Queued event cleared.")


@action(bp, "/close", role="referee", page="referee.board")
def close(act: Act, slug: str):
    turn = referee.close(session=act.session, campaign=act.campaign, actor=act.account, now=act.now)
    return act.done(_back(slug), f"Turn {turn.number} is closed: notes no longer count.")


@action(bp, "/reopen", role="referee", page="referee.board")
def reopen(act: Act, slug: str):
    turn = referee.reopen(
        session=act.session, campaign=act.campaign, actor=act.account, now=act.now
    )
    return act.done(_back(slug), f"Turn {turn.number} is open again: notes count until it closes.")


@action(bp, "/rule", role="referee", creates=True, page="referee.board")
def rule(act: Act, slug: str):
    referee.rule(
        session=act.session,
        campaign=act.campaign,
        actor=act.account,
        now=act.now,
        kind=act.text("kind"),
        subject_id=act.number("subject_id", required=False),
        value=ruling_value(act.text("value")),
        reason=act.text("reason"),
        mail=act.mail,
    )
    return act.done(_back(slug, "#tally"), "Ruling recorded; the tally below applies it.")


@action(bp, "/resolve", role="referee", page="referee.board")
def resolve(act: Act, slug: str):
    turn, _result = referee.resolve(
        session=act.session,
        campaign=act.campaign,
        actor=act.account,
        now=act.now,
        consequences=consequences(act.form),
        mail=act.mail,
        sender=act.sender,
    )
    return act.done(_back(slug), f"Turn {turn.number} is resolved.")


@action(bp, "/final-notice", role="referee", creates=True, page="referee.board")
def final_notice(act: Act, slug: str):
    referee.publish_final_notice(
        session=act.session,
        campaign=act.campaign,
        actor=act.account,
        now=act.now,
        text=act.text("text"),
        mail=act.mail,
        sender=act.sender,
    )
    return act.done(_back(slug), "The final notice is published and mailed.")


@action(bp, "/characters", role="referee", creates=True, page="referee.board")
def add_character(act: Act, slug: str):
    character = roster.add_character(
        session=act.session,
        campaign=act.campaign,
        actor=act.account,
        name=act.text("name"),
        feed_url=act.form.get("feed_url"),
        aliases=act.text("aliases").split(","),
        allow_private=current_app.config["PBP_ALLOW_PRIVATE_FEEDS"],
    )
    return act.done(_back(slug, "#roster"), f"{character.name} joins the roster.")


@action(bp, "/alias", role="referee", page="referee.board")
def map_commenter(act: Act, slug: str):
    mapped = referee.map_commenter(
        session=act.session,
        campaign=act.campaign,
        actor=act.account,
        character_id=act.number("character_id"),
        kind=act.form.get("kind", "name"),
        value=act.text("value"),
    )
    return act.done(_back(slug, "#commenters"), f"Mapped; {mapped} waiting note(s) now count.")


@action(bp, "/poll/<int:blog_id>", role="referee", page="referee.board")
def poll_now(act: Act, slug: str, blog_id: int):
    """Ask the scheduler to poll this feed on its next pass (within a minute)."""
    referee.poll_soon(
        session=act.session, campaign=act.campaign, actor=act.account, now=act.now, blog_id=blog_id
    )
    return act.done(_back(slug, "#roster"), "The feed will be polled within a minute.")


@action(bp, "/settings", role="referee", page="referee.board")
def settings(act: Act, slug: str):
    referee.save_settings(
        session=act.session,
        campaign=act.campaign,
        actor=act.account,
        opening_turns=act.number("opening_turns") or 0,  # required: a refusal if empty
        fair_interval_hours=act.number("fair_interval_hours", required=False),
        custom_moods=custom_moods(act.text("custom_moods")),
        time_zone=act.form.get("time_zone"),
        turn_cadence={
            "kind": act.form.get("cadence", "manual"),
            "at": act.text("cadence_at"),
            "hours": act.form.get("cadence_hours") or 0,
            "remind_hours": act.text("remind_hours"),
        },
    )
    return act.done(_back(slug, "#settings"), "Settings saved.")


@action(bp, "/remind", role="referee", creates=True, page="referee.board")
def remind(act: Act, slug: str):
    """One click: a reminder to every player who has not posted an entry this turn."""
    sent = referee.remind(
        session=act.session,
        campaign=act.campaign,
        actor=act.account,
        now=act.now,
        mail=act.mail,
        sender=act.sender,
    )
    return act.done(_back(slug), f"Reminder queued for {sent} player(s).")


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
