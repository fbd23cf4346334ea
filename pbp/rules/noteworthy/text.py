"""Reading text for Noteworthy: moods, stances and challenge targets.

These readings are heuristics over free prose, so each returns what it found and why, and
every one of them can be overridden by a referee ruling (Noteworthy: "If a PC's position is
ambiguous, the referee's interpretation is final").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import lru_cache

from pbp.rules.noteworthy.model import (
    CHALLENGING,
    Character,
    CharacterId,
    Stance,
    StanceReading,
    TargetMethod,
    TargetReading,
)

# --- moods -----------------------------------------------------------------------------------

_MOOD_PREFIX = re.compile(r"^\s*current\s+mood\s*:", re.IGNORECASE)
_EDGE_PUNCTUATION = re.compile(r"^[\W_]+|[\W_]+$")


def normalize_mood(raw: str | None) -> str | None:
    """The comparable form of a "Current mood:" value, or ``None`` if there is none.

    Noteworthy: each entry "must have a 'Current mood:' line"; blogs decorate it differently
    ("Challenging!", " CHALLENGING ", "challenging :)"), so case, surrounding punctuation
    (emoji included) and runs of whitespace are ignored. A stray "Current mood:" prefix left
    by an adapter is dropped too.
    """
    if raw is None:
        return None
    text = " ".join(_MOOD_PREFIX.sub("", raw, count=1).split())
    text = _EDGE_PUNCTUATION.sub("", text)
    return text.casefold() or None


def is_challenging(mood: str | None) -> bool:
    """Noteworthy: 'By describing your mood as "Challenging," you issue a challenge.'"""
    return normalize_mood(mood) == CHALLENGING


# `is_challenging` as one regular expression, for a page to show the challenge picker as
# the player types (pbp/static/write.js) by the rules' reading rather than its own. Valid in
# Python and JavaScript alike (case-insensitive); tests check it agrees with `is_challenging`.
CHALLENGING_MOOD_PATTERN = r"^\s*(?:current\s+mood\s*:)?[\W_]*challenging[\W_]*$"


_CHALLENGE_LINE = re.compile(
    r"^[^\w\n]*(?:current\s+mood\s*:\s*)?challenging[^\w\n]*$", re.IGNORECASE | re.MULTILINE
)


def looks_like_challenge(text: str) -> bool:
    """Whether a note's text carries a "Challenging" mood line.

    Noteworthy: "You cannot issue a challenge in a note to another PC's entry, only on your
    own blog" -- such a note is never a challenge; the tally only points it out.
    """
    return "allenging" in text.lower() and _CHALLENGE_LINE.search(text) is not None


# --- stances ---------------------------------------------------------------------------------

_WORD = {"support": Stance.SUPPORT, "oppose": Stance.OPPOSE}
_SIGN = {"+1": Stance.SUPPORT, "-1": Stance.OPPOSE}
_LINE_TRIM = " \t*_[](){}<>\"'“”.,!:;~"

_STANCE_LINE = re.compile(r"\bstance\s*[:=]\s*(support|oppose)\b", re.IGNORECASE)
_I_STANCE = re.compile(r"\bI\s+(?:\w+ly\s+)?(support|oppose)\b", re.IGNORECASE)
_LEADING_WORD = re.compile(r"^[^\w\n]*(support|oppose)\s*[.!:,;—–-]", re.IGNORECASE)
_SIGN_TOKEN = re.compile(r"(?<![\w+\-])([+-]1)(?!\d|\w|\.\d)")


def _line_markers(line: str) -> list[tuple[Stance, str]]:
    """Markers that fill a whole line ("Support", "**Oppose.**", "+1") or lead it
    ("Support -- he had it coming"). A leading word needs punctuation after it so prose like
    "Support from the guild arrived" is not read as a position."""
    bare = line.strip(_LINE_TRIM).casefold()
    if bare in _WORD:
        return [(_WORD[bare], line.strip())]
    if bare in _SIGN:
        return [(_SIGN[bare], line.strip())]
    lead = _LEADING_WORD.match(line)
    if lead:
        return [(_WORD[lead.group(1).casefold()], lead.group(1))]
    return []


def _phrase_markers(text: str) -> list[tuple[Stance, str]]:
    """Markers anywhere in the text: "Stance: support", "I (strongly) oppose", "+1"."""
    found = []
    for pattern in (_STANCE_LINE, _I_STANCE):
        for match in pattern.finditer(text):
            found.append((_WORD[match.group(1).casefold()], match.group(0)))
    for match in _SIGN_TOKEN.finditer(text):
        found.append((_SIGN[match.group(1)], match.group(1)))
    return found


def read_stance(text: str) -> StanceReading:
    """Read a note's position on a challenge from explicit markers.

    Noteworthy: each PC "may ... note clear support or opposition to the challenge". Only
    explicit markers count -- "Support" / "Oppose" (a line of its own or leading the note),
    "Stance: support", "+1" / "-1", "I support" / "I oppose" -- because in-character prose
    mentions support and opposition all the time. No marker: no position. Markers both ways:
    ambiguous, and "the referee's interpretation is final". Call it once when the note arrives
    and store the result; a ``stance`` ruling overrides it.
    """
    markers: list[tuple[Stance, str]] = []
    for line in text.splitlines():
        markers.extend(_line_markers(line))
    markers.extend(_phrase_markers(text))
    stances = {stance for stance, _ in markers}
    shown = tuple(dict.fromkeys(snippet for _, snippet in markers))
    quoted = ", ".join(f"“{snippet}”" for snippet in shown)
    if not stances:
        return StanceReading(Stance.NONE, (), "No clear support or opposition marker.")
    if len(stances) > 1:
        return StanceReading(
            Stance.AMBIGUOUS, shown, f"Reads both ways ({quoted}); needs the referee's ruling."
        )
    stance = stances.pop()
    return StanceReading(stance, shown, f"Read as {stance} from {quoted}.")


# --- targets ---------------------------------------------------------------------------------

_TARGET_LINE = re.compile(
    r"^[^\w\n]*target[^\w\n:]*:[^\w\n]*(?P<name>[^\n]*?)[^\w\n]*$", re.IGNORECASE | re.MULTILINE
)


def _name_key(name: str) -> str:
    return " ".join(name.split()).casefold()


@lru_cache(maxsize=64)
def _name_matcher(
    names: tuple[tuple[str, CharacterId], ...],
) -> tuple[re.Pattern[str], dict[str, CharacterId]]:
    """One regex over every name and alias, longest first, so "Vance Holt" wins over "Vance".

    Whole words only; a trailing possessive ("Vance's", "Vance’s") still names Vance.
    """
    by_key: dict[str, CharacterId] = {}
    for name, character_id in names:
        key = _name_key(name)
        if key:
            by_key.setdefault(key, character_id)
    ordered = sorted(by_key, key=len, reverse=True)
    if not ordered:
        return re.compile(r"(?!x)x"), by_key
    alternatives = "|".join(r"\s+".join(map(re.escape, key.split())) for key in ordered)
    pattern = re.compile(rf"(?<!\w)({alternatives})(?:['’]s)?(?!\w)", re.IGNORECASE)
    return pattern, by_key


class NameFinder:
    """Finds the characters a text names: one turn's cast and aliases, worked out once.

    The tally reads a target from every challenge of a turn with the same cast; building
    the name list and the regex's lookup key once per turn, not once per entry, is most of
    a target's reading time.
    """

    def __init__(
        self, characters: Iterable[Character], aliases: Mapping[str, CharacterId] | None = None
    ) -> None:
        cast = tuple(characters)
        known = {c.id for c in cast}
        pairs = [(c.name, c.id) for c in cast]
        pairs += [(alias, cid) for alias, cid in (aliases or {}).items() if cid in known]
        self.names = {c.id: c.name for c in cast}
        self._pattern, self._by_key = _name_matcher(tuple(pairs))

    def named(self, text: str) -> tuple[CharacterId, ...]:
        """Characters named in ``text`` (by name or alias), in order of first mention."""
        by_key = self._by_key
        found = (by_key[_name_key(m.group(1))] for m in self._pattern.finditer(text))
        return tuple(dict.fromkeys(found))

    def listed(self, ids: Iterable[CharacterId]) -> str:
        """The characters' names, comma-separated (an unknown id as itself)."""
        return ", ".join(self.names.get(i, str(i)) for i in ids)


