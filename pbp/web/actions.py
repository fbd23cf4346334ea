"""The pages' one declared path for a form, as `pbp.api.registry.Call` is the API's.

    @action(bp, "/event", role="referee", creates=True, page="referee.board")
    def post_event(act: Act, slug: str):
        turn = referee.open_turn(session=act.session, campaign=act.campaign, now=act.now, ...)
        return act.done(url_for("referee.board", slug=slug), f"Turn {turn.number} is open.")

The decorator owns, in this order, what every form's view used to write for itself:

1. Who. A visitor is sent to the login page (every role but "anyone"). The campaign the
   rule's `<slug>` names is loaded and remembered for the error page, and the role is
   checked: "member", "player" or "referee" of that campaign, or "user" (any account).
2. The one-time form token (`creates=True`): every such form carries a `form_token`
   (the template global `form_fields()` writes it beside the CSRF token). A token whose
   first answer redirected is used up: sent again, by a double click or a back button and
   a second press, it gets that first answer (the same page and message) and runs
   nothing. Its record is written in the transaction of the change itself
   (`pbp.services.idempotency`, as the API's Idempotency-Key), so it exists exactly when
   the change does: of two requests racing with one token, the second to commit fails on
   the record's unique key and is answered as the first was.
3. The clock, the session, the mail settings and the sender, on `Act`.
4. One commit, after the view returns; nothing is committed when it raises.
5. The refused form. A refusal the person can fix (statuses 400, 409, 422: see
   `pbp.web.refusals`) rolls back and renders the form's `page` again with the refusal's own
   status, the API's for the same refusal (pbp.errors.REFUSAL_STATUSES): the
   page reads what was typed with `as_typed()` and shows the reason with `refusal()`, so
   nothing typed is lost. Other refusals (403, 404, 410) keep their own error pages.

A GET of the same rule renders `page` when `get=True`, under the same endpoint, so a
form's page and its action share one address. `tests/web/test_declared_actions.py` walks
the URL map: every view that takes a POST is declared here, or named in `UNDECLARED` with
the path it takes instead.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from flask import (
    Blueprint,
    current_app,
    flash,
    g,
    get_flashed_messages,
    make_response,
    redirect,
    request,
    session,
    url_for,
)
from markupsafe import Markup, escape
from werkzeug.datastructures import MultiDict
from werkzeug.wrappers import Response

from pbp.db import Session, WriteConflict, begin_writing, end_writing
from pbp.errors import REFUSALS, Forbidden, UserError
from pbp.models import Campaign, Membership, User, utcnow
from pbp.request_db import get_session
from pbp.services import campaigns, idempotency
from pbp.services.mail import send as mail_send
from pbp.services.mail.settings import MailSettings
from pbp.web import access
from pbp.web.refusals import refused_status, shown_with_form

Role = Literal["anyone", "user", "member", "player", "referee"]


def callback(view: Callable[..., Any]) -> Callable[..., Any]:
    """A machine's request that changes something (a WebSub hub's verification GET), not a
    person's form: no login, role or form token, but the same one commit after the view,
    and none when it raises, so the pages' path owns every commit of pbp.web."""

    @functools.wraps(view)
    def run(*args: Any, **kwargs: Any) -> Any:
        return _committed(get_session(), lambda: view(*args, **kwargs))

    return run


def _committed(session: Session, work: Callable[[], Any]) -> Any:
    """`work()`, then one commit; a rollback, and the error again, when it raises."""
    try:
        answer = work()
        session.commit()
    except BaseException:
        session.rollback()
        raise
    return answer


def after_reading(write: Callable[[Session], Any]) -> None:
    """A page (a GET) that keeps what its reader saw: the read marks of
    pbp.services.unread. The page's reads end first; `write` then runs in a short
    transaction of its own, as a writer (SQLite: it takes the write lock at BEGIN and waits
    its turn), and commits, so the pages' path owns this commit too. Nothing is written
    for a page shown again after a refused form (a POST): that request rolled back."""
    if request.method != "GET":
        return
    session = get_session()
    session.commit()  # the page's reads end here
    token = begin_writing()
    try:
        _committed(session, lambda: write(session))
    finally:
        end_writing(token)


#: POST views that are not page forms, and the path each takes instead.
UNDECLARED = {
    "websub.deliver": "a hub's signed delivery (pbp.web.websub checks its HMAC signature)",
    "webmention.receive": "a Webmention (W3C) anyone may send: stored as pending, its source "
    "verified by a job through the SSRF-guarded fetcher (pbp.web.webmention)",
}

TOKEN_FIELD = "form_token"
_KEY_PREFIX = "form:"


