"""One navigation bar for every campaign page, marking where the reader is.

Noteworthy: Planet · Turns · Characters · History · Referee. Forum games: Scenes · Sheets ·
Card tables (the card rulesets only) · GM. Both end with Search (issue #33 item 2), Icons
(a player's characters' icons, issue #33 item 1) and Email, the member's own email
preferences for the campaign. A section a reader may not open is left out (History and
Email are for members; Icons for players; Referee and GM for the referee), so the bar never
offers a 403.
"""

from __future__ import annotations

from dataclasses import dataclass

from flask import Flask, request, url_for

from pbp.models import Campaign
from pbp.request_db import get_session
from pbp.services import unread
from pbp.services.campaigns import RULESET_NAMES
from pbp.services.cards.tables import CARD_RULESETS
from pbp.web.access import current_account, current_membership


@dataclass(frozen=True)
class NavItem:
    label: str
    url: str
    current: bool
    # "3 new" on the campaign's home for a member (pbp.services.unread), else "".
    news: str = ""


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
    "search": "search",
    "icons": "icons",
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
    sections.append(("search", "Search", url_for("search.page", slug=slug)))
    if member is not None and member.role == "player":
        sections.append(("icons", "Icons", url_for("icons.upload", slug=slug)))
    if member is not None:
        sections.append(("mail", "Notifications", url_for("mail.preferences", slug=slug)))
    here = current_section()
    news = _news(campaign, member.role) if member is not None else ""
    return [
        NavItem(label, url, key == here, news if key == "home" else "")
        for key, label, url in sections
    ]


def _news(campaign: Campaign, role: str) -> str:
    """What is new to the member in the campaign, in words: one query."""
    user = current_account()
    if user is None:
        return ""
    counts = unread.unread_counts(session=get_session(), user=user, campaigns=[(campaign, role)])
    return unread.shown(counts.get(campaign.id, 0))


def ruleset_name(key: str) -> str:
    """ "Sex & Violence", not the stored key "sex-and-violence"."""
    return RULESET_NAMES.get(key, (key,))[0]


def init_app(app: Flask) -> None:
    app.jinja_env.globals["campaign_nav"] = campaign_nav
    app.jinja_env.globals["campaign_member"] = current_membership
    app.jinja_env.filters["ruleset_name"] = ruleset_name
