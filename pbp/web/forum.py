"""The forum's pages: scenes and posts with rolls, a roll's permanent page, character
sheets, the GM's start and end, the export and an Atom feed of the public posts.

Thin views over pbp.services.forum (threads, posts, visibility, gm, rolls, sheets, ...): they
read the form, call one service and redirect (POST -> redirect, so a reload never posts
twice; the post form also carries a hidden idempotency token against double clicks). What a
viewer may see is decided by the services (`visible_posts`, `roll_view`); templates only get
those views.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import replace
from datetime import datetime
from urllib.parse import urlsplit

from flask import (
    Blueprint,
    Response,
    current_app,
    flash,
    redirect,
    render_template,
    request,
    url_for,
)
from markupsafe import escape

from pbp import links
from pbp.db import get_session
from pbp.errors import REFUSALS, Forbidden, UserError
from pbp.inputs.forum import PostEdit, PostIn, SheetIn
from pbp.models import Campaign, utcnow
from pbp.services import campaigns
from pbp.services.forum import drafts, gm, posts, rolls, sheets, threads, visibility
from pbp.services.forum.drafts import AUDIENCES, KINDS, Draft
from pbp.services.forum.export import export_forum
from pbp.services.forum.rolls import AFTER_THE_END, ANONYMOUS, ROLL_VISIBILITY, Viewer
from pbp.services.forum.visibility import PostView
from pbp.services.mail.settings import MailSettings
from pbp.services.noteworthy.outgoing_feeds import FeedItem
from pbp.web.access import (
    current_account,
    current_membership,
    login_required,
    require_member,
    signed_in_account,
    visiting,
)
from pbp.web.forms import parsed
from pbp.web.refusals import REFUSED_FORM, shown_with_form

bp = Blueprint("forum", __name__)
FEED_SIZE = 50


def now() -> datetime:
    """The web layer's clock; tests may set PBP_CLOCK to a callable."""
    return current_app.config.get("PBP_CLOCK", utcnow)()


def _forum(slug: str) -> Campaign:
    campaign = campaigns.get_campaign(session=get_session(), slug=slug)
    visibility.require_forum(campaign)
    return campaign


def _viewer(campaign: Campaign) -> Viewer:
    user, member = current_account(), current_membership(campaign)
    return Viewer(user.id if user else None, member.role if member else None)


def _mail() -> MailSettings:
    return MailSettings.from_config(current_app.config)


def _int(value: str | None) -> int | None:
    value = (value or "").strip()
    if not value:
        return None
    if not value.isdigit():
        raise UserError(f"{value!r} is not a number the form could have sent: reload the page")
    return int(value)


def _draft() -> Draft:
    form = request.form
    return Draft(
        body=form.get("body", ""),
        kind=form.get("kind", "ic"),
        audience=form.get("audience", "all"),
        recipient_ids=tuple(_int(v) for v in form.getlist("recipients") if v.strip()),
        character_id=_int(form.get("character_id")),
        roll_visibility=form.get("roll_visibility", "public"),
        client_token=form.get("client_token") or None,
    )


def _checked(draft: Draft) -> Draft:
    """The draft read with the API's PostIn: the same limits and choices as the API."""
    post = parsed(
        PostIn,
        {
            "body": draft.body,
            "kind": draft.kind,
            "audience": draft.audience,
            "recipient_ids": list(draft.recipient_ids),
            "character_id": "" if draft.character_id is None else draft.character_id,
            "roll_visibility": draft.roll_visibility,
        },
    )
    return replace(
        draft,
        body=post.body,
        kind=post.kind,
        audience=post.audience,
        recipient_ids=tuple(post.recipient_ids),
        character_id=post.character_id,
        roll_visibility=post.roll_visibility,
    )


