"""Players' pages: character pages, entries with their notes, and the built-in blog's
forms (write, edit, withdraw a challenge, leave a note)."""

from __future__ import annotations

from flask import Blueprint, current_app, flash, redirect, render_template, request, url_for
from sqlmodel import select

from pbp import limits
from pbp.db import get_session
from pbp.errors import REFUSALS, Forbidden, NotFound, UserError
from pbp.limits import check_length
from pbp.models import Challenge, Entry, EntryRevision, Note, utcnow
from pbp.rules import noteworthy as nw
from pbp.services import campaigns
from pbp.services.mail.outbox import MailSettings
from pbp.services.noteworthy import hosted_blog as blog
from pbp.services.noteworthy import outgoing_feeds as feeds
from pbp.services.noteworthy import play, turns
from pbp.services.noteworthy import tally as tally_service
from pbp.web import access
from pbp.web.access import current_account, login_required
from pbp.web.refusals import REFUSED_FORM, shown_with_form

bp = Blueprint("blog", __name__, url_prefix="/c/<slug>")


def now():
    return current_app.config.get("PBP_CLOCK", utcnow)()


def _mail() -> MailSettings:
    return MailSettings.from_config(current_app.config)


def _entry(session, campaign, character_slug: str, entry_id: int):
    author = feeds.character_by_slug(session=session, campaign=campaign, slug=character_slug)
    entry = session.get(Entry, entry_id)
    if entry is None or entry.character_id != author.id:
        raise NotFound("there is no such entry")
    return author, entry


def _mood_suggestions(campaign) -> list[str]:
    return ["Challenging", *(campaign.settings or {}).get("custom_moods", {})]


@bp.route("/write", methods=["GET", "POST"])
@login_required
def write(slug: str):
    session = get_session()
    campaign = campaigns.get_campaign(session=session, slug=slug)
    character = access.my_character(session, campaign)
    turn = play.open_turn(session=session, campaign=campaign)
    option = play.challenge_option(
        session=session, campaign=campaign, character=character, turn=turn
    )
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
                entry = _post(session, character, option, typed)
                flash("Entry posted.", "ok")
                return redirect(
                    url_for("blog.entry", slug=slug, character=character.slug, entry_id=entry.id)
                )
        except REFUSALS as exc:  # shown with the form, what was typed kept
            if not shown_with_form(exc):
                raise
            session.rollback()
            error, status = str(exc), REFUSED_FORM
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


def _post(session, character, option, typed: dict) -> Entry:
    check_length(typed["body"], limits.ENTRY_BODY, "an entry")
    target = play.chosen_target(option, typed["mood"], typed["target"])
    entry = blog.post_entry(
        session=session,
        character=character,
        title=typed["title"],
        body_markdown=play.with_target(typed["body"], typed["mood"], target),
        mood=typed["mood"],
        now=now(),
        mail=_mail(),
    )
    session.commit()
    return entry


@bp.route("/<character>/<int:entry_id>/edit", methods=["GET", "POST"])
@login_required
def edit(slug: str, character: str, entry_id: int):
    session = get_session()
    campaign = campaigns.get_campaign(session=session, slug=slug)
    mine = access.my_character(session, campaign)
    author, entry = _entry(session, campaign, character, entry_id)
    if author.id != mine.id:
        raise Forbidden("only the entry's author can edit it")
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
                outcome = _edit(session, campaign, mine, entry, typed)
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
        author=author,
        moods=_mood_suggestions(campaign),
        typed=typed,
        error=error,
        preview=preview,
    ), status


def _edit(session, campaign, mine, entry, typed: dict) -> str:
    check_length(typed["body"], limits.ENTRY_BODY, "an entry")
    if nw.is_challenging(typed["mood"]) and entry.mood != nw.CHALLENGING:
        # Editing to Challenging makes a challenge at the edit's time: same checks.
        turn = play.open_turn(session=session, campaign=campaign)
        option = play.challenge_option(
            session=session, campaign=campaign, character=mine, turn=turn
        )
        if not option.allowed:
            raise UserError(option.reason)
    outcome = blog.edit_entry(
        session=session,
        entry=entry,
        editor=mine,
        title=typed["title"],
        body_markdown=typed["body"],
        mood=typed["mood"],
        now=now(),
        mail=_mail(),
    )
    session.commit()
    return outcome


