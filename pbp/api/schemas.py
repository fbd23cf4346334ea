"""The API's response bodies, and its request bodies re-exported from pbp.inputs (one home
for what a person may send: the pages' forms are read with the same models).

They validate what comes in and describe what goes out, and the OpenAPI document's
schemas are generated from them (pbp.api.openapi), so the document cannot drift from the
code. Limits mirror the database columns: a value the API accepts always fits the row.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from pbp.api import game_schemas as g
from pbp.inputs import MAX_ID, Text
from pbp.inputs.alive import ActivitySettingsIO as ActivitySettingsIO
from pbp.inputs.alive import AwayIn as AwayIn
from pbp.inputs.campaigns import CampaignIn as CampaignIn
from pbp.inputs.campaigns import CharacterIn as CharacterIn
from pbp.inputs.campaigns import CommenterIn as CommenterIn
from pbp.inputs.campaigns import ReadIn as ReadIn

# The bodies the pages' forms share live in pbp.inputs (one place for input checks).
from pbp.inputs.cards import CardMove as CardMove
from pbp.inputs.entries import EntryEdit as EntryEdit
from pbp.inputs.entries import EntryIn as EntryIn
from pbp.inputs.entries import NoteIn as NoteIn
from pbp.inputs.forum import CharacterForIn as CharacterForIn
from pbp.inputs.forum import CombatAttackIn as CombatAttackIn
from pbp.inputs.forum import CombatPlanIn as CombatPlanIn
from pbp.inputs.forum import CombatStartIn as CombatStartIn
from pbp.inputs.forum import MoveIn as MoveIn
from pbp.inputs.forum import OwnCharacterIn as OwnCharacterIn
from pbp.inputs.forum import PostEdit as PostEdit
from pbp.inputs.forum import PostIn as PostIn
from pbp.inputs.forum import SheetIn as SheetIn
from pbp.inputs.forum import TableIn as TableIn
from pbp.inputs.forum import ThreadIn as ThreadIn
from pbp.inputs.forum import WatchIn as WatchIn
from pbp.inputs.invites import AcceptInviteIn as AcceptInviteIn
from pbp.inputs.invites import InviteIn as InviteIn
from pbp.inputs.mail import MailPreferences as MailPreferences
from pbp.inputs.player import BlogChoiceIn as BlogChoiceIn
from pbp.inputs.player import CommenterIdentityIn as CommenterIdentityIn
from pbp.inputs.roster import AliasesIn as AliasesIn
from pbp.inputs.roster import DropIn as DropIn
from pbp.inputs.roster import FeedIn as FeedIn
from pbp.inputs.roster import HandOverIn as HandOverIn
from pbp.inputs.roster import RenameIn as RenameIn
from pbp.inputs.turns import CadenceIO as CadenceIO
from pbp.inputs.turns import ConsequenceIn as ConsequenceIn
from pbp.inputs.turns import EventIn as EventIn
from pbp.inputs.turns import FinalNoticeIn as FinalNoticeIn
from pbp.inputs.turns import QueuedEventIO as QueuedEventIO
from pbp.inputs.turns import ResolveIn as ResolveIn
from pbp.inputs.turns import RulingIn as RulingIn
from pbp.inputs.turns import SettingsIO as SettingsIO
from pbp.inputs.turns import TailoredIn as TailoredIn


class Out(BaseModel):
    """A response body, read from a row's attributes (pbp.api.convert)."""

    model_config = ConfigDict(from_attributes=True)


# -- errors --------------------------------------------------------------------------------


class FieldProblem(Out):
    location: str = Field(description="Where: body.<field>, query.<name> or header.<name>.")
    message: str


class Problem(Out):
    """RFC 9457 problem details; `detail` says what to change."""

    type: str = Field(default="about:blank")
    title: str
    status: int
    detail: str
    instance: str | None = None
    errors: list[FieldProblem] | None = Field(
        default=None, description="Each invalid field, for a request that failed validation."
    )


# -- queries -------------------------------------------------------------------------------


class PageQuery(BaseModel):
    limit: int = Field(default=50, ge=1, le=100, description="Items per page (1-100).")
    cursor: Text | None = Field(
        default=None,
        max_length=200,
        description="The `next_cursor` of the previous page; leave out for the first page.",
    )


class EntryQuery(PageQuery):
    turn: int | None = Field(default=None, ge=1, le=MAX_ID, description="Only this turn.")
    character: Text | None = Field(
        default=None, max_length=80, description="Only this character (their slug)."
    )


