"""Players' pages: character pages, entries with their notes, and the built-in blog's
forms (write, edit, withdraw a challenge, hide an entry, leave a note).

Translation only: each form is read with the API's input model (pbp.inputs.entries) and
handed to the action's one service function (pbp.services.noteworthy.hosted_blog), which
holds every check; the API's handlers call the same functions. Every form is declared with
`pbp.web.actions.action`: a double click posts one entry or one note (the one-time form
token), and a refused form comes back with what was typed and the reason beside it (422).
A preview (the write and edit pages' "Preview" button) answers with the page itself: it
saves nothing and leaves the form's token unused, so "Post" after it still posts once.
"""

from __future__ import annotations

from flask import Blueprint, render_template, request, url_for

from pbp.inputs.entries import EntryEdit, EntryIn, NoteIn
from pbp.request_db import get_session
from pbp.services import campaigns, icons, saved_drafts, unread
from pbp.services.noteworthy import blog_pages, hidden_entries, hosted_blog, play
from pbp.web import access
from pbp.web import unread as unread_marks
from pbp.web.access import current_account, current_membership, login_required
from pbp.web.actions import Act, action, now, refused
from pbp.web.forms import parsed

bp = Blueprint("blog", __name__, url_prefix="/c/<slug>")

ENTRY_FIELDS = ("title", "mood", "body", "target", "icon_id")
NOTE_FIELDS = ("body", "fate", "stance", "reply_to", "icon_id")


def _entry(session, campaign, character_slug: str, entry_id: int):
    return hosted_blog.entry_at(
        session=session, campaign=campaign, character_slug=character_slug, entry_id=entry_id
    )


def _mood_suggestions(campaign) -> list[str]:
    return ["Challenging", *(campaign.settings or {}).get("custom_moods", {})]


def _entry_url(slug: str, character: str, entry_id: int, anchor: str = "") -> str:
    return url_for("blog.entry", slug=slug, character=character, entry_id=entry_id) + anchor


def _previewing(act: Act) -> bool:
    return act.text("action") == "preview"


# -- write ---------------------------------------------------------------------------------


@login_required
def _write_page(slug: str, preview=None):
    """The write form; after a preview or a refusal, exactly as it was typed. A GET shows
    the writer's saved draft (issue #29 item 5), or empty fields when there is none."""
    session = get_session()
    campaign = campaigns.get_campaign(session=session, slug=slug)
    character = access.my_character(session, campaign)
    form = {k: request.form.get(k, "") for k in ENTRY_FIELDS}
    draft = None
    if request.method != "POST":
        draft = saved_drafts.my_draft(
            session=session, user=current_account(), campaign=campaign, form="entry"
        )
        if draft is not None:
            form = {k: str(draft.fields.get(k, "")) for k in ENTRY_FIELDS}
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
        preview=preview,
        moods=_mood_suggestions(campaign),
        turn=turn,
        draft=draft,
        icon_choices=icons.choices(session=session, characters=[character]),
    )


@action(bp, "/write", role="player", creates=True, page=_write_page, get=True)
def write(act: Act, slug: str):
    typed = {k: act.text(k).strip() for k in ENTRY_FIELDS}
    character = access.my_character(act.session, act.campaign)
    if _previewing(act):
        preview = play.preview_entry(
            session=act.session,
            campaign=act.campaign,
            character=character,
            title=typed["title"],
            body_markdown=typed["body"],
            mood=typed["mood"],
            target_id=typed["target"],
        )
        return _write_page(slug, preview=preview)
    entry_in = parsed(EntryIn, {**typed, "target_id": typed["target"]})
    entry = hosted_blog.write_entry(
        session=act.session,
        actor=act.account,
        campaign=act.campaign,
        title=entry_in.title,
        mood=entry_in.mood,
        body=entry_in.body,
        target_id=entry_in.target_id,
        icon_id=entry_in.icon_id,
        now=act.now,
        mail=act.mail,
    )
    return act.done(_entry_url(slug, character.slug, entry.id), "Entry posted.")


# -- edit ----------------------------------------------------------------------------------


@login_required
def _edit_page(slug: str, character: str, entry_id: int, preview=None):
    """The edit form: the entry as stored, or, after a preview or a refusal, as typed."""
    session = get_session()
    campaign = campaigns.get_campaign(session=session, slug=slug)
    access.visiting(campaign)
    author, entry = _entry(session, campaign, character, entry_id)
    start = hosted_blog.edit_form(
        session=session, actor=current_account(), campaign=campaign, entry_id=entry_id
    )
    typed = None
    if request.method == "POST":
        typed = {k: request.form.get(k, "") for k in ("title", "mood", "body")}
    return render_template(
        "blog/edit.html",
        campaign=campaign,
        entry=entry,
        start=start,
        author=author,
        moods=_mood_suggestions(campaign),
        typed=typed,
        preview=preview,
    )


