"""ONE combat in a scene (issue #33 item 4), on the pure tracker `pbp.rules.one.combat`.

The GM starts a combat in a thread of a ONE campaign from the characters' sheets (Speed,
Health and hit points lost; the armour's value and weight and the shield, which the sheet
may hold: ONE "The armor weighs enough to reduce his Speed by one point"). Then, segment by
segment: each fighter who acts declares a plan (their player or the GM); an attack is
resolved from `/roll one` rolls already made in the thread's posts: the attacker's roll,
the defender's when they declared a defence, and a damage roll, their faces fed to the
tracker in that order, against the targets the rules give (skill, two hand actions, shields,
wounds); the damage the armour lets through goes onto the defender's sheet. The GM advances
to the next segment, and ends the combat.

Every step is a `CombatStep` row holding the tracker's state after it: the next step
starts from it, and `replay` re-runs every step from the first (the faces are in the steps)
to check the stored states. The steps are the combat's history on the thread's page and in
the export. Only rolls everyone can see may be attached (a public roll in a post to all):
the history is public, and must not tell what a hidden roll showed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlmodel import Session, col, select

from pbp.errors import Conflict, Forbidden, NotFound, UserError
from pbp.models import Campaign, Character, User
from pbp.models.forum import CombatStep, Post, Roll, Sheet, Thread
from pbp.rules import one
from pbp.rules.dice.source import ScriptedDice, ScriptExhausted
from pbp.rules.one import combat as tracker
from pbp.rules.one.checks import Condition
from pbp.services import audit_actions as lines
from pbp.services import audit_log, campaigns
from pbp.services.forum import sheets, threads
from pbp.services.forum.rolls import Viewer
from pbp.services.forum.visibility import membership_of, require_forum

# -- the tracker's state as JSON ----------------------------------------------------------


def _plan_json(p: tracker.Plan) -> dict[str, Any]:
    return {
        "acts": [a.value for a in p.acts],
        "attacks_used": p.attacks_used,
        "defends_used": p.defends_used,
    }


def state_json(state: tracker.CombatState) -> dict[str, Any]:
    return {
        "turn": state.turn,
        "segment": state.segment,
        "fighters": [
            {
                "name": f.name,
                "speed": f.speed,
                "hlt": f.hlt,
                "armour": f.armour,
                "armour_weight": f.armour_weight,
                "shield": f.shield.value,
                "lost": f.lost,
                "down": f.down.value if f.down else None,
                "pending": f.pending.value if f.pending else None,
                "plans": [_plan_json(p) for p in f.plans],
            }
            for f in state.fighters
        ],
    }


def state_of(data: dict[str, Any]) -> tracker.CombatState:
    fighters = tuple(
        tracker.Fighter(
            name=f["name"],
            speed=f["speed"],
            hlt=f["hlt"],
            armour=f["armour"],
            armour_weight=f["armour_weight"],
            shield=tracker.Shield(f["shield"]),
            lost=f["lost"],
            down=Condition(f["down"]) if f["down"] else None,
            pending=Condition(f["pending"]) if f["pending"] else None,
            plans=tuple(
                tracker.Plan(
                    tuple(tracker.Act(a) for a in p["acts"]), p["attacks_used"], p["defends_used"]
                )
                for p in f["plans"]
            ),
        )
        for f in data["fighters"]
    )
    return tracker.CombatState(fighters, data["turn"], data["segment"])


# -- reading ------------------------------------------------------------------------------


@dataclass(frozen=True)
class FighterView:
    name: str
    character_id: int
    speed: int
    hit_points: int
    max_hit_points: int
    condition: str
    actions: int  # in this segment
    plans: tuple[str, ...]


@dataclass(frozen=True)
class Combat:
    """The thread's combat under way (or the last one, ended): its steps and where it is."""

    steps: list[CombatStep]
    state: tracker.CombatState
    characters: dict[str, int]  # fighter name -> character id

    @property
    def ended(self) -> bool:
        return self.steps[-1].kind == "end"

    @property
    def fighters(self) -> list[FighterView]:
        acting = tracker.acting(self.state) if not self.ended else {}
        return [
            FighterView(
                f.name,
                self.characters[f.name],
                f.speed_now,
                f.hit_points,
                3 * f.hlt,
                (f.down or one.condition_for(f.lost, f.hlt)).value,
                acting.get(f.name, 0),
                tuple(" + ".join(a.value for a in p.acts) for p in f.plans),
            )
            for f in self.state.fighters
        ]

    @property
    def waiting_for(self) -> list[str]:
        """Who acts this segment and has not declared yet."""
        return [f.name for f in self.fighters if f.actions and not f.plans]


