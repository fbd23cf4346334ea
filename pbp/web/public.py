"""Public pages: the list of campaigns and each campaign's planet."""

from __future__ import annotations

from flask import Blueprint, flash, redirect, render_template, request, url_for

from pbp.db import get_session
from pbp.services import campaigns, planet, play
from pbp.web.access import current_account, current_membership, login_required

bp = Blueprint("public", __name__)


@bp.get("/")
def index():
    return render_template("index.html", campaigns=campaigns.list_campaigns(session=get_session()))


@bp.get("/c/<slug>/")
def campaign(slug: str):
    session = get_session()
    campaign = campaigns.get_campaign(session=session, slug=slug)
    turn_number = request.args.get("turn", type=int)
    view = planet.planet(
        session=session,
        campaign=campaign,
        turn_number=turn_number,
        character_slug=request.args.get("character") or None,
        mood=request.args.get("mood") or None,
    )
    mine = play.character_of(session=session, campaign=campaign, user=current_account())
    return render_template(
        "campaign.html",
        campaign=campaign,
        view=view,
        mine=mine,
        membership=current_membership(campaign),
    )


@bp.route("/campaigns/new", methods=["GET", "POST"])
@login_required
def new_campaign():
    """Anyone with an account can start a campaign and referee it."""
    if request.method == "POST":
        session = get_session()
        campaign = campaigns.create_campaign(
            session=session,
            referee=current_account(),
            name=request.form.get("name", ""),
            ruleset=request.form.get("ruleset", "noteworthy"),
        )
        session.commit()
        flash(f"{campaign.name} is created; you referee it.", "ok")
        if campaign.ruleset == "noteworthy":
            return redirect(url_for("referee.board", slug=campaign.slug))
        return redirect(url_for("public.campaign", slug=campaign.slug))
    return render_template("new_campaign.html", rulesets=campaigns.RULESETS)
