"""Entries and notes: reading them, and a player's built-in blog (write, edit, withdraw a
challenge, leave a note) with the checks of the blog's forms (pbp.web.blog, play)."""

from __future__ import annotations

from flask import current_app

from pbp.api import schemas as s
from pbp.api.convert import entry_out, note_out
from pbp.api.registry import Call, operation
from pbp.errors import Forbidden, UserError
from pbp.rules import noteworthy as nw
from pbp.services import campaigns
from pbp.services import lookups as api_reads
from pbp.services.lookups import Page
from pbp.services.mail.outbox import MailSettings
from pbp.services.noteworthy import hosted_blog as blog
from pbp.services.noteworthy import play
from pbp.web.access import my_character

ENTRY = "/campaigns/<slug>/entries/<int:entry_id>"


def _mail() -> MailSettings:
    return MailSettings.from_config(current_app.config)


@operation(
    "GET",
    "/campaigns/<slug>/entries",
    tag="entries",
    access="public",
    query=s.EntryQuery,
    response=s.EntryOut,
    paginated=True,
)
def list_entries(call: Call, slug: str) -> Page:
    """Every blog's entries in the order pbp first saw them; filter by turn or character."""
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    page = api_reads.entries_page(
        session=call.session,
        campaign=campaign,
        after=call.after,
        limit=call.query.limit,
        turn_number=call.query.turn,
        character_slug=call.query.character,
    )
    items = [entry_out(r.entry, r.author, r.turn_number) for r in page.items]
    return Page(items, page.next_after)


@operation("GET", ENTRY, tag="entries", access="public", response=s.EntryOut)
def get_entry(call: Call, slug: str, entry_id: int) -> s.EntryOut:
    """One entry."""
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    row = api_reads.get_entry(session=call.session, campaign=campaign, entry_id=entry_id)
    return entry_out(row.entry, row.author, row.turn_number)


@operation(
    "GET",
    "/campaigns/<slug>/challenge-option",
    tag="entries",
    access="player",
    response=s.ChallengeOptionOut,
)
def challenge_option(call: Call, slug: str) -> s.ChallengeOptionOut:
    """Whether your character may challenge this turn, whom, or why not."""
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    mine = my_character(call.session, campaign)
    turn = play.open_turn(session=call.session, campaign=campaign)
    option = play.challenge_option(
        session=call.session, campaign=campaign, character=mine, turn=turn
    )
    targets = [s.TargetOut(id=t.id, slug=t.slug, name=t.name) for t in option.targets]
    return s.ChallengeOptionOut(allowed=option.allowed, reason=option.reason, targets=targets)


@operation(
    "POST",
    "/campaigns/<slug>/entries",
    tag="entries",
    access="player",
    body=s.EntryIn,
    response=s.EntryOut,
    status=201,
)
def write_entry(call: Call, slug: str) -> s.EntryOut:
    """Post an entry on your character's blog on pbp.

    A "Challenging" mood needs `target_id`, one of the targets the challenge option lists;
    it becomes the entry's "Target:" line, as the write form does it.
    """
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    mine = my_character(call.session, campaign)
    turn = play.open_turn(session=call.session, campaign=campaign)
    option = play.challenge_option(
        session=call.session, campaign=campaign, character=mine, turn=turn
    )
    body = call.body
    form = {"mood": body.mood.strip(), "target": str(body.target_id or "")}
    target = play.chosen_target(option, form["mood"], form["target"])
    entry = blog.post_entry(
        session=call.session,
        character=mine,
        title=body.title.strip(),
        body_markdown=play.with_target(body.body.strip(), form["mood"], target),
        mood=form["mood"],
        now=call.now,
        mail=_mail(),
    )
    row = api_reads.get_entry(session=call.session, campaign=campaign, entry_id=entry.id)
    return entry_out(row.entry, row.author, row.turn_number)


def _own_entry(call: Call, campaign, entry_id: int, refusal: str):
    mine = my_character(call.session, campaign)
    row = api_reads.get_entry(session=call.session, campaign=campaign, entry_id=entry_id)
    if row.author.id != mine.id:
        raise Forbidden(refusal)
    return mine, row


