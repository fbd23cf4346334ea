"""The sign-up pages: /signup, the confirmation link, and "send me a new link".

With PBP_SIGNUP=invite (the default) /signup says how to get an account and the other
two pages are 404: accounts come with a referee's invitation or `pbp user create`.
"""

from __future__ import annotations

from datetime import UTC, datetime

from flask import (
    Blueprint,
    Flask,
    abort,
    current_app,
    flash,
    redirect,
    render_template,
    session,
    url_for,
)
from flask_login import login_user

from pbp.db import get_session
from pbp.errors import UserError
from pbp.services.accounts import signup
from pbp.services.mail import send as mail_send
from pbp.web import forms
from pbp.web.access import LoginUser, app_secret, current_account

bp = Blueprint("signup", __name__)

# Each POST can mail someone, or hash a password: as strict as the password-reset form
# (pbp.web.auth).
SIGNUP_LIMIT = "5 per minute; 30 per hour"
# The confirmation page carries its token in the address: never sent on, never cached.
TOKEN_PAGE_HEADERS = {"Referrer-Policy": "no-referrer", "Cache-Control": "no-store"}


def init_app(app: Flask) -> None:
    """Register the pages, limited by the limiter pbp.web.auth made (call after it)."""
    app.register_blueprint(bp)
    limiter = app.extensions["pbp_limiter"]  # made by pbp.rate_limits
    limit = limiter.limit(app.config.get("PBP_SIGNUP_LIMIT", SIGNUP_LIMIT), methods=["POST"])
    for endpoint in ("signup.signup_page", "signup.resend", "signup.confirm"):
        app.view_functions[endpoint] = limit(app.view_functions[endpoint])


def _now() -> datetime:
    clock = current_app.config.get("PBP_CLOCK")
    return clock() if clock else datetime.now(UTC)


def is_open() -> bool:
    return current_app.config.get("PBP_SIGNUP", "invite") == "open"


def _links() -> dict:
    return {
        "secret_key": current_app.secret_key,
        "base_url": current_app.config["PBP_BASE_URL"],
        "mail_from": current_app.config["MAIL_FROM"],
        "sender": mail_send.sender_for_app(current_app),  # the person waits for the mail
    }


@bp.route("/signup", methods=["GET", "POST"])
def signup_page():
    if not is_open():
        return render_template("auth/signup_closed.html"), 404
    form = forms.SignupForm()
    status = 200
    if form.validate_on_submit():
        db = get_session()
        try:
            email = signup.sign_up(
                session=db,
                email=form.email.data,
                display_name=form.display_name.data,
                now=_now(),
                **_links(),
            )
        except UserError as exc:
            db.rollback()
            form.form_errors.append(str(exc))
            status = exc.status
        else:
            db.commit()
            # The same page whether or not the address had an account (issue #28 item 6).
            return render_template("auth/signup_sent.html", email=email)
    elif form.is_submitted():
        status = 422
    page = render_template("auth/signup.html", form=form, account=current_account())
    return page, status


@bp.route("/signup/confirm/<token>", methods=["GET", "POST"])
def confirm(token: str):
    """The mailed link: the owner chooses the password here, once (issue #28 items 1, 7).
    Opening the link changes nothing (a mail scanner may open it)."""
    if not is_open():
        abort(404)
    db = get_session()
    pending = signup.check_confirmation(
        session=db, token=token, secret_key=app_secret(), now=_now()
    )
    form = forms.ConfirmSignupForm()
    status = 200
    if form.validate_on_submit():
        try:
            user = signup.confirm_account(
                session=db,
                token=token,
                secret_key=app_secret(),
                password=form.password.data or "",  # required by the form
                now=_now(),
            )
        except UserError as exc:
            db.rollback()
            form.form_errors.append(str(exc))
            status = exc.status
        else:
            db.commit()
            session.clear()  # a fresh session for the new identity
            login_user(LoginUser(user))
            welcome = "Your address is confirmed: welcome. Start a campaign, or open an invitation."
            flash(welcome, "info")
            return redirect(url_for("public.index"))
    elif form.is_submitted():
        status = 422
    page = render_template("auth/signup_confirm.html", form=form, pending=pending)
    return page, status, TOKEN_PAGE_HEADERS


@bp.route("/signup/resend", methods=["GET", "POST"])
def resend():
    if not is_open():
        abort(404)
    form = forms.ResendConfirmationForm()
    if not form.validate_on_submit():
        status = 422 if form.is_submitted() else 200
        return render_template("auth/signup_resend.html", form=form), status
    db = get_session()
    signup.resend_confirmation(session=db, email=form.email.data, now=_now(), **_links())
    db.commit()
    return render_template("auth/signup_sent.html", email=form.email.data.strip(), again=True)
