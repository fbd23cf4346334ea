"""Keeping a game alive (blueprint `activity`, issue #30 items 2 and 3).

    GET  /c/<slug>/referee/activity           the referee's activity check
    POST /c/<slug>/referee/activity/settings  when nudges go, and the activity rule
    GET  /c/<slug>/me/away                    a player's hiatus: away until a date
    POST /c/<slug>/me/away                    mark yourself away (the referee is mailed)
    POST /c/<slug>/me/back                    you are back (the referee is mailed)

The activity page's "rule dropped" buttons post to the roster's existing ruling
(`roster_admin.drop`, with its reason). API twins: pbp.api.alive.
"""

from __future__ import annotations

from flask import Blueprint, render_template, url_for

from pbp.inputs.alive import ActivitySettingsIO, AwayIn
from pbp.request_db import get_session
from pbp.services import campaigns
from pbp.services.alive import activity, hiatus, plan
from pbp.web.access import login_required, require_member, require_referee, signed_in_account
from pbp.web.actions import Act, action, now
from pbp.web.forms import parsed

bp = Blueprint("activity", __name__, url_prefix="/c/<slug>")

#: The page offers the "rule dropped" button from this many missed turns in a row.
DROP_FROM = 3


@bp.get("/referee/activity")
@login_required
def page(slug: str):
    session = get_session()
    campaign = campaigns.get_campaign(session=session, slug=slug)
    require_referee(campaign)
    seen = activity.check(session=session, campaign=campaign, actor=signed_in_account(), now=now())
    return render_template(
        "referee/activity.html", campaign=campaign, seen=seen, drop_from=DROP_FROM
    )


@action(bp, "/referee/activity/settings", role="referee", page=page)
def settings(act: Act, slug: str):
    hours = [h.strip() for h in act.text("nudge_hours").replace(";", ",").split(",")]
    overdue = act.text("overdue_hours").strip()  # empty: no overdue nudge
    typed = {
        "nudge_hours": [h for h in hours if h],
        "overdue_hours": overdue,
        "rule_count": act.text("rule_count").strip(),
        "rule_days": act.text("rule_days").strip(),
    }
    chosen = parsed(ActivitySettingsIO, {k: v for k, v in typed.items() if v != ""})
    plan.save(
        session=act.session,
        campaign=act.campaign,
        actor=act.account,
        nudge_hours=chosen.nudge_hours,
        overdue_hours=chosen.overdue_hours if overdue else None,
        rule_count=chosen.rule_count,
        rule_days=chosen.rule_days,
    )
    return act.done(url_for("activity.page", slug=slug) + "#settings", "Settings saved.")


@bp.get("/me/away")
@login_required
def away_page(slug: str):
    session = get_session()
    campaign = campaigns.get_campaign(session=session, slug=slug)
    require_member(campaign)
    mine = hiatus.mine(session=session, campaign=campaign, actor=signed_in_account(), now=now())
    return render_template("player/away.html", campaign=campaign, away=mine)


@action(bp, "/me/away", role="player", page=away_page)
def away(act: Act, slug: str):
    chosen = parsed(AwayIn, {"until": act.text("until").strip(), "note": act.text("note")})
    hiatus.go_away(
        session=act.session, campaign=act.campaign, actor=act.account, until=chosen.until,
        note=chosen.note, now=act.now, mail=act.mail,
    )  # fmt: skip
    return act.done(
        url_for("activity.away_page", slug=slug),
        "You are marked away; the referee is told. No nudges until you are back.",
    )


@action(bp, "/me/back", role="player", page=away_page)
def back(act: Act, slug: str):
    hiatus.come_back(
        session=act.session, campaign=act.campaign, actor=act.account, now=act.now,
        mail=act.mail,
    )  # fmt: skip
    return act.done(url_for("activity.away_page", slug=slug), "Welcome back; the referee is told.")
