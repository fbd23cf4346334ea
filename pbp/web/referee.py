"""The referee's dashboard: events, turns, tallies, rulings, roster and endgame.

Every action is a POST declared with `pbp.web.actions.action`: it redirects back (no
double submission on reload), a form that creates or mails carries a one-time token (a
double click changes nothing twice), and a refused form comes back on the dashboard with
what was typed and the reason beside it (status 422).
"""

from __future__ import annotations

from flask import Blueprint, current_app, render_template, request, url_for

from pbp.inputs.campaigns import CharacterIn
from pbp.inputs.referee import consequences, custom_moods, ruling_value
from pbp.inputs.turns import EventIn, FinalNoticeIn, QueuedEventIO, ResolveIn, RulingIn, SettingsIO
from pbp.request_db import get_session
from pbp.services import campaigns, invites, roster
from pbp.services.cards import tables as cards
from pbp.services.forum import characters as forum_characters
from pbp.services.forum import threads, visibility
from pbp.services.mail import webhooks
from pbp.services.mail.outbox import outbox_counts
from pbp.services.noteworthy import cadence, dashboard, referee, turns
from pbp.web.access import current_account, login_required, require_referee
from pbp.web.actions import Act, action, now
from pbp.web.forms import parsed

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
        chat=webhooks.list_webhooks(session=session, campaign=campaign),
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
        chat=webhooks.list_webhooks(session=session, campaign=campaign),
    ), TOKEN_PAGE_HEADERS


def _back(slug: str, anchor: str = "") -> str:
    return url_for("referee.board", slug=slug) + anchor


@action(bp, "/event", role="referee", creates=True, page="referee.board")
def post_event(act: Act, slug: str):
    event = parsed(
        EventIn,
        {
            "text": act.text("text"),
            "tailored": _tailored(act),
            "deadline_hours": act.text("deadline_hours").strip(),
            "expected_number": act.text("expected_number").strip(),
        },
    )
    turn = referee.open_turn(
        session=act.session,
        campaign=act.campaign,
        actor=act.account,
        now=act.now,
        text=event.text,
        tailored=turns.tailored_texts(event.tailored),
        deadline_hours=event.deadline_hours,
        expected_number=event.expected_number,
        mail=act.mail,
        sender=act.sender,
    )
    message = f"Turn {turn.number} is open; every player's notification is queued."
    return act.done(_back(slug), message)


def _tailored(act: Act) -> list[dict]:
    """The tailored texts typed (one field and one mode per character), as the API's
    `TailoredIn` items."""
    tailored = []
    for character in campaigns.characters(session=act.session, campaign=act.campaign):
        text = act.text(f"tailor_{character.id}").strip()
        if text:
            mode = act.form.get(f"mode_{character.id}", "addition")
            tailored.append({"character_id": character.id, "mode": mode, "text": text})
    return tailored


@action(bp, "/queue", role="referee", page="referee.board")
def queue_event(act: Act, slug: str):
    """The next turn's event, kept until the scheduler opens the turn at the deadline."""
    event = parsed(QueuedEventIO, {"text": act.text("text"), "tailored": _tailored(act)})
    queued = referee.queue_event(
        session=act.session,
        campaign=act.campaign,
        actor=act.account,
        text=event.text,
        tailored=turns.tailored_texts(event.tailored),
    )
    return act.done(_back(slug), "Next event queued." if queued.text else "Queued event cleared.")


@action(bp, "/close", role="referee", page="referee.board")
def close(act: Act, slug: str):
    turn = referee.close(
        session=act.session,
        campaign=act.campaign,
        actor=act.account,
        now=act.now,
        mail=act.mail,
        sender=act.sender,
    )
    return act.done(_back(slug), f"Turn {turn.number} is closed: notes no longer count.")


@action(bp, "/reopen", role="referee", page="referee.board")
def reopen(act: Act, slug: str):
    turn = referee.reopen(
        session=act.session, campaign=act.campaign, actor=act.account, now=act.now
    )
    return act.done(_back(slug), f"Turn {turn.number} is open again: notes count until it closes.")


@action(bp, "/rule", role="referee", creates=True, page="referee.board")
def rule(act: Act, slug: str):
    ruling = parsed(
        RulingIn,
        {
            "kind": act.text("kind"),
            "subject_id": act.text("subject_id").strip(),
            "value": ruling_value(act.text("value")),
            "reason": act.text("reason"),
        },
    )
    referee.rule(
        session=act.session,
        campaign=act.campaign,
        actor=act.account,
        now=act.now,
        kind=ruling.kind,
        subject_id=ruling.subject_id,
        value=ruling.value,
        reason=ruling.reason,
        mail=act.mail,
    )
    return act.done(_back(slug, "#tally"), "Ruling recorded; the tally below applies it.")


@action(bp, "/resolve", role="referee", page="referee.board")
def resolve(act: Act, slug: str):
    typed = [{"entry_id": k, "text": v} for k, v in consequences(act.form).items() if v.strip()]
    resolve_in = parsed(ResolveIn, {"consequences": typed})
    turn, _result = referee.resolve(
        session=act.session,
        campaign=act.campaign,
        actor=act.account,
        now=act.now,
        consequences={c.entry_id: c.text for c in resolve_in.consequences},
        mail=act.mail,
        sender=act.sender,
    )
    return act.done(_back(slug), f"Turn {turn.number} is resolved.")


@action(bp, "/final-notice", role="referee", creates=True, page="referee.board")
def final_notice(act: Act, slug: str):
    notice = parsed(FinalNoticeIn, {"text": act.text("text")})
    referee.publish_final_notice(
        session=act.session,
        campaign=act.campaign,
        actor=act.account,
        now=act.now,
        text=notice.text,
        mail=act.mail,
        sender=act.sender,
    )
    return act.done(_back(slug), "The final notice is published and mailed.")


@action(bp, "/characters", role="referee", creates=True, page="referee.board")
def add_character(act: Act, slug: str):
    aliases = [a.strip() for a in act.text("aliases").split(",") if a.strip()]
    new = parsed(
        CharacterIn,
        {"name": act.text("name"), "feed_url": act.text("feed_url").strip(), "aliases": aliases},
    )
    character = roster.add_character(
        session=act.session,
        campaign=act.campaign,
        actor=act.account,
        name=new.name,
        feed_url=new.feed_url,
        aliases=new.aliases,
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
    cadence = {
        "kind": act.form.get("cadence", "manual"),
        "at": act.text("cadence_at").strip(),
        "hours": act.text("cadence_hours").strip(),
        "remind_hours": act.text("remind_hours").strip(),
    }
    chosen = parsed(
        SettingsIO,
        {
            "opening_turns": act.text("opening_turns").strip(),
            "fair_interval_hours": act.text("fair_interval_hours").strip(),
            "custom_moods": custom_moods(act.text("custom_moods")),
            "time_zone": act.text("time_zone") or act.campaign.time_zone,
            "cadence": {k: v for k, v in cadence.items() if v != ""},  # empty: not set
        },
    )
    referee.save_settings(
        session=act.session,
        campaign=act.campaign,
        actor=act.account,
        opening_turns=chosen.opening_turns,
        fair_interval_hours=chosen.fair_interval_hours,
        custom_moods=chosen.custom_moods,
        time_zone=chosen.time_zone,
        turn_cadence={
            "kind": chosen.cadence.kind,
            "at": chosen.cadence.at or "",
            "hours": chosen.cadence.hours or 0,
            "remind_hours": chosen.cadence.remind_hours or 0,
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
