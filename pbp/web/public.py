"""Public pages: the list of campaigns and each campaign's planet."""

from __future__ import annotations

from flask import (
    Blueprint,
    current_app,
    render_template,
    request,
    url_for,
)
from flask import session as browser_session
from markupsafe import Markup

from pbp.inputs.campaigns import CampaignIn
from pbp.request_db import get_session
from pbp.services import board, campaigns
from pbp.services.noteworthy import planet, play
from pbp.web import unread as unread_marks
from pbp.web.access import app_secret, current_account, current_membership, login_required
from pbp.web.actions import Act, action, now
from pbp.web.forms import parsed
from pbp.web.page_cache import VisitorPage, cached, visitors_version
from pbp.web.visitor_pages import keep_for_visitors

bp = Blueprint("public", __name__)


@bp.get("/")
def index():
    """Every campaign; for a signed-in member, first what waits on them (pbp.services.board)."""
    session = get_session()
    user = current_account()
    mine = (
        board.board(session=session, user=user, now=now(), secret_key=app_secret())
        if user
        else None
    )
    return render_template(
        "index.html", campaigns=campaigns.list_campaigns(session=session), board=mine
    )


@bp.get("/c/<slug>/")
def campaign(slug: str):
    """A campaign's home: the planet of a Noteworthy game, the scenes of a forum game."""
    if _ruleset(slug) != "noteworthy":
        from pbp.web import forum

        return forum.index(slug)
    args = {
        "turn_number": request.args.get("turn", type=int),
        "character_slug": request.args.get("character") or None,
        "mood": request.args.get("mood") or None,
        "before": request.args.get("before", type=int),
    }
    user = current_account()
    visitor = user is None and "_flashes" not in browser_session

    # Read before the page's rows, so a change committed meanwhile is cached under the
    # older version, which the change's bump retires (pbp.content_version).
    def read_version() -> tuple[int, int]:
        connection = get_session().connection()
        return campaigns.content_version(connection=connection, slug=slug)

    campaign_id, version = visitors_version(slug, read_version) if visitor else read_version()
    key = ("planet", campaign_id, version, *args.values())
    if visitor:
        # Every visitor without an account or a message sees the same page: kept whole,
        # encoded. (Keyed by the whole path too: the "Log in" link carries it back.)
        page = cached(
            ("visitor", request.full_path, *key),
            lambda: VisitorPage(_planet_page(slug, key, args, user).encode()),
        )
        # The next visitors without cookies get this answer before Flask runs.
        keep_for_visitors(slug, (campaign_id, version))
        return page.response()
    return _planet_page(slug, key, args, user)


def _ruleset(slug: str) -> str:
    """A campaign's ruleset, remembered per process: it never changes, and the planet's
    cached path reads nothing else from the database."""
    known = current_app.extensions.setdefault("pbp_rulesets", {})
    if slug not in known:
        known[slug] = campaigns.get_campaign(session=get_session(), slug=slug).ruleset
    return known[slug]


def _planet_page(slug: str, key: tuple, args: dict, user) -> str:
    db = get_session()
    campaign = campaigns.get_campaign(session=db, slug=slug)

    def render() -> str:
        view = planet.planet(session=db, campaign=campaign, **args)
        return render_template("_planet.html", campaign=campaign, view=view)

    mine = play.character_of(session=db, campaign=campaign, user=user)
    header = planet.turn_header(session=db, campaign=campaign, reader=mine)
    membership = current_membership(campaign)
    html, first_new = cached(key, render), None
    if user is not None and membership is not None:
        # The new items are the member's own: marked on the shared page, per reader.
        html, first_new = unread_marks.planet_marked(html, user=user, campaign=campaign)
    return render_template(
        "campaign.html",
        campaign=campaign,
        planet_html=Markup(html),
        header=header,
        mine=mine,
        membership=membership,
        first_new=first_new,
    )


@login_required
def _new_campaign_page():
    return render_template("new_campaign.html", rulesets=campaigns.RULESET_NAMES)


@action(bp, "/campaigns/new", role="user", creates=True, page=_new_campaign_page, get=True)
def new_campaign(act: Act):
    """Anyone with an account can start a campaign and referee it."""
    new = parsed(
        CampaignIn,
        {"name": act.text("name").strip(), "ruleset": act.text("ruleset") or "noteworthy"},
    )
    campaign = campaigns.create_campaign(
        session=act.session,
        referee=act.account,
        name=new.name,
        ruleset=new.ruleset,
        now=act.now,
    )
    if campaign.ruleset == "noteworthy":
        home = url_for("referee.board", slug=campaign.slug)
    else:
        home = url_for("public.campaign", slug=campaign.slug)
    return act.done(home, f"{campaign.name} is created; you referee it.")