def thread_steps(*, session: Session, thread: Thread) -> list[CombatStep]:
    """Every combat step of a thread, in order: the history of all its combats."""
    return list(
        session.exec(
            select(CombatStep)
            .where(CombatStep.thread_id == thread.id)
            .order_by(col(CombatStep.number))
        )
    )


def current(*, session: Session, thread: Thread) -> Combat | None:
    """The thread's latest combat, from its last "start"; None if it never had one."""
    steps = thread_steps(session=session, thread=thread)
    starts = [i for i, s in enumerate(steps) if s.kind == "start"]
    if not starts:
        return None
    mine = steps[starts[-1] :]
    return Combat(mine, state_of(mine[-1].state), dict(mine[0].detail["characters"]))


# -- the steps ----------------------------------------------------------------------------


def combat_of(
    *, session: Session, campaign: Campaign, thread_id: int, viewer: Viewer
) -> tuple[Thread, Combat | None]:
    """A scene's combat as a reader of the scene sees it (everyone who may read it sees the
    combat: only public rolls are in it)."""
    thread, _ = threads.get_thread(
        session=session, campaign=campaign, thread_id=thread_id, viewer=viewer
    )
    return thread, current(session=session, thread=thread)


def _running(session: Session, thread: Thread) -> Combat:
    combat = current(session=session, thread=thread)
    if combat is None or combat.ended:
        raise Conflict("no combat is under way in this scene: the GM starts one")
    return combat


def _require_gm(session: Session, campaign: Campaign, actor: User) -> None:
    member = membership_of(session, campaign, actor.id)
    if member is None or member.role != "referee":
        raise Forbidden("only the GM runs the combat")


def _thread(session: Session, campaign: Campaign, thread_id: int) -> Thread:
    require_forum(campaign)
    if campaign.ruleset != "one":
        raise UserError("combat by segments is ONE's: this campaign plays another game")
    thread = session.get(Thread, thread_id)
    if thread is None or thread.campaign_id != campaign.id:
        raise NotFound("there is no such scene in this campaign")
    return thread


def _record(
    session: Session,
    thread: Thread,
    kind: str,
    state: tracker.CombatState,
    text: str,
    actor: User,
    now: datetime,
    detail: dict[str, Any] | None = None,
) -> CombatStep:
    last = session.exec(
        select(CombatStep.number)
        .where(CombatStep.thread_id == thread.id)
        .order_by(col(CombatStep.number).desc())
    ).first()
    step = CombatStep(
        thread_id=thread.id,
        number=(last or 0) + 1,
        kind=kind,
        detail=detail or {},
        state=state_json(state),
        text=text,
        actor_id=actor.id,
        created_at=now,
    )
    session.add(step)
    session.flush()
    return step


def _fighter_of(character: Character, sheet: Sheet | None) -> tracker.Fighter:
    if sheet is None or sheet.ruleset != "one":
        raise UserError(f"{character.name} has no ONE sheet: the combat reads Speed from it")
    data = sheet.data
    armour = data.get("armour") or {}
    return tracker.Fighter(
        name=character.name,
        speed=int(data["stats"]["SPD"]),
        hlt=int(data["stats"]["HLT"]),
        armour=int(armour.get("value", 0)),
        armour_weight=int(armour.get("weight", 0)),
        shield=tracker.Shield(data.get("shield", "none")),
        lost=int(data.get("hit_points_lost", 0)),
    )


