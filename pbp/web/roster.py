"""Who is in a campaign: the characters page (Noteworthy) and the card tables (S&V, OCHH)."""

from __future__ import annotations

from flask import Blueprint, render_template

from pbp.errors import NotFound
from pbp.request_db import get_session
from pbp.services import campaigns
from pbp.services.alive import hiatus
from pbp.services.cards import tables as cards
from pbp.services.forum.rolls import Viewer
from pbp.web.access import current_account, current_membership
from pbp.web.actions import now

characters_bp = Blueprint("characters", __name__, url_prefix="/c/<slug>/characters")
tables_bp = Blueprint("tables", __name__, url_prefix="/c/<slug>/tables")


@characters_bp.get("/")
def index(slug: str):
    session = get_session()
    campaign = campaigns.get_campaign(session=session, slug=slug)
    if campaign.ruleset != "noteworthy":
        raise NotFound(f"{campaign.name} keeps its characters on sheets")
    return render_template(
        "roster/characters.html",
        campaign=campaign,
        characters=campaigns.characters(session=session, campaign=campaign),
        away=hiatus.away_until(session=session, campaign=campaign, now=now()),
    )


@tables_bp.get("/", endpoint="index")
def index_tables(slug: str):
    session = get_session()
    campaign = campaigns.get_campaign(session=session, slug=slug)
    user, member = current_account(), current_membership(campaign)
    viewer = Viewer(user.id if user else None, member.role if member else None)
    tables = cards.list_tables(session=session, campaign=campaign, viewer=viewer)
    return render_template("roster/tables.html", campaign=campaign, tables=tables, viewer=viewer)