# -- me and campaigns ----------------------------------------------------------------------


class TokenOut(Out):
    name: str
    scope: Literal["read", "write"]
    created_at: datetime
    last_used_at: datetime | None


class MeOut(Out):
    id: int
    display_name: str
    token: TokenOut


class CalendarOut(Out):
    """Your secret calendar address (iCalendar): every deadline of your Noteworthy campaigns."""

    url: str | None = Field(
        description="Give it to a calendar app; anyone who has it can read the calendar. "
        "None: you have no calendar address."
    )
    created_at: datetime | None


class RepliesRevokedOut(Out):
    """Your reply addresses in a campaign's mails, stopped (issue #31 item 3)."""

    revoked: int = Field(description="How many reply addresses stopped working.")


class CampaignOut(Out):
    id: int
    slug: str
    name: str
    ruleset: str
    status: Literal["setup", "running", "ended"]
    created_at: datetime
    role: Literal["referee", "player"] | None = Field(
        description="Your role in the campaign; null if you are not in it."
    )
    unread: int | None = Field(
        default=None,
        description="What is new to you since you last read it (entries and notes, or "
        "posts you may read), up to 100 (the pages say 99+); null if you are not in it.",
    )


# -- characters and roster -----------------------------------------------------------------


class BlogOut(Out):
    kind: Literal["builtin", "external"]
    feed_url: str | None
    home_url: str | None


class CharacterOut(Out):
    id: int
    slug: str
    name: str
    status: Literal["active", "outsider", "winner"]
    aliases: list[str]
    blog: BlogOut


class PlayerOut(Out):
    id: int
    display_name: str


class MemberCharacterOut(Out):
    id: int
    slug: str = Field(description="Name it in a whisper's `recipient_characters`.")
    name: str


class MemberOut(Out):
    id: int = Field(description="The user id: a whisper's `recipient_ids`, a card seat.")
    display_name: str
    role: Literal["referee", "player"]
    characters: list[MemberCharacterOut] = Field(description="The characters they play.")


class MembersOut(Out):
    """Everyone in the campaign, with the characters each plays."""

    members: list[MemberOut]


class FeedHealthOut(Out):
    last_polled_at: datetime | None
    last_success_at: datetime | None
    next_poll_at: datetime | None
    failure_count: int
    last_error: str | None
    gone: bool
    delivery: str = Field(
        description='"push": a WebSub hub pushes the feed (polled every 6 h as well); '
        '"poll": pbp polls it'
    )
    last_delivery_at: datetime | None = Field(
        description="The last push, or the last poll that read the feed"
    )


class RosterRowOut(Out):
    character: CharacterOut
    player: PlayerOut | None
    feed: FeedHealthOut | None = Field(description="For an external blog: how polling goes.")
    entries_this_turn: int


class CommenterOut(Out):
    mapped_notes: int = Field(description="Waiting notes that now count for the character.")


class CommenterIdentityOut(Out):
    uris: list[str] = Field(description="The profile addresses you declared.")
    mapped_notes: int = Field(description="Waiting notes that now count for your character.")


class PollOut(Out):
    status: str = Field(description='How the fetch went: "ok", "not_modified", "gone", ...')
    error: str | None
    new_entries: int
    changed_entries: int
    new_notes: int


# -- turns, events, tallies, rulings -------------------------------------------------------


class TailoredOut(Out):
    character_id: int
    mode: Literal["addition", "replacement"]
    text: str


class TurnOut(Out):
    number: int
    status: Literal["open", "closed", "resolved"]
    opened_at: datetime
    deadline: datetime | None
    closed_at: datetime | None
    resolved_at: datetime | None
    event: str | None = Field(description="The referee's event for everyone.")
    tailored: list[TailoredOut] = Field(
        description="Tailored events you may read: all for the referee, your own for a player."
    )


class RulingOut(Out):
    id: int
    kind: str
    subject_id: int | None
    value: Any = Field(description="What the ruling decided.")
    reason: str
    created_at: datetime


class PositionOut(Out):
    character_id: int
    character_name: str | None = None
    note_id: int
    entry_id: int | None = Field(default=None, description="The entry the note is on.")
    entry_title: str | None = None
    entry_url: str | None = None
    stance: str
    published: datetime
    explanation: str