def start_combat(
    *,
    session: Session,
    campaign: Campaign,
    thread_id: int,
    actor: User,
    character_slugs: Sequence[str],
    now: datetime,
) -> CombatStep:
    """The GM starts a combat between these characters: turn 1, segment 1."""
    thread = _thread(session, campaign, thread_id)
    _require_gm(session, campaign, actor)
    combat = current(session=session, thread=thread)
    if combat is not None and not combat.ended:
        raise Conflict("a combat is already under way in this scene: end it first")
    slugs = list(dict.fromkeys(character_slugs))
    if len(slugs) < 2:
        raise UserError("a combat needs at least two characters")
    chars = [campaigns.character_by_slug(session=session, campaign=campaign, slug=s) for s in slugs]
    fighters = [_fighter_of(c, sheets.get_sheet(session=session, character=c)) for c in chars]
    state = tracker.start_combat(fighters)
    names = ", ".join(f"{f.name} (Speed {f.speed_now})" for f in state.fighters)
    detail = {"characters": {c.name: c.id for c in chars}}
    return _record(session, thread, "start", state, f"Combat starts: {names}.", actor, now, detail)


def _may_act_for(session: Session, campaign: Campaign, actor: User, character_id: int) -> None:
    member = membership_of(session, campaign, actor.id)
    character = session.get(Character, character_id)
    if member is not None and member.role == "referee":
        return
    if character is None or character.user_id != actor.id:
        name = character.name if character else "that character"
        raise Forbidden(f"only {name}'s player and the GM declare what {name} does")


def declare_plan(
    *,
    session: Session,
    campaign: Campaign,
    thread_id: int,
    actor: User,
    fighter: str,
    plans: Sequence[Sequence[str]],
    now: datetime,
) -> CombatStep:
    """A fighter's plan for this segment: one list of acts per action they have in it
    (ONE: a movement, or one or two hand actions of attack, defend, ready)."""
    thread = _thread(session, campaign, thread_id)
    if membership_of(session, campaign, actor.id) is None:
        raise Forbidden("only the players and the GM of this campaign declare in its combats")
    combat = _running(session, thread)
    if fighter not in combat.characters:
        raise NotFound(f"{fighter} is not in this combat")
    _may_act_for(session, campaign, actor, combat.characters[fighter])
    try:
        chosen = [tracker.plan(*acts) for acts in plans]
    except ValueError as error:  # an act that is not one of ONE's
        raise UserError("the acts are move, attack, defend and ready") from error
    state = tracker.declare(combat.state, fighter, *chosen)
    words = "; ".join(" and ".join(a.value for a in p.acts) for p in chosen)
    text = f"Segment {state.segment}: {fighter} will {words}."
    detail = {"fighter": fighter, "plans": [[a.value for a in p.acts] for p in chosen]}
    return _record(session, thread, "declare", state, text, actor, now, detail)


def _roll(
    session: Session, thread: Thread, roll_id: str, used: set[str], what: str
) -> tuple[Roll, Post]:
    roll = session.get(Roll, roll_id)
    post = session.get(Post, roll.post_id) if roll is not None else None
    if roll is None or post is None or post.thread_id != thread.id:
        raise NotFound(f"the {what} roll is not one of this scene's rolls")
    if roll.visibility != "public" or post.audience != "all" or post.deleted_at is not None:
        raise UserError(f"the {what} roll must be a public roll in a post to everyone")
    if roll_id in used:
        raise Conflict(f"the {what} roll is already part of this combat")
    return roll, post


def _faces(roll: Roll) -> list[int]:
    return [int(value) for _sides, value in roll.result.get("faces", [])]


