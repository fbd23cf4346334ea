"""ONE combat: the Speed/segment schedule and a pure segment tracker (rules/one.txt).

A combat turn is 12 segments. The tracker is a state machine over frozen values: every
function takes a `CombatState` and returns a new one, so a forum thread can store the state
after each post and replay it. Dice come in through a dice source.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass, replace

from pbp.rules.dice.source import DiceSource
from pbp.rules.errors import RulesError
from pbp.rules.one.checks import Check, Condition, condition_for, contest_of_skill, wound_modifier

SEGMENTS = 12
TWO_HANDS_PENALTY = -2
MOVED_TO_BE_HIT = -1
LARGE_SHIELD_OWN_PENALTY = -1
# ONE: how much later actions in segment 12 etc. the chart prints for speeds above 12.
_EXTRA_ACTIONS = {13: (12,), 14: (6, 12), 15: (4, 8, 12)}


class CombatError(RulesError):
    """An action the combat rules do not allow at this point; the message says why."""


def action_segments(speed: int) -> tuple[int, ...]:
    """The segments a character of this Speed acts in, a segment repeated per extra action.

    ONE's printed chart lost its column positions for Speeds 1-12. Reading (reproduces the
    worked example): Speed S acts in segments round-half-up(k x 12 / S) for k = 1..S, e.g.
    Speed 7: 2 3 5 7 9 10 12; Speed 8: 2 3 5 6 8 9 11 12. Speeds 13-15 act in every segment
    plus a second action in 12 (13); in 6 and 12 (14); in 4, 8 and 12 (15), as printed.
    """
    if 1 <= speed <= SEGMENTS:
        # round half up of 12k/S in integers: floor((24k + S) / 2S)
        return tuple((2 * k * SEGMENTS + speed) // (2 * speed) for k in range(1, speed + 1))
    if speed in _EXTRA_ACTIONS:
        return tuple(sorted((*range(1, SEGMENTS + 1), *_EXTRA_ACTIONS[speed])))
    raise CombatError(f"the Speed chart runs from 1 to 15, not {speed}")


def actions_in_segment(speed: int, segment: int) -> int:
    return action_segments(speed).count(segment)


def effective_speed(speed: int, armour_weight: int = 0) -> int:
    """ONE armour: its weight lowers Speed ("Speed: 9 (reduced to 8 by the armor)").

    Reading: Speed never drops below 1, the chart's lowest row.
    """
    return max(1, speed - armour_weight)


class Shield(enum.Enum):
    NONE = "none"
    SMALL = "small"
    LARGE = "large"

    @property
    def to_be_hit(self) -> int:
        """ONE: a small shield gives -1 to hit its bearer, a large one -2."""
        return {"none": 0, "small": -1, "large": -2}[self.value]

    @property
    def own_penalty(self) -> int:
        """ONE: a large shield gives its bearer -1 to attack or defend."""
        return LARGE_SHIELD_OWN_PENALTY if self is Shield.LARGE else 0


class Act(enum.Enum):
    MOVE = "move"
    ATTACK = "attack"
    DEFEND = "defend"
    READY = "ready"


@dataclass(frozen=True)
class Plan:
    """One action's worth of acts: a movement, or one or two hand actions."""

    acts: tuple[Act, ...]
    attacks_used: int = 0
    defends_used: int = 0

    @property
    def moved(self) -> bool:
        return Act.MOVE in self.acts

    @property
    def penalty(self) -> int:
        """ONE hand actions: doing two things at once is -2 to both."""
        return TWO_HANDS_PENALTY if len(self.acts) == 2 else 0

    def left(self, act: Act) -> int:
        used = self.attacks_used if act is Act.ATTACK else self.defends_used
        return self.acts.count(act) - used


def plan(*acts: Act | str) -> Plan:
    """Validate one action's acts. ONE: a movement is the segment's only action (free actions
    aside); otherwise one or two hand actions (attack, defend, ready)."""
    chosen = tuple(Act(a) for a in acts)
    if not chosen:
        raise CombatError("choose what to do: move, or one or two of attack / defend / ready")
    if Act.MOVE in chosen and len(chosen) > 1:
        raise CombatError("a movement is the only action that segment (free actions aside)")
    if len(chosen) > 2:
        raise CombatError("you have two hands: at most two hand actions a segment")
    return Plan(chosen)


