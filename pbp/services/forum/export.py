"""A forum as JSON, as one viewer may see it; `rolls.verify_export` checks its rolls."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlmodel import Session, select

from pbp.models import Campaign
from pbp.models.forum import Thread
from pbp.rules import dice
from pbp.services.forum import combat, rolls
from pbp.services.forum.rolls import ROLL_VISIBILITY, Viewer, roll_view
from pbp.services.forum.visibility import PostView, require_forum, visible_posts


def export_forum(
    *, session: Session, campaign: Campaign, viewer: Viewer, now: datetime
) -> dict[str, Any]:
    """The forum as JSON, as `viewer` may see it; `rolls.verify_export` checks its rolls.

    The seed is included only once it is revealed (the campaign has ended); from then on
    every roll is included in full, so the export verifies completely.
    """
    require_forum(campaign)
    secret = rolls.get_secret(session=session, campaign=campaign)
    posts = visible_posts(session=session, campaign=campaign, viewer=viewer)
    titles = {
        t.id: t.title for t in session.exec(select(Thread).where(Thread.campaign_id == campaign.id))
    }
    threads: dict[int, dict[str, Any]] = {}
    for view in posts:
        thread = threads.setdefault(
            view.thread_id, {"id": view.thread_id, "title": titles[view.thread_id], "posts": []}
        )
        thread["posts"].append(_post_export(view))
    # A combat's history is public (it attaches only public rolls): kept with its thread.
    for thread_id, steps in combat.histories(session=session, thread_ids=list(threads)).items():
        threads[thread_id]["combat"] = steps
    revealed = rolls.revealed_seed(secret) is not None
    visible_ids = {v.id for v in posts}
    roll_rows = []
    for roll in rolls.campaign_rolls(session=session, campaign=campaign):
        seen = roll_view(roll, viewer, post_visible=roll.post_id in visible_ids, revealed=revealed)
        if seen is not None:
            roll_rows.append(
                seen.as_export()
                | ({"post_id": roll.post_id} if roll.post_id in visible_ids else {})
            )
    return {
        "format": rolls.EXPORT_FORMAT,
        "exported_at": rolls.iso(now),
        "campaign": {
            "slug": campaign.slug,
            "name": campaign.name,
            "ruleset": campaign.ruleset,
            "status": campaign.status,
        },
        "fairness": {
            "algorithm": dice.ALGORITHM,
            "commitment": secret.commitment if secret else None,
            # When the commitment was published: every roll is made after it (#35 item 1).
            "committed_at": rolls.iso(secret.created_at) if secret else None,
            "seed": rolls.revealed_seed(secret),
            "revealed_at": rolls.iso(secret.revealed_at) if secret else None,
            "roll_visibility": ROLL_VISIBILITY,
        },
        "threads": list(threads.values()),
        "rolls": roll_rows,
    }


def _post_export(view: PostView) -> dict[str, Any]:
    return {
        "id": view.id,
        "author": view.author,
        "character": view.character,
        "kind": view.kind,
        "audience": view.audience,
        "recipients": list(view.recipients),
        "body": view.body,
        "deleted": view.deleted,
        "created_at": rolls.iso(view.created_at),
        "edited_at": rolls.iso(view.edited_at),
        "rolls": [r.id for r in view.rolls],
    }
