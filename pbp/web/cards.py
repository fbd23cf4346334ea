"""The card tables of forum threads (Sex & Violence, One Can Have Her): the table page, one
POST route per move, a JSON view and the export.

Thin views over pbp.services.cards.tables. Every page renders only the service's `TableView` – the
engine's ``view_for(state, viewer)`` and the redacted record – never the stored state. The
moves are actions declared with `pbp.web.actions.action`: each carries a one-time token (a
double click moves once), and a move the rules refuse comes back as the table with the rules'
message beside the move's form and its fields as typed, with the status the API answers
(422 the rules refuse it, 409 the table changed since; pbp.errors.REFUSAL_STATUSES); nothing
is saved.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from flask import Blueprint, Response, render_template, request
from flask import url_for as flask_url_for

from pbp.errors import NotFound, UserError
from pbp.inputs.forum import MoveIn, TableIn
from pbp.models import Campaign
from pbp.models.cards import CARD_RULESETS
from pbp.models.forum import Thread
from pbp.request_db import get_session
from pbp.services import campaigns
from pbp.services.cards import tables as cards
from pbp.services.forum import visibility
from pbp.services.forum.rolls import Viewer
from pbp.web.access import current_account, current_membership
from pbp.web.actions import TOKEN_FIELD, Act, action, now, refused
from pbp.web.forms import parsed

bp = Blueprint("cards", __name__)
TABLE = "/c/<slug>/forum/t/<int:thread_id>/cards"

LIST_FIELDS = {"fields", "targets", "cards", "prefer", "exchange", "order", "announce"}
FLAG_FIELDS = {"meets", "criterion_met", "rat", "redraw"}
SKIPPED = {"csrf_token", TOKEN_FIELD, "version", "client_token"}


@dataclass(frozen=True)
class Refused:
    """The move refused on this page, if any: the templates put its reason next to its form
    and `refused(action, field)` gives back a text field as typed (other forms stay empty).
    Every move posts to one endpoint (`cards.act`), so the move is told by its action name."""

    action: str | None = None
    reason: str | None = None
    form: Mapping[str, str] = field(default_factory=dict)

    def __call__(self, action: str, name: str) -> str:
        return self.form.get(name, "") if action == self.action else ""


def _refused_move() -> Refused:
    """The move refused in this request (by `pbp.web.actions`), with its fields as typed."""
    reason = refused("cards.act") or refused("cards.new")
    if reason is None:
        return Refused()
    move = (request.view_args or {}).get("action", "new")
    typed = {k: v for k, v in request.form.items() if k not in SKIPPED}
    return Refused(action=move, reason=reason, form=typed)


def _campaign(slug: str) -> Campaign:
    campaign = campaigns.get_campaign(session=get_session(), slug=slug)
    visibility.require_forum(campaign)
    return campaign


def _viewer(campaign: Campaign) -> Viewer:
    user, member = current_account(), current_membership(campaign)
    return Viewer(user.id if user else None, member.role if member else None)


def _thread(campaign: Campaign, thread_id: int) -> Thread:
    return cards.visible_thread(
        session=get_session(), campaign=campaign, thread_id=thread_id, viewer=_viewer(campaign)
    )


# -- reading ---------------------------------------------------------------------------------


@bp.get(TABLE)
def table(slug: str, thread_id: int):
    campaign = _campaign(slug)
    return _table_page(campaign, thread_id)


def _table_page(campaign: Campaign, thread_id: int):
    """The table; after a refused move, with its reason and fields beside its form."""
    session, viewer = get_session(), _viewer(campaign)
    thread, view = cards.table_of(
        session=session, campaign=campaign, thread_id=thread_id, viewer=viewer
    )
    move = _refused_move()
    return render_template(
        "cards/table.html",
        campaign=campaign,
        thread=thread,
        viewer=viewer,
        t=view,
        refused=move,
        playable=campaign.ruleset in CARD_RULESETS,
        card=cards.card_label,
        gm_sees_hands_default=bool((campaign.settings or {}).get("gm_sees_hands", True)),
    )


def _game(campaign: Campaign, thread_id: int):
    session = get_session()
    thread = _thread(campaign, thread_id)
    game = cards.game_of_thread(session=session, thread=thread)
    if game is None:
        raise NotFound("this thread has no card table")
    return game


@bp.get(TABLE + "/view.json")
def view_json(slug: str, thread_id: int):
    """The table as the viewer's page shows it, for scripts and screen readers' own tools."""
    campaign = _campaign(slug)
    game = _game(campaign, thread_id)
    t = cards.table_view(
        session=get_session(), campaign=campaign, game=game, viewer=_viewer(campaign)
    )
    body = {
        "game": t.game_id,
        "ruleset": t.ruleset,
        "version": t.version,
        "me": t.me,
        "view": t.view,
        "log": [
            {"seq": e.seq, "actor": e.actor, "action": e.action, "events": list(e.events)}
            for e in t.log
        ],
    }
    return Response(
        json.dumps(body, ensure_ascii=False, default=str),
        content_type="application/json",
        headers={"Cache-Control": "private, no-store"},
    )


@bp.get(TABLE + "/export.json")
def export(slug: str, thread_id: int):
    campaign = _campaign(slug)
    game = _game(campaign, thread_id)
    data = cards.export_game(
        session=get_session(), campaign=campaign, game=game, viewer=_viewer(campaign), now=now()
    )
    body = json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n"
    disposition = f'attachment; filename="{campaign.slug}-table-{thread_id}.json"'
    return Response(
        body,
        content_type="application/json",
        headers={"Content-Disposition": disposition, "Cache-Control": "private, no-store"},
    )


# -- playing ---------------------------------------------------------------------------------


@action(bp, TABLE + "/new", role="referee", creates=True, page="cards.table")
def new(act: Act, slug: str, thread_id: int):
    campaign = _campaign(slug)
    cards.open_table(
        session=act.session,
        campaign=campaign,
        thread_id=thread_id,
        user=act.account,
        settings=parsed(TableIn, {"settings": _settings(campaign)}).settings,
        mail=act.mail,
        now=act.now,
    )
    return act.done(url_for_table(slug, thread_id), "The card table is open.")


def _settings(campaign: Campaign) -> dict[str, Any]:
    form = request.form
    if campaign.ruleset == "sex-and-violence":
        return {"gm_sees_hands": form.get("gm_sees_hands") == "yes"}
    tie_break = form.get("conclusion_tie_break") or "highest_card"
    return {"conclusion_tie_break": tie_break}


@action(bp, TABLE + "/<action>", role="member", creates=True, page="cards.table")
def act(act: Act, slug: str, thread_id: int, action: str):
    typed = {"action": action, "version": act.text("version").strip()}
    move = parsed(MoveIn, {**typed, "params": form_params(act.form)})
    cards.move(
        session=act.session,
        campaign=_campaign(slug),
        thread_id=thread_id,
        user=act.account,
        action=move.action,
        params=move.params,
        expected_version=move.version,
        mail=act.mail,
        now=act.now,
    )
    return act.done(url_for_table(slug, thread_id) + "#log-end")


def form_params(form) -> dict[str, Any]:
    """A move's form as the plain parameters the service stores and replays.

    List fields (checkboxes, ordered selects) become lists, yes/no fields booleans, the
    three turn counts a list of numbers; a bid's per-card selects ("bid:7H" → "bid" or an
    opponent) become a list of cards, or a split between opponents.
    """
    params: dict[str, Any] = {}
    split: dict[str, list[str]] = {}
    for key in form:
        if key in SKIPPED or key.startswith("count_") or key.endswith("_shown"):
            continue
        if key.startswith("bid:"):
            where = form.get(key, "").strip()
            if where:
                split.setdefault(where, []).append(key[4:])
        elif key in LIST_FIELDS:
            params[key] = [v for v in form.getlist(key) if v.strip()]
        elif key in FLAG_FIELDS:
            params[key] = {"yes": True, "no": False}.get(form.get(key, ""))
        else:
            params[key] = form.get(key, "")
    for key in ("announce", "redraw"):
        if form.get(f"{key}_shown") and key not in params:
            params[key] = [] if key == "announce" else False
    if split:
        if set(split) == {"bid"}:
            params["cards"] = split["bid"]
        else:
            params["split"] = split
    if any(key.startswith("count_") for key in form):
        params["counts"] = [_count(form.get(f"count_{n}")) for n in (1, 2, 3)]
    return params


def _count(value: str | None) -> int:
    value = (value or "").strip() or "0"
    if not value.isdigit():
        raise UserError("give each turn's bonus cards as a whole number, 0 or more")
    return int(value)


def url_for_table(slug: str, thread_id: int) -> str:
    return flask_url_for("cards.table", slug=slug, thread_id=thread_id)