def _form_context(campaign: Campaign, viewer: Viewer, draft=None, **extra) -> dict:
    """What the post form needs; a fresh idempotency token unless the draft carries one."""
    session = get_session()
    characters = threads.postable_characters(session=session, campaign=campaign, viewer=viewer)
    if draft is None:
        mine = [c for c in characters if c.user_id == viewer.user_id]
        draft = Draft(body="", character_id=mine[0].id if mine else None)
    return {
        "draft": draft,
        "client_token": draft.client_token or secrets.token_urlsafe(24),
        "characters": characters,
        "members": [
            m
            for m in threads.members(session=session, campaign=campaign)
            if m.user_id != viewer.user_id
        ],
        "kinds": KINDS,
        "audiences": AUDIENCES,
        "roll_visibility": ROLL_VISIBILITY,
        **extra,
    }


# -- reading ---------------------------------------------------------------------------------


@bp.get("/c/<slug>/forum/")
def index(slug: str):
    """The scenes first, then the reader's own character and how to roll (issue #27 item
    9); how the dice can be checked is a page of its own (`fairness`)."""
    campaign = _forum(slug)
    session, viewer = get_session(), _viewer(campaign)
    return render_template(
        "forum/index.html",
        campaign=campaign,
        viewer=viewer,
        threads=threads.list_threads(session=session, campaign=campaign, viewer=viewer),
        mine=threads.own_characters(session=session, campaign=campaign, viewer=viewer),
        roll_help=rolls.roll_help(campaign.ruleset),
    )


@bp.get("/c/<slug>/forum/fairness")
def fairness(slug: str):
    """Dice no one can fake: the commitment, how rolls are made, who sees them, and the
    seed once the campaign has ended."""
    campaign = _forum(slug)
    session, viewer = get_session(), _viewer(campaign)
    secret = rolls.get_secret(session=session, campaign=campaign)
    return render_template(
        "forum/fairness.html",
        campaign=campaign,
        viewer=viewer,
        commitment=secret.commitment if secret else None,
        seed=rolls.revealed_seed(secret),
        roll_visibility=ROLL_VISIBILITY,
        after_the_end=AFTER_THE_END,
    )


@bp.get("/c/<slug>/forum/t/<int:thread_id>")
def thread(slug: str, thread_id: int):
    campaign = _forum(slug)
    return _thread_page(campaign, thread_id)


def _thread_page(campaign: Campaign, thread_id: int, status: int = 200, **form):
    session, viewer = get_session(), _viewer(campaign)
    found, shown = threads.get_thread(
        session=session, campaign=campaign, thread_id=thread_id, viewer=viewer
    )
    context = {"kinds": KINDS}
    if viewer.is_member:
        context |= _form_context(campaign, viewer, **form)
    page = render_template(
        "forum/thread.html",
        campaign=campaign,
        viewer=viewer,
        thread=found,
        posts=shown,
        watching=threads.is_watching(session=session, thread=found, viewer=viewer),
        **context,
    )
    return page, status


@bp.get("/c/<slug>/rolls/<roll_id>")
def roll(slug: str, roll_id: str):
    campaign = _forum(slug)
    session = get_session()
    view, post = visibility.get_roll_view(
        session=session, campaign=campaign, roll_id=roll_id, viewer=_viewer(campaign)
    )
    return render_template(
        "forum/roll.html",
        campaign=campaign,
        roll=view,
        post=post,
        commitment=rolls.commitment(session=session, campaign=campaign),
        roll_visibility=ROLL_VISIBILITY,
        after_the_end=AFTER_THE_END,
    )


@bp.get("/c/<slug>/forum/export.json")
def export(slug: str):
    campaign = _forum(slug)
    data = export_forum(
        session=get_session(), campaign=campaign, viewer=_viewer(campaign), now=now()
    )
    body = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    disposition = f'attachment; filename="{campaign.slug}-forum.json"'
    return Response(
        body,
        content_type="application/json",
        headers={"Content-Disposition": disposition, "Cache-Control": "private, no-store"},
    )


