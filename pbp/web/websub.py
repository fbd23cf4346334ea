"""The WebSub callback (blueprint `websub`), where hubs reach pbp (pbp.services.noteworthy.websub).

    GET  /websub/<id>/<token>   the hub's verification of intent: the challenge echoed, or 404
    POST /websub/<id>/<token>   a delivery of the feed's new content

The token is the subscription's own secret part of the address (issue #28 item 2). The old
address without it, `/websub/<id>`, answers 410 Gone to everything: WebSub lets a hub drop
a subscription whose deliveries get 410, and pbp subscribes again with the new address
(migration 0011).

Hubs carry no cookies or CSRF token: the route is exempt from CSRF. A delivery is
authenticated by its `X-Hub-Signature` instead. One with a missing or wrong signature is
refused with 403 and logged, its body ignored (WebSub lets a subscriber answer 2xx there
too; pbp's secrets are 256 random bits, so guessing is hopeless and the 4xx tells a
misconfigured hub what is wrong). A delivery that is signed but unusable (the
subscription was cancelled, the body is no feed) is acknowledged with 202 and ignored: the
hub cannot do better by sending it again. One that raced a poll storing the same entry on
PostgreSQL gets 503, and the hub sends it again. One over the blog's bounds (issue #28
item 4, pbp.services.noteworthy.push_limits) gets 429 with a Retry-After. Verifications and
deliveries are each rate limited per client address (`PBP_WEBSUB_LIMIT`), and capped in
size like every request (pbp.request_size).
"""

from __future__ import annotations

from flask import Blueprint, Flask, current_app, request

from pbp.db import database, release
from pbp.request_db import get_session
from pbp.services.mail.settings import MailSettings
from pbp.services.noteworthy import websub
from pbp.services.noteworthy.push_limits import PushLimits
from pbp.web.actions import callback, now

bp = Blueprint("websub", __name__)

WEBSUB_LIMIT = "300 per minute"  # a busy hub pushes many blogs from one address
TEXT = {"Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store"}
RETIRED = "gone: this callback address is retired; pbp subscribes with a new one\n"


def init_app(app: Flask) -> None:
    """Register the callback, CSRF-exempt and limited (call after pbp.web.auth)."""
    from pbp.web.auth import csrf

    app.register_blueprint(bp)
    csrf.exempt(deliver)
    limiter = app.extensions["pbp_limiter"]  # made by pbp.rate_limits
    limit = limiter.limit(app.config.get("PBP_WEBSUB_LIMIT", WEBSUB_LIMIT))
    for endpoint in ("websub.verify", "websub.deliver"):  # each reads the database
        app.view_functions[endpoint] = limit(app.view_functions[endpoint])


@bp.get("/websub/<int:subscription_id>", defaults={"token": None})
@bp.get("/websub/<int:subscription_id>/<token>")
@callback
def verify(subscription_id: int, token: str | None):
    if token is None:
        return RETIRED, 410, TEXT
    challenge = websub.verify(
        session=get_session(),
        subscription_id=subscription_id,
        token=token,
        mode=request.args.get("hub.mode", ""),
        topic=request.args.get("hub.topic", ""),
        challenge=request.args.get("hub.challenge", ""),
        lease_seconds=request.args.get("hub.lease_seconds"),
        reason=request.args.get("hub.reason"),
        now=now(),
    )
    return challenge, 200, TEXT


@bp.post("/websub/<int:subscription_id>", defaults={"token": None})
@bp.post("/websub/<int:subscription_id>/<token>")
def deliver(subscription_id: int, token: str | None):
    if token is None:
        return RETIRED, 410, TEXT
    # The delivery opens its own short transactions (the poller's); none of the request's
    # may stay open across the parse.
    release(get_session())
    delivery = websub.receive(
        engine=database(current_app).engine,
        subscription_id=subscription_id,
        token=token,
        limits=PushLimits.from_config(current_app.config),
        body=request.get_data(),
        headers=dict(request.headers),
        now=now(),
        mail=MailSettings.from_config(current_app.config),
    )
    if delivery.outcome == "refused":
        return f"refused: {delivery.reason}\n", 403, TEXT
    if delivery.outcome == "retry":  # hubs send a delivery again after a failure
        return f"retry: {delivery.reason}\n", 503, {**TEXT, "Retry-After": "5"}
    if delivery.outcome == "limited":
        retry = {**TEXT, "Retry-After": str(delivery.retry_after or 60)}
        return f"limited: {delivery.reason}\n", 429, retry
    if delivery.refused_entries:
        return (
            f"stored {delivery.new_entries} new entries; {delivery.refused_entries} refused\n",
            202,
            TEXT,
        )
    return f"{delivery.outcome}\n", 202, TEXT