@operation("PUT", ENTRY, tag="entries", access="player", body=s.EntryEdit, response=s.EditOut)
def edit_entry(call: Call, slug: str, entry_id: int) -> s.EditOut:
    """Edit your entry; pbp keeps the earlier version (the rules read mood changes)."""
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    mine, row = _own_entry(call, campaign, entry_id, "only the entry's author can edit it")
    body = call.body
    if nw.is_challenging(body.mood) and row.entry.mood != nw.CHALLENGING:
        # Editing to Challenging makes a challenge at the edit's time: same checks.
        turn = play.open_turn(session=call.session, campaign=campaign)
        option = play.challenge_option(
            session=call.session, campaign=campaign, character=mine, turn=turn
        )
        if not option.allowed:
            raise UserError(option.reason)
    outcome = blog.edit_entry(
        session=call.session,
        entry=row.entry,
        editor=mine,
        title=body.title,
        body_markdown=body.body,
        mood=body.mood,
        now=call.now,
        mail=_mail(),
    )
    row = api_reads.get_entry(session=call.session, campaign=campaign, entry_id=entry_id)
    return s.EditOut(
        entry=entry_out(row.entry, row.author, row.turn_number), changed=outcome == "changed"
    )


@operation("POST", ENTRY + "/withdraw", tag="entries", access="player", response=s.EditOut)
def withdraw(call: Call, slug: str, entry_id: int) -> s.EditOut:
    """Withdraw your challenge: it has no effect, and still counts as your challenge.

    Noteworthy: "You may withdraw your challenge before the end of a turn, but that still
    counts as your challenge for that turn." Recorded as a mood revision.
    """
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    mine, row = _own_entry(call, campaign, entry_id, "only the challenger can withdraw a challenge")
    if row.entry.mood != nw.CHALLENGING:
        raise UserError("this entry is not a challenge")
    latest = api_reads.latest_revision(session=call.session, entry=row.entry)
    outcome = blog.edit_entry(
        session=call.session,
        entry=row.entry,
        editor=mine,
        title=row.entry.title,
        kept_html=play.markdown_source(latest),
        mood=play.WITHDRAWN_MOOD,
        now=call.now,
        mail=_mail(),
    )
    row = api_reads.get_entry(session=call.session, campaign=campaign, entry_id=entry_id)
    return s.EditOut(
        entry=entry_out(row.entry, row.author, row.turn_number), changed=outcome == "changed"
    )


@operation(
    "GET",
    ENTRY + "/notes",
    tag="notes",
    access="public",
    response=s.NoteOut,
    paginated=True,
)
def list_notes(call: Call, slug: str, entry_id: int) -> Page:
    """The notes (comments) on an entry, in the order pbp saw them."""
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    row = api_reads.get_entry(session=call.session, campaign=campaign, entry_id=entry_id)
    page = api_reads.notes_page(
        session=call.session, entry=row.entry, after=call.after, limit=call.query.limit
    )
    return Page([note_out(n) for n in page.items], page.next_after)


@operation(
    "POST",
    ENTRY + "/notes",
    tag="notes",
    access="player",
    body=s.NoteIn,
    response=s.NoteOut,
    status=201,
)
def add_note(call: Call, slug: str, entry_id: int) -> s.NoteOut:
    """Leave a note as your character, with a position on a challenge if you may take one.

    Noteworthy: notes are permitted only on the current turn's entries; the challenger,
    the target and outsiders cannot support or oppose, except in the final, where the
    outsiders vote with a note on the entry of a finalist (Support backs that finalist,
    Oppose the rival) and the finalists cannot.
    """
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    mine = my_character(call.session, campaign)
    row = api_reads.get_entry(session=call.session, campaign=campaign, entry_id=entry_id)
    turn = play.open_turn(session=call.session, campaign=campaign)
    refusal = play.note_refusal(entry=row.entry, turn=turn)
    if refusal:
        raise UserError(refusal)
    body = call.body
    if body.stance != "none":
        why = play.stance_refusal(
            session=call.session, campaign=campaign, character=mine, entry=row.entry, turn=turn
        )
        if why:
            raise UserError(why)
    note = blog.post_note(
        session=call.session,
        entry=row.entry,
        author=mine,
        body_markdown=body.body,
        stance=body.stance,
        fate=body.fate,
        now=call.now,
        mail=_mail(),
    )
    return note_out(note)
