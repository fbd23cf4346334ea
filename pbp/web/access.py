"""Who may do what: the helpers every blueprint uses.

    @bp.get("/c/<slug>/referee")
    @login_required
    def dashboard(slug):
        campaign = campaigns.get_campaign(session=get_session(), slug=slug)
        require_referee(campaign)          # Forbidden (403 page) unless referee here

Roles are per campaign (`Membership`): one person can referee one game and play in
another. `current_account()` is the logged-in `User` row, or None.
"""

from __future__ import annotations

import functools
from typing import cast
from urllib.parse import urlsplit

from flask import current_app, flash, g, redirect, request, url_for
from flask_login import UserMixin, current_user

from pbp.errors import Forbidden
from pbp.models import Campaign, Membership, User
from pbp.request_db import get_session
from pbp.services import campaigns
from pbp.services.accounts import logins as accounts
from pbp.services.noteworthy import play


class LoginUser(UserMixin):
    """What Flask-Login keeps as `current_user`: the `User` row plus Flask-Login's flags.

    The row is `.user`; `id`, `email` and `display_name` are repeated for templates.
    `get_id` includes a fingerprint of the password hash, so a password change ends
    every other session (see `accounts.session_id`).
    """

    def __init__(self, user: User):
        self.user = user

    @property
    def id(self) -> int | None:
        return self.user.id

    @property
    def email(self) -> str:
        return self.user.email

    @property
    def display_name(self) -> str:
        return self.user.display_name

    def get_id(self) -> str:
        return accounts.session_id(self.user)


def current_account() -> User | None:
    """The logged-in user's row, or None for a visitor."""
    if current_user.is_authenticated:
        return current_user.user
    return None


def app_secret() -> str:
    """The app's SECRET_KEY: text, as pbp.config reads it (Flask types it str | bytes | None)."""
    return cast(str, current_app.secret_key)


def signed_in_account() -> User:
    """The logged-in user's row, in a view whose access check has already turned visitors away
    (`login_required`, or a membership check)."""
    user = current_account()
    if user is None:
        raise Forbidden("log in first")
    return user


def current_membership(campaign: Campaign) -> Membership | None:
    """The logged-in user's membership in `campaign` (cached for the request)."""
    g.pbp_campaign = campaign  # an error page offers the way back to it
    user = current_account()
    if user is None:
        return None
    cache = g.setdefault("pbp_memberships", {})
    if campaign.id not in cache:
        cache[campaign.id] = campaigns.membership(
            session=get_session(), campaign=campaign, user=user
        )
    return cache[campaign.id]


def require_member(campaign: Campaign) -> Membership:
    """The membership of the logged-in user in `campaign`, whatever the role."""
    return _required(campaign, "member", "a member")


def require_referee(campaign: Campaign) -> Membership:
    return _required(campaign, "referee", "the referee")


def require_player(campaign: Campaign) -> Membership:
    return _required(campaign, "player", "a player")


def _required(campaign: Campaign, role: str, who: str) -> Membership:
    """The page's check before anything is read, with the request's cached membership (the
    navigation bar reads it too) and the services' role test (campaigns.allowed), which
    every action's service function runs again."""
    member = current_membership(campaign)
    if member is None or not campaigns.allowed(member, role):
        raise Forbidden(_refusal(campaign, who))
    return member


def _refusal(campaign: Campaign, who: str) -> str:
    if current_account() is None:
        return f"only {who} of {campaign.name} can do this: log in first"
    return f"only {who} of {campaign.name} can do this, and you are not"


def login_required(view):
    """Send a visitor to the login page, coming back here afterwards (`next=`)."""

    @functools.wraps(view)
    def wrapped(*args, **kwargs):
        if current_account() is None:
            return to_login()
        return view(*args, **kwargs)

    return wrapped


def to_login():
    """The login page, coming back to this one (a GET) afterwards."""
    back = request.full_path.rstrip("?") if request.method == "GET" else None
    flash("Log in to open that page: it is for the people playing.", "info")
    return redirect(url_for("auth.login", next=back))


def safe_next(target: str | None, default: str = "/") -> str:
    """`target` if it is a path on this site, else `default` (no open redirects)."""
    if not target or not target.startswith("/") or target.startswith("//"):
        return default
    if "\\" in target or any(ord(ch) < 32 for ch in target):
        return default
    parts = urlsplit(target)
    if parts.scheme or parts.netloc:
        return default
    return target


def my_character(session, campaign):
    """The logged-in player's character in `campaign`; 403 for anyone else."""
    require_player(campaign)
    character = play.character_of(session=session, campaign=campaign, user=current_account())
    if character is None:
        raise Forbidden("you have no character in this campaign yet")
    return character


def visiting(campaign: Campaign) -> None:
    """Remember the campaign of this request: an error page offers the way back to it (the
    action's own service function decides who may act)."""
    g.pbp_campaign = campaign
