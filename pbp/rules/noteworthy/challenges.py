"""Which entries are challenges, whether they are valid, and whether they were withdrawn.

Noteworthy: 'A blog entry with the "Current mood:" line "Challenging" constitutes a
challenge.' An entry's mood is a timeline -- the published mood, then each revision -- read
against the turn's close: that is what makes edits *to* Challenging challenges and edits
*away* from it withdrawals.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from pbp.rules.noteworthy.context import RulingBook, TurnContext, parse_flag, when
from pbp.rules.noteworthy.model import (
    CHALLENGING,
    ActionReport,
    CharacterId,
    Entry,
    EntryId,
    Flag,
    FlagKind,
    InvalidReason,
    RulingKind,
    TargetMethod,
    TargetReading,
)
from pbp.rules.noteworthy.text import normalize_mood, target_named

MoodEvent = tuple[datetime, str | None]


@dataclass(frozen=True, slots=True)
class MoodTimeline:
    """What an entry's mood history means for its turn.

    ``made_at``: when it became a challenge before the close (``None``: it is no challenge).
    ``withdrawn_at``: when, after that, a revision before the close moved its mood away.
    ``mood_at_close``: the normalized mood in force when the turn closed.
    """

    made_at: datetime | None
    withdrawn_at: datetime | None
    mood_at_close: str | None
    flags: tuple[Flag, ...]


def mood_events(entry: Entry, book: RulingBook) -> list[MoodEvent]:
    """The entry's normalized moods in time order; a ``mood`` ruling replaces the history."""
    found = book.find(RulingKind.MOOD, entry.id)
    if found is not None:
        index, ruling = found
        mood = normalize_mood(None if ruling.value is None else str(ruling.value))
        book.applied(index, f"The referee reads entry {entry.id}'s mood as {mood!r}.")
        return [(entry.published, mood)]
    revisions = sorted(entry.revisions, key=lambda revision: revision.at)
    events = [(entry.published, normalize_mood(entry.mood))]
    events += [(revision.at, normalize_mood(revision.mood)) for revision in revisions]
    return events


def read_mood_timeline(entry: Entry, events: list[MoodEvent], ctx: TurnContext) -> MoodTimeline:
    """Noteworthy: "You may withdraw your challenge before the end of a turn, but that still
    counts as your challenge for that turn."

    Readings: an entry edited *to* Challenging is a challenge made at that revision. Once a
    revision before the close moves the mood away, the challenge stays withdrawn even if the
    mood returns -- a renewed challenge would be a second one that turn -- and this is flagged.
    Revisions after the close change nothing for the turn and are flagged.
    """
    closes = ctx.closes
    in_turn = [event for event in events if closes is None or event[0] <= closes]
    after = [event for event in events if closes is not None and event[0] > closes]
    made_at = next((at for at, mood in in_turn if mood == CHALLENGING), None)
    withdrawn_at = None
    if made_at is not None:
        later = [(at, mood) for at, mood in in_turn if at >= made_at]
        withdrawn_at = next((at for at, mood in later if mood != CHALLENGING), None)
    flags = []
    if withdrawn_at is not None and any(
        mood == CHALLENGING for at, mood in in_turn if at > withdrawn_at
    ):
        flags.append(_flag_renewed(entry, withdrawn_at))
    flags += _flag_late_revisions(entry, made_at, withdrawn_at, after)
    mood_at_close = in_turn[-1][1] if in_turn else None
    return MoodTimeline(made_at, withdrawn_at, mood_at_close, tuple(flags))


def _flag_renewed(entry: Entry, withdrawn_at: datetime) -> Flag:
    message = (
        f"Entry {entry.id} was set back to Challenging after being withdrawn at "
        f"{when(withdrawn_at)}; the withdrawn challenge remains the turn's challenge."
    )
    return Flag(FlagKind.RENEWED_CHALLENGE, message, entry_id=entry.id)


