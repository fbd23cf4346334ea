"""Public pages: the list of campaigns and each campaign's front page."""

from __future__ import annotations

from flask import Blueprint, render_template

from pbp.db import get_session
from pbp.services import campaigns, planet

bp = Blueprint("public", __name__)


@bp.get("/")
def index():
    return render_template("index.html", campaigns=campaigns.list_campaigns(session=get_session()))


@bp.get("/c/<slug>/")
def campaign(slug: str):
    session = get_session()
    campaign = campaigns.get_campaign(session=session, slug=slug)
    return render_template(
        "campaign.html", campaign=campaign, view=planet.planet(session=session, campaign=campaign)
    )