@bp.post("/<character>/<int:entry_id>/withdraw")
@login_required
def withdraw(slug: str, character: str, entry_id: int):
    """Noteworthy: "You may withdraw your challenge before the end of a turn, but that
    still counts as your challenge for that turn." Recorded as a mood revision."""
    session = get_session()
    campaign = campaigns.get_campaign(session=session, slug=slug)
    mine = access.my_character(session, campaign)
    author, entry = _entry(session, campaign, character, entry_id)
    if author.id != mine.id:
        raise Forbidden("only the challenger can withdraw a challenge")
    if entry.mood != nw.CHALLENGING:
        raise UserError("this entry is not a challenge")
    body = session.exec(
        select(EntryRevision)
        .where(EntryRevision.entry_id == entry.id)
        .order_by(EntryRevision.id.desc())
    ).first()
    blog.edit_entry(
        session=session,
        entry=entry,
        editor=mine,
        title=entry.title,
        kept_html=play.markdown_source(body),
        mood=play.WITHDRAWN_MOOD,
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
    mine = access.my_character(session, campaign)
    _, entry = _entry(session, campaign, character, entry_id)
    turn = play.open_turn(session=session, campaign=campaign)
    typed = {k: request.form.get(k) or "" for k in ("body", "fate")}
    try:
        refusal = play.note_refusal(entry=entry, turn=turn)
        if refusal:
            raise UserError(refusal)
        _note(session, campaign, turn, mine, entry, typed, request.form.get("stance") or "none")
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


def _note(session, campaign, turn, mine, entry, typed: dict, stance: str) -> None:
    if stance not in ("support", "oppose", "none"):
        raise UserError("a position is Support, Oppose or No position")
    if stance != "none":
        why = play.stance_refusal(
            session=session, campaign=campaign, character=mine, entry=entry, turn=turn
        )
        if why:
            raise UserError(why)
    blog.post_note(
        session=session,
        entry=entry,
        author=mine,
        body_markdown=typed["body"],
        stance=stance,
        fate=typed["fate"],
        now=now(),
        mail=_mail(),
    )
    session.commit()


@bp.get("/<character>/<int:entry_id>")
def entry(slug: str, character: str, entry_id: int):
    return _entry_page(slug, character, entry_id)


def _entry_page(slug: str, character: str, entry_id: int, **note_form):
    session = get_session()
    campaign = campaigns.get_campaign(session=session, slug=slug)
    author, row = _entry(session, campaign, character, entry_id)
    notes = session.exec(
        select(Note).where(Note.entry_id == row.id).order_by(Note.published_at, Note.id)
    ).all()
    names = {c.id: c for c in campaigns.characters(session=session, campaign=campaign)}
    turn = play.open_turn(session=session, campaign=campaign)
    mine = play.character_of(session=session, campaign=campaign, user=current_account())
    result = None
    if turn is not None and row.turn_id == turn.id and row.mood == nw.CHALLENGING:
        tally = tally_service.tally(session=session, campaign=campaign, turn=turn)
        result = tally.challenge_for(row.id)
    refusal = play.note_refusal(entry=row, turn=turn)
    final = play.finalists(session=session, campaign=campaign, turn=turn)
    position = play.position_refusal(
        character=mine, entry=row, target_id=result.target_id if result else None, final=final
    )
    return render_template(
        "blog/entry.html",
        campaign=campaign,
        author=author,
        entry=row,
        notes=notes,
        names=names,
        mine=mine,
        challenge=result,
        note_refusal=refusal,
        position_refusal=position,
        final_vote=refusal is None and row.character_id in final,
        **note_form,
    )


@bp.get("/<character>/")
def character_page(slug: str, character: str):
    session = get_session()
    campaign = campaigns.get_campaign(session=session, slug=slug)
    who = feeds.character_by_slug(session=session, campaign=campaign, slug=character)
    # The list shows titles only: no bodies read for up to 100 entries.
    entries = session.exec(
        select(Entry.id, Entry.title, Entry.mood_raw, Entry.published_at)
        .where(Entry.character_id == who.id)
        .order_by(Entry.published_at.desc(), Entry.id.desc())
        .limit(100)
    ).all()
    made = session.exec(select(Challenge).where(Challenge.challenger_id == who.id)).all()
    received = session.exec(select(Challenge).where(Challenge.target_id == who.id)).all()
    names = {c.id: c for c in campaigns.characters(session=session, campaign=campaign)}
    blog_row = blog.blog_of(session=session, character=who)
    turn = turns.latest_turn(session=session, campaign=campaign)
    current = [
        c
        for c in tally_service.live_challenges(session=session, campaign=campaign, turn=turn)
        if who.id in (c.challenger_id, c.target_id) and c.challenger_id in names
    ]
    return render_template(
        "blog/character.html",
        campaign=campaign,
        character=who,
        entries=entries,
        made=made,
        received=received,
        names=names,
        blog=blog_row,
        current=current,
        turn=turn,
    )
