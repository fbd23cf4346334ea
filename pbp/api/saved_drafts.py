"""A member's saved draft of a write form (issue #29 item 5), the twin of the pages'
"Save draft" and its autosave (pbp.web.saved_drafts): read it, save it, throw it away.

`key` names the form as on the pages: "entry" (a new entry), "scene" (a new forum scene),
"note-<entry id>" (a note on that entry), "post-<scene id>" (a reply in that scene). Only
the caller's own draft is ever read or changed; posting the form deletes it.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from pbp.api.registry import Call, operation
from pbp.inputs.saved_drafts import DraftIn
from pbp.models import SavedDraft
from pbp.services import campaigns, saved_drafts

DRAFT = "/campaigns/<slug>/drafts/<key>"


class DraftOut(BaseModel):
    key: str = Field(description='The form: "entry", "scene", "note-<entry id>", "post-<id>".')
    fields: dict[str, str | list[str]] = Field(
        description="The form's fields as typed; empty when no draft is kept."
    )
    saved_at: datetime | None = Field(description="When it was saved; null: no draft is kept.")


def _out(key: str, draft: SavedDraft | None) -> DraftOut:
    if draft is None:
        return DraftOut(key=key, fields={}, saved_at=None)
    return DraftOut(key=key, fields=draft.fields, saved_at=draft.saved_at)


@operation("GET", DRAFT, tag="drafts", access="member", response=DraftOut)
def get_draft(call: Call, slug: str, key: str) -> DraftOut:
    """Your saved draft of a form (404 when you have none)."""
    form, target_id = saved_drafts.parse_key(key)
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    draft = saved_drafts.read_draft(
        session=call.session, user=call.account, campaign=campaign, form=form, target_id=target_id
    )
    return _out(key, draft)


@operation("PUT", DRAFT, tag="drafts", access="member", body=DraftIn, response=DraftOut)
def save_draft(call: Call, slug: str, key: str) -> DraftOut:
    """Save your draft of a form, replacing the one before; with no text typed, delete it.

    Rate-limited per account, as the pages' autosave is (every 10 s while a form changes)."""
    form, target_id = saved_drafts.parse_key(key)
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    draft = saved_drafts.save_draft(
        session=call.session,
        user=call.account,
        campaign=campaign,
        form=form,
        target_id=target_id,
        fields=call.body.fields,
        now=call.now,
    )
    return _out(key, draft)


@operation("DELETE", DRAFT, tag="drafts", access="member", response=DraftOut)
def delete_draft(call: Call, slug: str, key: str) -> DraftOut:
    """Throw your draft of a form away (nothing happens when you have none)."""
    form, target_id = saved_drafts.parse_key(key)
    campaign = campaigns.get_campaign(session=call.session, slug=slug)
    saved_drafts.delete_draft(
        session=call.session, user=call.account, campaign=campaign, form=form, target_id=target_id
    )
    return _out(key, None)
