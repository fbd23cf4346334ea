"""Players' pages: character pages, entries with their notes, and the built-in blog's
forms (write, edit, withdraw a challenge, leave a note).

Translation only: each form is read with the API's input model (pbp.inputs.entries) and
handed to the action's one service function (pbp.services.noteworthy.hosted_blog), which
holds every check; the API's handlers call the same functions."""

from __future__ import annotations

from flask import Blueprint, current_app, flash, redirect, render_template, request, url_for

from pbp.db import get_session
from pbp.errors import REFUSALS
from pbp.inputs.entries import EntryEdit, EntryIn, NoteIn
from pbp.models import utcnow
from pbp.services import campaigns
from pbp.services.mail.settings import MailSettings
from pbp.services.noteworthy import blog_pages, hosted_blog, play
from pbp.web import access
from pbp.web.access import current_account, login_required
from pbp.web.forms import parsed
from pbp.web.refusals import REFUSED_FORM, shown_with_form

bp = Blueprint("blog", __name__, url_prefix="/c/<slug>")


def now():
    return current_app.config.get("PBP_CLOCK", utcnow)()


def _mail() -> MailSettings:
    return MailSettings.from_config(current_app.config)


def _entry(session, campaign, character_slug: str, entry_id: int):
    return hosted_blog.entry_at(
        session=session, campaign=campaign, character_slug=character_slug, entry_id=entry_id
    )


def _mood_suggestions(campaign) -> list[str]:
    return ["Challenging", *(campaign.settings or {}).get("custom_moods", {})]


@bp.route("/write", methods=["GET", "POST"])
@login_required
def write(slug: str):
    session = get_session()
    campaign = campaigns.get_campaign(session=session, slug=slug)
    character = access.my_character(session, campaign)
    # What was typed, exactly: shown again as it came if the entry is refused or previewed.
    form = {k: request.form.get(k, "") for k in ("title", "mood", "body", "target")}
    error, status, preview = None, 200, None
    if request.method == "POST":
        typed = {k: v.strip() for k, v in form.items()}
        try:
            if request.form.get("action") == "preview":
                preview = play.preview_entry(
                    session=session,
                    campaign=campaign,
                    character=character,
                    title=typed["title"],
                    body_markdown=typed["body"],
                    mood=typed["mood"],
                    target_id=typed["target"],
                )
            else:
                entry_in = parsed(EntryIn, {**typed, "target_id": typed["target"]})
                entry = hosted_blog.write_entry(
                    session=session,
                    actor=current_account(),
                    campaign=campaign,
                    title=entry_in.title,
                    mood=entry_in.mood,
                    body=entry_in.body,
                    target_id=entry_in.target_id,
                    now=now(),
                    mail=_mail(),
                )
                session.commit()
                flash("Entry posted.", "ok")
                return redirect(
                    url_for("blog.entry", slug=slug, character=character.slug, entry_id=entry.id)
                )
        except REFUSALS as exc:  # shown with the form, what was typed kept
            if not shown_with_form(exc):
                raise
            session.rollback()
            error, status = str(exc), REFUSED_FORM
    turn = play.open_turn(session=session, campaign=campaign)
    option = play.challenge_option(
        session=session, campaign=campaign, character=character, turn=turn
    )
    return render_template(
        "blog/write.html",
        campaign=campaign,
        character=character,
        option=option,
        form=form,
        error=error,
        preview=preview,
        moods=_mood_suggestions(campaign),
        turn=turn,
    ), status


