"""Saved drafts of the write forms (issue #29 item 5; pbp.services.saved_drafts).

    POST /c/<slug>/drafts/<key>           save the form as typed (the "Save draft" button,
                                          and pbp/static/drafts.js every 10 s)
    POST /c/<slug>/drafts/<key>/discard   throw the draft away

`key` names the form: "entry", "scene", "note-<entry id>", "post-<scene id>". The entry,
note and forum-post forms carry `data-draft-url` and a "Save draft" button whose
`formaction` is the first address, so without scripts the same form is sent there and the
answer is the form's page again, with the draft in it. The script sends the same form
with the header `X-Draft-Autosave`, and is answered 204 with nothing to render.

Both are declared actions (CSRF, login, membership, one commit) without the one-time form
token: a draft is saved again and again from one form, and saving it twice does no harm.
Drafts have their own per-account rate limit (pbp.rate_limits.check_drafts).
"""

from __future__ import annotations

from flask import Blueprint, Response, request, url_for

from pbp.inputs.saved_drafts import DraftIn
from pbp.request_db import get_session
from pbp.services import campaigns, lookups, saved_drafts
from pbp.web.actions import Act, action
from pbp.web.forms import parsed

bp = Blueprint("drafts", __name__)

#: The header the autosave script sends: answered 204, not with a page.
AUTOSAVE_HEADER = "X-Draft-Autosave"


def _form_page(slug: str, key: str):
    """The page of the draft's form, shown again as typed when a draft is refused."""
    from pbp.web import blog, forum

    form, target_id = saved_drafts.parse_key(key)
    if form == "entry":
        return blog._write_page(slug)
    if form == "note":
        campaign = campaigns.get_campaign(session=get_session(), slug=slug)
        row = lookups.get_entry(session=get_session(), campaign=campaign, entry_id=target_id)
        return blog.entry(slug, row.author.slug, target_id)
    if form == "post":
        return forum.thread(slug, target_id)
    return forum._new_page(slug)


def form_url(slug: str, key: str) -> str:
    """Where the draft's form is (the "Save draft" button's answer goes back there)."""
    form, target_id = saved_drafts.parse_key(key)
    if form == "entry":
        return url_for("blog.write", slug=slug)
    if form == "note":
        campaign = campaigns.get_campaign(session=get_session(), slug=slug)
        row = lookups.get_entry(session=get_session(), campaign=campaign, entry_id=target_id)
        return (
            url_for("blog.entry", slug=slug, character=row.author.slug, entry_id=target_id)
            + "#notes"
        )
    if form == "post":
        return url_for("forum.thread", slug=slug, thread_id=target_id) + "#reply-title"
    return url_for("forum.new_thread", slug=slug)


def _typed(form: str) -> dict[str, str | list[str]]:
    """The draft's fields as the page's form sent them (its tokens and buttons left out)."""
    return {
        name: request.form.getlist(name) if name in saved_drafts.LISTS else request.form[name]
        for name in saved_drafts.FIELDS[form]
        if name in request.form
    }


@action(bp, "/c/<slug>/drafts/<key>", role="member", page=_form_page)
def save(act: Act, slug: str, key: str):
    """No one-time token: the same form is saved every 10 s while it is written."""
    form, target_id = saved_drafts.parse_key(key)
    typed = parsed(DraftIn, {"fields": _typed(form)})
    saved = saved_drafts.save_draft(
        session=act.session,
        user=act.account,
        campaign=act.campaign,
        form=form,
        target_id=target_id,
        fields=typed.fields,
        now=act.now,
    )
    if request.headers.get(AUTOSAVE_HEADER):
        return Response(status=204)
    message = "Draft saved: this form opens with it until you post." if saved else None
    return act.done(form_url(slug, key), message or "Nothing typed, so no draft is kept.")


@action(bp, "/c/<slug>/drafts/<key>/discard", role="member", page=_form_page)
def discard(act: Act, slug: str, key: str):
    form, target_id = saved_drafts.parse_key(key)
    saved_drafts.delete_draft(
        session=act.session, user=act.account, campaign=act.campaign, form=form, target_id=target_id
    )
    return act.done(form_url(slug, key), "Draft discarded.")