class IgnoredNoteOut(Out):
    note_id: int
    author_id: int | None
    author_name: str | None = None
    entry_id: int | None = None
    entry_title: str | None = None
    entry_url: str | None = None
    reason: str
    explanation: str


class EntryRefOut(Out):
    entry_id: int
    entry_title: str | None
    entry_url: str | None


class FinalSideOut(Out):
    finalist_id: int
    finalist_name: str | None
    entries: list[EntryRefOut]
    votes: list[PositionOut] = Field(description="The outsiders' votes for this finalist.")


class FinalOut(Out):
    """Noteworthy endnotes: the final between the last two active characters."""

    sides: list[FinalSideOut]
    pending: list[PositionOut] = Field(description="Votes waiting for a stance ruling.")
    ignored: list[IgnoredNoteOut] = Field(description="Votes that do not count, and why.")
    winner_id: int | None
    winner_name: str | None
    explanation: list[str]


class LateArrivalOut(Out):
    """Something first seen after the turn was resolved: listed, never counted."""

    kind: Literal["entry", "mood edit", "note"]
    id: int
    entry_id: int
    character_id: int | None
    first_seen: datetime
    reason: str


class ChallengeOut(Out):
    entry_id: int
    entry_title: str | None = None
    entry_url: str | None = None
    challenger_id: int | None
    challenger_name: str | None = None
    target_id: int | None
    target_name: str | None = None
    target_explanation: str
    made_at: datetime
    valid: bool
    invalid_reason: str | None
    withdrawn: bool
    outcome: str
    supporters: list[PositionOut]
    opposers: list[PositionOut]
    pending: list[PositionOut] = Field(default_factory=list)
    ignored: list[IgnoredNoteOut] = Field(default_factory=list)
    explanation: list[str]
    consequence: str | None = Field(description="The referee's words, once resolved.")


class FlagOut(Out):
    kind: str
    message: str
    entry_id: int | None
    note_id: int | None


class StandingOut(Out):
    id: int
    name: str
    status: Literal["active", "outsider", "winner"]


class EndgameOut(Out):
    phase: str
    finalists: list[int]
    winner_id: int | None
    winner_name: str | None = None
    explanation: str


class AppliedRulingOut(Out):
    kind: str
    subject_id: int | None
    value: Any
    applied: bool
    explanation: str


class TallyOut(Out):
    """The Noteworthy tally of a turn, with the reasons for every reading."""

    turn: int
    closed: bool
    complete: bool
    needs_ruling: bool
    challenges: list[ChallengeOut]
    ignored_notes: list[IgnoredNoteOut]
    final: FinalOut | None = Field(default=None, description="The final, in a final turn.")
    flags: list[FlagOut]
    standings: list[StandingOut]
    advanced: list[int]
    eliminated: list[int]
    endgame: EndgameOut
    provocation: str | None
    rulings: list[AppliedRulingOut]
    explanation: list[str]
    resolved: bool = Field(default=False, description="The stored result of a resolved turn.")
    arrived_after_resolution: list[LateArrivalOut] = Field(
        default_factory=list,
        description="Items first seen after the turn was resolved; they change nothing.",
    )


# -- entries, notes, challenges ------------------------------------------------------------


class EntryOut(Out):
    id: int
    character_id: int
    character_slug: str
    turn: int | None
    title: str
    url: str | None
    body_html: str
    body_source: str | None = Field(
        default=None,
        description="The Markdown the player wrote on pbp's own blog (edit from this); null "
        "for an entry read from a feed, or written before pbp kept the Markdown.",
    )
    mood: str | None = Field(description="The mood as the rules read it.")
    mood_raw: str | None
    published_at: datetime | None
    updated_at: datetime | None
    first_seen_at: datetime
    hidden_at: datetime | None = Field(
        default=None,
        description="When its author hid it (only they and the referee read a hidden entry; "
        "the tally reads the turn as if it had never been posted).",
    )


class EditOut(Out):
    entry: EntryOut
    changed: bool


class NoteOut(Out):
    id: int
    entry_id: int
    in_reply_to: int | None = Field(
        default=None, description="The note of the same entry this one answers, if any."
    )
    author_character_id: int | None
    author_name: str
    body_html: str
    stance: str
    fate: str | None
    published_at: datetime | None


class TargetOut(Out):
    id: int
    slug: str
    name: str