def _flag_late_revisions(
    entry: Entry,
    made_at: datetime | None,
    withdrawn_at: datetime | None,
    after: list[MoodEvent],
) -> list[Flag]:
    """Noteworthy: withdrawal is "before the end of a turn"; later edits change nothing."""
    if made_at is None and any(mood == CHALLENGING for _, mood in after):
        message = (
            f"Entry {entry.id} became Challenging only after the turn closed; "
            "it is no challenge for this turn."
        )
        return [Flag(FlagKind.LATE_REVISION, message, entry_id=entry.id)]
    if made_at is not None and withdrawn_at is None and any(m != CHALLENGING for _, m in after):
        message = (
            f"Entry {entry.id}'s mood changed away from Challenging after the turn closed; "
            "too late to withdraw the challenge."
        )
        return [Flag(FlagKind.LATE_REVISION, message, entry_id=entry.id)]
    return []


def report_mood(
    entry: Entry, timeline: MoodTimeline, ctx: TurnContext
) -> tuple[ActionReport | None, Flag | None]:
    """Noteworthy: "Each blog entry you post must have a 'Current mood:' line", and the
    referee "may define other game actions ... along with an identifying 'Current mood:' line".

    An entry with no mood at the close is flagged and is no game action; an entry whose mood
    is a defined action is reported as that action.
    """
    mood = timeline.mood_at_close
    if mood is None:
        message = (
            f"Entry {entry.id} by {ctx.name(entry.owner_id)} has no 'Current mood:' line; "
            "every entry needs one, and this one is no game action."
        )
        return None, Flag(FlagKind.MISSING_MOOD, message, entry_id=entry.id)
    action = ctx.settings.actions.get(mood)
    if action is None:
        return None, None
    why = f"{ctx.name(entry.owner_id)}'s entry {entry.id} has the mood {mood!r}: {action}."
    return ActionReport(entry.id, entry.owner_id, mood, action, why), None


@dataclass
class Draft:
    """A challenge being worked out; frozen into a ``ChallengeResult`` at the end."""

    entry: Entry
    challenger_id: CharacterId | None
    made_at: datetime
    target: TargetReading
    invalid: InvalidReason | None = None
    withdrawn: bool = False
    explanation: list[str] = field(default_factory=list)
    flags: list[Flag] = field(default_factory=list)

    @property
    def target_id(self) -> CharacterId | None:
        return self.target.target_id

    @property
    def live(self) -> bool:
        return self.invalid is None and not self.withdrawn


def read_target(entry: Entry, ctx: TurnContext, book: RulingBook) -> TargetReading:
    """Noteworthy: the challenger's entry "must name exactly one target PC"; a ``target``
    ruling overrides the reading (and settles one that names none or several)."""
    found = book.find(RulingKind.TARGET, entry.id)
    if found is not None:
        index, ruling = found
        target = ctx.character(ruling.value)
        if target is not None:
            why = f"The referee ruled the target is {target.name}. {ruling.note}".strip()
            book.applied(index, why)
            return TargetReading(target.id, (target.id,), TargetMethod.RULING, why)
        book.rejected(index, f"{ruling.value!r} is not a character in this game.")
    return target_named(entry.title, entry.text, ctx.name_finder, ctx.canonical(entry.owner_id))


def _rule_invalid(
    draft: Draft, ctx: TurnContext, challenged: set[CharacterId]
) -> InvalidReason | None:
    """The first rule the challenge breaks, in the order the rules text states them."""
    challenger = ctx.character(draft.challenger_id)
    if challenger is None and ctx.joiner(draft.challenger_id) is not None:
        # Eligibility is the standings at the turn's start, and they do not name them.
        return InvalidReason.JOINED_LATE
    if challenger is None:
        return InvalidReason.NOT_A_CHARACTER_BLOG
    if ctx.number <= ctx.settings.opening_turns:
        return InvalidReason.OPENING_TURNS
    if not challenger.active:
        return InvalidReason.CHALLENGER_OUTSIDER
    if challenger.id in challenged:
        return InvalidReason.SECOND_CHALLENGE
    challenged.add(challenger.id)
    if draft.target_id is None:
        return None
    if draft.target_id == challenger.id:
        return InvalidReason.SELF
    target = ctx.character(draft.target_id)
    if target is None:
        return InvalidReason.TARGET_UNKNOWN
    return None if target.active else InvalidReason.TARGET_OUTSIDER