@dataclass(frozen=True)
class Declared:
    endpoint: str
    rule: str
    role: Role
    creates: bool
    page: str | None


#: Every declared action, by endpoint (the URL-map test compares these with the routes).
DECLARED: dict[str, Declared] = {}


def now() -> datetime:
    """The web layer's clock: tests set PBP_CLOCK to a callable."""
    return current_app.config.get("PBP_CLOCK", utcnow)()


def mail_settings() -> MailSettings:
    return MailSettings.from_config(current_app.config)


@dataclass
class Act:
    """What an action's view gets besides its path parameters."""

    session: Session
    user: User | None
    #: The campaign the rule's <slug> names (None for a rule without one).
    named_campaign: Campaign | None
    member: Membership | None
    now: datetime
    form: MultiDict = field(default_factory=MultiDict)
    #: Where a second press of this form goes when its first answer was a page, not a
    #: redirect (set by `replay_to`); None: a page answer leaves the token unused (preview).
    replay_location: str | None = None

    @property
    def campaign(self) -> Campaign:
        """The campaign of the action, in a rule that names one."""
        if self.named_campaign is None:
            raise TypeError("this action's rule names no campaign")  # a programming error
        return self.named_campaign

    @property
    def account(self) -> User:
        """The signed-in account, in an action whose role needs one."""
        if self.user is None:
            raise Forbidden("log in first")
        return self.user

    @functools.cached_property
    def mail(self) -> MailSettings:
        return mail_settings()

    @functools.cached_property
    def sender(self) -> mail_send.Sender:
        """Delivers the mail this action queued right after its commit."""
        return mail_send.sender_for_app(current_app)

    def text(self, name: str) -> str:
        """A field as typed, "" when the form lacks it."""
        return self.form.get(name, "")

    def number(self, name: str, *, required: bool = True) -> int | None:
        """A whole-number field; a refusal in words when it is not one."""
        raw = self.text(name).strip()
        if not raw and not required:
            return None
        try:
            return int(raw)
        except ValueError as exc:
            what = name.replace("_", " ")
            raise UserError(f"{what} must be a whole number, not {raw!r}") from exc

    def replay_to(self, location: str) -> None:
        """This answer is a page that did the form's work (a secret shown once): the
        token is used up all the same, and a second press goes to `location`."""
        self.replay_location = location

    def done(self, location: str, message: str | None = None, category: str = "ok") -> Response:
        """The answer of a form that did its work: back to a page, with a message."""
        if message:
            flash(message, category)
        return redirect(location)