class ChallengeOptionOut(Out):
    """Whether you may challenge now, and whom (the write form's own check)."""

    allowed: bool
    reason: str
    targets: list[TargetOut]


# -- forum ---------------------------------------------------------------------------------


class ThreadOut(Out):
    id: int
    title: str
    posts: int = Field(description="Posts you may read.")
    last_post_at: datetime
    unread: int | None = Field(
        default=None,
        description="Posts you may read that are new to you; null if you are not a member.",
    )


class ReadOut(Out):
    campaign: str = Field(description="The campaign's slug.")
    unread: int = Field(description="What is still new to you in the campaign (up to 100).")


class RollOut(Out):
    """A roll as you may see it: "shown", "blind" (the roller of a blind roll: the command,
    no result) or "hidden" (only that a roll was made)."""

    id: str
    number: int
    visibility: Literal["public", "gm", "blind"]
    state: Literal["shown", "blind", "hidden"]
    created_at: datetime
    command: str | None = Field(description="The command as its poster wrote it.")
    resolved: str | None = Field(
        description="What pbp rolled: the command with a named skill's number from the "
        "sheet (`note` says where it came from); the check recomputes from this."
    )
    note: str
    result: g.RollResult | None = Field(
        description="The dice and their reading, typed by `ruleset` and `reading.kind`; "
        "null unless the state is shown."
    )
    text: str


class IconRefOut(Out):
    """A character icon as a text shows it (issue #33 item 1)."""

    id: int
    keyword: str
    alt: str
    url: str


class PostOut(Out):
    id: int
    thread_id: int
    author: str
    character: str | None
    kind: str
    audience: str
    recipients: list[str]
    body: str | None = Field(description="Markdown; null for a deleted post (but to the GM).")
    html: str
    deleted: bool
    created_at: datetime
    edited_at: datetime | None
    rolls: list[RollOut]
    can_edit: bool
    icon: IconRefOut | None = Field(
        default=None, description="The icon beside the post: the one picked, or the default."
    )


class RollPageOut(Out):
    roll: RollOut
    post: PostOut | None = Field(description="The roll's post, if you may read it.")


class WatchOut(Out):
    thread_id: int
    watching: bool


class SheetOut(Out):
    character: str = Field(description="The character's slug.")
    ruleset: str
    data: g.OneSheet | g.NoirSheet | g.FreeSheet = Field(
        description="The sheet: OneSheet for ONE, NoirSheet for Noir, FreeSheet otherwise."
    )
    updated_at: datetime | None


class ForumCharacterOut(Out):
    """A forum character with its player and its sheet (none until someone fills it in)."""

    id: int
    slug: str
    name: str
    player_id: int | None
    sheet: SheetOut | None


class CardLogOut(Out):
    seq: int
    actor: str
    action: str
    events: list[g.CardEventOut]


class TableOut(Out):
    """A card table as you may see it: the engine's redacted view, never the stored state."""

    game: int
    thread_id: int
    ruleset: str
    version: int = Field(description="Send it with a move: a stale move is refused (409).")
    me: g.Seat | None = Field(
        description='Your seat at the table: your user id, "gm" for the GM; null: none.'
    )
    view: g.TableView = Field(description="The table, typed by `ruleset`.")
    log: list[CardLogOut]


class ForumStateOut(Out):
    status: Literal["setup", "running", "ended"]
    commitment: str | None = Field(
        description="SHA-256 of the dice seed, published when the campaign is made, "
        "before any roll."
    )
    seed: str | None = Field(description="The seed, revealed at the end: every roll checks.")


# -- the referee's desk: settings, queued event, final notice, reminders, outbox, audit ------


class FinalNoticeOut(Out):
    text: str = Field(description="The notice as shown on the campaign and mailed.")


class RemindersOut(Out):
    queued: int = Field(description="Players reminded (those with no entry this turn).")


class PollAllOut(Out):
    due: int = Field(description="External blogs the scheduler polls on its next pass.")


class OutboxQuery(BaseModel):
    status: Literal["queued", "sending", "sent", "failed"] | None = Field(
        default=None, description="Only messages in this state."
    )


class OutboxMessageOut(Out):
    id: int
    kind: str
    recipient: str
    subject: str
    status: str
    attempts: int
    last_error: str | None
    created_at: datetime
    sent_at: datetime | None


class OutboxOut(Out):
    counts: dict[str, int] = Field(description="Messages per state.")
    messages: list[OutboxMessageOut] = Field(description="The newest 100, newest first.")


