"""The forum's pages: scenes and posts with rolls, a roll's permanent page, character
sheets, the GM's start and end, the export and an Atom feed of the public posts.

Thin views over pbp.services.forum (threads, posts, visibility, gm, rolls, sheets, ...). Every
form is an action declared with `pbp.web.actions.action`: it redirects (a reload never posts
twice), a form that creates carries a one-time token (a double click posts once), and a
refused form comes back with what was typed and the reason beside it (422). What a viewer
may see is decided by the services (`visible_posts`, `roll_view`); templates only get those
views.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import replace
from urllib.parse import urlsplit

from flask import Blueprint, Response, current_app, render_template, request, url_for
from markupsafe import escape

from pbp import links
from pbp.errors import Forbidden, UserError
from pbp.inputs.forum import CharacterForIn, OwnCharacterIn, PostEdit, PostIn, SheetIn
from pbp.models import Campaign
from pbp.request_db import get_session
from pbp.services import campaigns, icons, saved_drafts, unread
from pbp.services.forum import characters, drafts, gm, posts, rolls, sheets, threads, visibility
from pbp.services.forum import combat as fight
from pbp.services.forum.drafts import AUDIENCES, KINDS, Draft
from pbp.services.forum.export import export_forum
from pbp.services.forum.rolls import AFTER_THE_END, ANONYMOUS, ROLL_VISIBILITY, Viewer
from pbp.services.forum.visibility import PostView
from pbp.services.noteworthy.outgoing_feeds import FeedItem
from pbp.web import unread as unread_marks
from pbp.web.access import (
    app_secret,
    current_account,
    current_membership,
    login_required,
    require_member,
    to_login,
)
from pbp.web.actions import Act, action, now, refused
from pbp.web.forms import parsed

bp = Blueprint("forum", __name__)
FEED_SIZE = 50


def _forum(slug: str) -> Campaign:
    campaign = campaigns.get_campaign(session=get_session(), slug=slug)
    visibility.require_forum(campaign)
    return campaign


def _viewer(campaign: Campaign) -> Viewer:
    user, member = current_account(), current_membership(campaign)
    return Viewer(user.id if user else None, member.role if member else None)


def _int(value: str | None, *, strict: bool = True) -> int | None:
    value = (value or "").strip()
    if not value:
        return None
    if not value.isdigit():
        if not strict:
            return None  # shown again as a form: the refusal already said what was wrong
        raise UserError(f"{value!r} is not a number the form could have sent: reload the page")
    return int(value)


def _draft(*, strict: bool = True) -> Draft:
    form = request.form
    return Draft(
        body=form.get("body", ""),
        kind=form.get("kind", "ic"),
        audience=form.get("audience", "all"),
        recipient_ids=tuple(
            n for v in form.getlist("recipients") if (n := _int(v, strict=strict)) is not None
        ),
        character_id=_int(form.get("character_id"), strict=strict),
        roll_visibility=form.get("roll_visibility", "public"),
        client_token=form.get("client_token") or None,
        icon_id=_int(form.get("icon_id"), strict=strict),
    )


def _typed_draft(endpoint: str, preview: str | None) -> Draft | None:
    """The post form as typed, when it comes back (refused, or previewed, or its saved
    draft refused); else None."""
    if preview is None and refused(endpoint) is None and refused("drafts.save") is None:
        return None
    return _draft(strict=False)


def _saved(campaign: Campaign, form: str, target_id: int = 0):
    """The viewer's saved draft of a post form (issue #29 item 5): the row, and the form's
    fields from it."""
    saved = saved_drafts.my_draft(
        session=get_session(),
        user=current_account(),
        campaign=campaign,
        form=form,
        target_id=target_id,
    )
    if saved is None:
        return None, None
    fields = saved.fields
    recipients = fields.get("recipients") or []
    draft = Draft(
        body=str(fields.get("body", "")),
        kind=str(fields.get("kind") or "ic"),
        audience=str(fields.get("audience") or "all"),
        recipient_ids=tuple(n for v in recipients if (n := _int(str(v), strict=False)) is not None),
        character_id=_int(str(fields.get("character_id", "")), strict=False),
        roll_visibility=str(fields.get("roll_visibility") or "public"),
    )
    return saved, draft


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
        "icon_choices": icons.choices(session=session, characters=characters),
        "members": [
            m
            for m in threads.members(session=session, campaign=campaign)
            if m.user_id != viewer.user_id
        ],
        "kinds": KINDS,
        "audiences": AUDIENCES,
        "roll_visibility": ROLL_VISIBILITY,
        "needs_character": _needs_character(campaign),
        **extra,
    }


# -- reading ---------------------------------------------------------------------------------


@bp.get("/c/<slug>/forum/")
def index(slug: str):
    """The scenes first, then the reader's own character and how to roll (issue #27 item
    9); how the dice can be checked is a page of its own (`fairness`)."""
    campaign = _forum(slug)
    session, viewer = get_session(), _viewer(campaign)
    user, news = current_account(), {}
    if user is not None and viewer.is_member and viewer.role is not None:
        news = unread.scene_counts(session=session, user=user, campaign=campaign, role=viewer.role)
    return render_template(
        "forum/index.html",
        campaign=campaign,
        viewer=viewer,
        news=news,
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


def _thread_page(
    campaign: Campaign,
    thread_id: int,
    preview: str | None = None,
    commands: list[str] | None = None,
):
    """The scene, with the reply form empty, or as typed after a refusal or a preview."""
    session, viewer = get_session(), _viewer(campaign)
    found, shown = threads.get_thread(
        session=session, campaign=campaign, thread_id=thread_id, viewer=viewer
    )
    context: dict = {"kinds": KINDS}
    if viewer.is_member:
        draft, saved = _typed_draft("forum.reply", preview), None
        if draft is None:
            saved, draft = _saved(campaign, "post", thread_id)
        extra = {} if preview is None else {"preview": preview, "commands": commands}
        context |= _form_context(campaign, viewer, draft, saved_draft=saved, **extra)
    reading = unread.Reading()
    user = current_account()
    if user is not None and viewer.is_member:
        reading = unread.seen_in_scene(
            session=session, user=user, campaign=campaign, thread=found, posts=shown
        )
        unread_marks.keep(reading)
    return render_template(
        "forum/thread.html",
        campaign=campaign,
        viewer=viewer,
        thread=found,
        posts=shown,
        new=reading.new,
        first_new=reading.first,
        watching=threads.is_watching(session=session, thread=found, viewer=viewer),
        **_combat_context(session, campaign, found, viewer),
        **context,
    )


def _combat_context(session, campaign: Campaign, thread, viewer) -> dict:
    """A ONE scene's combat (issue #33 item 4), and the characters the GM may start one
    with; nothing for the other rulesets."""
    if campaign.ruleset != "one":
        return {"combat": None}
    chosen = visibility.characters_of(session, campaign) if viewer.is_gm else []
    return {"combat": fight.current(session=session, thread=thread), "fighters": chosen}


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


def _new_page(slug: str, preview: str | None = None, commands: list[str] | None = None):
    """The new scene's form: empty, or as typed after a refusal or a preview."""
    if current_account() is None:
        return to_login()
    campaign = _forum(slug)
    require_member(campaign)
    draft = _typed_draft("forum.new_thread", preview)
    title = request.form.get("title", "") if draft else ""
    saved = None
    if draft is None:
        saved, draft = _saved(campaign, "scene")
        title = str(saved.fields.get("title", "")) if saved else ""
    extra = {} if preview is None else {"preview": preview, "commands": commands}
    return render_template(
        "forum/new.html",
        campaign=campaign,
        title=title,
        **_form_context(campaign, _viewer(campaign), draft, saved_draft=saved, **extra),
    )