def action(
    bp: Blueprint,
    rule: str,
    *,
    role: Role,
    creates: bool = False,
    page: str | Callable[..., Any] | None = None,
    get: bool = False,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declare a page form's action (see the module docstring).

    `page` is the view (or its endpoint) that renders the form: a refusal renders it again
    with the refusal's status, and with `get=True` it answers a GET of the same rule.
    """

    def register(view: Callable[..., Any]) -> Callable[..., Any]:
        endpoint = f"{bp.name}.{view.__name__}"

        @functools.wraps(view)
        def run(**path: Any):
            if request.method != "POST":
                return _render_page(page, path, status=200)
            return _run(view, path, role=role, creates=creates, page=page)

        methods = ["GET", "POST"] if get else ["POST"]
        bp.add_url_rule(rule, endpoint=view.__name__, view_func=run, methods=methods)
        DECLARED[endpoint] = Declared(endpoint, rule, role, creates, _page_name(page))
        return run

    return register


def _page_name(page) -> str | None:
    if page is None or isinstance(page, str):
        return page
    return page.__qualname__


def _run(view, path: dict, *, role: Role, creates: bool, page) -> Any:
    if role != "anyone" and access.current_account() is None:
        return access.to_login()
    act = _act(role, path)
    token = None
    try:
        if creates and act.user is not None:
            token = _form_token(act)
            first = _first(token, act.now)
            if first is not None:
                return _replayed(first.body)
        answer = view(act, **path)
        response = make_response(answer)
        if token is not None and (_redirects(response) or act.replay_location):
            first = _first_answer(response, act.replay_location)
            idempotency.remember(**token, status=response.status_code, body=first, now=act.now)
        act.session.commit()
    except WriteConflict:
        act.session.rollback()
        first = _first(token, act.now) if token is not None else None
        if first is None:
            raise
        return _replayed(first.body)  # the same token committed first: answer as it did
    except REFUSALS as exc:
        act.session.rollback()
        if not shown_with_form(exc) or page is None:
            raise
        g.pbp_refusal = (request.endpoint, str(exc))
        return _render_page(page, path, status=refused_status(exc))
    except BaseException:
        act.session.rollback()
        raise
    return response


def _act(role: Role, path: dict) -> Act:
    db = get_session()
    user = access.current_account()
    campaign = member = None
    if "slug" in path:
        campaign = campaigns.get_campaign(session=db, slug=path["slug"])
        access.visiting(campaign)
        member = {
            "member": access.require_member,
            "player": access.require_player,
            "referee": access.require_referee,
        }.get(role, access.current_membership)(campaign)
    return Act(
        session=db,
        user=user,
        named_campaign=campaign,
        member=member,
        now=now(),
        form=request.form,
    )


# -- the one-time form token --------------------------------------------------------------


def new_token() -> str:
    return secrets.token_urlsafe(18)


def form_fields() -> Markup:
    """The hidden fields every POST form carries: the CSRF token and a one-time form token."""
    from flask_wtf.csrf import generate_csrf

    return Markup(
        f'<input type="hidden" name="csrf_token" value="{escape(generate_csrf())}">'
        f'<input type="hidden" name="{TOKEN_FIELD}" value="{new_token()}">'
    )


def _form_token(act: Act) -> dict:
    raw = act.text(TOKEN_FIELD)
    if not raw:
        raise UserError(
            "this form came without its one-time token (opened before an update of pbp?): "
            "it is shown again as you typed it; send it once more"
        )
    key = idempotency.check_key(_KEY_PREFIX + raw)
    return dict(
        session=act.session,
        user=act.user,
        key=key,
        method="POST",
        path=request.path[:2000],
        fingerprint=_fingerprint(),
    )


def _first(token: dict, now: datetime):
    """The first answer to this token's form, or None; a token sent again with other
    fields (a form restored by the back button, then changed) is refused, shown again with
    a fresh token, so a second press sends it as a new form."""
    try:
        return idempotency.find(**token, now=now)
    except idempotency.KeyReused as exc:
        raise UserError(
            "this form had already been sent once, with other words: nothing was sent now. "
            "It is shown again as you typed it: send it again to send this too"
        ) from exc


def _fingerprint() -> str:
    """The form's fields but its tokens: a double click sends the same fields twice."""
    fields = sorted(
        (k, v)
        for k, values in request.form.lists()
        for v in values
        if k not in (TOKEN_FIELD, "csrf_token")
    )
    digest = hashlib.sha256(repr(fields).encode("utf-8", "surrogatepass")).hexdigest()
    return idempotency.request_hash("POST", request.path, digest.encode())


def _redirects(response: Response) -> bool:
    return response.status_code in (301, 302, 303)


def _first_answer(response: Response, elsewhere: str | None) -> dict:
    # The messages the view flashed travel with the redirect; the replay shows them again.
    flashes = session.get("_flashes", []) if _redirects(response) else []
    location = response.location if _redirects(response) else elsewhere
    return {"location": location, "flashes": [list(f) for f in flashes]}


def _replayed(body: dict) -> Response:
    get_flashed_messages()  # drop nothing that is pending; the first answer's come again
    for category, message in body.get("flashes", []):
        flash(message, category)
    flash("This form had already been sent: it was not sent twice.", "info")
    response = redirect(body.get("location") or url_for("public.index"))
    response.headers["Form-Replayed"] = "true"
    return response


# -- the refused form ---------------------------------------------------------------------


def _render_page(page, path: dict, *, status: int):
    if page is None:
        raise UserError("this address takes a form, not a visit")  # a GET of a POST-only rule
    view = current_app.view_functions[page] if isinstance(page, str) else page
    target = inspect.unwrap(view)
    accepted = inspect.signature(target).parameters
    response = make_response(view(**{k: v for k, v in path.items() if k in accepted}))
    if status != 200 and response.status_code == 200:
        response.status_code = status
    return response


def refused(endpoint: str | None = None) -> str | None:
    """The reason the form of `endpoint` (any, when None) was refused in this request."""
    refusal = g.get("pbp_refusal")
    if refusal is None or (endpoint is not None and refusal[0] != endpoint):
        return None
    return refusal[1]


def as_typed(endpoint: str, name: str, default: Any = "") -> Any:
    """What was typed in field `name` of the refused form of `endpoint`, else `default`:
    a page shows its forms with their usual values, and the refused one as it came."""
    if refused(endpoint) is None:
        return default
    return request.form.get(name, "")


def refusal(endpoint: str) -> Markup:
    """The reason beside the refused form, as an alert; nothing for the other forms."""
    reason = refused(endpoint)
    if reason is None:
        return Markup("")
    return Markup('<p class="error" role="alert">{}</p>').format(reason)


def init_app(app) -> None:
    app.add_template_global(form_fields)
    app.add_template_global(as_typed)
    app.add_template_global(refusal)
    app.add_template_global(refused, name="refused_reason")
