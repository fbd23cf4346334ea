"""Rate limits (Flask-Limiter) and the client address they are keyed on, shared by the
pages (pbp.web) and the API (pbp.api), which may not import each other.

- The client's address: with `PBP_TRUSTED_PROXIES = n`, werkzeug's ProxyFix takes it from
  the last n entries of `X-Forwarded-For` (and the scheme and host from `X-Forwarded-Proto`
  / `-Host`); with 0, the default, those headers are ignored, so nobody can pick their
  own address by sending one.
- Counters live in `RATELIMIT_STORAGE_URI`: `memory://` counts per process, so behind
  several web workers set `redis://` or `memcached://` for the limits to hold across them.
- Logins (pbp.web.auth) are limited per address AND account, so one attacker behind a
  shared proxy slows down only the accounts they try, not everybody behind that proxy.
  Guesses at one account spread over many addresses are slowed down by the database
  instead (pbp.services.accounts.backoff), shared by every process whatever the storage.
- Content (entries, notes, forum posts, invites, the blog form; page and API alike) is
  limited per account: `check_content(user)` raises `TooManyRequests`, a 429 page or
  problem+json.
- Saved drafts (issue #29 item 5): the write forms save one every 10 s while their text
  changes, so they have a budget of their own per account (`check_drafts`), generous
  enough for a few tabs at once and far below what would cost the database anything.
- The blog form's feed discovery (issue #28 item 5): at most one in flight per account
  (`one_discovery`), its counter in the same storage, so it holds across workers wherever
  the limits do.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager

from flask import Flask, current_app, request
from flask_limiter import Limiter
from flask_limiter.util import get_remote_address
from limits import parse_many
from werkzeug.middleware.proxy_fix import ProxyFix

from pbp.errors import Conflict, UserError
from pbp.models import User

CONTENT_LIMIT = "20 per minute; 200 per hour"
CONTENT_ENDPOINTS = frozenset(
    {
        "blog.write",
        "blog.edit",
        "blog.add_note",
        "forum.new_thread",
        "forum.reply",
        "forum.edit",
        "auth.create_invite",
        "player.blog",
        "icons.upload",  # Pillow decodes each picture (issue #33 item 1)
    }
)
# GETs that anyone may send and that each cost a database read: a hub's WebSub
# verification of intent (pbp.web.websub), a calendar app's read of a secret calendar
# address (pbp.web.calendar).
LIMITED_READS = frozenset({"websub.verify", "calendar.feed"})
CONTENT_OPERATIONS = frozenset(
    {
        "write_entry",
        "edit_entry",
        "add_note",
        "create_thread",
        "reply",
        "edit_post",
        "create_invite",
        "choose_blog",
        "upload_icon",
    }
)


# A tab saves at most 6 a minute (every 10 s, and only when its text changed).
DRAFT_LIMIT = "30 per minute; 1000 per hour"
DRAFT_ENDPOINTS = frozenset({"drafts.save"})
DRAFT_OPERATIONS = frozenset({"save_draft"})


class TooManyRequests(UserError):
    status = 429


def init_app(app: Flask) -> Limiter:
    """Trust the configured proxies, make the app's limiter, guard the content POSTs."""
    proxies = int(app.config.get("PBP_TRUSTED_PROXIES") or 0)
    if proxies:
        # Flask's documented way to wrap the WSGI app; its stubs declare wsgi_app a method.
        app.wsgi_app = ProxyFix(  # type: ignore[method-assign]
            app.wsgi_app, x_for=proxies, x_proto=proxies, x_host=proxies
        )
    # One limiter per app, so test apps never share counters or settings.
    limiter = Limiter(
        get_remote_address,
        app=app,
        storage_uri=app.config.get("RATELIMIT_STORAGE_URI") or "memory://",
        # A moving window: no double burst across a window's edge (fixed windows allow it).
        strategy="moving-window",
    )
    # Limits are on POSTs, and on the reads in LIMITED_READS; other reads skip the
    # limiter's per-request bookkeeping.
    limiter.request_filter(
        lambda: (
            request.method in ("GET", "HEAD", "OPTIONS") and request.endpoint not in LIMITED_READS
        )
    )
    app.extensions["pbp_limiter"] = limiter
    app.before_request(_limit_content_pages)
    return limiter


def login_key() -> str:
    """The client's address and the account it tries (the form's email, normalised)."""
    email = (request.form.get("email") or "").strip().lower()[:320]
    return f"{get_remote_address()}|{email}"


def check_content(user: User | None) -> None:
    """Count one content POST against `user`'s limit; refuse once it is used up."""
    if user is None:
        return
    limiter: Limiter = current_app.extensions["pbp_limiter"]
    text = current_app.config.get("PBP_CONTENT_LIMIT", CONTENT_LIMIT)
    # hit() every window, so a refused burst still counts against the longer ones.
    allowed = [limiter.limiter.hit(item, "pbp-content", str(user.id)) for item in parse_many(text)]
    if not all(allowed):
        raise TooManyRequests(
            "you are posting faster than pbp allows for one account: wait a minute, "
            "then go back and send it again (the form still holds your text)"
        )


def check_drafts(user: User | None) -> None:
    """Count one saved draft against `user`'s draft budget; refuse once it is used up."""
    if user is None:
        return
    limiter: Limiter = current_app.extensions["pbp_limiter"]
    text = current_app.config.get("PBP_DRAFT_LIMIT", DRAFT_LIMIT)
    allowed = [limiter.limiter.hit(item, "pbp-drafts", str(user.id)) for item in parse_many(text)]
    if not all(allowed):
        raise TooManyRequests(
            "drafts are being saved faster than pbp allows for one account (from many tabs?): "
            "your text is still in the form; it is saved again in a minute"
        )


@contextmanager
def one_discovery(user: User | None) -> Iterator[None]:
    """Issue #28 item 5: "At most one discovery in flight per account." The blog form finds
    and reads a feed before it answers (up to PBP_DISCOVERY_SECONDS); eight of them sent at
    once held eight web threads. A second one of the same account, from another tab or a
    script, is refused at once (a Conflict: the page shows it beside the form).

    The slot is a counter in the rate limits' storage, freed when the discovery ends; it
    also expires a little after the deadline, should the process die holding it."""
    if user is None:
        yield
        return
    limiter: Limiter = current_app.extensions["pbp_limiter"]
    seconds = float(current_app.config.get("PBP_DISCOVERY_SECONDS", 10))
    key = f"pbp-discovery/{user.id}"
    if limiter.storage.incr(key, math.ceil(seconds) + 5) > 1:
        raise Conflict(
            "pbp is already looking for your blog's feed at the address you sent before "
            f"(from another tab?). Wait for that answer, at most {seconds:g} s, then send "
            "this one again"
        )
    try:
        yield
    finally:
        limiter.storage.clear(key)


def _limit_content_pages() -> None:
    if request.method != "POST":
        return
    if request.endpoint in CONTENT_ENDPOINTS:
        check = check_content
    elif request.endpoint in DRAFT_ENDPOINTS:
        check = check_drafts
    else:
        return
    from flask_login import current_user

    check(current_user.user if current_user.is_authenticated else None)