@action(bp, "/c/<slug>/forum/new", role="member", creates=True, page=_new_page, get=True)
def new_thread(act: Act, slug: str):
    campaign = _forum(slug)
    if act.text("action") == "preview":
        html, commands = drafts.preview(session=act.session, text=act.text("body"))
        return _new_page(slug, preview=html, commands=commands)
    post = posts.create_thread(
        session=act.session,
        campaign=campaign,
        author=act.account,
        title=act.text("title"),
        draft=_checked(_draft()),
        mail=act.mail,
        now=act.now,
    )
    return act.done(_post_url(slug, post.thread_id, post.id), "Thread opened.")


@action(bp, "/c/<slug>/forum/t/<int:thread_id>", role="member", creates=True, page="forum.thread")
def reply(act: Act, slug: str, thread_id: int):
    campaign = _forum(slug)
    if act.text("action") == "preview":
        html, commands = drafts.preview(session=act.session, text=act.text("body"))
        return _thread_page(campaign, thread_id, preview=html, commands=commands)
    post = posts.reply(
        session=act.session,
        campaign=campaign,
        thread_id=thread_id,
        author=act.account,
        draft=_checked(_draft()),
        mail=act.mail,
        now=act.now,
    )
    return act.done(_post_url(slug, thread_id, post.id), "Posted.")


