"""`GET /me/board`: what waits on the caller across their campaigns (the signed-in home
page's "Waiting on you"; pbp.services.board builds both)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from flask import current_app
from pydantic import BaseModel, Field

from pbp.api.registry import Call, operation
from pbp.services import board as boards

Kind = Literal[boards.KINDS]  # type: ignore[valid-type]


class WaitingOut(BaseModel):
    kind: Kind = Field(description="What kind of thing waits: " + ", ".join(boards.KINDS) + ".")
    campaign: str = Field(description="The campaign's slug.")
    campaign_name: str
    text: str = Field(description="What to do, in words.")
    path: str = Field(description="The page where it is done, on this site.")
    due: datetime | None = Field(description="By when, if it has a time limit.")


class CampaignNewsOut(BaseModel):
    campaign: str = Field(description="The campaign's slug.")
    campaign_name: str
    role: Literal["referee", "player"]
    unread: int = Field(
        description="What is new to you since you last read it, up to 100 (the pages say 99+)."
    )


class BoardOut(BaseModel):
    items: list[WaitingOut] = Field(description="Most urgent first.")
    campaigns: list[CampaignNewsOut] = Field(
        default_factory=list, description="Every campaign you are in, newest first."
    )


@operation("GET", "/me/board", tag="account", access="user", response=BoardOut)
def my_board(call: Call) -> BoardOut:
    """What waits on you in every campaign you are in, most urgent first.

    A player's entry not written for the open turn, a challenge against their character,
    forum scenes with posts since theirs (and whispers to them), invitations; for a
    referee, flags to rule, commenters to map, a turn past its deadline, failed mail and
    failing feeds. Beside it, every campaign of yours with what is new to you there."""
    found = boards.board(
        session=call.session,
        user=call.account,
        now=call.now,
        secret_key=str(current_app.secret_key),
    )
    return BoardOut(
        items=[
            WaitingOut(
                kind=item.kind,
                campaign=item.campaign_slug,
                campaign_name=item.campaign_name,
                text=item.text,
                path=item.path,
                due=item.due,
            )
            for item in found.items
        ],
        campaigns=[
            CampaignNewsOut(
                campaign=campaign.slug,
                campaign_name=campaign.name,
                role="referee" if role == "referee" else "player",
                unread=found.unread.get(campaign.id, 0),
            )
            for campaign, role in found.campaigns
        ],
    )
