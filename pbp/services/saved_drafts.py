"""A member's saved drafts of the write forms (issue #29 item 5, "Drafts that survive").

Not pbp.services.forum.drafts, which is a forum post as its form submits it: this is what
a member has typed and not yet posted, kept on the server so it survives a closed tab, an
expired session or a refused submit. The entry, note and forum-post forms save it every
10 s (pbp/static/drafts.js) and on their "Save draft" button, which works without scripts.

- One draft per member per form: the key is (user, campaign, form, target), the target
  being the entry a note answers or the scene a post replies in (0 for the new entry and
  the new scene). Saving again replaces it; saving an empty form deletes it.
- The posting services delete it in the transaction that posts (`discard`, called by
  hosted_blog.write_entry and post_note, forum.posts.create_thread and create_post).
- Private: every function here reads or writes the caller's own row and no other; nothing
  else in pbp reads the table (no page, feed, export, API answer or mail shows a draft).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime

import sqlalchemy as sa
from sqlmodel import Session, select

from pbp import limits
from pbp.errors import Conflict, NotFound, UserError
from pbp.models import DRAFT_FORMS, Campaign, SavedDraft, Thread, User
from pbp.services import campaigns, lookups

_CHOICE = 40  # a radio button's or a select's value
_POST_FIELDS = {
    "body": limits.POST_BODY,
    "kind": _CHOICE,
    "audience": _CHOICE,
    "recipients": _CHOICE,  # a list: each whisper recipient's id
    "character_id": _CHOICE,
    "roll_visibility": _CHOICE,
    "icon_id": _CHOICE,  # the character's icon picked (issue #33 item 1)
}
#: Each form's fields a draft keeps, and how long each may be (the form's own limits).
FIELDS: dict[str, dict[str, int]] = {
    "entry": {
        "title": limits.ENTRY_TITLE,
        "mood": _CHOICE * 5,
        "target": _CHOICE,
        "body": limits.ENTRY_BODY,
        "icon_id": _CHOICE,
    },
    # reply_to: the note a reply answers (threaded notes, issue #29 item 3), a hidden field.
    "note": {
        "body": limits.NOTE_BODY,
        "fate": limits.FATE,
        "stance": _CHOICE,
        "reply_to": _CHOICE,
        "icon_id": _CHOICE,
    },
    "post": _POST_FIELDS,
    "scene": {"title": 200, **_POST_FIELDS},
}
#: Fields that are lists (checkboxes); every other field is one text.
LISTS = frozenset({"recipients"})
MAX_CHOSEN = 200
#: The fields a person types: a form with none of them filled keeps no draft.
TYPED = ("body", "title", "mood", "fate")
#: The forms that have no target: their drafts are kept under target 0.
UNTARGETED = frozenset({"entry", "scene"})

Fields = Mapping[str, str | list[str]]

# A draft's address: "entry" and "scene" (no target), "note-<entry id>", "post-<scene id>".
_KEY = re.compile(r"(entry|scene)|(note|post)-([1-9][0-9]{0,9})")
MAX_ID = 2**31 - 1  # PostgreSQL `integer`


def parse_key(key: str) -> tuple[str, int]:
    """The form and target a draft's address names ("note-12": the note on entry 12)."""
    found = _KEY.fullmatch(key)
    if found is None or (found[3] is not None and int(found[3]) > MAX_ID):
        raise NotFound(f"there is no form {key[:40]!r} to keep a draft of")
    if found[1]:
        return found[1], 0
    return found[2], int(found[3])


def key_of(form: str, target_id: int = 0) -> str:
    """A draft's address: the inverse of `parse_key`."""
    return form if form in UNTARGETED else f"{form}-{target_id}"


def check_form(form: str, target_id: int) -> None:
    """A form pbp has, with a target exactly when it takes one; else NotFound."""
    if form not in DRAFT_FORMS:
        raise NotFound(f"there is no form {form!r} to keep a draft of")
    if (form in UNTARGETED) != (target_id == 0):
        what = "no target (0)" if form in UNTARGETED else "the id of what it answers"
        raise NotFound(f"a draft of the {form} form takes {what}")


def my_draft(
    *, session: Session, user: User | None, campaign: Campaign, form: str, target_id: int = 0
) -> SavedDraft | None:
    """The caller's own draft of this form, or None (always None for a visitor)."""
    if user is None or form not in DRAFT_FORMS:
        return None
    return session.exec(
        select(SavedDraft).where(
            SavedDraft.user_id == user.id,
            SavedDraft.campaign_id == campaign.id,
            SavedDraft.form == form,
            SavedDraft.target_id == target_id,
        )
    ).first()


