"""The turns of a Noteworthy campaign: a list, and one page per turn (`/c/<slug>/turns/<n>`),
which every event and results mail links to. Public like the planet; a tailored event text
is shown only to its character's player and the referee."""

from __future__ import annotations

from flask import Blueprint, render_template

from pbp.errors import NotFound
from pbp.models import Campaign
from pbp.request_db import get_session
from pbp.services import campaigns
from pbp.services.noteworthy import play, turn_page
from pbp.web.access import current_account, current_membership
from pbp.web.actions import now
from pbp.web.times import countdown

bp = Blueprint("turns", __name__, url_prefix="/c/<slug>/turns")


def _noteworthy(slug: str) -> Campaign:
    campaign = campaigns.get_campaign(session=get_session(), slug=slug)
    if campaign.ruleset != "noteworthy":
        raise NotFound(f"{campaign.name} is played in scenes, not turns")
    return campaign


@bp.get("/")
def index(slug: str):
    session = get_session()
    campaign = _noteworthy(slug)
    return render_template(
        "turns/index.html",
        campaign=campaign,
        turns=turn_page.turn_list(session=session, campaign=campaign),
    )


@bp.get("/<int:number>")
def page(slug: str, number: int):
    session = get_session()
    campaign = _noteworthy(slug)
    member = current_membership(campaign)
    mine = play.character_of(session=session, campaign=campaign, user=current_account())
    view = turn_page.turn_page(
        session=session,
        campaign=campaign,
        number=number,
        reader_character_ids=frozenset([mine.id] if mine else []),
        is_referee=member is not None and member.role == "referee",
    )
    left = countdown(view.turn.deadline, now()) if view.turn.status == "open" else ""
    return render_template("turns/turn.html", campaign=campaign, view=view, countdown=left)
