"""A scene of a forum game as a book (issue #33 item 3): its posts to everyone, in order.

What the reader could read on the scene's page, less what a book must never carry: a
whisper, a post to the GM only and a deleted post are left out for every reader, the GM
included, so a book passed around tells no secret. Rolls are as the reader may see them
(`rolls.roll_view`): a hidden roll stays hidden.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlmodel import Session

from pbp.models import Campaign
from pbp.models.forum import Thread
from pbp.services.forum import threads
from pbp.services.forum.rolls import Viewer
from pbp.services.forum.visibility import PostView


@dataclass(frozen=True)
class SceneBook:
    campaign: Campaign
    thread: Thread
    posts: list[PostView]

    @property
    def title(self) -> str:
        return f"{self.thread.title} — {self.campaign.name}"


def scene_book(
    *, session: Session, campaign: Campaign, thread_id: int, viewer: Viewer
) -> SceneBook:
    thread, shown = threads.get_thread(
        session=session, campaign=campaign, thread_id=thread_id, viewer=viewer
    )
    public = [p for p in shown if p.audience == "all" and not p.deleted]
    return SceneBook(campaign, thread, public)
