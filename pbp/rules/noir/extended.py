"""Noir actions with several attempts ("Framgång"): extended tasks and extended contests.

"Pick the lock, 4 successes, 30 seconds" is an extended task of difficulty rolls; "Persuade the
doorman, best of 5, 1 minute" an extended contest of opposed rolls. Time is not tracked here:
the caller multiplies the number of attempts by the stated interval.
"""

from __future__ import annotations

from dataclasses import dataclass

from pbp.rules.dice.source import DiceSource, RollError, RollLimitError
from pbp.rules.noir.resolution import (
    MAX_ATTEMPTS,
    DifficultyRoll,
    OpposedRoll,
    Outcome,
    Side,
    difficulty_roll,
    opposed_roll,
)


@dataclass(frozen=True)
class Tally:
    """Successes counted so far, and voids: coming successes that will count as failures."""

    successes: int = 0
    voids: int = 0


def count_attempt(tally: Tally, result: Outcome, *, exceptional_counts: bool = True) -> Tally:
    """Noir "Exceptionella slag" on actions with several attempts.

    An exceptional success counts as two successes; an exceptional failure takes back one
    earlier success or, with none yet, makes the next success count as a failure.
    Reading: voids stack (two exceptional failures before any success void two successes),
    and a voided attempt counts as a failure even when it was an exceptional success (the
    text: "the next successful attempt counts as failed"). `exceptional_counts=False` counts
    every success once and ignores exceptional failures.
    """
    if not exceptional_counts:
        return Tally(tally.successes + (1 if result.succeeded else 0), tally.voids)
    if result.succeeded:
        if tally.voids:
            return Tally(tally.successes, tally.voids - 1)
        gain = 2 if result is Outcome.EXCEPTIONAL_SUCCESS else 1
        return Tally(tally.successes + gain, 0)
    if result is Outcome.EXCEPTIONAL_FAILURE:
        if tally.successes:
            return Tally(tally.successes - 1, tally.voids)
        return Tally(0, tally.voids + 1)
    return tally


def _check_attempts(max_attempts: int) -> None:
    if not 1 <= max_attempts <= MAX_ATTEMPTS:
        raise RollLimitError(f"allow 1 to {MAX_ATTEMPTS} attempts, not {max_attempts}")


@dataclass(frozen=True)
class ExtendedTask:
    needed: int
    attempts: tuple[DifficultyRoll, ...]
    tally: Tally

    @property
    def done(self) -> bool:
        return self.tally.successes >= self.needed

    def render(self) -> str:
        marks = " ".join(_MARK[a.outcome] for a in self.attempts)
        state = "done" if self.done else "not done"
        return (
            f"{self.tally.successes} of {self.needed} successes after {len(self.attempts)} "
            f"attempts ({marks}): {state}"
        )


_MARK = {
    Outcome.EXCEPTIONAL_SUCCESS: "S!",
    Outcome.SUCCESS: "S",
    Outcome.FAILURE: "F",
    Outcome.EXCEPTIONAL_FAILURE: "F!",
}


def extended_task(
    dice: DiceSource,
    skill: int,
    needed: int,
    *,
    modifier: int = 0,
    max_attempts: int = MAX_ATTEMPTS,
    automatic: bool = True,
    exceptional_counts: bool = True,
) -> ExtendedTask:
    """Noir "Framgång" for difficulty rolls: roll until `needed` successes are counted.

    A failed roll costs an interval of time, not the task. The draft sets no limit on the
    attempts; `max_attempts` (the narrator's, at most 100) stops a hopeless task.
    """
    if not 1 <= needed <= MAX_ATTEMPTS:
        raise RollLimitError(f"ask for 1 to {MAX_ATTEMPTS} successes, not {needed}")
    _check_attempts(max_attempts)
    attempts: list[DifficultyRoll] = []
    tally = Tally()
    while tally.successes < needed and len(attempts) < max_attempts:
        attempt = difficulty_roll(dice, skill, modifier=modifier, automatic=automatic)
        attempts.append(attempt)
        tally = count_attempt(tally, attempt.outcome, exceptional_counts=exceptional_counts)
    return ExtendedTask(needed, tuple(attempts), tally)


