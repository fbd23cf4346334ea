"""Character sheets for forum campaigns: validated by the ruleset, readable by everyone,
written by the character's owner or the GM, every change kept in the AuditLog.

ONE sheets are checked by `pbp.rules.one.checks.OneSheet` (ONE "Character creation": 35 stat
points, stats 2..12, 35 skill points) and record the hit points lost, which give the wound
penalty (ONE: "-2 to any action" once HLT hit points are lost). The other rulesets have no
sheet in their rules modules, so their sheet is a free-form JSON object; for Noir the
"skills" and "attributes" it may hold must be whole numbers, since rolls read them.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlmodel import Session, col, select

from pbp import limits
from pbp.errors import Forbidden, UserError
from pbp.models import Campaign, Character, Membership, User
from pbp.models.forum import Sheet
from pbp.rules import one
from pbp.rules.dice import NoirRoll, OneRoll, RollCommand, RollError
from pbp.services import audit_actions as lines
from pbp.services import audit_log, campaigns

MAX_SHEET_CHARS = limits.SHEET_JSON
MAX_SHEET_DEPTH = 20  # objects and lists inside each other; a real sheet needs 3 or 4
MAX_NOTES = 4000
NOIR_NUMBER_KEYS = ("skills", "attributes")
ONE_SHIELDS = ("none", "small", "large")


def get_sheet(*, session: Session, character: Character) -> Sheet | None:
    return session.exec(select(Sheet).where(Sheet.character_id == character.id)).first()


def sheets_of(*, session: Session, campaign: Campaign) -> dict[int, Sheet]:
    """Every sheet of the campaign by character id."""
    rows = session.exec(
        select(Sheet)
        .join(Character, col(Character.id) == Sheet.character_id)
        .where(Character.campaign_id == campaign.id)
    )
    return {sheet.character_id: sheet for sheet in rows}


def parse_skill_lines(text: str) -> dict[str, int]:
    """``Short Blade: 3`` (or ``= 3``) per line: the levels bought above Base."""
    skills: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        name, sep, value = line.replace("=", ":").rpartition(":")
        name = " ".join(name.split())
        if not sep or not name or not value.strip().lstrip("+-").isdigit():
            raise UserError(f"skills, line {number}: write a skill and its levels, e.g. Club: 2")
        skills[name] = int(value)
    return skills


def _whole(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise UserError(f"{what} must be a whole number, not {value!r}")
    return value


def _one_sheet(data: Mapping[str, Any], name: str) -> dict[str, Any]:
    stats, skills = data.get("stats"), data.get("skills", {})
    if not isinstance(stats, Mapping) or not isinstance(skills, Mapping):
        raise UserError('a ONE sheet needs "stats" (STR INT DEX HLT SPD) and "skills"')
    stats = {str(k): _whole(v, f"stat {k}") for k, v in stats.items()}
    skills = {str(k): _whole(v, f"skill {k}") for k, v in skills.items()}
    sheet = one.OneSheet(name=name, stats=stats, skills=skills)  # SheetError lists problems
    lost = _whole(data.get("hit_points_lost", 0), "hit points lost")
    if not 0 <= lost <= sheet.hit_points:
        raise UserError(f"hit points lost must be from 0 to {sheet.hit_points} (HLT x 3)")
    notes = str(data.get("notes", ""))[:MAX_NOTES]
    clean = {
        "stats": dict(sheet.stats),
        "skills": {k: v for k, v in sheet.skills.items() if v},
        "hit_points_lost": lost,
        "notes": notes,
    }
    return clean | _one_gear(data)


def _one_gear(data: Mapping[str, Any]) -> dict[str, Any]:
    """What a ONE combat reads besides the stats (issue #33 item 4), both optional: the
    armour's value (AV, "subtracted from each attack's damage") and weight (the Speed it
    costs), and the shield carried ("none", "small" or "large")."""
    gear: dict[str, Any] = {}
    armour = data.get("armour")
    if armour is not None:
        if not isinstance(armour, Mapping):
            raise UserError('"armour" is {"value": AV, "weight": Speed it costs}')
        value = _whole(armour.get("value", 0), "armour value")
        weight = _whole(armour.get("weight", 0), "armour weight")
        if not (0 <= value <= 20 and 0 <= weight <= 12):
            raise UserError("armour value must be 0 to 20 and its weight 0 to 12")
        gear["armour"] = {"value": value, "weight": weight}
    shield = data.get("shield")
    if shield is not None:
        if shield not in ONE_SHIELDS:
            raise UserError('"shield" is "none", "small" or "large"')
        gear["shield"] = shield
    return gear


def _noir_sheet(data: Mapping[str, Any]) -> dict[str, Any]:
    for key in NOIR_NUMBER_KEYS:
        numbers = data.get(key, {})
        if not isinstance(numbers, Mapping):
            raise UserError(f'"{key}" must be an object of names and numbers, e.g. {{"Drive": 7}}')
        for name, value in numbers.items():
            _whole(value, f"{key[:-1]} {name}")
    return dict(data)


def validate(ruleset: str, data: Any, *, name: str) -> dict[str, Any]:
    """The sheet as it will be stored, or a `UserError` saying what to fix."""
    if not isinstance(data, Mapping):
        raise UserError('a sheet is a JSON object, e.g. {"notes": "..."}')
    _check_depth(data)
    if len(json.dumps(data)) > MAX_SHEET_CHARS:
        raise UserError(f"a sheet may be at most {MAX_SHEET_CHARS:,} characters of JSON")
    if ruleset == "one":
        return _one_sheet(data, name)
    if ruleset == "noir":
        return _noir_sheet(data)
    return dict(data)


def parse_json(text: str) -> Any:
    try:
        return json.loads(text or "{}")
    except json.JSONDecodeError as exc:
        raise UserError(f"the sheet is not valid JSON: {exc.msg} at line {exc.lineno}") from exc
    except RecursionError:  # Python's parser gives up near 1,000 levels of nesting
        raise UserError(_too_deep()) from None


def _too_deep() -> str:
    return f"the sheet nests objects and lists more than {MAX_SHEET_DEPTH} levels deep: flatten it"


def _check_depth(data: Any) -> None:
    """Refuse deep nesting before anything walks the sheet recursively (json.dumps, the
    page's tojson), which would fail with RecursionError, a 500, instead of a reason."""
    level = [data]
    for _ in range(MAX_SHEET_DEPTH + 1):
        inner: list[Any] = []
        for value in level:
            if isinstance(value, Mapping):
                inner.extend(value.values())
            elif isinstance(value, list | tuple):
                inner.extend(value)
        if not inner:
            return
        level = inner
    raise UserError(_too_deep())


def can_edit(*, character: Character, user: User | None, membership: Membership | None) -> bool:
    """The owner of the character and the GM may change a sheet; nobody else."""
    if user is None or membership is None:
        return False
    return membership.role == "referee" or character.user_id == user.id


def save_sheet(
    *,
    session: Session,
    campaign: Campaign,
    character: Character,
    data: Any,
    actor: User,
    membership: Membership | None,
    now: datetime,
) -> Sheet:
    if character.campaign_id != campaign.id:
        raise UserError("that character is not in this campaign")
    if not can_edit(character=character, user=actor, membership=membership):
        raise Forbidden(f"only {character.name}'s player and the GM can change this sheet")
    clean = validate(campaign.ruleset, data, name=character.name)
    sheet = get_sheet(session=session, character=character)
    before = dict(sheet.data) if sheet else None
    if sheet is None:
        sheet = Sheet(character_id=character.id, ruleset=campaign.ruleset, data=clean)
    elif before == clean:
        return sheet
    sheet.data, sheet.ruleset, sheet.updated_by, sheet.updated_at = (
        clean,
        campaign.ruleset,
        actor.id,
        now,
    )
    session.add(sheet)
    updated = lines.SheetUpdated(character.id, before=before, after=clean)
    audit_log.record(session, line=updated, actor=actor, campaign_id=campaign.id, now=now)
    session.flush()
    return sheet


@dataclass(frozen=True)
class SkillRow:
    name: str
    levels: int
    score: int


def one_skill_rows(sheet: Sheet, name: str) -> list[SkillRow]:
    """A ONE sheet's bought skills with the score each rolls under (Base + levels)."""
    data = sheet.data
    one_sheet = one.OneSheet(name=name, stats=data.get("stats", {}), skills=data.get("skills", {}))
    return [
        SkillRow(skill, levels, one_sheet.score(skill))
        for skill, levels in sorted(one_sheet.skills.items())
    ]


def _lookup(numbers: Any, name: str) -> int | None:
    if not isinstance(numbers, Mapping):
        return None
    wanted = " ".join(name.split()).casefold()
    for key, value in numbers.items():
        if " ".join(str(key).split()).casefold() == wanted and isinstance(value, int):
            return value
    return None


def resolve_skill(
    *, session: Session, character: Character | None, command: RollCommand
) -> tuple[RollCommand, str]:
    """Turn a named skill into the character's score, as the roll will be recorded.

    ONE: the score is `OneSheet.score` (a stat, or Base + levels bought) and a wounded
    character rolls at -2 (`one.wound_modifier`), added to ``mod`` so the stored command
    shows it. Noir: the number under the sheet's "skills" or "attributes".
    Returns the resolved command and a note saying where the number came from.
    """
    if not command.needs_score:
        return command, ""
    skill_name = command.skill.name  # type: ignore[attr-defined]
    if character is None:
        raise RollError(
            f"to roll {skill_name!r} by name, post as a character with a sheet; "
            "or write the number, e.g. skill=8"
        )
    sheet = get_sheet(session=session, character=character)
    if sheet is None:
        raise RollError(f"{character.name} has no sheet yet, so {skill_name!r} has no number")
    if isinstance(command, OneRoll) and sheet.ruleset == "one":
        return _resolve_one(sheet, character, command, skill_name)
    if isinstance(command, NoirRoll) and sheet.ruleset == "noir":
        score = _lookup(sheet.data.get("skills"), skill_name)
        if score is None:
            score = _lookup(sheet.data.get("attributes"), skill_name)
        if score is None:
            raise RollError(f"{character.name}'s sheet has no skill called {skill_name!r}")
        return command.with_score(score), f"{skill_name} {score} from {character.name}'s sheet"
    raise RollError(
        f"{character.name}'s sheet is a {sheet.ruleset} sheet: it cannot give a number for "
        f"this roll; write skill=8"
    )


def _resolve_one(
    sheet: Sheet, character: Character, command: OneRoll, skill_name: str
) -> tuple[RollCommand, str]:
    data = sheet.data
    one_sheet = one.OneSheet(
        name=character.name, stats=data.get("stats", {}), skills=data.get("skills", {})
    )
    score = one_sheet.score(skill_name)  # SheetError (400) for an unknown skill
    note = f"{skill_name} {score} from {character.name}'s sheet"
    resolved = command.with_score(score)
    penalty = one.wound_modifier(int(data.get("hit_points_lost", 0)), one_sheet.stats["HLT"])
    if penalty:
        resolved = dataclasses.replace(resolved, mod=resolved.mod + penalty)
        note += f"; wounded {penalty:+d}"
    return resolved, note


def edit_sheet(
    *,
    session: Session,
    campaign: Campaign,
    character_slug: str,
    data: Any,
    actor: User,
    now: datetime,
) -> tuple[Character, Sheet]:
    """The character's player or the GM changes a sheet (`save_sheet`'s checks), named by
    the character's address."""
    # Imported here: the forum's visibility module reads rolls, which read sheets.
    from pbp.services.forum.visibility import membership_of, require_forum

    require_forum(campaign)
    character = campaigns.character_by_slug(session=session, campaign=campaign, slug=character_slug)
    member = membership_of(session, campaign, actor.id)
    sheet = save_sheet(
        session=session,
        campaign=campaign,
        character=character,
        data=data,
        actor=actor,
        membership=member,
        now=now,
    )
    return character, sheet