@dataclass(frozen=True)
class Fighter:
    name: str
    speed: int  # SPD on the sheet, before armour
    hlt: int
    armour: int = 0  # AV: stops this much of each attack's damage
    armour_weight: int = 0  # Speed lost to the armour's weight
    shield: Shield = Shield.NONE
    lost: int = 0
    down: Condition | None = None  # UNCONSCIOUS or DEAD once it has taken effect
    pending: Condition | None = None  # takes effect at the start of the next segment
    plans: tuple[Plan, ...] = ()

    @property
    def speed_now(self) -> int:
        return effective_speed(self.speed, self.armour_weight)

    @property
    def hit_points(self) -> int:
        return 3 * self.hlt - self.lost

    @property
    def moved(self) -> bool:
        return any(p.moved for p in self.plans)


@dataclass(frozen=True)
class Target:
    """A number to roll under, with the reasons that make it up (for the explanation)."""

    value: int
    reasons: tuple[tuple[str, int], ...]

    def render(self) -> str:
        (label, skill), *modifiers = self.reasons
        parts = [f"{label} {skill}"] + [f"{name} {delta:+d}" for name, delta in modifiers]
        return f"{self.value} ({', '.join(parts)})"


def _target(reasons: list[tuple[str, int]]) -> Target:
    kept = [reasons[0]] + [r for r in reasons[1:] if r[1]]
    return Target(sum(d for _, d in kept), tuple(kept))


@dataclass(frozen=True)
class CombatState:
    fighters: tuple[Fighter, ...]
    turn: int = 1
    segment: int = 1

    def fighter(self, name: str) -> Fighter:
        for fighter in self.fighters:
            if fighter.name == name:
                return fighter
        raise CombatError(f"nobody called {name!r} is in this combat")

    def _with(self, fighter: Fighter) -> CombatState:
        return replace(
            self, fighters=tuple(fighter if f.name == fighter.name else f for f in self.fighters)
        )


def start_combat(fighters: Iterable[Fighter]) -> CombatState:
    """Turn 1, segment 1, nothing declared yet."""
    fighters = tuple(fighters)
    names = [f.name for f in fighters]
    if len(set(names)) != len(names):
        raise CombatError("every fighter needs a different name")
    return CombatState(fighters)


def acting(state: CombatState) -> dict[str, int]:
    """Who may act this segment, and with how many actions (the conscious ones only)."""
    out = {}
    for fighter in state.fighters:
        count = actions_in_segment(fighter.speed_now, state.segment)
        if count and fighter.down is None:
            out[fighter.name] = count
    return out


def declare(state: CombatState, name: str, *plans: Plan) -> CombatState:
    """Record what a fighter does this segment: one `Plan` per action they have in it."""
    fighter = state.fighter(name)
    if fighter.down is not None:
        raise CombatError(f"{name} is {fighter.down.value} and cannot act")
    allowed = actions_in_segment(fighter.speed_now, state.segment)
    if not allowed:
        raise CombatError(
            f"{name} (Speed {fighter.speed_now}) does not act in segment {state.segment}"
        )
    if fighter.plans:
        raise CombatError(f"{name} has already declared this segment")
    if not 1 <= len(plans) <= allowed:
        raise CombatError(f"{name} has {allowed} action(s) in segment {state.segment}")
    return state._with(replace(fighter, plans=tuple(plans)))


def next_segment(state: CombatState) -> CombatState:
    """Advance one segment (12 -> the next turn's 1). ONE: unconsciousness and death from a
    blow take effect at the beginning of the next segment; declarations are cleared."""
    segment, turn = state.segment + 1, state.turn
    if segment > SEGMENTS:
        segment, turn = 1, turn + 1
    fighters = tuple(
        replace(f, down=f.pending or f.down, pending=None, plans=()) for f in state.fighters
    )
    return CombatState(fighters, turn, segment)


def _plan_with(fighter: Fighter, act: Act) -> int | None:
    for i, p in enumerate(fighter.plans):
        if p.left(act) > 0:
            return i
    return None


def attack_target(state: CombatState, attacker: str, defender: str, skill: int) -> Target:
    """The attacker's number: skill, two hand actions -2, own large shield -1, wounded -2;
    and against the defender: moved -1, small shield -1 / large shield -2 (ONE: shields
    apply only to attacks against their bearer)."""
    a, d = state.fighter(attacker), state.fighter(defender)
    index = _plan_with(a, Act.ATTACK)
    hands = a.plans[index].penalty if index is not None else 0
    return _target(
        [
            ("skill", skill),
            ("two hand actions", hands),
            ("own large shield", a.shield.own_penalty),
            ("wounded", wound_modifier(a.lost, a.hlt)),
            (f"{d.name} moved", MOVED_TO_BE_HIT if d.moved else 0),
            (f"{d.name}'s {d.shield.value} shield", d.shield.to_be_hit),
        ]
    )