@dataclass(frozen=True)
class ExtendedContest:
    actor_needs: int
    opponent_needs: int
    attempts: tuple[OpposedRoll, ...]
    actor: Tally
    opponent: Tally

    @property
    def winner(self) -> Side | None:
        if self.actor.successes >= self.actor_needs:
            return Side.ACTOR
        if self.opponent.successes >= self.opponent_needs:
            return Side.OPPONENT
        return None

    def render(self) -> str:
        marks = ", ".join(
            f"{a.actor_total} vs {a.opponent_total} "
            + (a.winner.value if a.winner else "tied")
            + ("!" if a.winner and _exceptional(a) else "")
            for a in self.attempts
        )
        score = f"{self.actor.successes}-{self.opponent.successes}"
        result = f"{self.winner.value} wins" if self.winner else "undecided, the narrator decides"
        return (
            f"actor needs {self.actor_needs} wins, opponent {self.opponent_needs} ({marks}): "
            f"{result} {score}"
        )


def _exceptional(roll: OpposedRoll) -> bool:
    return any(
        roll.outcome_for(side) in (Outcome.EXCEPTIONAL_SUCCESS, Outcome.EXCEPTIONAL_FAILURE)
        for side in Side
    )


def contest_needs(*, best_of: int | None = None, attempts: int | None = None) -> tuple[int, int]:
    """How many won attempts the actor and the opponent need.

    Best of N (N odd, Noir: "always an odd number"): the first to (N+1)/2 wins.
    "One side must win more attempts than the other" (the interrogator and the victim):
    Reading: over N attempts the actor needs more wins than the opponent, so a tie goes to
    the opponent: the actor needs N//2 + 1 wins, the opponent N - N//2 to stop him. For odd
    N this is the same as best of N; it differs for even N.
    """
    if (best_of is None) == (attempts is None):
        raise RollError("give either best=N (N odd) or attempts=N, not both or neither")
    if best_of is not None:
        if best_of < 1 or best_of % 2 == 0 or best_of > MAX_ATTEMPTS:
            raise RollError(f"best of N needs an odd N from 1 to {MAX_ATTEMPTS - 1}, not {best_of}")
        return (best_of + 1) // 2, (best_of + 1) // 2
    assert attempts is not None
    _check_attempts(attempts)
    return attempts // 2 + 1, attempts - attempts // 2


def extended_contest(
    dice: DiceSource,
    actor_skill: int,
    opponent_skill: int,
    *,
    best_of: int | None = None,
    attempts: int | None = None,
    actor_modifier: int = 0,
    opponent_modifier: int = 0,
    exceptional_counts: bool = True,
    max_attempts: int = MAX_ATTEMPTS,
) -> ExtendedContest:
    """Noir "Framgång" for opposed rolls: opposed rolls until one side has the wins it needs.

    Reading: the draft's rule for exceptional rolls on actions with several attempts applies
    here too (an exceptional winner counts two wins, an exceptional loser gives one back), so
    a contest can take more than N attempts; `exceptional_counts=False` turns that off, and
    `max_attempts` stops the contest (undecided: the narrator decides).
    """
    actor_needs, opponent_needs = contest_needs(best_of=best_of, attempts=attempts)
    _check_attempts(max_attempts)
    rolls: list[OpposedRoll] = []
    actor, opponent = Tally(), Tally()
    while (
        actor.successes < actor_needs
        and opponent.successes < opponent_needs
        and len(rolls) < max_attempts
    ):
        roll = opposed_roll(
            dice,
            actor_skill,
            opponent_skill,
            actor_modifier=actor_modifier,
            opponent_modifier=opponent_modifier,
        )
        rolls.append(roll)
        if roll.winner is None:
            continue  # an unresolved tie wins nobody anything
        actor = count_attempt(
            actor, roll.outcome_for(Side.ACTOR), exceptional_counts=exceptional_counts
        )
        opponent = count_attempt(
            opponent, roll.outcome_for(Side.OPPONENT), exceptional_counts=exceptional_counts
        )
    return ExtendedContest(actor_needs, opponent_needs, tuple(rolls), actor, opponent)
