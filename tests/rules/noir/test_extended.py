"""Noir actions with several attempts: extended tasks and best-of-N contests, fixed dice."""

import pytest

from pbp.rules.dice.source import RollError, RollLimitError, ScriptedDice, ScriptExhausted
from pbp.rules.noir import Outcome, Side
from pbp.rules.noir.extended import (
    Tally,
    contest_needs,
    count_attempt,
    extended_contest,
    extended_task,
)

S, ES, F, EF = (
    Outcome.SUCCESS,
    Outcome.EXCEPTIONAL_SUCCESS,
    Outcome.FAILURE,
    Outcome.EXCEPTIONAL_FAILURE,
)


def tally_of(*outcomes, exceptional_counts=True):
    tally = Tally()
    for result in outcomes:
        tally = count_attempt(tally, result, exceptional_counts=exceptional_counts)
    return tally


def test_successes_count_and_failures_cost_only_time():
    """“Ett misslyckat slag innebär då inte att handlingen misslyckas utan snarare att mer tid
    krävs, eftersom det misslyckade slaget tog upp ett av tillfällena i intervallet.”
    """
    assert tally_of(S, F, S, F) == Tally(2, 0)


def test_exceptional_success_counts_double():
    """“Om slaget gäller en handling med flera försök så medför att exceptionellt lyckande
    generellt att personen genast får tillgodogöra sig två lyckanden i stället för bara ett.”
    """
    assert tally_of(S, ES) == Tally(3, 0)


def test_exceptional_failure_takes_back_a_success():
    """“Om slaget gäller en handling med flera försök så innebär ett exceptionellt misslyckande
    generellt att personen tappar ett tidigare lyckat försök”
    """
    assert tally_of(S, S, EF) == Tally(1, 0)


def test_exceptional_failure_with_no_success_voids_the_next_success():
    """“eller om personen saknar lyckade försök så kommer nästa lyckade försök att räknas som
    misslyckat.”
    """
    assert tally_of(EF, F, S) == Tally(0, 0)
    assert tally_of(EF, S, S) == Tally(1, 0)


def test_voids_stack_and_a_voided_exceptional_success_counts_as_a_failure():
    """“eller om personen saknar lyckade försök så kommer nästa lyckade försök att räknas som
    misslyckat.” Reading: two such failures void the next two successes; a voided exceptional
    success voids both its successes.
    """
    assert tally_of(EF, EF) == Tally(0, 2)
    assert tally_of(EF, ES) == Tally(0, 0)


def test_exceptional_counting_can_be_turned_off():
    """“generellt” Reading: the text says exceptional rolls count so only in general; the
    narrator may turn it off.
    """
    assert tally_of(EF, ES, S, exceptional_counts=False) == Tally(2, 0)


def test_pick_the_lock_four_successes():
    """“"Pick the lock, 4 successes, 30 seconds": one roll every 30 seconds until 4 successes.”
    “Detta betyder att personen som dyrkar får slå ett svårighetsslag varje halvminut och när
    han eller hon har lyckats fyra gånger är dörren upplåst.”
    """
    dice = ScriptedDice([5, 6, 2, 3, 7, 7, 9, 4, 1, 2, 6, 8])
    # 19 fail, 13 fail, 22 exceptional success (x2), 21 success, 11 fail, 22 success
    task = extended_task(dice, 8, 4)
    assert [a.outcome for a in task.attempts] == [F, F, ES, S, F, S]
    assert task.done and task.tally.successes == 4
    assert len(task.attempts) == 6  # three minutes at 30 seconds an attempt
    assert dice.remaining == 0
    assert task.render().startswith("4 of 4 successes after 6 attempts (F F S! S F S)")


def test_extended_task_gives_up_after_the_narrators_limit():
    """“Ofta innebär varje försök att en viss tid passerar” Reading: the narrator sets how many
    attempts the time allows.
    """
    task = extended_task(ScriptedDice([2, 3] * 3), 1, 2, max_attempts=3)
    assert not task.done
    assert len(task.attempts) == 3
    assert "not done" in task.render()


def test_routine_extended_task_needs_no_dice():
    """“Notera att den generella modifikationen vid rutinmässiga situationer är (+20), vilket
    medför att om inget annat gäller så lyckas utövaren automatiskt – inget slag behöver då
    slås.”
    """
    dice = ScriptedDice([])
    task = extended_task(dice, 7, 3, modifier=20)
    assert task.done and len(task.attempts) == 3 and dice.faces == ()


def test_extended_task_limits():
    """Reading: at least one success, and at most 100 attempts, bounds of the service (the rules
    set none).
    """
    with pytest.raises(RollLimitError):
        extended_task(ScriptedDice([]), 7, 0)
    with pytest.raises(RollLimitError):
        extended_task(ScriptedDice([]), 7, 2, max_attempts=1000)