def _skill(session: Session, character_id: int, skill: str) -> int:
    character = session.get(Character, character_id)
    assert character is not None
    sheet = sheets.get_sheet(session=session, character=character)
    assert sheet is not None  # the combat started from it
    data = sheet.data
    one_sheet = one.OneSheet(
        name=character.name, stats=data.get("stats", {}), skills=data.get("skills", {})
    )
    return one_sheet.score(skill)


def resolve_attack(
    *,
    session: Session,
    campaign: Campaign,
    thread_id: int,
    actor: User,
    attacker: str,
    defender: str,
    skill: str,
    attack_roll: str,
    defence_skill: str | None = None,
    defence_roll: str | None = None,
    damage_roll: str | None = None,
    missile: bool = False,
    now: datetime,
) -> CombatStep:
    """An attack with the `/roll one` rolls of the thread's posts (see the module's doc).
    The GM resolves it; the damage the defender takes goes onto their sheet."""
    thread = _thread(session, campaign, thread_id)
    _require_gm(session, campaign, actor)
    combat = _running(session, thread)
    for name in (attacker, defender):
        if name not in combat.characters:
            raise NotFound(f"{name} is not in this combat")
    used = {r for s in combat.steps for r in s.detail.get("rolls", [])}
    rolls = [_roll(session, thread, attack_roll, used, "attack")[0]]
    if (defence_roll is None) != (defence_skill is None):
        raise UserError("a defence needs both its skill and its roll")
    if defence_roll is not None:
        rolls.append(_roll(session, thread, defence_roll, used | {attack_roll}, "defence")[0])
    if any(r.result.get("ruleset") != "one" for r in rolls):
        raise UserError('attack and defence are ONE checks: /roll one skill="Short Blade"')
    damage = None
    if damage_roll is not None:
        damage = _roll(session, thread, damage_roll, used | {attack_roll}, "damage")[0]
        if any(sides != 6 for sides, _ in damage.result.get("faces", [])):
            raise UserError("ONE damage is rolled on d6s: /roll 1d6")
    attack_score = _skill(session, combat.characters[attacker], skill)
    defence_score = (
        _skill(session, combat.characters[defender], defence_skill) if defence_skill else None
    )
    script = [face for r in rolls for face in _faces(r)]
    damage_faces = _faces(damage) if damage is not None else []
    args: dict[str, Any] = {
        "attacker": attacker,
        "defender": defender,
        "skill": skill,
        "attack_skill": attack_score,
        "defence_skill": defence_score,
        "damage_dice": max(1, len(damage_faces)),
        "missile": missile,
        "faces": script + damage_faces,
    }
    state, report, consumed = _attack(combat.state, args)
    if consumed > len(script) and damage is None:
        raise UserError(
            f"{attacker}'s attack hit: post a damage roll (/roll 1d6) and attach it too"
        )
    if report is None:
        raise UserError("the rolls attached hold too few dice for this attack: use /roll one")
    attached = [r.id for r in rolls[: _rolls_used(rolls, consumed)]]
    if damage is not None and consumed > len(script):
        attached.append(damage.id)
    args["faces"] = args["faces"][:consumed]
    detail = {"rolls": attached, **args}
    text = f"Segment {state.segment}: {report.render()}."
    step = _record(session, thread, "attack", state, text, actor, now, detail)
    if report.taken:
        _wound_sheet(session, campaign, combat.characters[defender], state, defender, actor, now)
    return step


def _rolls_used(rolls: list[Roll], consumed: int) -> int:
    count, total = 0, 0
    for roll in rolls:
        if total >= consumed:
            break
        total += len(_faces(roll))
        count += 1
    return count


def _attack(state: tracker.CombatState, args: dict[str, Any]) -> tuple[Any, Any, int]:
    dice = ScriptedDice(args["faces"])
    try:
        state, report = tracker.resolve_attack(
            state,
            dice,
            args["attacker"],
            args["defender"],
            attack_skill=args["attack_skill"],
            defence_skill=args["defence_skill"],
            damage_dice=args["damage_dice"],
            missile=args["missile"],
        )
    except ScriptExhausted:
        return state, None, len(args["faces"]) + 1
    return state, report, len(args["faces"]) - dice.remaining