def _post_url(slug: str, thread_id: int, post_id: int) -> str:
    return url_for("forum.thread", slug=slug, thread_id=thread_id) + f"#post-{post_id}"


@action(bp, "/c/<slug>/forum/t/<int:thread_id>/watch", role="member", page="forum.thread")
def watch(act: Act, slug: str, thread_id: int):
    on = act.text("watch") == "on"
    threads.watch_thread(
        session=act.session,
        campaign=_forum(slug),
        thread_id=thread_id,
        user=act.account,
        on=on,
        now=act.now,
    )
    return act.done(
        url_for("forum.thread", slug=slug, thread_id=thread_id),
        "You watch this thread: new posts are emailed to you."
        if on
        else "You no longer watch this thread.",
    )


def _edit_page(slug: str, post_id: int):
    """A post's edit form: its text, or the text as typed after a refusal."""
    if current_account() is None:
        return to_login()
    campaign = _forum(slug)
    require_member(campaign)
    post = posts.post_to_edit(
        session=get_session(), campaign=campaign, post_id=post_id, viewer=_viewer(campaign)
    )
    return render_template("forum/edit.html", campaign=campaign, post=post)


@action(bp, "/c/<slug>/forum/posts/<int:post_id>/edit", role="member", page=_edit_page, get=True)
def edit(act: Act, slug: str, post_id: int):
    post = posts.change_post(
        session=act.session,
        campaign=_forum(slug),
        post_id=post_id,
        editor=act.account,
        body=parsed(PostEdit, {"body": act.text("body")}).body,
        now=act.now,
        mail=act.mail,
    )
    return act.done(
        _post_url(slug, post.thread_id, post.id),
        "Post updated; the earlier version is kept for the GM.",
    )


@action(bp, "/c/<slug>/forum/posts/<int:post_id>/delete", role="member")
def delete(act: Act, slug: str, post_id: int):
    post = posts.remove_post(
        session=act.session, campaign=_forum(slug), post_id=post_id, actor=act.account, now=act.now
    )
    return act.done(
        _post_url(slug, post.thread_id, post.id), "Post deleted. Its rolls stay on the record."
    )


@bp.get("/c/<slug>/forum/posts/<int:post_id>/history")
@login_required
def history(slug: str, post_id: int):
    campaign = _forum(slug)
    session, viewer = get_session(), _viewer(campaign)
    post = visibility.get_post(session=session, campaign=campaign, post_id=post_id, viewer=viewer)
    revisions = posts.post_history(session=session, campaign=campaign, post=post, viewer=viewer)
    return render_template("forum/history.html", campaign=campaign, post=post, revisions=revisions)


@action(bp, "/c/<slug>/forum/start", role="referee", page="forum.index")
def start(act: Act, slug: str):
    commitment = gm.start_campaign(
        session=act.session, campaign=_forum(slug), actor=act.account, now=act.now
    )
    return act.done(
        url_for("forum.index", slug=slug),
        f"The campaign is running. Dice commitment (SHA-256): {commitment}",
    )


