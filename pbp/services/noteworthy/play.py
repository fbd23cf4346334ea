"""What a player may do now, and why not: the checks behind the built-in blog's forms.

The tally has the final word (it re-checks every rule); these checks only stop a player
from posting something the rules would void, and say why in the rules' own terms.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlmodel import Session, col, select

from pbp import limits
from pbp.errors import Forbidden, UserError
from pbp.limits import check_length
from pbp.models import Campaign, Character, Entry, EntryRevision, Turn, User
from pbp.rules import noteworthy as nw
from pbp.services import campaigns, mentions
from pbp.services.noteworthy import tally as tally_service
from pbp.services.noteworthy.ids import row_id, row_id_or_none


@dataclass(frozen=True)
class ChallengeOption:
    allowed: bool
    reason: str
    targets: tuple[Character, ...] = ()

    @property
    def challenging_pattern(self) -> str:
        """The rules' reading of a "Challenging" mood, for the write page's script."""
        return nw.CHALLENGING_MOOD_PATTERN


def character_of(*, session: Session, campaign: Campaign, user: User | None) -> Character | None:
    if user is None:
        return None
    return session.exec(
        select(Character).where(Character.campaign_id == campaign.id, Character.user_id == user.id)
    ).first()


def player_character(
    *, session: Session, campaign: Campaign, user: User | None, character_id: int | None = None
) -> Character:
    """The character `user` plays in `campaign`: the first check of every player's action
    (Forbidden, saying why, for a visitor, a referee or a player with no character yet).

    `character_id`, when a form names the character it changes, must be theirs: a form
    loaded before logging in as someone else is refused rather than changing the wrong
    character."""
    if user is None:
        raise Forbidden(f"only a player of {campaign.name} can do this: log in first")
    member = campaigns.membership(session=session, campaign=campaign, user=user)
    if member is None or member.role != "player":
        raise Forbidden(f"only a player of {campaign.name} can do this, and you are not")
    character = character_of(session=session, campaign=campaign, user=user)
    if character is None:
        raise Forbidden("you have no character in this campaign yet")
    if character_id is not None and character_id != character.id:
        raise Forbidden(f"this form changes another character, not {character.name}")
    return character


def open_turn(*, session: Session, campaign: Campaign) -> Turn | None:
    return session.exec(
        select(Turn).where(Turn.campaign_id == campaign.id, Turn.status == "open")
    ).first()


def challenged_this_turn(*, session: Session, character: Character, turn: Turn) -> bool:
    """Noteworthy: "you may challenge one PC per turn" — a withdrawn challenge counts. (A
    challenge cannot be hidden: pbp.services.noteworthy.hidden_entries.)"""
    entry_ids = list(
        session.exec(
            select(Entry.id).where(
                Entry.character_id == character.id,
                Entry.turn_id == turn.id,
                col(Entry.hidden_at).is_(None),
            )
        )
    )
    if not entry_ids:
        return False
    moods = session.exec(
        select(EntryRevision.mood).where(col(EntryRevision.entry_id).in_(entry_ids))
    )
    return any(nw.is_challenging(m) for m in moods)


def was_challenge(*, session: Session, entry: Entry) -> bool:
    """Whether the entry is, or in any version pbp kept was, a challenge."""
    moods = session.exec(select(EntryRevision.mood).where(EntryRevision.entry_id == entry.id))
    return nw.is_challenging(entry.mood) or any(nw.is_challenging(m) for m in moods)


def joined_after_opening(turn: Turn, character: Character) -> bool:
    """Noteworthy resolves a turn against the standings at its start: a character added to
    the roster later is in none of them, so that turn it "joined after the turn opened"
    (the tally's words) -- its challenge is invalid and its notes take no position."""
    snapshot = turn.start_standings or {}
    return bool(snapshot) and str(character.id) not in snapshot


def opening_turns(count: int) -> str:
    """The opening turns in words: "the first turn", "the first 2 turns"."""
    return "the first turn" if count == 1 else f"the first {count} turns"


def challenge_option(
    *, session: Session, campaign: Campaign, character: Character, turn: Turn | None
) -> ChallengeOption:
    opening = int((campaign.settings or {}).get("opening_turns", nw.DEFAULT_OPENING_TURNS))
    if turn is None:
        return ChallengeOption(False, "No turn is open.")
    if turn.number <= opening:
        return ChallengeOption(
            False, f"No challenges are permitted in {opening_turns(opening)} of the game."
        )
    if joined_after_opening(turn, character):
        # Issue #27 item 4: not offered a challenge the tally would rule invalid.
        return ChallengeOption(
            False,
            f"{character.name} joined after turn {turn.number} opened: a challenge this turn "
            "would be invalid (joined after the turn opened). You can challenge from the "
            "next turn.",
        )
    if character.status != "active":
        return ChallengeOption(False, "An outsider cannot challenge (outsiders cannot advance).")
    if challenged_this_turn(session=session, character=character, turn=turn):
        return ChallengeOption(
            False, "You have already challenged this turn (a withdrawn challenge still counts)."
        )
    candidates = session.exec(
        select(Character)
        .where(
            Character.campaign_id == campaign.id,
            Character.status == "active",
            Character.id != character.id,
        )
        .order_by(Character.name)
    )
    targets: list[Character] = []
    joiners: list[Character] = []
    for candidate in candidates:
        # A target who joined after the turn opened is not in its standings: invalid.
        (joiners if joined_after_opening(turn, candidate) else targets).append(candidate)
    reason = "Choose exactly one target."
    if joiners:
        names = ", ".join(c.name for c in joiners)
        reason += (
            f" Not offered: {names}, who joined after this turn opened (a challenge of "
            "them would be invalid this turn)."
        )
    return ChallengeOption(True, reason, tuple(targets))


def note_refusal(*, entry: Entry, turn: Turn | None) -> str | None:
    """Noteworthy: "notes are permitted only on the current turn's entries"; and none on
    an entry its author hid (pbp.services.noteworthy.hidden_entries)."""
    if entry.hidden_at is not None:
        return "Its author hid this entry: it takes no notes, and notes on it do not count."
    if turn is None or entry.turn_id != turn.id:
        return "Notes are permitted only on the current turn's entries."
    return None


def finalists(*, session: Session, campaign: Campaign, turn: Turn | None) -> tuple[int, ...]:
    """The two finalists when `turn` is the final, else (). Noteworthy: "When only two PCs
    are still active (that is, are not outsiders), the referee's final event sets up a
    conflict between the two characters" -- read from the standings the turn opened with,
    as the tally reads them."""
    if turn is None or campaign.ruleset != "noteworthy":
        return ()
    characters = session.exec(
        select(Character).where(Character.campaign_id == campaign.id).order_by(col(Character.id))
    ).all()
    standing = tally_service.standings_at_start(turn, list(characters))
    active = tuple(row_id(c.id) for c in standing if c.status is nw.Status.ACTIVE)
    return active if len(active) == 2 else ()


def position_refusal(
    *,
    character: Character | None,
    entry: Entry,
    target_id: int | None,
    final: tuple[int, ...] = (),
    turn: Turn | None = None,
    challenge: nw.ChallengeResult | None = None,
    fair_interval_ends: datetime | None = None,
) -> str | None:
    """Why this writer's support or opposition would not count (they may still comment):
    said on the note form before they post (issue #27 item 4), and refused on posting.

    In the final (`final`: the two finalists) a finalist's entry takes the outsiders'
    votes instead. Noteworthy: "Each outsider may now post a note supporting one side or
    the other (but not both sides). Post the note to the entry of the PC you support."
    `turn`, `challenge` (the live tally's reading of this entry's challenge) and
    `fair_interval_ends` add the tally's other reasons a new position would not count:
    the writer joined after the turn opened, the challenge is void, the referee's fair
    interval has ended.
    """
    if character is None:
        return "Only a character in this game can take a position."
    if turn is not None and joined_after_opening(turn, character):
        return (
            f"{character.name} joined after turn {turn.number} opened: a position taken this "
            "turn does not count (joined after the turn opened)."
        )
    if entry.character_id in final:
        if character.id in final:
            return "A finalist cannot vote in the final: the outsiders decide it."
        return None
    if character.status != "active":
        return "An outsider cannot support or oppose challenges."
    if character.id == entry.character_id:
        return "The challenger cannot take a position on their own challenge."
    if target_id is not None and character.id == target_id:
        return "The target cannot take a position on a challenge against them."
    if challenge is not None and challenge.withdrawn:
        return "This challenge was withdrawn: it has no effect, and positions on it do not count."
    if challenge is not None and not challenge.valid:
        reason = challenge.invalid_reason.value if challenge.invalid_reason else "invalid"
        return f"This challenge is invalid ({reason}): positions on it do not count."
    if fair_interval_ends is not None:
        return (
            "The referee's fair interval for this challenge has ended: positions taken now "
            "do not count."
        )
    return None


def fair_interval_ended(
    campaign: Campaign, challenge: nw.ChallengeResult | None, now: datetime | None
) -> datetime | None:
    """When the referee's fair interval for `challenge` ended, if it has by `now`.
    Noteworthy: notes are tabulated "at the end of each turn, or after a fair interval
    specified by the referee" (counted from the challenge)."""
    hours = (campaign.settings or {}).get("fair_interval_hours")
    if challenge is None or now is None or not hours:
        return None
    ends = challenge.made_at + timedelta(hours=float(hours))
    return ends if _aware(now) > _aware(ends) else None


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def stance_refusal(
    *,
    session: Session,
    campaign: Campaign,
    character: Character | None,
    entry: Entry,
    turn: Turn | None,
    now: datetime | None = None,
) -> str | None:
    """Why this writer cannot take a position with a note on `entry` now: the check the
    note form, its page and the API share. The challenge is the one the tally reads now (a
    challenge is stored only when its turn is resolved)."""
    final = finalists(session=session, campaign=campaign, turn=turn)
    challenge = None
    if (
        not final
        and turn is not None
        and entry.turn_id == turn.id
        and nw.is_challenging(entry.mood)
    ):
        live = tally_service.live_challenges(session=session, campaign=campaign, turn=turn)
        challenge = next((c for c in live if c.entry_id == entry.id), None)
    return position_refusal(
        character=character,
        entry=entry,
        target_id=row_id_or_none(challenge.target_id) if challenge else None,
        final=final,
        turn=turn,
        challenge=challenge,
        fair_interval_ends=fair_interval_ended(campaign, challenge, now),
    )


WITHDRAWN_MOOD = "Withdrawn"


def with_target(body: str, mood: str, target_name: str | None) -> str:
    """The picker's choice becomes an explicit "Target:" line, which the rules read first
    (the same as a player typing it on their own blog)."""
    if nw.is_challenging(mood) and target_name:
        return f"Target: {target_name}\n\n{body}"
    return body


def chosen_target(option: ChallengeOption, mood: str, target_id: str) -> str | None:
    """The target a picker's form names (its `target` field: a character id), checked."""
    if not nw.is_challenging(mood):
        return None
    if not option.allowed:
        raise UserError(option.reason)
    chosen = [t for t in option.targets if str(t.id) == target_id]
    if len(chosen) != 1:
        raise UserError("A challenge names exactly one target: choose one character.")
    return chosen[0].name


def markdown_source(revision) -> str:
    # Built-in entries keep rendered HTML; Markdown passes inline HTML through and the
    # sanitizer keeps it identical, so the body survives an edit that only changes mood.
    return revision.body_html if revision else ""


@dataclass(frozen=True)
class EntryPreview:
    """An entry as it would be posted: its HTML, its mood and how the rules read it."""

    html: str
    mood: str
    challenge: bool
    target: str | None  # the character a challenge names, when it names exactly one
    reading: str  # one sentence for the writer: a challenge of whom, or why it is not one


def preview_entry(
    *,
    session: Session,
    campaign: Campaign,
    character: Character,
    title: str,
    body_markdown: str,
    mood: str,
    target_id: str | None = None,
    editing: Entry | None = None,
) -> EntryPreview:
    """What an entry will look like and whether it reads as a challenge, saving nothing.

    The checks are the ones posting runs (`challenge_option`, `chosen_target`), so the
    preview never promises what posting would refuse. `target_id` is the write page's
    picker; without it (the edit page) the target is read from the text as the tally reads
    it (a "Target:" line, else the one character named). `editing`: the entry being edited,
    which does not count against "one challenge per turn" if it is already a challenge.
    The text is rendered last, after every query (no transaction open across the render).
    """
    check_length(body_markdown, limits.ENTRY_BODY, "an entry")
    target, reading, picked = _challenge_reading(
        session=session,
        campaign=campaign,
        character=character,
        title=title,
        body=body_markdown,
        mood=mood,
        target_id=target_id,
        editing=editing,
    )
    # The picker's choice becomes a "Target:" line when posted: the preview shows it too.
    shown = with_target(body_markdown, mood, target) if picked else body_markdown
    book = mentions.book_for(session=session, campaign=campaign)
    html = mentions.render_with_mentions(session=session, text=shown, book=book).html
    return EntryPreview(html, mood, nw.is_challenging(mood), target, reading)


def _challenge_reading(
    *, session, campaign, character, title, body, mood, target_id, editing
) -> tuple[str | None, str, bool]:
    """(the target's name, the sentence for the writer, whether the picker chose it)."""
    if not nw.is_challenging(mood):
        return None, "Not a challenge: only the mood “Challenging” issues one.", False
    already = editing is not None and nw.is_challenging(editing.mood)
    if not already:
        turn = open_turn(session=session, campaign=campaign)
        option = challenge_option(
            session=session, campaign=campaign, character=character, turn=turn
        )
        if not option.allowed:
            return None, f"This challenge would be refused: {option.reason}", False
        if target_id is not None:
            try:
                name = chosen_target(option, mood, target_id)
            except UserError as exc:
                return None, f"This challenge would be refused: {exc}", False
            return name, f"A challenge of {name}.", True
    characters = campaign_characters(session=session, campaign=campaign)
    reading = nw.detect_target(
        title,
        body,
        [nw.Character(id=c.id, name=c.name) for c in characters],
        character.id,
        tally_service.rules_settings(campaign, characters).aliases,
    )
    if reading.target_id is None:
        return None, f"A challenge, but of whom? {reading.explanation}", False
    name = next(c.name for c in characters if c.id == reading.target_id)
    return name, f"A challenge of {name}. {reading.explanation}", False


def campaign_characters(*, session: Session, campaign: Campaign) -> list[Character]:
    return list(
        session.exec(
            select(Character)
            .where(Character.campaign_id == campaign.id)
            .order_by(col(Character.id))
        )
    )
