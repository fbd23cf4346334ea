"""Notification preferences (blueprint `mail`): a member's page, titled "Notifications"
since issue #31 (email and push, per kind), and one-click unsubscribe -- a confirmation
page and the POST that RFC 8058 mail clients send to the List-Unsubscribe URL.

    GET/POST /c/<slug>/me/mail        which kinds of email a member gets from a campaign
    POST /c/<slug>/me/mail/replies/revoke   stop every reply address of the member's mails
    GET/POST /mail/unsubscribe/<token>

The signed token in the URL is the whole authorisation -- the person may not be logged
in, and an RFC 8058 POST carries no cookies -- so these views are exempt from CSRF: a
forged POST would need the token, and the worst it does is change one email preference.
"""

from __future__ import annotations

from flask import Blueprint, current_app, render_template, request, url_for

from pbp.request_db import get_session
from pbp.services import campaigns
from pbp.services.mail import preferences as mail_preferences
from pbp.services.mail import push, reply_tokens
from pbp.web import channels
from pbp.web.access import login_required, require_member
from pbp.web.actions import Act, action, refused

bp = Blueprint("mail", __name__)

# The token is in the URL: keep it out of Referer headers and caches.
TOKEN_PAGE_HEADERS = {"Referrer-Policy": "no-referrer", "Cache-Control": "no-store"}


@login_required
def _preferences_page(slug: str):
    """Every kind of email a campaign sends that its member can switch off; a refused
    form's boxes as they were ticked."""
    session = get_session()
    campaign = campaigns.get_campaign(session=session, slug=slug)
    membership = require_member(campaign)
    chosen = mail_preferences.preferences(membership)
    pushed = mail_preferences.push_preferences(membership)
    if refused("mail.preferences"):
        ticked = request.form.getlist("on")
        chosen = {key: key in ticked for key in chosen}
        pushed = {key: f"push:{key}" in ticked for key in pushed}
    return render_template(
        "mail/pages/preferences.html",
        campaign=campaign,
        chosen=chosen,
        pushed=pushed,
        labels=mail_preferences.offered(campaign),
        replies=bool(current_app.config.get("PBP_REPLY_DOMAIN")),
        push_key=channels.push_key(),
        devices=len(push.devices(session=session, user_id=membership.user_id)),
    )


@action(bp, "/c/<slug>/me/mail", role="member", page=_preferences_page, get=True)
def preferences(act: Act, slug: str):
    assert act.member is not None  # role "member"
    mail_preferences.save_preferences(
        session=act.session, membership=act.member, chosen=act.form.getlist("on")
    )
    return act.done(url_for("mail.preferences", slug=slug), "Notification preferences saved.")


@action(bp, "/c/<slug>/me/mail/replies/revoke", role="member", page=_preferences_page)
def revoke_replies(act: Act, slug: str):
    """Issue #31 item 3: the member's reply addresses stop working at once (a mail was
    forwarded, a mailbox lost); the next mails carry new ones."""
    assert act.member is not None  # role "member"
    count = reply_tokens.revoke_all(session=act.session, membership=act.member, now=act.now)
    message = (
        f"{count} reply address{'es' if count != 1 else ''} revoked: replies to earlier mails "
        "are no longer posted. New mails carry new ones."
    )
    return act.done(url_for("mail.preferences", slug=slug), message)


@bp.get("/mail/unsubscribe/<token>")
def unsubscribe_confirm(token: str):
    """A GET changes nothing: link scanners and previews open every link in a mail."""
    sub = mail_preferences.read_unsubscribe(
        session=get_session(), secret_key=current_app.config["SECRET_KEY"], token=token
    )
    page = render_template("mail/pages/unsubscribe.html", sub=sub, token=token, done=False)
    return page, 200, TOKEN_PAGE_HEADERS


@action(bp, "/mail/unsubscribe/<token>", role="anyone")
def unsubscribe(act: Act, token: str):
    """The form's button, or a client's one-click `List-Unsubscribe=One-Click` POST: role
    "anyone", since the link's signed token is what authorises it. A damaged token is a
    400 page (no form to show it beside)."""
    sub = mail_preferences.apply_unsubscribe(
        session=act.session,
        secret_key=current_app.config["SECRET_KEY"],
        token=token,
        subscribe=act.text("action") == "subscribe",
    )
    page = render_template("mail/pages/unsubscribe.html", sub=sub, token=token, done=True)
    return page, 200, TOKEN_PAGE_HEADERS


def _exempt_from_csrf() -> None:
    try:
        from pbp.web.auth import csrf
    except ImportError:  # no CSRF protection installed, nothing to exempt from
        return
    csrf.exempt(unsubscribe)


_exempt_from_csrf()