@action(
    bp, "/<character>/<int:entry_id>/edit", role="player", creates=True, page=_edit_page, get=True
)
def edit(act: Act, slug: str, character: str, entry_id: int):
    """creates=True: an edit keeps a revision and may mail a challenge it makes."""
    _entry(act.session, act.campaign, character, entry_id)
    typed = {k: act.text(k) for k in ("title", "mood", "body")}
    if _previewing(act):
        mine, entry = hosted_blog.own_entry(
            session=act.session, actor=act.account, campaign=act.campaign, entry_id=entry_id
        )
        preview = play.preview_entry(
            session=act.session,
            campaign=act.campaign,
            character=mine,
            title=typed["title"].strip(),
            body_markdown=typed["body"],
            mood=typed["mood"].strip(),
            editing=entry,
        )
        return _edit_page(slug, character, entry_id, preview=preview)
    edit_in = parsed(EntryEdit, typed)
    outcome = hosted_blog.edit_entry(
        session=act.session,
        actor=act.account,
        campaign=act.campaign,
        entry_id=entry_id,
        title=edit_in.title,
        mood=edit_in.mood,
        body=edit_in.body,
        now=act.now,
        mail=act.mail,
    )
    message = "Nothing changed."
    if outcome == "changed":
        message = "Entry updated (the earlier version is kept)."
    return act.done(_entry_url(slug, character, entry_id), message)


# -- the entry's page and its forms ----------------------------------------------------------


@action(bp, "/<character>/<int:entry_id>/withdraw", role="player", creates=True, page="blog.entry")
def withdraw(act: Act, slug: str, character: str, entry_id: int):
    """creates=True: a double click is answered as the first press, not refused as "not a
    challenge" by the second."""
    _entry(act.session, act.campaign, character, entry_id)
    hosted_blog.withdraw_entry(
        session=act.session,
        actor=act.account,
        campaign=act.campaign,
        entry_id=entry_id,
        now=act.now,
        mail=act.mail,
    )
    message = "Challenge withdrawn: it has no effect, and it is still your challenge this turn."
    return act.done(_entry_url(slug, character, entry_id), message)


@action(bp, "/<character>/<int:entry_id>/hide", role="player", creates=True, page="blog.entry")
def hide(act: Act, slug: str, character: str, entry_id: int):
    """Issue #27 item 2: a player hides their own entry while its turn is open (not the
    rules' withdrawal of a challenge: pbp.services.noteworthy.hidden_entries)."""
    _entry(act.session, act.campaign, character, entry_id)
    hidden_entries.hide_entry(
        session=act.session,
        actor=act.account,
        campaign=act.campaign,
        entry_id=entry_id,
        now=act.now,
    )
    message = (
        "Entry hidden: only you and the referee see it, and the tally reads this turn as if "
        "you had never posted it."
    )
    return act.done(_entry_url(slug, character, entry_id), message)


@action(bp, "/<character>/<int:entry_id>/notes", role="player", creates=True, page="blog.entry")
def add_note(act: Act, slug: str, character: str, entry_id: int):
    _entry(act.session, act.campaign, character, entry_id)
    typed = {k: act.text(k) for k in NOTE_FIELDS}
    note = parsed(
        NoteIn,
        {**typed, "stance": typed["stance"] or "none", "reply_to": typed["reply_to"] or None},
    )
    posted = hosted_blog.post_note(
        session=act.session,
        actor=act.account,
        campaign=act.campaign,
        entry_id=entry_id,
        body=note.body,
        stance=note.stance,
        fate=note.fate,
        reply_to=note.reply_to,
        icon_id=note.icon_id,
        now=act.now,
        mail=act.mail,
    )
    if note.reply_to is not None:
        return act.done(
            _entry_url(slug, character, entry_id, f"#note-{posted.id}"), "Reply posted."
        )
    return act.done(_entry_url(slug, character, entry_id, "#notes"), "Note posted.")


@bp.get("/<character>/<int:entry_id>")
def entry(slug: str, character: str, entry_id: int):
    """The entry with its notes; also the page a refused note comes back on, with the note
    as it was typed."""
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
    note_error = refused("blog.add_note")
    typed = note_error or refused("drafts.save")
    typed_note = {k: request.form.get(k, "") for k in NOTE_FIELDS} if typed else None
    draft = None
    if typed_note is None and page.mine is not None:
        # The note form opens with the writer's saved draft (issue #29 item 5).
        draft = saved_drafts.my_draft(
            session=session, user=current_account(), campaign=campaign, form="note",
            target_id=entry_id,
        )  # fmt: skip
        if draft is not None:
            typed_note = {k: str(draft.fields.get(k, "")) for k in NOTE_FIELDS}
    # "Reply" on a note opens the form as a reply to it (a link: no script needed); else
    # the form answers what it answered as typed, or as its draft kept it.
    replying = request.args.get("reply_to") or (typed_note or {}).get("reply_to", "")
    reply_to = page.note_by_id(replying)
    reading = unread.Reading()
    user = current_account()
    if user is not None and current_membership(campaign) is not None:
        reading = unread.seen_on_entry(
            session=session, user=user, campaign=campaign, entry=page.entry, notes=page.notes
        )
        unread_marks.keep(reading)
    return render_template(
        "blog/entry.html",
        new=reading.new,
        first_new=reading.first,
        campaign=campaign,
        author=page.author,
        entry=page.entry,
        notes=page.notes,
        threads=page.threads,
        reply_to=reply_to,
        names=page.names,
        mine=page.mine,
        challenge=page.challenge,
        note_refusal=page.note_refusal,
        position_refusal=page.position_refusal,
        final_vote=page.final_vote,
        may_hide=page.may_hide,
        versions=page.versions,
        icon=page.icon,
        note_icons=page.note_icons,
        icon_choices=icons.choices(session=session, characters=[page.mine] if page.mine else []),
        typed_note=typed_note,
        note_error=note_error,
        draft=draft,
        editable=page.editable,
        note_counts=page.note_counts,
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