@bp.route("/<character>/<int:entry_id>/edit", methods=["GET", "POST"])
@login_required
def edit(slug: str, character: str, entry_id: int):
    session = get_session()
    campaign = campaigns.get_campaign(session=session, slug=slug)
    access.visiting(campaign)
    author, entry = _entry(session, campaign, character, entry_id)
    start = hosted_blog.edit_form(
        session=session, actor=current_account(), campaign=campaign, entry_id=entry_id
    )
    mine = start.character
    error, status, typed, preview, outcome = None, 200, None, None, None
    if request.method == "POST":
        typed = {k: request.form.get(k, "") for k in ("title", "mood", "body")}
        try:
            if request.form.get("action") == "preview":
                preview = play.preview_entry(
                    session=session,
                    campaign=campaign,
                    character=mine,
                    title=typed["title"].strip(),
                    body_markdown=typed["body"],
                    mood=typed["mood"].strip(),
                    editing=entry,
                )
            else:
                edit_in = parsed(EntryEdit, typed)
                outcome = hosted_blog.edit_entry(
                    session=session,
                    actor=current_account(),
                    campaign=campaign,
                    entry_id=entry_id,
                    title=edit_in.title,
                    mood=edit_in.mood,
                    body=edit_in.body,
                    now=now(),
                    mail=_mail(),
                )
                session.commit()
        except REFUSALS as exc:  # shown with the form, what was typed kept
            if not shown_with_form(exc):
                raise
            session.rollback()
            error, status = str(exc), REFUSED_FORM
    if outcome is not None:
        flash(
            "Entry updated (the earlier version is kept)."
            if outcome == "changed"
            else "Nothing changed.",
            "ok",
        )
        return redirect(url_for("blog.entry", slug=slug, character=character, entry_id=entry_id))
    return render_template(
        "blog/edit.html",
        campaign=campaign,
        entry=entry,
        start=start,
        author=author,
        moods=_mood_suggestions(campaign),
        typed=typed,
        error=error,
        preview=preview,
    ), status


@bp.post("/<character>/<int:entry_id>/withdraw")
@login_required
def withdraw(slug: str, character: str, entry_id: int):
    session = get_session()
    campaign = campaigns.get_campaign(session=session, slug=slug)
    access.visiting(campaign)
    _entry(session, campaign, character, entry_id)
    hosted_blog.withdraw_entry(
        session=session,
        actor=current_account(),
        campaign=campaign,
        entry_id=entry_id,
        now=now(),
        mail=_mail(),
    )
    session.commit()
    flash("Challenge withdrawn: it has no effect, and it is still your challenge this turn.", "ok")
    return redirect(url_for("blog.entry", slug=slug, character=character, entry_id=entry_id))


@bp.post("/<character>/<int:entry_id>/notes")
@login_required
def add_note(slug: str, character: str, entry_id: int):
    session = get_session()
    campaign = campaigns.get_campaign(session=session, slug=slug)
    access.visiting(campaign)
    _entry(session, campaign, character, entry_id)
    typed = {k: request.form.get(k) or "" for k in ("body", "fate")}
    try:
        note = parsed(NoteIn, {**typed, "stance": request.form.get("stance") or "none"})
        hosted_blog.post_note(
            session=session,
            actor=current_account(),
            campaign=campaign,
            entry_id=entry_id,
            body=note.body,
            stance=note.stance,
            fate=note.fate,
            now=now(),
            mail=_mail(),
        )
        session.commit()
    except REFUSALS as exc:  # the entry's page again, with the note as it was typed
        if not shown_with_form(exc):
            raise
        session.rollback()
        page = _entry_page(slug, character, entry_id, typed_note=typed, note_error=str(exc))
        return page, REFUSED_FORM
    flash("Note posted.", "ok")
    return redirect(
        url_for("blog.entry", slug=slug, character=character, entry_id=entry_id) + "#notes"
    )


@bp.get("/<character>/<int:entry_id>")
def entry(slug: str, character: str, entry_id: int):
    return _entry_page(slug, character, entry_id)


def _entry_page(slug: str, character: str, entry_id: int, **note_form):
    session = get_session()
    campaign = campaigns.get_campaign(session=session, slug=slug)
    page = blog_pages.entry_page(
        session=session,
        campaign=campaign,
        character_slug=character,
        entry_id=entry_id,
        user=current_account(),
        now=now(),
    )
    return render_template(
        "blog/entry.html",
        campaign=campaign,
        author=page.author,
        entry=page.entry,
        notes=page.notes,
        names=page.names,
        mine=page.mine,
        challenge=page.challenge,
        note_refusal=page.note_refusal,
        position_refusal=page.position_refusal,
        final_vote=page.final_vote,
        editable=page.editable,
        note_counts=page.note_counts,
        **note_form,
    )


@bp.get("/<character>/")
def character_page(slug: str, character: str):
    session = get_session()
    campaign = campaigns.get_campaign(session=session, slug=slug)
    page = blog_pages.character_page(session=session, campaign=campaign, character_slug=character)
    return render_template(
        "blog/character.html",
        campaign=campaign,
        character=page.character,
        entries=page.entries,
        made=page.made,
        received=page.received,
        names=page.names,
        blog=page.blog,
        current=page.current,
        turn=page.turn,
    )
