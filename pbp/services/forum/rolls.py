"""The dice record: each campaign's secret seed, the rolls a post makes, who may see a
roll (`roll_view`, the one place that decides it), and the offline check of an export.

Fairness (issue "Forum play with dice no one can fake"):

* each forum campaign has a secret seed from `secrets`, made with the campaign and never
  changed (`seeds`); its SHA-256 (`dice.seed_commitment`) is published on the forum's front
  page from then on, before any roll can be made;
* a roll's dice come from HMAC-SHA256(seed, roll id) (`dice.derive_rng`), with a random
  roll id chosen by the server, so the result is fixed the moment the roll is made and
  nobody without the seed can predict or re-derive it;
* rolls are append-only and numbered per campaign, so a missing roll shows as a gap;
* when the GM ends the campaign the seed is revealed and `verify_export` recomputes every
  roll of an export (`pbp verify-rolls EXPORT.json`).

The seed is read here and nowhere else, and leaves this module only through
`revealed_seed`, which returns None until the campaign has ended.
"""

from __future__ import annotations

import dataclasses
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session, col, select

from pbp.errors import Conflict, UserError
from pbp.models import Campaign, Character, User
from pbp.models.forum import ROLL_ID_LENGTH, CampaignSecret, Post, Roll
from pbp.rules import dice
from pbp.rules.dice import Mismatch, RollCommand, RollResult
from pbp.rules.dice.sentences import plain_sentence
from pbp.services.forum import seeds, sheets

SEED_BYTES = seeds.SEED_BYTES
EXPORT_FORMAT = "pbp-forum-export-1"


ROLL_VISIBILITY = {
    "public": "Public: everyone who can read the post sees the command, every die and the result.",
    "gm": "GM-only: only the roller and the GM see the dice and the result; everyone else "
    "sees that a hidden roll was made.",
    "blind": "Blind: only the GM sees the dice and the result, not even the roller; everyone "
    "else sees that a hidden roll was made.",
}
VISIBILITY_NAMES = {"public": "public", "gm": "GM-only", "blind": "blind"}
AFTER_THE_END = (
    "When the GM ends the campaign the seed is revealed and every roll's dice are published "
    "(without the words around them), so anyone can check every roll."
)

# The forum's front page: a few lines of `/roll` for the campaign's ruleset, and the ones
# every forum game has (docs/games.md, "Forum games and dice you can check", has them all).
ROLL_HELP_COMMON = (
    ("/roll 2d6+1", "any dice: NdM, plus or minus a number"),
    ("/roll 4d6kh3", "keep the highest 3 (kl: the lowest); d6! explodes on a 6"),
)
ROLL_HELP = {
    "one": (
        ('/roll one skill="Short Blade" mod=-2', "a ONE check against your sheet's skill"),
        ("/roll one contest skill=8 vs=7", "a Contest of Skill against an opponent"),
    ),
    "noir": (
        ("/roll noir difficulty skill=7 mod=+5", "a Noir roll against the difficulty of 20"),
        ("/roll noir opposed skill=6 vs=8", "a Noir roll against an opponent"),
        ("/roll noir damage 3T+2", "a damage roll"),
    ),
}


def roll_help(ruleset: str) -> tuple[tuple[str, str], ...]:
    """The `/roll` lines the front page shows for `ruleset`: its own first."""
    return ROLL_HELP.get(ruleset, ()) + ROLL_HELP_COMMON


# -- who sees a roll ---------------------------------------------------------------------


@dataclass(frozen=True)
class Viewer:
    """Who is looking: a user id and their role in the campaign (None: not a member)."""

    user_id: int | None = None
    role: str | None = None

    @property
    def is_gm(self) -> bool:
        return self.role == "referee"

    @property
    def is_member(self) -> bool:
        return self.role is not None


ANONYMOUS = Viewer()


