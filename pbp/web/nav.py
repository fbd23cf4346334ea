"""One navigation bar for every campaign page, marking where the reader is.

Noteworthy: Planet · Turns · Characters · History · Referee. Forum games: Scenes · Sheets ·
Card tables (the card rulesets only) · GM. Both end with Email, the member's own email
preferences for the campaign. A section a reader may not open is left out (History and
Email are for members; Referee and GM for the referee), so the bar never offers a 403.
"""

from __future__ import annotations

from dataclasses import dataclass

from flask import Flask, request, url_for

from pbp.models import Campaign
from pbp.services.campaigns import RULESET_NAMES
from pbp.services.cards.tables import CARD_RULESETS
from pbp.web.access import current_membership


@dataclass(frozen=True)
class NavItem:
    label: str
    url: str
    current: bool


# Which section each page belongs to, by endpoint (or blueprint, for whole blueprints).
SECTIONS = {
    "public.campaign": "home",
    "forum.index": "home",
    "forum.fairness": "home",
    "forum.thread": "home",
    "forum.new_thread": "home",
    "forum.edit": "home",
    "forum.history": "home",
    "forum.roll": "home",
    "turns": "turns",
    "characters": "characters",
    # Writing is the planet's own action (its "Write an entry" link): issue #27 item 10.
    "blog.write": "home",
    "blog": "characters",
    "player": "characters",
    "history": "history",
    "book": "home",  # the campaign as a book, linked from the planet
    "forum.sheet_list": "sheets",
    "forum.sheet": "sheets",
    "forum.sheet_edit": "sheets",
    "cards": "tables",
    "tables": "tables",
    "referee": "referee",
    "auth.create_invite": "referee",
    "mail.preferences": "mail",
}


def current_section() -> str | None:
    endpoint = request.endpoint or ""
    return SECTIONS.get(endpoint) or SECTIONS.get(endpoint.partition(".")[0])


def campaign_nav(campaign: Campaign) -> list[NavItem]:
    member = current_membership(campaign)
    is_referee = member is not None and member.role == "referee"
    slug = campaign.slug
    if campaign.ruleset == "noteworthy":
        sections = [
            ("home", "Planet", url_for("public.campaign", slug=slug)),
            ("turns", "Turns", url_for("turns.index", slug=slug)),
            ("characters", "Characters", url_for("characters.index", slug=slug)),
        ]
        if member is not None:
            sections.append(("history", "History", url_for("history.page", slug=slug)))
        if is_referee:
            sections.append(("referee", "Referee", url_for("referee.board", slug=slug)))
    else:
        sections = [
            ("home", "Scenes", url_for("public.campaign", slug=slug)),
            ("sheets", "Sheets", url_for("forum.sheet_list", slug=slug)),
        ]
        if campaign.ruleset in CARD_RULESETS:
            sections.append(("tables", "Card tables", url_for("tables.index", slug=slug)))
        if is_referee:
            sections.append(("referee", "GM", url_for("referee.board", slug=slug)))
    if member is not None:
        sections.append(("mail", "Email", url_for("mail.preferences", slug=slug)))
    here = current_section()
    return [NavItem(label, url, key == here) for key, label, url in sections]


def ruleset_name(key: str) -> str:
    """ "Sex & Violence", not the stored key "sex-and-violence"."""
    return RULESET_NAMES.get(key, (key,))[0]


def init_app(app: Flask) -> None:
    app.jinja_env.globals["campaign_nav"] = campaign_nav
    app.jinja_env.filters["ruleset_name"] = ruleset_name