def find_named_characters(
    text: str,
    characters: Iterable[Character],
    aliases: Mapping[str, CharacterId] | None = None,
) -> tuple[CharacterId, ...]:
    """Characters named in ``text`` (by name or alias), in order of first mention."""
    return NameFinder(characters, aliases).named(text)


def _explicit_target(lines: list[str], finder: NameFinder) -> TargetReading:
    named = tuple(dict.fromkeys(cid for line in lines for cid in finder.named(line)))
    shown = "; ".join(f"“Target: {line}”" for line in lines)
    if len(named) == 1:
        why = f"{shown} names {finder.listed(named)}."
        return TargetReading(named[0], named, TargetMethod.EXPLICIT, why)
    if not named:
        why = f"{shown} names no character or alias; needs a ruling."
    else:
        why = f"{shown} names several characters ({finder.listed(named)}); needs a ruling."
    return TargetReading(None, named, TargetMethod.UNRESOLVED, why)


def detect_target(
    title: str,
    body: str,
    characters: Iterable[Character],
    challenger_id: CharacterId | None,
    aliases: Mapping[str, CharacterId] | None = None,
) -> TargetReading:
    """Find the one character a challenge names.

    Noteworthy: "The challenger's entry must name exactly one target PC". An explicit
    "Target: NAME" line wins (even if it names the challenger -- that is then an invalid
    self-challenge, not a reason to look elsewhere). Otherwise every character name and alias
    in the title and text is a candidate, except the challenger's own. Exactly one candidate
    is the target; none or several need the referee's ruling -- the challenge is never
    dropped silently. Outsiders are candidates too: challenging one is invalid, not unnamed.
    """
    return target_named(title, body, NameFinder(characters, aliases), challenger_id)


def target_named(
    title: str, body: str, finder: NameFinder, challenger_id: CharacterId | None
) -> TargetReading:
    """``detect_target`` with the cast's names worked out already (see its rules): the tally
    reads every challenge of a turn with one ``NameFinder``."""
    text = f"{title}\n{body}"
    lines = [m.group("name") for m in _TARGET_LINE.finditer(text)]
    if lines:
        return _explicit_target(lines, finder)
    named = tuple(cid for cid in finder.named(text) if cid != challenger_id)
    if len(named) == 1:
        why = f"The entry names {finder.listed(named)} and no other character."
        return TargetReading(named[0], named, TargetMethod.NAMES, why)
    if not named:
        why = "The entry names no other character; needs a ruling."
    else:
        why = f"The entry names several characters ({finder.listed(named)}); needs a ruling."
    return TargetReading(None, named, TargetMethod.UNRESOLVED, why)