@dataclass(frozen=True)
class RollView:
    """A roll as one viewer may see it. `state` is "shown" (dice and result), "blind"
    (the roller of a blind roll: the command, no result) or "hidden" (that a roll was
    made, nothing more)."""

    id: str
    number: int
    visibility: str
    state: str
    created_at: datetime
    command: str | None = None  # what pbp rolled: a named skill resolved to its number
    note: str = ""
    result: dict[str, Any] | None = None
    typed: str | None = None  # what the poster wrote (issue #35 item 4)

    @property
    def as_typed(self) -> str | None:
        """The command as written; a roll stored before pbp kept it: as rolled."""
        return self.typed or self.command

    @property
    def label(self) -> str:
        return VISIBILITY_NAMES[self.visibility]

    @property
    def faces(self) -> list[tuple[int, int]]:
        return [tuple(f) for f in (self.result or {}).get("faces", [])]

    @property
    def sentence(self) -> str:
        """The roll in plain words, shown before its technical line; "" unless shown."""
        if self.state == "shown" and self.result:
            return plain_sentence(self.result)
        return ""

    @property
    def text(self) -> str:
        if self.state == "shown" and self.result:
            return self.result.get("text", "")
        if self.state == "blind":
            return f"{self.as_typed}: rolled blind, only the GM sees the result"
        if self.visibility == "blind":
            return "a hidden roll: only the GM sees it"
        return "a hidden roll: only the roller and the GM see it"

    def as_export(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "number": self.number, "visibility": self.visibility}
        if self.state != "shown":
            out["hidden"] = True
            if self.command:
                out |= {"command": self.as_typed, "resolved": self.command}
            return out
        out |= dict(self.result or {})
        # `command` as written, `resolved` what was rolled: verify-rolls recomputes from it.
        out |= {
            "command": self.as_typed,
            "resolved": self.command,
            "note": self.note,
            "created_at": iso(self.created_at),
        }
        return out


def roll_view(roll: Roll, viewer: Viewer, *, post_visible: bool, revealed: bool) -> RollView | None:
    """The one rule for rolls (`ROLL_VISIBILITY`): None when the viewer may not know the
    roll exists (its post is hidden from them).

    The GM sees every roll. After the end (seed revealed) every roll is shown to everyone,
    without its label when its post stays hidden. Otherwise: a public roll is shown to all
    who see its post; a GM-only roll to its roller; a blind roll shows its roller the
    command only; everyone else learns only that a roll was made.
    """
    base: dict[str, Any] = {
        "id": roll.id,
        "number": roll.number,
        "visibility": roll.visibility,
        "created_at": roll.created_at,
    }
    full = RollView(
        **base,
        state="shown",
        command=roll.command,
        note=roll.note,
        result=dict(roll.result),
        typed=roll.typed or None,
    )
    if viewer.is_gm or (revealed and post_visible):
        return full
    if revealed:
        return _unlabelled_view(roll, base)
    if not post_visible:
        return None
    if roll.visibility == "public":
        return full
    if viewer.user_id is not None and viewer.user_id == roll.roller_id:
        if roll.visibility == "gm":
            return full
        return RollView(**base, state="blind", command=roll.command, typed=roll.typed or None)
    return RollView(**base, state="hidden")


def _unlabelled_view(roll: Roll, base: dict[str, Any]) -> RollView:
    label = dice.parse_roll_command(roll.command).label
    command = unlabelled(roll.command)
    result = dict(roll.result)
    if label and result.get("text", "").startswith(f"{label}: "):
        result["text"] = result["text"][len(label) + 2 :]
    # The stored result repeats the command, label and all: replace it too (issue #16).
    result["command"] = command
    typed = roll.typed.partition("#")[0].strip() if roll.typed else None
    return RollView(**base, state="shown", command=command, result=result, typed=typed)


# -- the seed ------------------------------------------------------------------------------


def get_secret(
    *, session: Session, campaign: Campaign, lock: bool = False
) -> CampaignSecret | None:
    query = select(CampaignSecret).where(CampaignSecret.campaign_id == campaign.id)
    if lock:
        query = query.with_for_update()
    return session.exec(query).first()


def ensure_secret(*, session: Session, campaign: Campaign, now: datetime) -> CampaignSecret:
    """The campaign's secret. Every forum campaign has one from its creation (`seeds`);
    this makes one now only for a campaign that somehow has none, so a roll never fails.

    Two requests racing to make it both end with the one that was stored first.
    """
    existing = get_secret(session=session, campaign=campaign)
    if existing is not None:
        return existing
    row = seeds.new_secret(campaign=campaign, now=now)
    try:
        with session.begin_nested():
            session.add(row)
    except sa.exc.IntegrityError:
        session.expunge(row)
        existing = get_secret(session=session, campaign=campaign)
        if existing is None:
            raise
        return existing
    return row


