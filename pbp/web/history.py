"""Looking back: the standings and history page, the JSON export and the HTML archive.

Who sees what: the history page is for every member of the campaign (players see each
other's standings anyway); the export and the archive are the referee's, because they
hold what was private during play (tailored events, rulings, the audit log).
"""

from __future__ import annotations

import json

from flask import Blueprint, Response, current_app, render_template

from pbp.request_db import get_session
from pbp.services import campaigns, export
from pbp.services.noteworthy import history, svg_chart
from pbp.web.access import login_required, require_member, require_referee

bp = Blueprint("history", __name__, url_prefix="/c/<slug>")

#: Downloads carry the campaign's private material: never kept by a shared cache.
PRIVATE = "private, no-store"


def _download(body: bytes, mimetype: str, filename: str) -> Response:
    return Response(
        body,
        mimetype=mimetype,
        headers={
            "Content-Disposition": f'attachment; filename="{filename}"',
            "Cache-Control": PRIVATE,
        },
    )


@bp.get("/history")
@login_required
def page(slug: str):
    session = get_session()
    campaign = campaigns.get_campaign(session=session, slug=slug)
    member = require_member(campaign)
    story = history.campaign_history(session=session, campaign=campaign)
    chart = svg_chart.standings_chart(story, title=f"Standings of {campaign.name}")
    return render_template(
        "history/history.html",
        campaign=campaign,
        history=story,
        chart=chart,
        is_referee=member.role == "referee",
    )


@bp.get("/export.json")
@login_required
def export_json(slug: str):
    session = get_session()
    campaign = campaigns.get_campaign(session=session, slug=slug)
    require_referee(campaign)
    data = export.export_campaign(session=session, campaign=campaign)
    body = json.dumps(data, ensure_ascii=False, indent=2).encode("utf-8")
    return _download(body, "application/json", f"{campaign.slug}.json")


@bp.get("/archive.zip")
@login_required
def archive(slug: str):
    session = get_session()
    campaign = campaigns.get_campaign(session=session, slug=slug)
    require_referee(campaign)
    body = export.archive_zip(
        session=session, campaign=campaign, base_url=current_app.config.get("PBP_BASE_URL")
    )
    return _download(body, "application/zip", f"{campaign.slug}-archive.zip")