def read_draft(
    *, session: Session, user: User | None, campaign: Campaign, form: str, target_id: int = 0
) -> SavedDraft:
    """The member's own draft of this form; NotFound when they have none."""
    check_form(form, target_id)
    campaigns.require_member(session=session, campaign=campaign, user=user, doing="keep drafts")
    draft = my_draft(session=session, user=user, campaign=campaign, form=form, target_id=target_id)
    if draft is None:
        raise NotFound("you have no draft of this form")
    return draft


def save_draft(
    *,
    session: Session,
    user: User | None,
    campaign: Campaign,
    form: str,
    target_id: int = 0,
    fields: Fields,
    now: datetime,
) -> SavedDraft | None:
    """Keep what the member typed in a form, replacing their earlier draft of it.

    A form with nothing typed deletes the draft (None): there is nothing to keep. Only the
    form's own fields are kept, each within the form's limit, so a draft always fits."""
    check_form(form, target_id)
    member = campaigns.require_member(
        session=session, campaign=campaign, user=user, doing="keep drafts"
    )
    kept = _checked(form, fields)
    _check_target(session, campaign, form, target_id)
    draft = my_draft(session=session, user=user, campaign=campaign, form=form, target_id=target_id)
    if not _typed_anything(kept):
        if draft is not None:
            session.delete(draft)
        return None
    if draft is None:
        draft = SavedDraft(
            user_id=member.user_id, campaign_id=campaign.id, form=form, target_id=target_id
        )
    draft.fields, draft.saved_at = kept, now
    try:
        with session.begin_nested():  # a savepoint: only this change is undone on a race
            session.add(draft)
    except sa.exc.IntegrityError as exc:  # another tab saved the first draft at this moment
        raise Conflict("this draft was saved elsewhere at the same moment: save again") from exc
    return draft


def discard(
    *, session: Session, user: User | None, campaign: Campaign, form: str, target_id: int = 0
) -> bool:
    """Delete the member's draft of this form (False: there was none). The posting
    services call it in the transaction that posts, so a draft goes exactly when its
    post is made."""
    draft = my_draft(session=session, user=user, campaign=campaign, form=form, target_id=target_id)
    if draft is None:
        return False
    session.delete(draft)
    return True


def delete_draft(
    *, session: Session, user: User | None, campaign: Campaign, form: str, target_id: int = 0
) -> bool:
    """The member throws their draft of this form away (False: there was none)."""
    check_form(form, target_id)
    campaigns.require_member(session=session, campaign=campaign, user=user, doing="keep drafts")
    return discard(session=session, user=user, campaign=campaign, form=form, target_id=target_id)


def _checked(form: str, fields: Fields) -> dict[str, str | list[str]]:
    allowed = FIELDS[form]
    unknown = sorted(set(fields) - set(allowed))
    if unknown:
        raise UserError(f"the {form} form has no field {unknown[0]!r}")
    kept: dict[str, str | list[str]] = {}
    for name, value in fields.items():
        values = [value] if isinstance(value, str) else list(value)
        if name not in LISTS and len(values) > 1:
            raise UserError(f"the {form} form's {name!r} is one text, not a list")
        if len(values) > MAX_CHOSEN:
            raise UserError(f"a draft may choose at most {MAX_CHOSEN} of {name!r}")
        for one in values:
            if "\x00" in one:
                raise UserError("text cannot contain NUL characters")
            if len(one) > allowed[name]:
                raise UserError(
                    f"a draft's {name.replace('_', ' ')} may be at most {allowed[name]} "
                    "characters: shorten it to keep it"
                )
        kept[name] = [v for v in values if v] if name in LISTS else (values[0] if values else "")
    return kept


def _typed_anything(fields: Mapping[str, str | list[str]]) -> bool:
    """Whether a person typed something: the texts, not the choices a form starts with."""
    return any(str(fields.get(name, "")).strip() for name in TYPED)


def _check_target(session: Session, campaign: Campaign, form: str, target_id: int) -> None:
    """The entry or the scene a draft answers is in this campaign (NotFound otherwise)."""
    if form == "note":
        lookups.get_entry(session=session, campaign=campaign, entry_id=target_id)
    elif form == "post":
        thread = session.get(Thread, target_id)
        if thread is None or thread.campaign_id != campaign.id:
            raise NotFound("there is no such scene")
