"""A member's mail preferences, as the API takes them (the page sends its boxes)."""

from __future__ import annotations

from pydantic import Field

from pbp.inputs import Body


class MailPreferences(Body):
    """Which kinds of email a member gets from a campaign (the preferences page's boxes).
    Invitations and password resets are always sent."""

    events: bool = Field(description="New events and turn news (results, the final notice).")
    digest: bool = Field(description="The daily digest of new entries and notes.")
    notes_on_mine: bool = Field(description="Notes on your character's entries.")
    notes_as_mine: bool = Field(
        default=True,
        description="Notes read from other blogs' comments as your character's, with the "
        "stance read (so a note you did not write is seen). Left out: unchanged.",
    )
    replies_to_mine: bool = Field(
        default=True,
        description="Replies to your character's notes (threaded notes). Left out: on.",
    )
    challenges: bool = Field(description="Challenges against your character.")
    judging: bool = Field(
        default=False,
        description="Other characters' challenges, which yours may support or oppose (a "
        "reply to the mail is a note, when the instance has PBP_REPLY_DOMAIN).",
    )
    forum: bool = Field(description="New posts in forum scenes you watch.")
    mentions: bool = Field(
        default=True,
        description="Your character named with @ in an entry, note, post or event. Left out: on.",
    )
