"""Character icons on the pages (issue #33 item 1): pbp serves each icon itself (so the
Content-Security-Policy's `img-src 'self'` holds), cached for a year under an address that
changes with the picture; a player keeps their characters' icons on /c/<slug>/me/icons.

    GET  /icons/<id>-<digest>.png                  the PNG, immutable
    GET  /c/<slug>/me/icons                        the reader's characters and their icons
    POST /c/<slug>/me/icons                        upload one (multipart: picture, keyword, alt)
    POST /c/<slug>/me/icons/<id>/default           make it the default
    POST /c/<slug>/me/icons/<id>/remove            remove it
"""

from __future__ import annotations

from flask import Blueprint, Response, render_template, request, url_for

from pbp.inputs.icons import IconIn
from pbp.models import MAX_ICONS
from pbp.request_db import get_session
from pbp.services import campaigns, icons
from pbp.web.access import current_account, login_required, visiting
from pbp.web.actions import Act, action, as_typed, refused
from pbp.web.forms import parsed

bp = Blueprint("icons", __name__)

YEAR = 365 * 24 * 3600


@bp.get("/icons/<int:icon_id>-<digest>.png")
def image(icon_id: int, digest: str):
    data = icons.icon_image(session=get_session(), icon_id=icon_id, digest=digest)
    response = Response(data, mimetype="image/png")
    response.headers["Cache-Control"] = f"public, max-age={YEAR}, immutable"
    return response


@login_required
def _page(slug: str):
    session = get_session()
    campaign = campaigns.get_campaign(session=session, slug=slug)
    visiting(campaign)
    user = current_account()
    mine = [
        (c, icons.icons_of(session=session, character=c))
        for c in campaigns.characters(session=session, campaign=campaign)
        if user is not None and c.user_id == user.id
    ]
    return render_template(
        "icons.html",
        campaign=campaign,
        mine=mine,
        most=MAX_ICONS,
        typed={n: as_typed("icons.upload", n) for n in ("keyword", "alt", "character")},
        error=refused("icons.upload"),
        other_error=refused("icons.default") or refused("icons.remove"),
    )


def _back(slug: str) -> str:
    return url_for("icons.upload", slug=slug)


@action(bp, "/c/<slug>/me/icons", role="member", page=_page, get=True)
def upload(act: Act, slug: str):
    typed = parsed(IconIn, {"keyword": act.text("keyword"), "alt": act.text("alt")})
    picture = request.files.get("picture")
    icon = icons.add_icon(
        session=act.session,
        campaign=act.campaign,
        actor=act.account,
        character_slug=act.text("character"),
        keyword=typed.keyword,
        alt=typed.alt,
        data=picture.read() if picture else b"",
        now=act.now,
    )
    return act.done(_back(slug), f"Icon “{icon.keyword}” added.")


@action(bp, "/c/<slug>/me/icons/<int:icon_id>/default", role="member", page=_page)
def default(act: Act, slug: str, icon_id: int):
    icon = icons.make_default(
        session=act.session, campaign=act.campaign, actor=act.account, icon_id=icon_id
    )
    return act.done(_back(slug), f"“{icon.keyword}” is the default icon now.")


@action(bp, "/c/<slug>/me/icons/<int:icon_id>/remove", role="member", page=_page)
def remove(act: Act, slug: str, icon_id: int):
    icons.remove_icon(
        session=act.session, campaign=act.campaign, actor=act.account, icon_id=icon_id
    )
    return act.done(_back(slug), "Icon removed.")
