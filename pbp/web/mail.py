"""Email preferences (blueprint `mail`): a member's preferences page, and one-click
unsubscribe -- a confirmation page and the POST that RFC 8058 mail clients send to the
List-Unsubscribe URL.

    GET/POST /c/<slug>/me/mail        which kinds of email a member gets from a campaign
    GET/POST /mail/unsubscribe/<token>

The signed token in the URL is the whole authorisation -- the person may not be logged
in, and an RFC 8058 POST carries no cookies -- so these views are exempt from CSRF: a
forged POST would need the token, and the worst it does is change one email preference.
"""

from __future__ import annotations

from flask import Blueprint, current_app, flash, redirect, render_template, request, url_for

from pbp.db import get_session
from pbp.services import campaigns
from pbp.services.mail import preferences as mail_preferences
from pbp.web.access import login_required, require_member

bp = Blueprint("mail", __name__)

# The token is in the URL: keep it out of Referer headers and caches.
TOKEN_PAGE_HEADERS = {"Referrer-Policy": "no-referrer", "Cache-Control": "no-store"}


@bp.route("/c/<slug>/me/mail", methods=["GET", "POST"])
@login_required
def preferences(slug: str):
    """Every kind of email a campaign sends that its member can switch off."""
    session = get_session()
    campaign = campaigns.get_campaign(session=session, slug=slug)
    membership = require_member(campaign)
    if request.method == "POST":
        mail_preferences.save_preferences(
            session=session, membership=membership, chosen=request.form.getlist("on")
        )
        session.commit()
        flash("Email preferences saved.", "ok")
        return redirect(url_for("mail.preferences", slug=slug))
    return render_template(
        "mail/pages/preferences.html",
        campaign=campaign,
        chosen=mail_preferences.preferences(membership),
        labels=mail_preferences.offered(campaign),
    )


@bp.get("/mail/unsubscribe/<token>")
def unsubscribe_confirm(token: str):
    """A GET changes nothing: link scanners and previews open every link in a mail."""
    sub = mail_preferences.read_unsubscribe(
        session=get_session(), secret_key=current_app.config["SECRET_KEY"], token=token
    )
    page = render_template("mail/pages/unsubscribe.html", sub=sub, token=token, done=False)
    return page, 200, TOKEN_PAGE_HEADERS


@bp.post("/mail/unsubscribe/<token>")
def unsubscribe(token: str):
    """The form's button, or a client's one-click `List-Unsubscribe=One-Click` POST."""
    session = get_session()
    sub = mail_preferences.apply_unsubscribe(
        session=session,
        secret_key=current_app.config["SECRET_KEY"],
        token=token,
        subscribe=request.form.get("action") == "subscribe",
    )
    session.commit()
    page = render_template("mail/pages/unsubscribe.html", sub=sub, token=token, done=True)
    return page, 200, TOKEN_PAGE_HEADERS


def _exempt_from_csrf() -> None:
    try:
        from pbp.web.auth import csrf
    except ImportError:  # no CSRF protection installed, nothing to exempt from
        return
    csrf.exempt(unsubscribe)


_exempt_from_csrf()
