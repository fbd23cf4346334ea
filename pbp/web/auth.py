"""Logging in and out, invitations and password resets (blueprint `auth`).

`init_app(app)` also sets up what every page relies on: Flask-Login (the session's
user), Flask-WTF's CSRF protection on every POST, flask-limiter on the login and reset
POSTs (pbp.rate_limits), and the session cookie
flags: HttpOnly, SameSite=Lax, and Secure when PBP_BASE_URL is https.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from flask import (
    Blueprint,
    Flask,
    current_app,
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
from pbp.inputs.accounts import (
    AcceptInviteIn,
    ChangePasswordIn,
    LoginIn,
    NewPasswordIn,
    ResetRequestIn,
)
from pbp.inputs.invites import InviteIn
from pbp.request_db import get_session
from pbp.services import campaigns
from pbp.services.accounts import backoff, signup
from pbp.services.accounts import logins as accounts
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
from pbp.web.actions import Act, action, now, refused
from pbp.web.forms import parsed
from pbp.web.refusals import REFUSED_FORM

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
        # A wrong current password is a guess at it, from a session someone left open.
        "auth.change_password": [limiter.limit(reset_limit, methods=["POST"])],
    }
    for endpoint, decorators in limits.items():
        # Any: Flask-Limiter types its decorator's result as possibly async, a type Flask's
        # view_functions does not take.
        view: Any = app.view_functions[endpoint]
        for limit in decorators:
            view = limit(view)
        app.view_functions[endpoint] = view


def _failed(response) -> bool:
    return response.status_code != 302  # a login that worked redirects


@login_manager.user_loader
def _load_user(value: str) -> LoginUser | None:
    user = accounts.user_for_session_id(session=get_session(), value=value)
    return LoginUser(user) if user else None


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


def _login_page():
    form = forms.LoginForm(formdata=None, next=request.args.get("next", ""))
    return _login_form(form, status=200)


def _login_form(form, *, status: int, resend_form=None):
    return render_template(
        "auth/login.html",
        form=form,
        logout_form=forms.LogoutForm(),
        account=current_account(),
        resend_form=resend_form,
    ), status


@action(bp, "/login", role="anyone", page=_login_page, get=True)
def login(act: Act):
    """A refused login is answered with the form, not raised: its failure is counted and
    audited, so the declared path commits it (pbp.services.accounts.backoff)."""
    form = forms.LoginForm()
    typed = forms.checked(form, LoginIn)
    if typed is None:
        return _login_form(form, status=REFUSED_FORM)
    try:
        logged_in = backoff.log_in(
            session=act.session,
            email=typed.email,
            password=typed.password,
            now=act.now,
            backoff=_backoff(),
            secret_key=app_secret(),
            device=request.cookies.get(DEVICE_COOKIE),
            mail=act.mail,
            sender=act.sender,
        )
    except accounts.LoginFailed as exc:  # a wrong password, or too many lately (429)
        form.form_errors.append(str(exc))
        return _login_form(form, status=exc.status)
    user = logged_in.user
    try:
        signup.require_confirmed(user)
    except signup.NotConfirmed as exc:
        form.form_errors.append(str(exc))
        resend_form = forms.ResendConfirmationForm(formdata=None, email=user.email)
        return _login_form(form, status=exc.status, resend_form=resend_form)
    session.clear()  # a fresh session for the new identity
    login_user(LoginUser(user))
    response = redirect(safe_next(typed.next, url_for("public.index")))
    _remember_device(response, logged_in.device)
    return response


@action(bp, "/logout", role="anyone")
def logout(act: Act):
    if act.user is not None:
        accounts.record_logout(session=act.session, user=act.user, now=act.now)
    logout_user()
    session.clear()
    return act.done(url_for("public.index"), "You are logged out.", "info")


# --- invites -------------------------------------------------------------------------


@login_required
def _new_invite_page(slug: str):
    """The referee's form for a single-use link; refused, it shows what was typed."""
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
    if refused("auth.create_invite"):
        typed = {k: request.form.get(k, "") for k in typed}
    return render_template(
        "auth/invite_new.html",
        campaign=campaign,
        characters=unclaimed,
        typed=typed,
        error=refused("auth.create_invite"),
        max_days=limits.MAX_INVITE_DAYS,
    )


@action(bp, "/c/<slug>/invites", role="referee", creates=True, page=_new_invite_page, get=True)
def create_invite(act: Act, slug: str):
    """The referee makes a single-use link to hand (or email) to a player. The form is read
    with the API's InviteIn."""
    invite = parsed(InviteIn, {**act.form.to_dict(), "email": act.text("email").strip()})
    character = accounts.character_to_invite(
        session=act.session, campaign=act.campaign, slug=invite.character
    )
    issued = accounts.create_invite(
        session=act.session,
        campaign=act.campaign,
        created_by=act.account,
        secret_key=app_secret(),
        base_url=current_app.config["PBP_BASE_URL"],
        now=act.now,
        character=character,
        email=invite.email or None,
        role=invite.role,
        ttl=timedelta(days=invite.days),
        mail_from=current_app.config.get("MAIL_FROM"),
        sender=act.sender,
    )
    # The link is shown once, here; a second press goes to the board's list of open links.
    act.replay_to(url_for("referee.board", slug=slug) + "#invites")
    page = render_template(
        "auth/invite_created.html", campaign=act.campaign, issued=issued, character=character
    )
    return _token_page(page)