@bp.get("/c/<slug>/forum/feed.atom")
def feed(slug: str):
    """The posts everyone may read (a feed reader is nobody in particular)."""
    campaign = _forum(slug)
    session = get_session()
    public = visibility.visible_posts(session=session, campaign=campaign, viewer=ANONYMOUS)
    titles = {
        t.id: t.title
        for t in threads.list_threads(session=session, campaign=campaign, viewer=ANONYMOUS)
    }
    items = [_feed_item(campaign, p, titles[p.thread_id]) for p in public[-FEED_SIZE:]][::-1]
    base = current_app.config["PBP_BASE_URL"]
    body = render_template(
        "feeds/atom.xml",
        title=f"{campaign.name}: forum",
        feed_id=_tag("forum", campaign.id),
        base=base,
        self_url=links.absolute(base, links.forum_feed(slug)),
        alternate_url=links.absolute(base, links.forum(slug)),
        items=items,
        tag=_tag,
        updated=(items[0].updated if items else campaign.created_at).isoformat(),
    )
    return Response(body, content_type="application/atom+xml; charset=utf-8")


def _tag(kind: str, item_id) -> str:
    """Stable Atom ids (RFC 4151 tag URIs), as pbp.web.feeds makes them."""
    host = urlsplit(current_app.config["PBP_BASE_URL"]).hostname or "localhost"
    return f"tag:{host},2026:pbp/{kind}/{item_id}"


def _feed_item(campaign: Campaign, post: PostView, title: str) -> FeedItem:
    html = post.html if not post.deleted else "<p><em>This post was deleted.</em></p>"
    if post.rolls:
        html += (
            "<ul>"
            + "".join(f"<li>Roll #{r.number}: {escape(r.text)}</li>" for r in post.rolls)
            + "</ul>"
        )
    return FeedItem(
        kind="forum-post",
        id=post.id,
        title=f"{title}: {post.character or post.author}",
        html=html,
        published=post.created_at,
        updated=post.edited_at or post.created_at,
        author=post.author,
        link_path=links.post(campaign.slug, post.thread_id, post.id),
    )


# -- writing ---------------------------------------------------------------------------------


@bp.route("/c/<slug>/forum/new", methods=["GET", "POST"])
@login_required
def new_thread(slug: str):
    campaign = _forum(slug)
    require_member(campaign)
    session, viewer = get_session(), _viewer(campaign)
    if request.method == "GET":
        return render_template(
            "forum/new.html", campaign=campaign, title="", **_form_context(campaign, viewer)
        )
    draft, title = _draft(), request.form.get("title", "")
    try:
        if request.form.get("action") == "preview":
            html, commands = drafts.preview(session=session, text=draft.body)
            return render_template(
                "forum/new.html",
                campaign=campaign,
                title=title,
                **_form_context(campaign, viewer, draft, preview=html, commands=commands),
            )
        post = posts.create_thread(
            session=session,
            campaign=campaign,
            author=signed_in_account(),
            title=title,
            draft=_checked(draft),
            mail=_mail(),
            now=now(),
        )
        session.commit()
    except REFUSALS as exc:
        if not shown_with_form(exc):
            raise
        session.rollback()
        page = render_template(
            "forum/new.html",
            campaign=campaign,
            title=title,
            **_form_context(campaign, viewer, draft, error=str(exc)),
        )
        return page, REFUSED_FORM
    flash("Thread opened.", "ok")
    return redirect(_post_url(slug, post.thread_id, post.id))