@pytest.mark.parametrize(
    "kwargs, needs",
    [
        ({"best_of": 5}, (3, 3)),
        ({"best_of": 7}, (4, 4)),
        ({"best_of": 1}, (1, 1)),
        ({"attempts": 4}, (3, 2)),
        ({"attempts": 5}, (3, 3)),
    ],
)
def test_contest_needs(kwargs, needs):
    """“Detta betyder att den övertalande personen måste vinna tre eller fler av de fem försöken
    för att lyckas övertyga dörrvakten om uppmaningen.” “den som lyckas flest gånger av sju
    slag (den första personen som når fyra lyckanden är då vinnaren)” “eller så kanske en
    förhörsledare behöver fler lyckade slag än sitt offer”
    """
    assert contest_needs(**kwargs) == needs


@pytest.mark.parametrize(
    "kwargs", [{"best_of": 4}, {"best_of": 0}, {}, {"best_of": 3, "attempts": 3}]
)
def test_contest_needs_refuses_even_or_missing_counts(kwargs):
    """“Antalet försök som ingår skall alltid vara ett udda antal (3, 5, 7, osv) för att undvika
    att en oavgjortsituation kan uppstå.”
    """
    with pytest.raises(RollError):
        contest_needs(**kwargs)


def test_persuade_the_doorman_best_of_five():
    """“Detta betyder att den övertalande personen måste vinna tre eller fler av de fem försöken
    för att lyckas övertyga dörrvakten om uppmaningen.”
    """
    dice = ScriptedDice(
        [
            *(6, 7, 3, 4),  # 19 vs 15: actor
            *(2, 3, 8, 7),  # 11 vs 23: opponent
            *(9, 5, 4, 2),  # 20 vs 14: actor
            *(8, 6, 6, 9),  # 20 vs 23: opponent
            *(7, 4, 5, 3),  # 17 vs 16: actor, 3-2
        ]
    )
    contest = extended_contest(dice, 6, 8, best_of=5)
    assert contest.winner is Side.ACTOR
    assert (contest.actor.successes, contest.opponent.successes) == (3, 2)
    assert len(contest.attempts) == 5
    assert dice.remaining == 0


def test_best_of_five_ends_as_soon_as_someone_has_three():
    """“så efter mellan tre till fem minuter är handlingens utfall konstaterat.”"""
    dice = ScriptedDice([9, 8, 1, 2] + [9, 7, 1, 3] + [8, 9, 2, 4])
    contest = extended_contest(dice, 5, 5, best_of=5)
    assert contest.winner is Side.ACTOR
    assert len(contest.attempts) == 3


def test_exceptional_win_counts_double_in_a_contest():
    """“Om slaget gäller en handling med flera försök så medför att exceptionellt lyckande
    generellt att personen genast får tillgodogöra sig två lyckanden i stället för bara ett.”
    """
    dice = ScriptedDice([9, 9, 1, 2] + [8, 7, 1, 3])  # the actor's double 9 counts two wins
    contest = extended_contest(dice, 5, 5, best_of=5)
    assert contest.actor.successes == 3
    assert len(contest.attempts) == 2


def test_more_wins_than_the_other_side_tie_goes_to_the_opponent():
    """“eller så kanske en förhörsledare behöver fler lyckade slag än sitt offer för att
    framgångsrikt förmå knäcka offret.” Over 4 attempts 2-2 is not enough.
    """
    dice = ScriptedDice([9, 8, 1, 2] + [1, 2, 9, 8] + [9, 7, 1, 3] + [2, 3, 8, 7])
    contest = extended_contest(dice, 5, 5, attempts=4)
    assert (contest.actor.successes, contest.opponent.successes) == (2, 2)
    assert contest.winner is Side.OPPONENT


def test_contest_without_exceptional_counting_takes_at_most_n_attempts():
    """“Antalet försök som ingår skall alltid vara ett udda antal (3, 5, 7, osv)” Reading:
    without exceptional counting a best of N is decided within N attempts.
    """
    dice = ScriptedDice([9, 9, 1, 2] + [8, 7, 1, 3] + [8, 6, 1, 4])
    contest = extended_contest(dice, 5, 5, best_of=5, exceptional_counts=False)
    assert contest.actor.successes == 3
    assert len(contest.attempts) == 3


def test_undecided_contest_after_the_limit():
    """“Ofta innebär detta att den som lyckas flest gånger av ett fast antal försök räknas som
    framgångsrik.” Reading: when the narrator's limit of attempts runs out undecided, the
    narrator decides.
    """
    dice = ScriptedDice([5, 6, 6, 5] + [5, 5])  # 16 vs 16, equal skills: tie-breaks go on
    with pytest.raises(ScriptExhausted):
        extended_contest(dice, 5, 5, best_of=3, max_attempts=1)
    dice = ScriptedDice([9, 8, 1, 2])
    contest = extended_contest(dice, 5, 5, best_of=3, max_attempts=1)
    assert contest.winner is None
    assert "the narrator decides" in contest.render()
