"""Generic dice expressions with fixed dice, their limits, and Hypothesis fuzzing."""

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pbp.rules.dice.expr import (
    MAX_EXPLOSIONS,
    DiceTerm,
    Expression,
    NumberTerm,
    evaluate,
    parse_expression,
)
from pbp.rules.dice.source import Dice, RollError, RollLimitError, RollSyntaxError, ScriptedDice


def roll(text, faces):
    dice = ScriptedDice(faces)
    result = evaluate(parse_expression(text), dice)
    assert dice.remaining == 0, "the expression should use exactly the scripted faces"
    return result


def test_parse_reads_terms_with_signs():
    expression = parse_expression("2D6 + 1 - d4")
    assert expression.terms == (
        DiceTerm(1, 2, 6),
        NumberTerm(1, 1),
        DiceTerm(-1, 1, 4),
    )
    assert expression.canonical() == "2d6+1-1d4"


def test_sum_and_modifiers():
    result = roll("2d6+1", [3, 5])
    assert result.total == 9
    assert result.render() == "2d6 [3, 5] + 1 = 9"
    assert roll("-1d4+10", [3]).total == 7


def test_keep_highest_and_lowest():
    result = roll("4d6kh3", [6, 2, 5, 4])
    assert result.total == 15
    assert result.render() == "4d6kh3 [6, (2), 5, 4] = 15"
    assert roll("2d20kl1", [17, 4]).total == 4


def test_keep_among_equal_faces_drops_the_later_die():
    result = roll("3d6kh2", [5, 5, 5])
    assert [d.kept for d in result.terms[0].dice] == [True, True, False]
    assert result.total == 10


def test_exploding_dice_chain_on_the_highest_face():
    result = roll("2d6!", [6, 3, 6, 2])  # the 6 adds a 6, which adds a 2
    assert result.total == 17
    assert result.render() == "2d6! [6!, 3, 6!, 2] = 17"
    assert [d.extra for d in result.terms[0].dice] == [False, False, True, True]


def test_exploding_then_keep():
    assert roll("3d6!kh2", [6, 1, 2, 4]).total == 10  # 6, 1, 2 + extra 4: keep 6 and 4


def test_target_numbers_count_successes():
    result = roll("5d10>=8", [8, 3, 10, 7, 9])
    assert result.total == 3
    assert result.render() == "5d10>=8 [8*, 3, 10*, 7, 9*] = 3 successes"
    assert roll("3d6<3", [1, 2, 3]).total == 2
    assert roll("3d6=6", [6, 6, 1]).total == 2


def test_target_with_keep_counts_only_kept_dice():
    assert roll("3d10kh2>=5", [9, 4, 6]).total == 2
    assert roll("3d10kl2>=5", [9, 4, 6]).total == 1


def test_explosions_stop_at_the_safety_limit():
    dice = ScriptedDice([2] * (MAX_EXPLOSIONS + 5))
    result = evaluate(parse_expression("1d2!"), dice)
    assert len(result.terms[0].dice) == MAX_EXPLOSIONS + 1
    assert result.capped
    assert "safety limit" in result.render()


@pytest.mark.parametrize(
    "text, error, words",
    [
        ("", RollSyntaxError, "write what to roll"),
        ("99999d99999", RollLimitError, "at most 100 dice, this one asks for 99999"),
        ("1d99999", RollLimitError, "1 to 1000 sides"),
        ("1d6+9999999", RollLimitError, "at most 100,000"),
        ("101d6", RollLimitError, "at most 100 dice"),
        ("60d6+60d6", RollLimitError, "at most 100 dice"),
        ("1d1001", RollLimitError, "1 to 1000 sides"),
        ("0d6", RollSyntaxError, "at least one die"),
        ("2x6", RollSyntaxError, "could not read '2x6'"),
        ("2d6 3", RollSyntaxError, r"expected \+ or -"),
        ("2d6+", RollSyntaxError, "could not read 'the end'"),
        ("1d1!", RollSyntaxError, "explode forever"),
        ("2d6kh3", RollSyntaxError, "keep between 1 and 2"),
        ("+".join(["1"] * 21), RollLimitError, "at most 20 terms"),
        ("1" * 201, RollLimitError, "at most 200 characters"),
    ],
)
def test_bad_expressions_say_what_to_fix(text, error, words):
    with pytest.raises(error, match=words):
        parse_expression(text)


@pytest.mark.parametrize("count", ["101", "100000", "1000000", "9" * 60])
def test_too_many_dice_get_the_one_dice_limit_however_many(count):
    """Reading: one limit on dice (100) with one message, whether the count is 101 or has
    more digits than the constant limit allows (1000000d6 once said "at most 100,000")."""
    with pytest.raises(RollLimitError) as raised:
        parse_expression(f"{count}d6")
    assert str(raised.value) == f"a roll may use at most 100 dice, this one asks for {int(count)}"


@pytest.mark.parametrize("sides", ["1001", "100000", "1000000", "9" * 60])
def test_too_many_sides_get_the_one_sides_limit_however_many(sides):
    """Reading: one limit on a die's sides (1000), one message, at any number of digits."""
    with pytest.raises(RollLimitError) as raised:
        parse_expression(f"1d{sides}")
    assert str(raised.value) == f"a die may have 1 to 1000 sides, not {int(sides)}"


@pytest.mark.parametrize("keep", ["3", "100000", "1000000"])
def test_keeping_more_dice_than_rolled_gets_one_message_however_many(keep):
    """Reading: the dice kept are bounded by the dice rolled, at any number of digits."""
    with pytest.raises(RollSyntaxError) as raised:
        parse_expression(f"2d6kh{keep}")
    assert str(raised.value) == f"keep between 1 and 2 of 2d6, not {int(keep)}"


@given(st.text(max_size=40))
def test_any_text_parses_or_raises_a_roll_error(text):
    """d20's property: every input either works or raises the library's own error."""
    try:
        expression = parse_expression(text)
    except RollError:
        return
    result = evaluate(expression, Dice(random.Random(0)))
    assert isinstance(result.total, int)


dice_terms = st.builds(
    DiceTerm,
    sign=st.sampled_from([1, -1]),
    count=st.integers(1, 10),
    sides=st.integers(2, 20),
    explode=st.booleans(),
    keep=st.none(),
    target=st.none() | st.tuples(st.sampled_from([">=", "<=", ">", "<", "="]), st.integers(1, 20)),
)
expressions = st.lists(
    dice_terms | st.builds(NumberTerm, st.sampled_from([1, -1]), st.integers(0, 100)),
    min_size=1,
    max_size=5,
)


@given(expressions, st.integers(0, 2**32))
def test_canonical_text_parses_back_and_totals_add_up(terms, seed):
    expression = Expression(tuple(terms))
    again = parse_expression(expression.canonical())
    assert again == expression
    result = evaluate(again, Dice(random.Random(seed)))
    assert result.total == sum(t.value for t in result.terms)
    for term in result.terms:
        if isinstance(term.term, DiceTerm) and not term.term.target:
            kept = sum(d.value for d in term.dice if d.kept)
            assert term.value == term.term.sign * kept
            assert all(1 <= d.value <= term.term.sides for d in term.dice)