def _apply_validity_ruling(draft: Draft, book: RulingBook) -> None:
    found = book.find(RulingKind.VALIDITY, draft.entry.id)
    if found is None:
        return
    index, ruling = found
    valid = parse_flag(ruling.value)
    if valid is None:
        book.rejected(index, f"{ruling.value!r} is neither 'valid' nor 'invalid'.")
        return
    draft.invalid = None if valid else InvalidReason.REFEREE
    why = f"The referee ruled the challenge {'valid' if valid else 'invalid'}. {ruling.note}"
    draft.explanation.append(why.strip())
    book.applied(index, why.strip())


def _apply_withdrawal(draft: Draft, timeline: MoodTimeline, book: RulingBook) -> None:
    """Noteworthy: "A withdrawn challenge has no effect" -- by the mood, or by a ruling."""
    draft.withdrawn = timeline.withdrawn_at is not None
    if draft.withdrawn:
        draft.explanation.append(
            f"Withdrawn at {when(timeline.withdrawn_at)} (mood changed from Challenging): it "
            "still counts as the challenger's challenge this turn and has no effect."
        )
    found = book.find(RulingKind.WITHDRAWAL, draft.entry.id)
    if found is None:
        return
    index, ruling = found
    withdrawn = parse_flag(ruling.value)
    if withdrawn is None:
        book.rejected(index, f"{ruling.value!r} is neither 'withdrawn' nor 'not withdrawn'.")
        return
    draft.withdrawn = withdrawn
    why = f"The referee ruled the challenge {'' if withdrawn else 'not '}withdrawn. {ruling.note}"
    draft.explanation.append(why.strip())
    book.applied(index, why.strip())


def _describe(draft: Draft, ctx: TurnContext) -> None:
    target = draft.target
    against = ctx.name(target.target_id) if target.target_id is not None else "(target unclear)"
    draft.explanation.insert(
        0,
        f"{ctx.name(draft.challenger_id)} challenges {against} with entry {draft.entry.id} "
        f"(made {when(draft.made_at)}). Target: {target.explanation}",
    )
    if draft.invalid is not None:
        draft.explanation.insert(1, f"Invalid: {draft.invalid}.")
    if target.needs_ruling:
        draft.flags.append(Flag(FlagKind.NEEDS_TARGET, target.explanation, entry_id=draft.entry.id))


def find_challenges(
    entries: list[Entry],
    timelines: dict[EntryId, MoodTimeline],
    ctx: TurnContext,
    book: RulingBook,
) -> list[Draft]:
    """The turn's challenges in the order they were made, each judged valid or not.

    Noteworthy: "you may challenge one PC per turn" -- the first challenge by the time it was
    made counts (even if invalid for another reason) and later ones are invalid. Only entries
    on a character's own blog can be challenges; notes never are.
    """
    made = [e for e in entries if timelines[e.id].made_at is not None]
    made.sort(key=lambda e: (timelines[e.id].made_at, e.first_seen or e.published, str(e.id)))
    drafts: list[Draft] = []
    challenged: set[CharacterId] = set()
    for entry in made:
        timeline = timelines[entry.id]
        assert timeline.made_at is not None  # `made` holds only entries with a challenge
        target = read_target(entry, ctx, book)
        draft = Draft(entry, ctx.canonical(entry.owner_id), timeline.made_at, target)
        draft.invalid = _rule_invalid(draft, ctx, challenged)
        _apply_validity_ruling(draft, book)
        _apply_withdrawal(draft, timeline, book)
        _describe(draft, ctx)
        drafts.append(draft)
    return drafts
