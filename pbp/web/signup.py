"""The sign-up pages: /signup, the confirmation link, and "send me a new link".

With PBP_SIGNUP=invite (the default) /signup says how to get an account and the other
two pages are 404: accounts come with a referee's invitation or `pbp user create`.
"""

from __future__ import annotations

from flask import (
    Blueprint,
    Flask,
    abort,
    current_app,
    render_template,
    request,
    session,
    url_for,
)
from flask_login import login_user

from pbp.inputs.accounts import NewPasswordIn, ResendConfirmationIn, SignupIn
from pbp.request_db import get_session
from pbp.services.accounts import signup
from pbp.services.mail import send as mail_send
from pbp.web import forms
from pbp.web.access import LoginUser, app_secret, current_account
from pbp.web.actions import Act, action, now, refused
from pbp.web.refusals import REFUSED_FORM

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


def is_open() -> bool:
    return current_app.config.get("PBP_SIGNUP", "invite") == "open"


def _links() -> dict:
    return {
        "secret_key": current_app.secret_key,
        "base_url": current_app.config["PBP_BASE_URL"],
        "mail_from": current_app.config["MAIL_FROM"],
        "sender": mail_send.sender_for_app(current_app),  # the person waits for the mail
    }


def _signup_page(form=None, status: int = 200):
    if not is_open():
        return render_template("auth/signup_closed.html"), 404
    if form is None:
        form = forms.SignupForm(formdata=request.form if refused() else None)
        if reason := refused():
            form.form_errors.append(reason)
    page = render_template("auth/signup.html", form=form, account=current_account())
    return page, status


@action(bp, "/signup", role="anyone", page=_signup_page, get=True)
def signup_page(act: Act):
    if not is_open():
        return render_template("auth/signup_closed.html"), 404
    form = forms.SignupForm()
    typed = forms.checked(form, SignupIn)
    if typed is None:
        return _signup_page(form, REFUSED_FORM)
    email = signup.sign_up(
        session=act.session,
        email=typed.email,
        display_name=typed.display_name,
        now=act.now,
        **_links(),
    )
    # The same page whether or not the address had an account (issue #28 item 6).
    return render_template("auth/signup_sent.html", email=email)


def _confirm_page(token: str, form=None, status: int = 200):
    """The mailed link: the owner chooses the password here, once (issue #28 items 1, 7).
    Opening the link changes nothing (a mail scanner may open it)."""
    if not is_open():
        abort(404)
    pending = signup.check_confirmation(
        session=get_session(), token=token, secret_key=app_secret(), now=now()
    )
    if form is None:
        form = forms.ConfirmSignupForm(formdata=None)
        if reason := refused():
            form.form_errors.append(reason)
    page = render_template("auth/signup_confirm.html", form=form, pending=pending)
    return page, status, TOKEN_PAGE_HEADERS


@action(bp, "/signup/confirm/<token>", role="anyone", page=_confirm_page, get=True)
def confirm(act: Act, token: str):
    if not is_open():
        abort(404)
    signup.check_confirmation(
        session=act.session, token=token, secret_key=app_secret(), now=act.now
    )
    form = forms.ConfirmSignupForm()
    typed = forms.checked(form, NewPasswordIn)
    if typed is None:
        return _confirm_page(token, form, REFUSED_FORM)
    user = signup.confirm_account(
        session=act.session,
        token=token,
        secret_key=app_secret(),
        password=typed.password,
        now=act.now,
    )
    session.clear()  # a fresh session for the new identity
    login_user(LoginUser(user))
    welcome = "Your address is confirmed: welcome. Start a campaign, or open an invitation."
    return act.done(url_for("public.index"), welcome, "info")


def _resend_page():
    if not is_open():
        abort(404)
    form = forms.ResendConfirmationForm(formdata=None)
    return render_template("auth/signup_resend.html", form=form)


@action(bp, "/signup/resend", role="anyone", page=_resend_page, get=True)
def resend(act: Act):
    if not is_open():
        abort(404)
    form = forms.ResendConfirmationForm()
    typed = forms.checked(form, ResendConfirmationIn)
    if typed is None:
        return render_template("auth/signup_resend.html", form=form), REFUSED_FORM
    email = typed.email
    signup.resend_confirmation(session=act.session, email=email, now=act.now, **_links())
    return render_template("auth/signup_sent.html", email=email, again=True)