def _wound_sheet(
    session: Session,
    campaign: Campaign,
    character_id: int,
    state: tracker.CombatState,
    name: str,
    actor: User,
    now: datetime,
) -> None:
    """The hit points lost go onto the defender's sheet (ONE: its wound penalty follows)."""
    character = session.get(Character, character_id)
    assert character is not None
    sheet = sheets.get_sheet(session=session, character=character)
    assert sheet is not None
    fighter = state.fighter(name)
    before = dict(sheet.data)
    lost = min(fighter.lost, 3 * fighter.hlt)
    sheet.data = {**before, "hit_points_lost": lost}
    sheet.updated_by, sheet.updated_at = actor.id, now
    session.add(sheet)
    line = lines.SheetUpdated(character.id, before=before, after=dict(sheet.data))
    audit_log.record(session, line=line, actor=actor, campaign_id=campaign.id, now=now)


def next_segment(
    *, session: Session, campaign: Campaign, thread_id: int, actor: User, now: datetime
) -> CombatStep:
    """The GM moves the combat on one segment (12 -> the next turn's 1)."""
    thread = _thread(session, campaign, thread_id)
    _require_gm(session, campaign, actor)
    state = tracker.next_segment(_running(session, thread).state)
    acting = tracker.acting(state)
    who = ", ".join(acting) if acting else "nobody is fast enough to act"
    text = f"Turn {state.turn}, segment {state.segment}: {who}."
    return _record(session, thread, "next", state, text, actor, now)


def end_combat(
    *, session: Session, campaign: Campaign, thread_id: int, actor: User, now: datetime
) -> CombatStep:
    thread = _thread(session, campaign, thread_id)
    _require_gm(session, campaign, actor)
    combat = _running(session, thread)
    seconds = (combat.state.turn - 1) * tracker.SEGMENTS + combat.state.segment
    text = f"The combat ends after {seconds} segments (seconds)."
    return _record(session, thread, "end", combat.state, text, actor, now)


# -- replay -------------------------------------------------------------------------------


def replay(steps: Sequence[CombatStep]) -> list[int]:
    """Re-run a combat's steps on the tracker from its first state; the numbers of the
    steps whose stored state differs from the recomputed one (none, for a sound history)."""
    wrong: list[int] = []
    state: tracker.CombatState | None = None
    for step in steps:
        if step.kind == "start":
            state = state_of(step.state)
        elif state is None:
            wrong.append(step.number)
            continue
        elif step.kind == "declare":
            chosen = [tracker.plan(*acts) for acts in step.detail["plans"]]
            state = tracker.declare(state, step.detail["fighter"], *chosen)
        elif step.kind == "attack":
            state = _attack(state, step.detail)[0]
        elif step.kind == "next":
            state = tracker.next_segment(state)
        if state_json(state) != step.state:
            wrong.append(step.number)
    return wrong


def histories(*, session: Session, thread_ids: Sequence[int]) -> dict[int, list[dict[str, Any]]]:
    """The combat steps of these threads for the export, by thread: what happened, in
    words and as data (one query)."""
    out: dict[int, list[dict[str, Any]]] = {}
    if not thread_ids:
        return out
    rows = session.exec(
        select(CombatStep)
        .where(col(CombatStep.thread_id).in_(thread_ids))
        .order_by(col(CombatStep.thread_id), col(CombatStep.number))
    )
    for s in rows:
        out.setdefault(s.thread_id, []).append(
            {
                "number": s.number,
                "kind": s.kind,
                "text": s.text,
                "detail": s.detail,
                "state": s.state,
                "at": s.created_at.isoformat(),
            }
        )
    return out
