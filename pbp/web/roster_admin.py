"""The referee's (or forum GM's) changes to the roster: re-send an invitation, and a page
per character to rename it, edit its aliases, change its feed, drop it out, or hand it to
another player. Each form is a declared action (pbp.web.actions) calling one service
(pbp.services.invites / roster); a refused form comes back on its page with the reason and
what was typed, status 422; a refusal that is not about the form (403, 404) keeps its own
page.
"""

from __future__ import annotations

from flask import Blueprint, current_app, render_template, request, url_for

from pbp.inputs.roster import AliasesIn, DropIn, FeedIn, HandOverIn, RenameIn
from pbp.services import invites, roster
from pbp.services.noteworthy import blog_settings
from pbp.web.access import login_required
from pbp.web.actions import Act, action, refused
from pbp.web.forms import parsed
from pbp.web.referee import TOKEN_PAGE_HEADERS, _campaign

bp = Blueprint("roster_admin", __name__, url_prefix="/c/<slug>/referee")


def _links() -> dict:
    return {
        "secret_key": current_app.secret_key,
        "base_url": current_app.config["PBP_BASE_URL"],
    }


@action(bp, "/invites/<int:invite_id>/resend", role="referee", creates=True, page="referee.board")
def resend_invite(act: Act, slug: str, invite_id: int):
    """A refused re-send (used, or no address to mail) comes back on the board with its
    reason, as every refused form does."""
    sent = invites.resend_invite(
        session=act.session,
        campaign=act.campaign,
        invite_id=invite_id,
        actor=act.account,
        mail_from=current_app.config["MAIL_FROM"],
        now=act.now,
        sender=act.sender,
        **_links(),
    )
    return act.done(
        url_for("referee.board", slug=slug) + "#invites",
        f"The invitation is on its way to {sent.invite.email} again.",
    )


@bp.get("/characters/<int:character_id>")
@login_required
def character(slug: str, character_id: int):
    session, campaign = _campaign(slug)
    found = roster.character_in(session=session, campaign=campaign, character_id=character_id)
    return render_template(
        "referee/character.html",
        campaign=campaign,
        character=found,
        blog=blog_settings.blog_of(session=session, character=found),
        players=[
            p for p in roster.players(session=session, campaign=campaign) if p.id != found.user_id
        ],
        **_refused_form(),
    )


# Which form of the character page each action is (the template's names).
FORMS = {
    "roster_admin.rename": "name",
    "roster_admin.aliases": "aliases",
    "roster_admin.feed": "feed",
    "roster_admin.drop": "drop",
    "roster_admin.hand_over": "player",
}


def _refused_form() -> dict:
    """The refused form's reason and fields as typed (never the tokens), for the page."""
    reason = refused()
    form = FORMS.get(request.endpoint or "")
    if reason is None or form is None:
        return {"error": None, "typed": {}}
    fields = {k: v for k, v in request.form.items() if k not in ("csrf_token", "form_token")}
    return {"error": (form, reason), "typed": {form: fields}}


def _back(slug: str, character_id: int) -> str:
    return url_for("roster_admin.character", slug=slug, character_id=character_id)


@action(bp, "/characters/<int:character_id>/name", role="referee", page=character)
def rename(act: Act, slug: str, character_id: int):
    rename = parsed(RenameIn, {"name": act.text("name")})
    renamed = roster.rename_character(
        session=act.session,
        campaign=act.campaign,
        character_id=character_id,
        name=rename.name,
        actor=act.account,
        now=act.now,
    )
    return act.done(_back(slug, character_id), f"Renamed: {renamed.name}.")


@action(bp, "/characters/<int:character_id>/aliases", role="referee", page=character)
def aliases(act: Act, slug: str, character_id: int):
    typed = [a.strip() for a in act.text("aliases").split(",") if a.strip()]
    aliases_in = parsed(AliasesIn, {"aliases": typed})
    roster.set_aliases(
        session=act.session,
        campaign=act.campaign,
        character_id=character_id,
        aliases=aliases_in.aliases,
        actor=act.account,
        now=act.now,
    )
    return act.done(_back(slug, character_id), "Aliases saved.")


@action(bp, "/characters/<int:character_id>/feed", role="referee", page=character)
def feed(act: Act, slug: str, character_id: int):
    feed_in = parsed(FeedIn, {"feed_url": act.text("feed_url").strip()})
    roster.set_feed_url(
        session=act.session,
        campaign=act.campaign,
        character_id=character_id,
        feed_url=feed_in.feed_url,
        allow_private=current_app.config["PBP_ALLOW_PRIVATE_FEEDS"],
        actor=act.account,
        now=act.now,
    )
    return act.done(
        _back(slug, character_id),
        "Blog changed; the new feed is read on the scheduler's next pass.",
    )


@action(bp, "/characters/<int:character_id>/drop", role="referee", page=character)
def drop(act: Act, slug: str, character_id: int):
    drop_in = parsed(DropIn, {"reason": act.text("reason")})
    dropped = roster.drop_character(
        session=act.session,
        campaign=act.campaign,
        character_id=character_id,
        reason=drop_in.reason,
        actor=act.account,
        now=act.now,
    )
    return act.done(
        _back(slug, character_id), f"{dropped.name} has dropped out: an outsider from now on."
    )


@action(bp, "/characters/<int:character_id>/player", role="referee", creates=True, page=character)
def hand_over(act: Act, slug: str, character_id: int):
    to = parsed(
        HandOverIn, {"member_id": act.text("member").strip(), "email": act.text("email").strip()}
    )
    handed = roster.hand_over_character(
        session=act.session,
        campaign=act.campaign,
        character_id=character_id,
        actor=act.account,
        now=act.now,
        mail_from=current_app.config["MAIL_FROM"],
        member_id=to.member_id,
        email=to.email,
        **_links(),
    )
    if handed.invite is None:
        return act.done(_back(slug, character_id), f"{handed.character.name} has a new player.")
    # The invitation's link is shown once, here; a second press is sent to the character's
    # page (the link is also on the board's list of open invitations).
    act.replay_to(_back(slug, character_id))
    page = render_template(
        "auth/invite_created.html",
        campaign=act.campaign,
        issued=handed.invite,
        character=handed.character,
    )
    return page, 200, TOKEN_PAGE_HEADERS
