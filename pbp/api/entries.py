"""Entries and notes: reading them, and a player's built-in blog (write, edit, withdraw a
challenge, leave a note) with the checks of the blog's forms (pbp.web.blog, play)."""

from __future__ import annotations

from flask import current_app

from pbp.api import schemas as s
from pbp.api.convert import entry_out, note_out
from pbp.api.registry import Call, operation
from pbp.services import campaigns
from pbp.services import lookups as api_reads
from pbp.services.lookups import Page
from pbp.services.mail.settings import MailSettings
from pbp.services.noteworthy import hidden_entries, hosted_blog, play

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
    """Every blog's entries in the order pbp first saw them; filter by turn or character.
    Entries their authors hid are listed to the referee only (with `hidden_at`)."""
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    page = api_reads.entries_page(
        session=call.session,
        campaign=campaign,
        after=call.after,
        limit=call.query.limit,
        turn_number=call.query.turn,
        character_slug=call.query.character,
        include_hidden=_is_referee(call, campaign),
    )
    items = [entry_out(r.entry, r.author, r.turn_number) for r in page.items]
    return Page(items, page.next_after)


@operation("GET", ENTRY, tag="entries", access="public", response=s.EntryOut)
def get_entry(call: Call, slug: str, entry_id: int) -> s.EntryOut:
    """One entry (a hidden one: to its author and the referee only, 404 to others)."""
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    row = hidden_entries.visible_entry(
        session=call.session, campaign=campaign, entry_id=entry_id, user=call.user
    )
    return entry_out(row.entry, row.author, row.turn_number)


def _is_referee(call: Call, campaign) -> bool:
    if call.user is None:
        return False
    member = campaigns.membership(session=call.session, campaign=campaign, user=call.user)
    return member is not None and member.role == "referee"


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
    mine = play.player_character(session=call.session, campaign=campaign, user=call.user)
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
    body = call.body
    entry = hosted_blog.write_entry(
        session=call.session,
        actor=call.user,
        campaign=campaign,
        title=body.title,
        mood=body.mood,
        body=body.body,
        target_id=body.target_id,
        icon_id=body.icon_id,
        now=call.now,
        mail=_mail(),
    )
    return _entry_out(call, campaign, entry.id)


def _entry_out(call: Call, campaign, entry_id: int) -> s.EntryOut:
    row = api_reads.get_entry(session=call.session, campaign=campaign, entry_id=entry_id)
    return entry_out(row.entry, row.author, row.turn_number)


@operation("PUT", ENTRY, tag="entries", access="player", body=s.EntryEdit, response=s.EditOut)
def edit_entry(call: Call, slug: str, entry_id: int) -> s.EditOut:
    """Edit your entry; pbp keeps the earlier version (the rules read mood changes)."""
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    body = call.body
    outcome = hosted_blog.edit_entry(
        session=call.session,
        actor=call.user,
        campaign=campaign,
        entry_id=entry_id,
        title=body.title,
        mood=body.mood,
        body=body.body,
        now=call.now,
        mail=_mail(),
    )
    return s.EditOut(entry=_entry_out(call, campaign, entry_id), changed=outcome == "changed")


@operation("POST", ENTRY + "/withdraw", tag="entries", access="player", response=s.EditOut)
def withdraw(call: Call, slug: str, entry_id: int) -> s.EditOut:
    """Withdraw your challenge: it has no effect, and still counts as your challenge.

    Noteworthy: "You may withdraw your challenge before the end of a turn, but that still
    counts as your challenge for that turn." Recorded as a mood revision.
    """
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    outcome = hosted_blog.withdraw_entry(
        session=call.session,
        actor=call.user,
        campaign=campaign,
        entry_id=entry_id,
        now=call.now,
        mail=_mail(),
    )
    return s.EditOut(entry=_entry_out(call, campaign, entry_id), changed=outcome == "changed")


@operation("POST", ENTRY + "/hide", tag="entries", access="player", response=s.EntryOut)
def hide_entry(call: Call, slug: str, entry_id: int) -> s.EntryOut:
    """Hide your entry while its turn is open (issue #27 item 2): it leaves the planet, the
    feeds and the tally, which reads the turn as if it had never been posted (a hidden
    challenge no longer counts, nor do the notes on it). Only you and the referee still
    read it, the referee with every version. Not the rules' withdrawal of a challenge
    (`withdraw`), and it cannot be undone."""
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    hidden_entries.hide_entry(
        session=call.session, actor=call.user, campaign=campaign, entry_id=entry_id, now=call.now
    )
    return _entry_out(call, campaign, entry_id)


@operation(
    "GET",
    ENTRY + "/notes",
    tag="notes",
    access="public",
    response=s.NoteOut,
    paginated=True,
)
def list_notes(call: Call, slug: str, entry_id: int) -> Page:
    """The notes (comments) on an entry, in the order pbp saw them (a hidden entry's: to its
    author and the referee only)."""
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    row = hidden_entries.visible_entry(
        session=call.session, campaign=campaign, entry_id=entry_id, user=call.user
    )
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

    `reply_to` answers another note of the entry (its author is mailed). A reply takes a
    position only by its own marker: it inherits none from the note it answers.
    """
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    body = call.body
    note = hosted_blog.post_note(
        session=call.session,
        actor=call.user,
        campaign=campaign,
        entry_id=entry_id,
        body=body.body,
        stance=body.stance,
        fate=body.fate,
        reply_to=body.reply_to,
        icon_id=body.icon_id,
        now=call.now,
        mail=_mail(),
    )
    return note_out(note)
