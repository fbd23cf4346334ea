"""Logging in and out, invitations and password resets (blueprint `auth`).

`init_app(app)` also sets up what every page relies on: Flask-Login (the session's
user), Flask-WTF's CSRF protection on every POST, flask-limiter on the login and reset
POSTs (pbp.rate_limits), and the session cookie
flags: HttpOnly, SameSite=Lax, and Secure when PBP_BASE_URL is https.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from flask import (
    Blueprint,
    Flask,
    abort,
    current_app,
    flash,
    redirect,
    render_template,
    request,
    session,
    url_for,
)
from flask_limiter import RateLimitExceeded
from flask_login import LoginManager, login_user, logout_user
from flask_wtf.csrf import CSRFError, CSRFProtect

from pbp import limits, rate_limits
from pbp.db import get_session
from pbp.errors import REFUSALS, UserError
from pbp.inputs.invites import InviteIn
from pbp.services import campaigns
from pbp.services.accounts import backoff, signup
from pbp.services.accounts import logins as accounts
from pbp.services.mail import send as mail_send
from pbp.services.mail.settings import MailSettings
from pbp.web import forms
from pbp.web.access import (
    LoginUser,
    app_secret,
    current_account,
    login_required,
    require_referee,
    safe_next,
    signed_in_account,
)
from pbp.web.forms import parsed
from pbp.web.refusals import REFUSED_FORM, shown_with_form

bp = Blueprint("auth", __name__)
csrf = CSRFProtect()  # other blueprints may `csrf.exempt(view)` a token-authenticated API
login_manager = LoginManager()
login_manager.login_view = "auth.login"
login_manager.login_message = "Log in to see that page."
login_manager.login_message_category = "info"

LOGIN_LIMIT = "10 per minute; 30 per hour; 100 per day"  # per address and account
LOGIN_ADDRESS_LIMIT = "60 per minute; 600 per hour"  # per address, over all accounts
RESET_LIMIT = "5 per minute; 30 per hour"
DEVICE_COOKIE = "pbp_device"
TOKEN_PAGE_HEADERS = {"Referrer-Policy": "no-referrer", "Cache-Control": "no-store"}


def init_app(app: Flask) -> None:
    app.config.update(cookie_settings(app.config.get("PBP_BASE_URL", "")))
    # A play-by-post entry can take an evening to write: the CSRF token lives as long as
    # the session instead of Flask-WTF's default hour, so a slow post is not refused.
    app.config.setdefault("WTF_CSRF_TIME_LIMIT", None)
    csrf.init_app(app)
    login_manager.init_app(app)
    app.register_blueprint(bp)
    _limit_views(app)
    app.register_error_handler(CSRFError, _csrf_error)
    app.register_error_handler(RateLimitExceeded, _rate_limited)


def cookie_settings(base_url: str) -> dict:
    secure = base_url.lower().startswith("https://")
    return {
        "SESSION_COOKIE_HTTPONLY": True,
        "SESSION_COOKIE_SAMESITE": "Lax",
        "SESSION_COOKIE_SECURE": secure,
        "REMEMBER_COOKIE_HTTPONLY": True,
        "REMEMBER_COOKIE_SAMESITE": "Lax",
        "REMEMBER_COOKIE_SECURE": secure,
    }


def _limit_views(app: Flask) -> None:
    """Only POSTs count, and a login that succeeds (a redirect) is not deducted.

    A login is limited per address and account (`rate_limits.login_key`): its windows
    step up (a minute, an hour, a day), so an account's guesses slow down the longer
    they go on, while other people behind the same address log in as usual. A looser
    limit per address alone bounds guesses spread over many accounts.
    """
    limiter = rate_limits.init_app(app)
    reset_limit = app.config.get("PBP_RESET_LIMIT", RESET_LIMIT)
    login_limits = [
        limiter.limit(
            app.config.get("PBP_LOGIN_LIMIT", LOGIN_LIMIT),
            key_func=rate_limits.login_key,
            methods=["POST"],
            deduct_when=_failed,
        ),
        limiter.limit(
            app.config.get("PBP_LOGIN_ADDRESS_LIMIT", LOGIN_ADDRESS_LIMIT),
            methods=["POST"],
            deduct_when=_failed,
            scope="login-address",
        ),
    ]
    limits = {
        "auth.login": login_limits,
        "auth.reset_request": [limiter.limit(reset_limit, methods=["POST"])],
        "auth.reset": [limiter.limit(reset_limit, methods=["POST"])],
    }
    for endpoint, decorators in limits.items():
        for limit in decorators:
            app.view_functions[endpoint] = limit(app.view_functions[endpoint])


def _failed(response) -> bool:
    return response.status_code != 302  # a login that worked redirects


@login_manager.user_loader
def _load_user(value: str) -> LoginUser | None:
    user = accounts.user_for_session_id(session=get_session(), value=value)
    return LoginUser(user) if user else None


def _now() -> datetime:
    clock = current_app.config.get("PBP_CLOCK")  # tests may move the clock
    return clock() if clock else datetime.now(UTC)


def _backoff() -> backoff.Backoff:
    """The limit per account over every address (issue #28 item 8), from pbp.config."""
    config = current_app.config
    return backoff.Backoff(
        free=config["PBP_LOGIN_ACCOUNT_FREE"],
        first_wait=timedelta(seconds=config["PBP_LOGIN_ACCOUNT_WAIT_SECONDS"]),
        longest_wait=timedelta(seconds=config["PBP_LOGIN_ACCOUNT_MAX_WAIT_SECONDS"]),
        window=timedelta(hours=config["PBP_LOGIN_ACCOUNT_WINDOW_HOURS"]),
        mail_after=config["PBP_LOGIN_ACCOUNT_MAIL_AFTER"],
    )


def _mail_settings() -> MailSettings:
    config = current_app.config
    return MailSettings(config["PBP_BASE_URL"].rstrip("/"), app_secret(), config["MAIL_FROM"])


def _remember_device(response, value: str) -> None:
    """The device cookie (pbp.services.accounts.backoff): sent back only to the login
    form, never readable by scripts; logging out keeps it, as it names no session."""
    response.set_cookie(
        DEVICE_COOKIE,
        value,
        max_age=int(backoff.DEVICE_TTL.total_seconds()),
        path=url_for("auth.login"),
        secure=current_app.config["SESSION_COOKIE_SECURE"],
        httponly=True,
        samesite="Lax",
    )


def _token_page(body: str, status: int = 200):
    return body, status, TOKEN_PAGE_HEADERS


# --- login and logout ----------------------------------------------------------------


@bp.route("/login", methods=["GET", "POST"])
def login():
    form = forms.LoginForm()
    if request.method == "GET":
        form.next.data = request.args.get("next", "")
    status = 200
    resend_form = None  # offered when the password is right but the address unconfirmed
    if form.validate_on_submit():
        db = get_session()
        try:
            logged_in = backoff.log_in(
                session=db,
                email=form.email.data,
                password=form.password.data,
                now=_now(),
                backoff=_backoff(),
                secret_key=app_secret(),
                device=request.cookies.get(DEVICE_COOKIE),
                mail=_mail_settings(),
                sender=mail_send.sender_for_app(current_app),
            )
        except accounts.LoginFailed as exc:  # a wrong password, or too many lately (429)
            db.commit()  # keep the "login.failed" audit row and the failure count
            form.form_errors.append(str(exc))
            status = exc.status
        else:
            db.commit()
            user = logged_in.user
            try:
                signup.require_confirmed(user)
            except signup.NotConfirmed as exc:
                form.form_errors.append(str(exc))
                resend_form = forms.ResendConfirmationForm(formdata=None, email=user.email)
                status = exc.status
            else:
                session.clear()  # a fresh session for the new identity
                login_user(LoginUser(user))
                response = redirect(safe_next(form.next.data, url_for("public.index")))
                _remember_device(response, logged_in.device)
                return response
    elif request.method == "POST":
        status = 400
    return render_template(
        "auth/login.html",
        form=form,
        logout_form=forms.LogoutForm(),
        account=current_account(),
        resend_form=resend_form,
    ), status


@bp.post("/logout")
def logout():
    form = forms.LogoutForm()
    if not form.validate_on_submit():
        abort(400)
    user = current_account()
    if user is not None:
        db = get_session()
        accounts.record_logout(session=db, user=user, now=_now())
        db.commit()
    logout_user()
    session.clear()
    flash("You are logged out.", "info")
    return redirect(url_for("public.index"))


# --- invites -------------------------------------------------------------------------


@bp.route("/c/<slug>/invites", methods=["GET", "POST"])
@login_required
def create_invite(slug: str):
    """The referee makes a single-use link to hand (or email) to a player. The form is read
    with the API's InviteIn; a refusal comes back on the form (422) as it was typed."""
    db = get_session()
    campaign = campaigns.get_campaign(session=db, slug=slug)
    require_referee(campaign)
    unclaimed = accounts.unclaimed_characters(session=db, campaign=campaign)
    asked = request.args.get("character", type=int)  # the roster's "Invite a player for ..."
    typed = {
        "email": "",
        "role": "player",
        "character": next((c.slug for c in unclaimed if c.id == asked), ""),
        "days": str(limits.INVITE_DAYS),
    }
    error, status = None, 200
    if request.method == "POST":
        typed = {k: request.form.get(k, "") for k in typed}
        try:
            invite = parsed(InviteIn, {**typed, "email": typed["email"].strip()})
            character = accounts.character_to_invite(
                session=db, campaign=campaign, slug=invite.character
            )
            issued = accounts.create_invite(
                session=db,
                campaign=campaign,
                created_by=signed_in_account(),
                secret_key=app_secret(),
                base_url=current_app.config["PBP_BASE_URL"],
                now=_now(),
                character=character,
                email=invite.email or None,
                role=invite.role,
                ttl=timedelta(days=invite.days),
                mail_from=current_app.config.get("MAIL_FROM"),
                sender=mail_send.sender_for_app(current_app),
            )
        except REFUSALS as exc:
            if not shown_with_form(exc):
                raise
            db.rollback()
            error, status = str(exc), REFUSED_FORM
        else:
            db.commit()
            page = render_template(
                "auth/invite_created.html", campaign=campaign, issued=issued, character=character
            )
            return _token_page(page)
    page = render_template(
        "auth/invite_new.html",
        campaign=campaign,
        characters=unclaimed,
        typed=typed,
        error=error,
        max_days=limits.MAX_INVITE_DAYS,
    )
    return page, status


@bp.route("/invite/<token>", methods=["GET", "POST"])
def invite(token: str):
    """Accept an invite: as the logged-in account, or by creating one."""
    db = get_session()
    details = accounts.check_invite(session=db, token=token, secret_key=app_secret(), now=_now())
    user = current_account()
    form = forms.JoinForm() if user else forms.AcceptInviteForm()
    if request.method == "GET" and user is None and details.invite.email:
        form.email.data = details.invite.email
    status = 200
    if form.validate_on_submit():
        fields: dict[str, Any] = {"user": user}
        if user is None:
            fields = {
                "email": form.email.data,
                "display_name": form.display_name.data,
                "password": form.password.data,
            }
        try:
            joined = accounts.accept_invite(
                session=db, token=token, secret_key=app_secret(), now=_now(), **fields
            )
        except UserError as exc:
            db.rollback()
            form.form_errors.append(str(exc))
            status = exc.status
        else:
            db.commit()
            if user is None:
                session.clear()
                login_user(LoginUser(joined))
            flash(f"Welcome to {details.campaign.name}.", "info")
            return redirect(url_for("public.campaign", slug=details.campaign.slug))
    elif request.method == "POST":
        status = 400
    page = render_template("auth/invite.html", details=details, form=form, account=user)
    return _token_page(page, status)


# --- password reset ------------------------------------------------------------------


@bp.route("/reset", methods=["GET", "POST"])
def reset_request():
    form = forms.ResetRequestForm()
    if form.validate_on_submit():
        db = get_session()
        accounts.request_password_reset(
            session=db,
            email=form.email.data,
            secret_key=current_app.secret_key,
            base_url=current_app.config["PBP_BASE_URL"],
            now=_now(),
            mail_from=current_app.config.get("MAIL_FROM"),
            sender=mail_send.sender_for_app(current_app),
        )
        db.commit()
        return render_template("auth/reset_sent.html", email=form.email.data.strip())
    status = 400 if request.method == "POST" else 200
    return render_template("auth/reset_request.html", form=form), status


@bp.route("/reset/<token>", methods=["GET", "POST"])
def reset(token: str):
    db = get_session()
    user = accounts.check_reset_token(session=db, token=token, secret_key=app_secret(), now=_now())
    form = forms.ResetPasswordForm()
    status = 200
    if form.validate_on_submit():
        try:
            user = accounts.reset_password(
                session=db,
                token=token,
                secret_key=app_secret(),
                password=form.password.data,
                now=_now(),
            )
        except UserError as exc:
            db.rollback()
            form.form_errors.append(str(exc))
            status = exc.status
        else:
            db.commit()
            session.clear()
            login_user(LoginUser(user))
            flash("Your password is changed, and you are logged in.", "info")
            return redirect(url_for("public.index"))
    elif request.method == "POST":
        status = 400
    page = render_template("auth/reset.html", form=form, user=user)
    return _token_page(page, status)


# --- error pages ---------------------------------------------------------------------


# The free-text fields a refused form may carry (never passwords or tokens): a form refused
# for its CSRF token (an expired session, a page left open overnight) shows them back.
TYPED_FIELDS = ("title", "body", "fate", "notes", "skills", "sheet", "monologue", "stakes")


def _csrf_error(exc: CSRFError):
    message = (
        f"this form could not be accepted ({exc.description.rstrip('.').lower()}): "
        "go back, reload the page and send it again"
    )
    typed = [(k, request.form[k]) for k in TYPED_FIELDS if request.form.get(k, "").strip()]
    page = render_template("error.html", message=message, status=400, typed=typed)
    return page, 400


def _rate_limited(exc: RateLimitExceeded):
    message = "too many attempts from your address for this: wait a minute, then try again"
    return render_template("error.html", message=message, status=429), 429