@bp.post("/c/<slug>/forum/t/<int:thread_id>")
@login_required
def reply(slug: str, thread_id: int):
    campaign = _forum(slug)
    visiting(campaign)
    session, draft = get_session(), _draft()
    try:
        if request.form.get("action") == "preview":
            html, commands = drafts.preview(session=session, text=draft.body)
            return _thread_page(campaign, thread_id, draft=draft, preview=html, commands=commands)
        post = posts.reply(
            session=session,
            campaign=campaign,
            thread_id=thread_id,
            author=signed_in_account(),
            draft=_checked(draft),
            mail=_mail(),
            now=now(),
        )
        session.commit()
    except REFUSALS as exc:
        if not shown_with_form(exc):
            raise
        session.rollback()
        return _thread_page(campaign, thread_id, REFUSED_FORM, draft=draft, error=str(exc))
    flash("Posted.", "ok")
    return redirect(_post_url(slug, thread_id, post.id))


def _post_url(slug: str, thread_id: int, post_id: int) -> str:
    return url_for("forum.thread", slug=slug, thread_id=thread_id) + f"#post-{post_id}"


@bp.post("/c/<slug>/forum/t/<int:thread_id>/watch")
@login_required
def watch(slug: str, thread_id: int):
    campaign = _forum(slug)
    visiting(campaign)
    session = get_session()
    on = request.form.get("watch") == "on"
    threads.watch_thread(
        session=session,
        campaign=campaign,
        thread_id=thread_id,
        user=signed_in_account(),
        on=on,
        now=now(),
    )
    session.commit()
    flash(
        "You watch this thread: new posts are emailed to you."
        if on
        else "You no longer watch this thread.",
        "ok",
    )
    return redirect(url_for("forum.thread", slug=slug, thread_id=thread_id))


@bp.route("/c/<slug>/forum/posts/<int:post_id>/edit", methods=["GET", "POST"])
@login_required
def edit(slug: str, post_id: int):
    campaign = _forum(slug)
    require_member(campaign)
    session = get_session()
    post = posts.post_to_edit(
        session=session, campaign=campaign, post_id=post_id, viewer=_viewer(campaign)
    )
    if request.method == "GET":
        return render_template("forum/edit.html", campaign=campaign, post=post, body=post.body)
    body = request.form.get("body", "")
    try:
        posts.change_post(
            session=session,
            campaign=campaign,
            post_id=post_id,
            editor=signed_in_account(),
            body=parsed(PostEdit, {"body": body}).body,
            now=now(),
        )
        session.commit()
    except REFUSALS as exc:
        if not shown_with_form(exc):
            raise
        session.rollback()
        page = render_template(
            "forum/edit.html", campaign=campaign, post=post, body=body, error=str(exc)
        )
        return page, REFUSED_FORM
    flash("Post updated; the earlier version is kept for the GM.", "ok")
    return redirect(_post_url(slug, post.thread_id, post.id))


@bp.post("/c/<slug>/forum/posts/<int:post_id>/delete")
@login_required
def delete(slug: str, post_id: int):
    campaign = _forum(slug)
    visiting(campaign)
    session = get_session()
    post = posts.remove_post(
        session=session, campaign=campaign, post_id=post_id, actor=signed_in_account(), now=now()
    )
    session.commit()
    flash("Post deleted. Its rolls stay on the record.", "ok")
    return redirect(_post_url(slug, post.thread_id, post.id))


@bp.get("/c/<slug>/forum/posts/<int:post_id>/history")
@login_required
def history(slug: str, post_id: int):
    campaign = _forum(slug)
    session, viewer = get_session(), _viewer(campaign)
    post = visibility.get_post(session=session, campaign=campaign, post_id=post_id, viewer=viewer)
    revisions = posts.post_history(session=session, campaign=campaign, post=post, viewer=viewer)
    return render_template("forum/history.html", campaign=campaign, post=post, revisions=revisions)


@bp.post("/c/<slug>/forum/start")
@login_required
def start(slug: str):
    campaign = _forum(slug)
    session = get_session()
    commitment = gm.start_campaign(
        session=session, campaign=campaign, actor=signed_in_account(), now=now()
    )
    session.commit()
    flash(f"The campaign is running. Dice commitment (SHA-256): {commitment}", "ok")
    return redirect(url_for("forum.index", slug=slug))


