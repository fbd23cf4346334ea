"""The one Jinja environment for what pbp renders outside a request: mail and the archive.

Pages use Flask's environment (it adds `url_for`, the request and the session); mail is
queued by services and the scheduler, and the archive is written into a zip, with no
request at all. Both read `templates/`, and both want the same guarantees: a misspelt
variable is an error, not an empty string (StrictUndefined), and HTML is escaped while
the plain-text parts of a mail are not (no "&amp;" in someone's inbox).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from functools import cache
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import jinja2
from markupsafe import Markup, escape

from pbp import ROOT

TEMPLATES = ROOT / "templates"
_CONTROL_CHARS = re.compile(r"[\x00-\x1f\x7f\u2028\u2029\x85]+")


def one_line(value: object) -> str:
    """Line breaks and control characters become single spaces: a name that reaches a
    mail header or the first line of a mail cannot start a new one."""
    return " ".join(_CONTROL_CHARS.sub(" ", str(value or "")).split())


def web_url(url: str | None) -> str | None:
    """`url` if it is an absolute http(s) address, else None: links from feeds reach mail
    and the archive only when they are web links (no javascript:, no local paths)."""
    return url if url and urlsplit(url).scheme in ("http", "https") else None


def nl2br(text: str | None) -> Markup:
    """Paragraphs and line breaks of plain text, escaped, as HTML."""
    paragraphs = re.split(r"\n\s*\n", (text or "").replace("\r\n", "\n").strip())
    html = (escape(p).replace("\n", Markup("<br>\n")) for p in paragraphs if p.strip())
    return Markup("\n").join(Markup("<p>{}</p>").format(p) for p in html)


def paragraphs(text: str | None) -> list[str]:
    """Plain text split on blank lines (the template escapes each paragraph)."""
    return [p.strip() for p in (text or "").replace("\r\n", "\n").split("\n\n") if p.strip()]


def when(moment: datetime | None) -> str:
    return moment.strftime("%Y-%m-%d %H:%M UTC") if moment else ""


def zoned(moment: datetime | None, zone: str = "UTC") -> str:
    """`moment` in `zone`, saying which ("2026-12-01 19:00 CET"); UTC for an unknown zone.
    Pages use it too (pbp.web.times)."""
    if moment is None:
        return ""
    local = in_zone(moment, zone)  # stored as naive UTC when it has no zone
    return f"{local:%Y-%m-%d %H:%M} {local.tzname() or zone}"


def in_zone(moment: datetime, zone: str) -> datetime:
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    try:
        return moment.astimezone(ZoneInfo(zone or "UTC"))
    except (ZoneInfoNotFoundError, ValueError):
        return moment.astimezone(UTC)


@cache
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        # .html (mail's HTML part, the archive's pages) escapes; .txt (mail's text part)
        # must not.
        autoescape=jinja2.select_autoescape(enabled_extensions=("html", "xml"), default=False),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["nl2br"] = nl2br
    env.filters["web_url"] = lambda url: web_url(url) or ""
    env.filters["oneline"] = one_line
    env.filters["when"] = when
    env.filters["zoned"] = zoned
    env.filters["paragraphs"] = paragraphs
    return env


def render(template: str, /, **context) -> str:
    """`templates/<template>` rendered with `context`."""
    return environment().get_template(template).render(**context)