def _invite_page(token: str, form=None, status: int = 200):
    """The invitation's page; after a refused acceptance, the form as typed with the
    reason (the declared path re-renders this page with 422)."""
    db = get_session()
    details = accounts.check_invite(session=db, token=token, secret_key=app_secret(), now=now())
    user = current_account()
    reason = refused("auth.invite")
    if form is None:
        typed = request.form if reason else None
        form = forms.JoinForm(formdata=typed) if user else forms.AcceptInviteForm(formdata=typed)
        if reason:
            form.form_errors.append(reason)
        elif user is None and details.invite.email:
            form.email.data = details.invite.email
    page = render_template("auth/invite.html", details=details, form=form, account=user)
    return _token_page(page, status)


@action(bp, "/invite/<token>", role="anyone", page=_invite_page, get=True)
def invite(act: Act, token: str):
    """Accept an invite: as the logged-in account, or by creating one."""
    details = accounts.check_invite(
        session=act.session, token=token, secret_key=app_secret(), now=act.now
    )
    user = act.user
    fields: dict[str, Any] = {"user": user}
    if user is None:
        form = forms.AcceptInviteForm()
        typed = forms.checked(form, AcceptInviteIn)
        if typed is None:
            return _invite_page(token, form, REFUSED_FORM)
        fields = typed.model_dump(include={"email", "display_name", "password"})
    joined = accounts.accept_invite(
        session=act.session, token=token, secret_key=app_secret(), now=act.now, **fields
    )
    if user is None:
        session.clear()
        login_user(LoginUser(joined))
    return act.done(
        url_for("public.campaign", slug=details.campaign.slug),
        f"Welcome to {details.campaign.name}.",
        "info",
    )


# --- password reset ------------------------------------------------------------------


def _reset_request_page():
    return render_template("auth/reset_request.html", form=forms.ResetRequestForm(formdata=None))


@action(bp, "/reset", role="anyone", page=_reset_request_page, get=True)
def reset_request(act: Act):
    form = forms.ResetRequestForm()
    typed = forms.checked(form, ResetRequestIn)
    if typed is None:
        return render_template("auth/reset_request.html", form=form), REFUSED_FORM
    accounts.request_password_reset(
        session=act.session,
        email=typed.email,
        secret_key=app_secret(),
        base_url=current_app.config["PBP_BASE_URL"],
        now=act.now,
        mail_from=current_app.config.get("MAIL_FROM"),
        sender=act.sender,
    )
    return render_template("auth/reset_sent.html", email=typed.email)


def _reset_page(token: str, form=None, status: int = 200):
    db = get_session()
    user = accounts.check_reset_token(session=db, token=token, secret_key=app_secret(), now=now())
    if form is None:
        form = forms.ResetPasswordForm(formdata=None)
        if reason := refused("auth.reset"):
            form.form_errors.append(reason)
    page = render_template("auth/reset.html", form=form, user=user)
    return _token_page(page, status)


@action(bp, "/reset/<token>", role="anyone", page=_reset_page, get=True)
def reset(act: Act, token: str):
    accounts.check_reset_token(
        session=act.session, token=token, secret_key=app_secret(), now=act.now
    )
    form = forms.ResetPasswordForm()
    typed = forms.checked(form, NewPasswordIn)
    if typed is None:
        return _reset_page(token, form, REFUSED_FORM)
    user = accounts.reset_password(
        session=act.session,
        token=token,
        secret_key=app_secret(),
        password=typed.password,
        now=act.now,
    )
    session.clear()
    login_user(LoginUser(user))
    return act.done(
        url_for("public.index"), "Your password is changed, and you are logged in.", "info"
    )


# --- changing the password --------------------------------------------------------------


@login_required
def _password_page(form=None, status: int = 200):
    if form is None:
        form = forms.ChangePasswordForm(formdata=None)
        if reason := refused("auth.change_password"):
            form.form_errors.append(reason)
    page = render_template("account/password.html", form=form, user=signed_in_account())
    return page, status, TOKEN_PAGE_HEADERS


@action(bp, "/account/password", role="user", page=_password_page, get=True)
def change_password(act: Act):
    """Every other session of the account ends (a stolen cookie with it); this one is
    logged in again with the new password's session id."""
    form = forms.ChangePasswordForm()
    typed = forms.checked(form, ChangePasswordIn)
    if typed is None:
        return _password_page(form, REFUSED_FORM)
    user = accounts.change_password(
        session=act.session,
        user=act.account,
        current=typed.current,
        password=typed.password,
        now=act.now,
    )
    session.clear()
    login_user(LoginUser(user))
    return act.done(
        url_for("tokens.page"), "Your password is changed; you are logged out everywhere else."
    )


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