def defence_target(state: CombatState, defender: str, skill: int) -> Target:
    """The defender's number: skill, two hand actions -2, own large shield -1, wounded -2.
    The attacker's shield does not count: it only makes its bearer harder to hit."""
    d = state.fighter(defender)
    index = _plan_with(d, Act.DEFEND)
    hands = d.plans[index].penalty if index is not None else 0
    return _target(
        [
            ("skill", skill),
            ("two hand actions", hands),
            ("own large shield", d.shield.own_penalty),
            ("wounded", wound_modifier(d.lost, d.hlt)),
        ]
    )


def lose_hit_points(state: CombatState, name: str, amount: int) -> CombatState:
    """Hit points lost (after armour). ONE: >= HLT wounded at once; >= 2 x HLT unconscious
    and >= 3 x HLT dead, both at the beginning of the next segment."""
    fighter = state.fighter(name)
    lost = fighter.lost + max(0, amount)
    level = condition_for(lost, fighter.hlt)
    pending = fighter.pending
    if level in (Condition.UNCONSCIOUS, Condition.DEAD) and level is not fighter.down:
        pending = level
    return state._with(replace(fighter, lost=lost, pending=pending))


@dataclass(frozen=True)
class AttackReport:
    attacker: str
    defender: str
    attack_target: Target
    attack: Check
    defence_target: Target | None
    defence: Check | None
    damage_faces: tuple[int, ...] = ()
    damage_bonus: int = 0
    armour: int = 0

    @property
    def hit(self) -> bool:
        return self.attack.succeeded and not (self.defence and self.defence.succeeded)

    @property
    def damage(self) -> int:
        return sum(self.damage_faces) + self.damage_bonus if self.hit else 0

    @property
    def taken(self) -> int:
        """ONE armour: its value is subtracted from each attack's damage."""
        return max(0, self.damage - self.armour)

    def render(self) -> str:
        text = f"{self.attacker} attacks {self.defender} at {self.attack_target.render()}: "
        text += self.attack.render()
        if self.defence and self.defence_target:
            text += f"; defence at {self.defence_target.render()}: {self.defence.render()}"
        if not self.hit:
            return text + ": no damage"
        text += f"; damage {list(self.damage_faces)}"
        if self.damage_bonus:
            text += f" {self.damage_bonus:+d}"
        if self.armour:
            text += f" - armour {self.armour}"
        return text + f" = {self.taken} taken"


def _use(fighter: Fighter, act: Act, what: str) -> Fighter:
    index = _plan_with(fighter, act)
    if index is None:
        raise CombatError(f"{fighter.name} has no {what} left this segment")
    chosen = fighter.plans[index]
    if act is Act.ATTACK:
        chosen = replace(chosen, attacks_used=chosen.attacks_used + 1)
    else:
        chosen = replace(chosen, defends_used=chosen.defends_used + 1)
    return replace(fighter, plans=fighter.plans[:index] + (chosen,) + fighter.plans[index + 1 :])


def resolve_attack(
    state: CombatState,
    dice: DiceSource,
    attacker: str,
    defender: str,
    *,
    attack_skill: int,
    defence_skill: int | None = None,
    damage_dice: int = 1,
    damage_bonus: int = 0,
    missile: bool = False,
) -> tuple[CombatState, AttackReport]:
    """One attack as a ONE Contest of Skill, then damage (d6s) less the defender's armour.

    The attacker spends a declared attack. With `defence_skill` the defender spends a
    declared defend, but only if the attack succeeded and so had to be blocked (in the worked
    example Larry's one shield roll meets the attack that hit). A Double Defend works against
    melee attacks only (`missile=True` refuses it).
    """
    a_target = attack_target(state, attacker, defender, attack_skill)
    state = state._with(_use(state.fighter(attacker), Act.ATTACK, "attack"))
    d = state.fighter(defender)
    d_target = None
    if defence_skill is not None:
        index = _plan_with(d, Act.DEFEND)
        if index is None:
            raise CombatError(f"{defender} has no defend left this segment")
        if missile and d.plans[index].acts.count(Act.DEFEND) == 2:
            raise CombatError("a Double Defend works against melee attacks, not missiles")
        d_target = defence_target(state, defender, defence_skill)
    contest = contest_of_skill(
        dice,
        a_target.value,
        None if d_target is None else d_target.value,
    )
    if contest.opponent is not None:
        state = state._with(_use(d, Act.DEFEND, "defend"))
    faces: tuple[int, ...] = ()
    if contest.succeeded:
        faces = tuple(dice.roll(6) for _ in range(damage_dice))
    report = AttackReport(
        attacker,
        defender,
        a_target,
        contest.actor,
        d_target if contest.opponent else None,
        contest.opponent,
        faces,
        damage_bonus,
        d.armour,
    )
    if report.taken:
        state = lose_hit_points(state, defender, report.taken)
    return state, report
