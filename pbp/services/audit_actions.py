"""Every kind of line of the audit log, typed: one frozen dataclass per action, whose fields
are the row's `detail` and whose `sentence` is what the referee reads (issue #32 item 4).

    audit_log.record(session, campaign_id=campaign.id, actor=referee,
                     line=EventPosted(turn=4, tailored=2))
    # stored: action "post_event", detail {"turn": 4, "tailored": 2}
    # read as: "posted the event for turn 4, tailored for 2 characters"

The action names and detail keys are those pbp always stored, so older rows read the same
way, and what reads a row back (the schedule's "already noted this turn",
pbp.services.noteworthy.cadence) finds the keys it knows. Every field has a default, so a
row written by an older or newer version (a key missing or extra) still reads as words.
Pure: no database (the poller's pure decider builds its lines with these).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

RULING_WORDS = {
    "target": "the target of a challenge",
    "stance": "the stance of a note",
    "author": "who wrote a note",
    "validity": "whether a challenge is valid",
    "note_validity": "whether a late or backdated note counts",
    "withdrawal": "whether a challenge was withdrawn",
    "tiebreak": "a tie",
    "fate_not_allowed": "a desired fate it does not allow",
    "mood": "the mood of an entry",
    "drop": "a character dropping out",
}

#: Every kind of line by its stored action name (filled by `Line.__init_subclass__`).
KINDS: dict[str, type[Line]] = {}

Names = Mapping[Any, str]  # character id -> name


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _names(ids: Iterable[Any], names: Names) -> str:
    found = [names.get(i, "a character") for i in ids or []]
    return ", ".join(found) if found else "nobody"


@dataclass(frozen=True)
class Line:
    """One kind of audit line; subclasses name their `action` and say their sentence."""

    action: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.action:
            KINDS[cls.action] = cls

    def sentence(self, names: Names) -> str:
        raise NotImplementedError

    def detail(self) -> dict[str, Any]:
        """What the row stores in `detail`."""
        return dataclasses.asdict(self)

    @classmethod
    def from_detail(cls, detail: Mapping[str, Any]) -> Line:
        """The line of a stored row; keys it does not know are left aside."""
        known = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in detail.items() if k in known})


def sentence_of(action: str, detail: Mapping[str, Any] | None, names: Names) -> str:
    """A stored row in words; an action this version has no words for still reads as words."""
    kind = KINDS.get(action)
    if kind is None:
        return "did something pbp has no words for yet (" + action.replace("_", " ") + ")"
    return kind.from_detail(detail or {}).sentence(names)


# -- the turn --------------------------------------------------------------------------------


@dataclass(frozen=True)
class EventPosted(Line):
    action: ClassVar[str] = "post_event"
    turn: int | None = None
    tailored: int = 0

    def sentence(self, names: Names) -> str:
        tailored = f", tailored for {_plural(self.tailored, 'character')}" if self.tailored else ""
        return f"posted the event for turn {self.turn}{tailored}"


@dataclass(frozen=True)
class EventQueued(Line):
    action: ClassVar[str] = "queue_event"
    queued: bool = True

    def sentence(self, names: Names) -> str:
        return "queued the next event" if self.queued else "cleared the queued event"


@dataclass(frozen=True)
class TurnClosed(Line):
    action: ClassVar[str] = "close_turn"
    turn: int | None = None

    def sentence(self, names: Names) -> str:
        return f"closed turn {self.turn}"


@dataclass(frozen=True)
class TurnReopened(Line):
    action: ClassVar[str] = "reopen_turn"
    turn: int | None = None
    at: str | None = None

    def sentence(self, names: Names) -> str:
        return f"reopened turn {self.turn}"


@dataclass(frozen=True)
class TurnResolved(Line):
    action: ClassVar[str] = "resolve_turn"
    turn: int | None = None
    eliminated: list[Any] = field(default_factory=list)

    def sentence(self, names: Names) -> str:
        if not self.eliminated:
            outsiders = "nobody became an outsider"
        else:
            became = "an outsider" if len(self.eliminated) == 1 else "outsiders"
            outsiders = f"{_names(self.eliminated, names)} became {became}"
        return f"resolved turn {self.turn}; {outsiders}"


@dataclass(frozen=True)
class Ruled(Line):
    action: ClassVar[str] = "ruling"
    turn: int | None = None
    kind: str = ""
    subject: int | None = None
    value: Any = None

    def sentence(self, names: Names) -> str:
        return f"ruled on {RULING_WORDS.get(self.kind, 'a question')} in turn {self.turn}"


@dataclass(frozen=True)
class FinalNotice(Line):
    action: ClassVar[str] = "final_notice"

    def sentence(self, names: Names) -> str:
        return "published the final notice"


@dataclass(frozen=True)
class SettingsChanged(Line):
    """The settings as saved; stored flat, as they always were."""

    action: ClassVar[str] = "settings"
    settings: dict[str, Any] = field(default_factory=dict)

    def detail(self) -> dict[str, Any]:
        return dict(self.settings)

    @classmethod
    def from_detail(cls, detail: Mapping[str, Any]) -> Line:
        return cls(settings=dict(detail))

    def sentence(self, names: Names) -> str:
        return "changed the campaign's settings"


@dataclass(frozen=True)
class AliveSettingsChanged(Line):
    """The nudges and the activity rule (issue #30), as saved."""

    action: ClassVar[str] = "alive_settings"
    settings: dict[str, Any] = field(default_factory=dict)

    def sentence(self, names: Names) -> str:
        return "changed the nudges and the activity rule"


@dataclass(frozen=True)
class Nudged(Line):
    """The schedule's nudges of one kind for one turn (issue #30 item 1)."""

    action: ClassVar[str] = "nudge"
    turn: int | None = None
    kind: str = ""  # "before:48", "overdue"
    count: int = 0
    key: str = ""  # the turn ("t3") or a forum game's window ("w2026-03-09T1800")

    def sentence(self, names: Names) -> str:
        when = "overdue" if self.kind == "overdue" else f"{self.kind.split(':')[-1]} h before"
        return f"sent {_plural(self.count, 'nudge')} about turn {self.turn} ({when})"


@dataclass(frozen=True)
class WentAway(Line):
    action: ClassVar[str] = "hiatus.away"
    until: str = ""

    def sentence(self, names: Names) -> str:
        return f"is away until {self.until}"


@dataclass(frozen=True)
class CameBack(Line):
    action: ClassVar[str] = "hiatus.back"

    def sentence(self, names: Names) -> str:
        return "is back from a hiatus"


@dataclass(frozen=True)
class Reminded(Line):
    action: ClassVar[str] = "remind"
    count: int = 0
    turn: int | None = None
    scheduled: bool = False  # the schedule's (once a turn), not the referee's button

    def detail(self) -> dict[str, Any]:
        # The schedule's once-a-turn check reads "scheduled" (cadence._noted); a button's
        # row has no such key, as before.
        found = dataclasses.asdict(self)
        if not self.scheduled:
            del found["scheduled"]
        return found

    def sentence(self, names: Names) -> str:
        return f"reminded {_plural(self.count, 'player')} to write"


@dataclass(frozen=True)
class ScheduleWaiting(Line):
    action: ClassVar[str] = "schedule_waiting"
    turn: int | None = None
    reason: str = "it was waiting"

    def sentence(self, names: Names) -> str:
        return f"the schedule could not open turn {self.turn}: {self.reason}"


@dataclass(frozen=True)
class EntryHidden(Line):
    action: ClassVar[str] = "entry.hidden"
    entry_id: int | None = None
    character_id: int | None = None
    turn: int | None = None
    title: str = ""

    def sentence(self, names: Names) -> str:
        who = names.get(self.character_id, "a character")
        return f"hid {who}'s entry “{self.title}” in turn {self.turn}"


# -- the roster ------------------------------------------------------------------------------


@dataclass(frozen=True)
class CharacterAdded(Line):
    action: ClassVar[str] = "add_character"
    name: str = "a character"

    def sentence(self, names: Names) -> str:
        return f"added {self.name} to the roster"


@dataclass(frozen=True)
class CharacterRenamed(Line):
    action: ClassVar[str] = "character.renamed"
    character_id: int | None = None
    before: str = "a character"

    def sentence(self, names: Names) -> str:
        return f"renamed {self.before} to {names.get(self.character_id, 'a character')}"


@dataclass(frozen=True)
class AliasesChanged(Line):
    action: ClassVar[str] = "character.aliases"
    character_id: int | None = None
    before: list[str] = field(default_factory=list)

    def sentence(self, names: Names) -> str:
        return f"changed the aliases of {names.get(self.character_id, 'a character')}"


@dataclass(frozen=True)
class CharacterDropped(Line):
    """Dropping out is a ruling: the character is an outsider from then on."""

    action: ClassVar[str] = "character.dropped"
    character_id: int | None = None
    reason: str = ""

    def sentence(self, names: Names) -> str:
        why = f" ({self.reason})" if self.reason else ""
        who = names.get(self.character_id, "a character")
        return f"ruled that {who} dropped out of the game, an outsider from now on{why}"


@dataclass(frozen=True)
class CharacterHandedOver(Line):
    action: ClassVar[str] = "character.handed_over"
    character_id: int | None = None
    before: int | None = None  # the previous player's account
    to: int | None = None  # the new player's account; or else the invitation made:
    invite_id: int | None = None

    def sentence(self, names: Names) -> str:
        to = "another member" if self.to else "a new player, with an invitation"
        return f"handed {names.get(self.character_id, 'a character')} to {to}"


@dataclass(frozen=True)
class CharacterMade(Line):
    action: ClassVar[str] = "character.made"
    character_id: int | None = None
    name: str = "a character"

    def sentence(self, names: Names) -> str:
        return f"made the character {self.name}"


@dataclass(frozen=True)
class BlogChanged(Line):
    """Stored with the keys "from" and "to" ({"kind", "feed_url"} each), as always."""

    action: ClassVar[str] = "blog_changed"
    character_id: int | None = None
    before: dict[str, Any] = field(default_factory=dict)
    after: dict[str, Any] = field(default_factory=dict)

    def detail(self) -> dict[str, Any]:
        return {"character_id": self.character_id, "from": self.before, "to": self.after}

    @classmethod
    def from_detail(cls, detail: Mapping[str, Any]) -> Line:
        return cls(
            character_id=detail.get("character_id"),
            before=detail.get("from") or {},
            after=detail.get("to") or {},
        )

    def sentence(self, names: Names) -> str:
        return f"changed the blog of {names.get(self.character_id, 'a character')}"


# -- commenters and feeds --------------------------------------------------------------------


@dataclass(frozen=True)
class CommenterMapped(Line):
    action: ClassVar[str] = "map_commenter"
    character: int | None = None

    def sentence(self, names: Names) -> str:
        return f"matched a commenter to {names.get(self.character, 'a character')}"


@dataclass(frozen=True)
class CommenterDeclared(Line):
    action: ClassVar[str] = "commenter_identity_declared"
    character_id: int | None = None
    uris: list[str] = field(default_factory=list)

    def sentence(self, names: Names) -> str:
        n = len(self.uris)
        return (
            f"gave {n} profile address{'' if n == 1 else 'es'} as "
            f"{names.get(self.character_id, 'a character')}'s commenter identity"
        )


@dataclass(frozen=True)
class FeedMoved(Line):
    action: ClassVar[str] = "feed_moved"
    blog_id: int | None = None
    old: str | None = None
    new: str | None = None

    def sentence(self, names: Names) -> str:
        return "a blog's feed moved to a new address"


@dataclass(frozen=True)
class FeedAlert(Line):
    action: ClassVar[str] = "feed_alert"
    blog_id: int | None = None
    reason: str | None = None

    def sentence(self, names: Names) -> str:
        return "a blog's feed stopped answering"


@dataclass(frozen=True)
class WebSubRefused(Line):
    action: ClassVar[str] = "websub_refused"
    blog_id: int | None = None
    reason: str = "over its bounds"

    def sentence(self, names: Names) -> str:
        return f"refused what a blog's WebSub hub pushed: {self.reason}"


# -- invitations -----------------------------------------------------------------------------


@dataclass(frozen=True)
class InviteCreated(Line):
    action: ClassVar[str] = "invite.created"
    invite_id: int | None = None
    role: str = "player"
    character_id: int | None = None
    email: str | None = None
    expires_at: str | None = None

    def sentence(self, names: Names) -> str:
        playing = f" to play {names[self.character_id]}" if self.character_id in names else ""
        return f"made an invitation for a {self.role}{playing}"


@dataclass(frozen=True)
class InviteAccepted(Line):
    action: ClassVar[str] = "invite.accepted"
    invite_id: int | None = None
    role: str = "player"
    character_id: int | None = None
    new_account: bool = False

    def sentence(self, names: Names) -> str:
        return f"joined as {self.role}"


@dataclass(frozen=True)
class InviteResent(Line):
    action: ClassVar[str] = "invite.resent"
    invite_id: int | None = None
    renewed: bool = False

    def sentence(self, names: Names) -> str:
        renewed = ", valid for another two weeks" if self.renewed else ""
        return f"sent an invitation again{renewed}"


# -- forum games -----------------------------------------------------------------------------


@dataclass(frozen=True)
class ForumStarted(Line):
    action: ClassVar[str] = "forum.start"
    commitment: str | None = None

    def sentence(self, names: Names) -> str:
        return "started the campaign and published the dice commitment"


@dataclass(frozen=True)
class ForumEnded(Line):
    action: ClassVar[str] = "forum.end"
    commitment: str | None = None

    def sentence(self, names: Names) -> str:
        return "ended the campaign and revealed the dice seed"


@dataclass(frozen=True)
class PostDeleted(Line):
    action: ClassVar[str] = "post.delete"
    post_id: int | None = None

    def sentence(self, names: Names) -> str:
        return "deleted a post"


@dataclass(frozen=True)
class SheetUpdated(Line):
    action: ClassVar[str] = "sheet.update"
    character_id: int | None = None
    before: dict[str, Any] | None = None
    after: dict[str, Any] | None = None

    def sentence(self, names: Names) -> str:
        return "updated a character sheet"


# -- accounts (no campaign: the export of an account, not a campaign's log) -------------


@dataclass(frozen=True)
class AccountLine(Line):
    """An account's own line; `extra` keeps what the action noted (e.g. how it was made)."""

    words: ClassVar[str] = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def detail(self) -> dict[str, Any]:
        return dict(self.extra)

    @classmethod
    def from_detail(cls, detail: Mapping[str, Any]) -> Line:
        return cls(extra=dict(detail))

    def sentence(self, names: Names) -> str:
        return self.words


def _account_line(action: str, words: str) -> type[AccountLine]:
    name = "".join(part.title() for part in action.replace(".", "_").split("_"))
    return dataclass(frozen=True)(
        type(name, (AccountLine,), {"action": action, "words": words, "__module__": __name__})
    )


AccountCreated = _account_line("account.created", "made an account")
AccountConfirmed = _account_line("account.confirmed", "confirmed their address")
PasswordSet = _account_line("password.set", "set a new password")
PasswordResetRequested = _account_line("password.reset_requested", "asked for a password reset")
PasswordReset = _account_line("password.reset", "reset their password")
LoggedIn = _account_line("login", "logged in")
LoginFailed = _account_line("login.failed", "typed a wrong password")
LoginFailuresMailed = _account_line(
    "login.failures_mailed", "was mailed about wrong passwords for their account"
)
LoggedOut = _account_line("logout", "logged out")
SignupRepeated = _account_line("signup.repeated", "signed up again, before confirming")
SignupExistingAccount = _account_line(
    "signup.existing_account", "was mailed that someone tried to sign up with their address"
)