def commitment(*, session: Session, campaign: Campaign) -> str | None:
    secret = get_secret(session=session, campaign=campaign)
    return secret.commitment if secret else None


def revealed_seed(secret: CampaignSecret | None) -> str | None:
    """The seed in hex once the campaign has ended, else None: the only way out."""
    if secret is None or secret.revealed_at is None:
        return None
    return secret.seed


def reveal(*, session: Session, campaign: Campaign, now: datetime) -> CampaignSecret:
    """Publish the seed (the campaign has ended): from now on anyone can check the rolls,
    and no more rolls can be made, since they would be predictable."""
    secret = ensure_secret(session=session, campaign=campaign, now=now)
    if secret.revealed_at is None:
        secret.revealed_at = now
        session.add(secret)
        session.flush()
    return secret


# -- making rolls --------------------------------------------------------------------------


@dataclass(frozen=True)
class PlannedRoll:
    """A parsed command with its named skill resolved, and where the number came from."""

    command: RollCommand
    note: str = ""


def plan_rolls(
    *, session: Session, character: Character | None, text: str
) -> tuple[PlannedRoll, ...]:
    """Read every ``/roll`` line of a post and resolve named skills; rolls nothing.

    Raises `RollError` (a 400 page) for any line that cannot be rolled, before anything
    is stored, so a bad command never leaves half a post behind.
    """
    planned = []
    for command in dice.find_roll_commands(text):
        resolved, note = sheets.resolve_skill(session=session, character=character, command=command)
        planned.append(PlannedRoll(resolved, note))
    return tuple(planned)


def new_roll_id() -> str:
    """Random and unguessable (128 bits): the HMAC message of the roll."""
    return secrets.token_urlsafe(16)[:ROLL_ID_LENGTH]


@dataclass(frozen=True)
class ExecutedRoll:
    id: str
    planned: PlannedRoll
    result: RollResult


def execute_rolls(
    *, session: Session, campaign: Campaign, planned: Iterable[PlannedRoll], now: datetime
) -> tuple[ExecutedRoll, ...]:
    """Roll every planned command with the campaign seed, before anything is stored.

    Locks the campaign's secret row (PostgreSQL) so roll numbers are handed out one post
    at a time; refuses once the seed is revealed.
    """
    planned = tuple(planned)
    if not planned:
        return ()
    ensure_secret(session=session, campaign=campaign, now=now)
    secret = get_secret(session=session, campaign=campaign, lock=True)
    assert secret is not None
    if secret.revealed_at is not None:
        raise Conflict("the campaign has ended and its seed is public: no more rolls")
    seed = bytes.fromhex(secret.seed)
    executed = []
    for plan in planned:
        roll_id = new_roll_id()
        executed.append(
            ExecutedRoll(roll_id, plan, dice.execute(plan.command, dice.derive_rng(seed, roll_id)))
        )
    return tuple(executed)


def store_rolls(
    *,
    session: Session,
    campaign: Campaign,
    post: Post,
    executed: Iterable[ExecutedRoll],
    visibility: str,
    roller: User,
    now: datetime,
) -> list[Roll]:
    last = session.exec(
        select(sa.func.max(Roll.number)).where(Roll.campaign_id == campaign.id)
    ).one()
    rows = []
    for position, done in enumerate(executed, start=1):
        row = Roll(
            id=done.id,
            campaign_id=campaign.id,
            number=(last or 0) + position,
            post_id=post.id,
            position=position,
            roller_id=roller.id,
            character_id=post.character_id,
            visibility=visibility,
            command=done.result.command.canonical(),
            typed=done.planned.command.typed or done.result.command.canonical(),
            note=done.planned.note,
            result=done.result.to_dict(),
            created_at=now,
        )
        session.add(row)
        rows.append(row)
    session.flush()
    return rows


def rolls_of_posts(*, session: Session, post_ids: Iterable[int]) -> dict[int, list[Roll]]:
    ids = list(post_ids)
    if not ids:
        return {}
    found: dict[int, list[Roll]] = {}
    query = (
        select(Roll)
        .where(col(Roll.post_id).in_(ids))
        .order_by(col(Roll.post_id), col(Roll.position))
    )
    for roll in session.exec(query):
        found.setdefault(roll.post_id, []).append(roll)
    return found