@action(bp, "/c/<slug>/forum/end", role="referee", page="forum.index")
def end(act: Act, slug: str):
    gm.end_campaign(session=act.session, campaign=_forum(slug), actor=act.account, now=act.now)
    return act.done(
        url_for("forum.index", slug=slug),
        "The campaign has ended and its seed is revealed: every roll can be checked.",
    )


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
        needs_character=_needs_character(campaign),
    )


def _needs_character(campaign: Campaign) -> bool:
    return characters.needs_character(
        session=get_session(), campaign=campaign, user=current_account()
    )


def _make_character_page(slug: str):
    """The page the "Make your character" form came from: a scene's, or the sheets'."""
    thread_id = _int(request.form.get("thread_id"), strict=False)
    if thread_id is not None:
        return _thread_page(_forum(slug), thread_id)
    return sheet_list(slug)


@action(bp, "/c/<slug>/sheets/", role="player", creates=True, page=_make_character_page)
def make_character(act: Act, slug: str):
    """Issue #27 item 3: a player with no character makes one, and its sheet."""
    campaign = _forum(slug)
    typed = parsed(OwnCharacterIn, {"name": act.text("name"), "sheet": _sheet_form(campaign)})
    made = characters.make_own_character(
        session=act.session,
        campaign=campaign,
        actor=act.account,
        name=typed.name,
        sheet=typed.sheet,
        now=act.now,
    )
    name = made.character.name
    thread_id = _int(act.text("thread_id"))
    if thread_id is None:
        back = url_for("forum.sheet", slug=slug, character=made.character.slug)
    else:
        back = url_for("forum.thread", slug=slug, thread_id=thread_id) + "#reply-title"
    return act.done(back, f"{name} is yours: post as {name} in any scene.")


@action(bp, "/c/<slug>/sheets/for-player", role="referee", creates=True, page="referee.board")
def make_character_for(act: Act, slug: str):
    """Issue #27 item 3: the GM makes a character for a player with none and hands it over."""
    typed = parsed(CharacterForIn, {"player_id": act.text("player_id"), "name": act.text("name")})
    made = characters.make_character_for(
        session=act.session,
        campaign=_forum(slug),
        actor=act.account,
        player_id=typed.player_id,
        name=typed.name,
        sheet=None,
        now=act.now,
        secret_key=app_secret(),
        base_url=current_app.config["PBP_BASE_URL"],
    )
    return act.done(
        url_for("referee.board", slug=slug) + "#sheets-title",
        f"{made.character.name} is made and handed to its player, who can post as them now.",
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


def _sheet_edit_page(slug: str, character: str):
    """A sheet's form: the stored sheet, or the form as typed after a refusal."""
    if current_account() is None:
        return to_login()
    campaign = _forum(slug)
    session = get_session()
    found = campaigns.character_by_slug(session=session, campaign=campaign, slug=character)
    if not _can_edit_sheet(campaign, found):
        require_member(campaign)  # a stranger is told to log in or that they are not in it
        raise Forbidden(f"only {found.name}'s player and the GM can change this sheet")
    row = sheets.get_sheet(session=session, character=found)
    return render_template(
        "forum/sheet_edit.html",
        campaign=campaign,
        character=found,
        data=dict(row.data) if row else {},
        form=request.form if refused("forum.sheet_edit") else None,
    )


@action(
    bp,
    "/c/<slug>/sheets/<character>/edit",
    role="member",
    creates=True,  # the first save makes the sheet
    page=_sheet_edit_page,
    get=True,
)
def sheet_edit(act: Act, slug: str, character: str):
    campaign = _forum(slug)
    found, _sheet = sheets.edit_sheet(
        session=act.session,
        campaign=campaign,
        character_slug=character,
        data=parsed(SheetIn, {"data": _sheet_form(campaign)}).data,
        actor=act.account,
        now=act.now,
    )
    return act.done(
        url_for("forum.sheet", slug=slug, character=found.slug), f"{found.name}'s sheet is saved."
    )


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