@bp.post("/c/<slug>/forum/end")
@login_required
def end(slug: str):
    campaign = _forum(slug)
    session = get_session()
    gm.end_campaign(session=session, campaign=campaign, actor=signed_in_account(), now=now())
    session.commit()
    flash("The campaign has ended and its seed is revealed: every roll can be checked.", "ok")
    return redirect(url_for("forum.index", slug=slug))


# -- character sheets ------------------------------------------------------------------------


@bp.get("/c/<slug>/sheets/")
def sheet_list(slug: str):
    campaign = _forum(slug)
    session = get_session()
    return render_template(
        "forum/sheets.html",
        campaign=campaign,
        characters=campaigns.characters(session=session, campaign=campaign),
        sheets=sheets.sheets_of(session=session, campaign=campaign),
    )


@bp.get("/c/<slug>/sheets/<character>")
def sheet(slug: str, character: str):
    campaign = _forum(slug)
    session = get_session()
    found = campaigns.character_by_slug(session=session, campaign=campaign, slug=character)
    row = sheets.get_sheet(session=session, character=found)
    skills = sheets.one_skill_rows(row, found.name) if row and row.ruleset == "one" else []
    return render_template(
        "forum/sheet.html",
        campaign=campaign,
        character=found,
        sheet=row,
        skills=skills,
        can_edit=_can_edit_sheet(campaign, found),
    )


def _can_edit_sheet(campaign: Campaign, character) -> bool:
    return sheets.can_edit(
        character=character, user=current_account(), membership=current_membership(campaign)
    )


@bp.route("/c/<slug>/sheets/<character>/edit", methods=["GET", "POST"])
@login_required
def sheet_edit(slug: str, character: str):
    campaign = _forum(slug)
    session = get_session()
    found = campaigns.character_by_slug(session=session, campaign=campaign, slug=character)
    row = sheets.get_sheet(session=session, character=found)
    data = dict(row.data) if row else {}
    error, status = None, 200
    if request.method == "POST":
        try:
            data = _sheet_form(campaign)
            sheets.edit_sheet(
                session=session,
                campaign=campaign,
                character_slug=found.slug,
                data=parsed(SheetIn, {"data": data}).data,
                actor=signed_in_account(),
                now=now(),
            )
            session.commit()
            flash(f"{found.name}'s sheet is saved.", "ok")
            return redirect(url_for("forum.sheet", slug=slug, character=found.slug))
        except REFUSALS as exc:
            if not shown_with_form(exc):
                raise
            session.rollback()
            error, status = str(exc), REFUSED_FORM
    elif not _can_edit_sheet(campaign, found):
        require_member(campaign)  # a stranger is told to log in or that they are not in it
        raise Forbidden(f"only {found.name}'s player and the GM can change this sheet")
    page = render_template(
        "forum/sheet_edit.html",
        campaign=campaign,
        character=found,
        data=data,
        form=request.form if request.method == "POST" else None,
        error=error,
    )
    return page, status


def _sheet_form(campaign: Campaign) -> dict:
    form = request.form
    if campaign.ruleset != "one":
        return sheets.parse_json(form.get("sheet", ""))
    stats = {}
    for stat in ("STR", "INT", "DEX", "HLT", "SPD"):
        value = form.get(stat, "").strip()
        if not value.lstrip("-").isdigit():
            raise UserError(f"{stat} must be a whole number from 2 to 12")
        stats[stat] = int(value)
    lost = form.get("hit_points_lost", "0").strip() or "0"
    if not lost.isdigit():
        raise UserError("hit points lost must be a whole number, 0 or more")
    return {
        "stats": stats,
        "skills": sheets.parse_skill_lines(form.get("skills", "")),
        "hit_points_lost": int(lost),
        "notes": form.get("notes", ""),
    }