def campaign_rolls(*, session: Session, campaign: Campaign) -> list[Roll]:
    return list(
        session.exec(select(Roll).where(Roll.campaign_id == campaign.id).order_by(col(Roll.number)))
    )


def unlabelled(command: str) -> str:
    """The command without its ``# label``: the dice without the story around them."""
    return dataclasses.replace(dice.parse_roll_command(command), label="").canonical()


# -- verification --------------------------------------------------------------------------


@dataclass(frozen=True)
class VerifyReport:
    """What `verify_export` found: how many rolls the seed reproduces, and every problem."""

    checked: int
    mismatches: tuple[Mismatch, ...]

    @property
    def ok(self) -> bool:
        return not self.mismatches

    def summary(self) -> str:
        if self.ok:
            return f"{self.checked} rolls verified"
        return f"{len(self.mismatches)} mismatches in {self.checked} rolls"


def _seed_of(data: Mapping[str, Any]) -> tuple[bytes, str]:
    fairness = data.get("fairness")
    if not isinstance(fairness, Mapping):
        raise UserError('this is not a pbp forum export: it has no "fairness" section')
    seed_hex, published = fairness.get("seed"), fairness.get("commitment")
    if not seed_hex:
        raise UserError(
            "this export has no seed: the seed is revealed when the GM ends the campaign; "
            "export the forum again after that"
        )
    if not isinstance(published, str) or not published:
        raise UserError("this export has no commitment to check the seed against")
    try:
        return bytes.fromhex(seed_hex), published
    except (TypeError, ValueError) as exc:
        raise UserError("the export's seed is not hexadecimal") from exc


def verify_export(data: Any) -> VerifyReport:
    """Recompute every roll of an export from its revealed seed and list what differs.

    Checks that the seed hashes to the published commitment, that each roll's dice,
    total and reading are what (seed, roll id, command) give, that no roll was made before
    the commitment was published (`committed_at`, in exports since issue #35), and that the
    rolls are numbered 1..N without gaps or repeats (a missing roll is a hidden roll).
    """
    if not isinstance(data, Mapping):
        raise UserError("this is not a pbp forum export (expected a JSON object)")
    seed, published = _seed_of(data)
    rolls = data.get("rolls")
    if not isinstance(rolls, list) or not all(isinstance(r, Mapping) for r in rolls):
        raise UserError('the export\'s "rolls" must be a list of objects')
    hidden = [r for r in rolls if r.get("hidden")]
    full = [r for r in rolls if not r.get("hidden")]
    mismatches = [Mismatch(r.get("id"), "hidden", "hidden", "the dice") for r in hidden]
    mismatches += dice.verify_rolls(seed, full, commitment=published)
    mismatches += _numbering(rolls)
    mismatches += _before_commitment(full, data.get("fairness"))
    return VerifyReport(len(rolls), tuple(mismatches))


def _before_commitment(rolls: list[Mapping[str, Any]], fairness: Any) -> list[Mismatch]:
    """Rolls dated before the commitment's publication: nobody could have seen the
    commitment before them (issue #35 item 1). Exports made before `committed_at` existed
    have nothing to compare."""
    stated = fairness.get("committed_at") if isinstance(fairness, Mapping) else None
    published = _when(stated)
    if published is None:
        return []
    return [
        Mismatch(r.get("id"), "time, before the commitment's", r.get("created_at"), stated)
        for r in rolls
        if (made := _when(r.get("created_at"))) is not None and made < published
    ]


def _when(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else None


def _numbering(rolls: list[Mapping[str, Any]]) -> list[Mismatch]:
    numbers = [r.get("number") for r in rolls]
    if not all(isinstance(n, int) and not isinstance(n, bool) for n in numbers):
        return [Mismatch(None, "numbers", numbers, "a number on every roll")]
    problems = []
    seen: set[int | None] = set()  # every number is an int (checked above)
    for roll, number in zip(rolls, numbers, strict=True):
        if number in seen:
            problems.append(Mismatch(roll.get("id"), "number", number, "a number used once"))
        seen.add(number)
    missing = sorted(set(range(1, len(rolls) + 1)) - seen)
    if missing:
        problems.append(Mismatch(None, "missing rolls", missing, []))
    return problems


def iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment else None