class AuditLineOut(Out):
    at: datetime
    who: str
    sentence: str


class AuditOut(Out):
    lines: list[AuditLineOut] = Field(description="The newest 500, newest first.")


class UnmappedOut(Out):
    name: str = Field(description="The name the commenter signs with.")
    uri: str | None = Field(description="Their profile address, if the feed gives one.")
    notes: int = Field(description="Their notes waiting to count.")
    claims: str | None = Field(
        description="The character whose name they sign with, if any (unverified)."
    )


class UnmappedListOut(Out):
    commenters: list[UnmappedOut]


class HistoryCharacterOut(Out):
    id: int
    name: str
    slug: str
    status: str
    made: int
    received: int
    won: int
    lost: int
    outsider_from: int | None = Field(description="The turn that made them an outsider.")


class BoutOut(Out):
    entry_id: int
    challenger_id: int
    target_id: int | None
    outcome: str | None
    consequence: str | None
    supporters: int
    opposers: int


class HistoryStandingOut(Out):
    character_id: int
    status: str | None = Field(description="At the turn's start; null: not in the game yet.")
    status_after: str | None = Field(description="After it; null until it is resolved.")
    made: int
    received: int
    won: int
    lost: int


class HistoryTurnOut(Out):
    number: int
    status: str
    opened_at: datetime
    resolved_at: datetime | None
    standings: list[HistoryStandingOut]
    bouts: list[BoutOut]
    eliminated: list[int]
    winner_id: int | None
    explanation: list[str]


class HistoryOut(Out):
    """Standings and every turn, as the history page shows them."""

    characters: list[HistoryCharacterOut] = Field(
        description="Winner, active, then outsiders (the latest to fall first)."
    )
    turns: list[HistoryTurnOut]


# -- getting people in: invitations and the referee's roster changes -------------------------


class InviteOut(Out):
    id: int
    email: str | None = Field(description="The address it was sent to, if any.")
    role: Literal["player", "referee"]
    character: str | None = Field(description="The slug of the character it comes with.")
    expires_at: datetime
    url: str = Field(description="The invitation link, to send or copy; it works once.")


class HandOverOut(Out):
    character: CharacterOut
    invite: InviteOut | None = Field(description="The new invitation, when no member took it.")


class AwayOut(Out):
    """A player's hiatus (issue #30 item 3)."""

    away: bool
    until: datetime | None = Field(description="When they are back; None: not away.")
    note: str = ""


class ActivityCellOut(Out):
    period: str = Field(description='"t3" for turn 3; a forum window\'s key')
    entries: int
    notes: int
    posts: int
    challenges: int = Field(description="Challenges made in the turn (the history's count).")
    status: str | None = Field(description="At the turn's start; None: not in the game.")
    met: bool | None = Field(description="Met the activity rule; None: not counted.")
    excused: bool = Field(description="Not met, but the player was away during the turn.")
    asked: bool = Field(description="The rule applies: in the game, not the winner, not dropped.")


class ActivityRowOut(Out):
    character_id: int
    name: str
    status: str
    player: str
    missed_in_row: int
    away_until: datetime | None
    cells: list[ActivityCellOut]


class ActivityPeriodOut(Out):
    key: str
    number: int
    label: str
    start: datetime
    end: datetime | None
    finished: bool


class ActivityOut(Out):
    """The referee's activity check: every character, turn by turn (issue #30 item 2)."""

    rule: str
    settings: ActivitySettingsIO
    periods: list[ActivityPeriodOut]
    rows: list[ActivityRowOut]


class CombatFighterOut(Out):
    name: str
    character_id: int
    speed: int = Field(description="Speed now: the sheet's, less the armour's weight.")
    hit_points: int
    max_hit_points: int
    condition: str
    actions: int = Field(description="Actions in this segment (0: does not act in it).")
    plans: list[str]


class CombatStepOut(Out):
    number: int
    kind: str
    text: str
    detail: dict[str, g.Plain]  # the tracker's record of the step, as stored
    created_at: datetime


class CombatOut(Out):
    """A scene's combat (ONE): where it is, the fighters, and its history."""

    thread_id: int
    under_way: bool
    turn: int
    segment: int
    waiting_for: list[str] = Field(description="Who acts this segment and has not declared.")
    fighters: list[CombatFighterOut]
    steps: list[CombatStepOut]
