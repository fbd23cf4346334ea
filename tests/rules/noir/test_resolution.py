"""Noir rolls with fixed dice (rules/noir-en.md), and Hypothesis properties of the d10 chain."""

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pbp.rules.dice.source import Dice, RollError, RollLimitError, RollSyntaxError, ScriptedDice
from pbp.rules.noir import (
    COMPLEXITY,
    MAX_EXTRA_DICE,
    DamageCode,
    NoirDice,
    Outcome,
    Side,
    complexity_modifier,
    cooperation_bonus,
    damage_roll,
    difficulty_roll,
    opposed_roll,
    roll_d10s,
)


def scripted(*faces):
    return ScriptedDice(faces)


# --- tens and ones ("Ettor och tior") ---


def test_plain_roll_adds_the_dice():
    """“Resultatet fås genom att lägga samman siffrorna på de slagna tärningarna.”"""
    d = roll_d10s(scripted(4, 7), 2)
    assert (d.base, d.extra, d.sum, d.blocks) == ((4, 7), (), 11, 0)


def test_a_ten_adds_a_die_and_tens_keep_exploding():
    """“Varje tia som slås medför att tärningen maxades. Det innebär att ytterligare 1T skall
    slås och läggas till resultatet. Detta gäller varje tia som slås fram, även eventuella
    nyslagna tior.”
    """
    d = roll_d10s(scripted(10, 5, 10, 10, 3), 2)
    assert d.base == (10, 5)
    assert d.extra == (10, 10, 3)
    assert d.sum == 38


def test_two_tens_throw_two_extra_dice():
    """“Varje tia som slås medför att tärningen maxades. Det innebär att ytterligare 1T skall
    slås och läggas till resultatet. Detta gäller varje tia som slås fram, även eventuella
    nyslagna tior.”
    """
    d = roll_d10s(scripted(10, 10, 4, 6), 2)
    assert d.extra == (4, 6)
    assert d.sum == 30


def test_a_one_blocks_a_ten_which_still_counts_ten():
    """“Varje etta som slås tar bort möjligheten att maxa en tia i samma slag – detta gäller både
    för svårighetsslag, motståndsslag och vid framtagning av skadeverkan. När en etta slås och
    denna tar bort en maxad tio kallas det för spärr.” Reading: the blocked ten still counts
    10; only its extra die is lost.
    """
    dice = scripted(10, 1)
    d = roll_d10s(dice, 2)
    assert d.extra == ()
    assert d.blocks == 1
    assert d.sum == 11
    assert dice.remaining == 0


def test_a_one_among_the_extra_dice_blocks_a_ten_of_the_same_handful():
    # 10, 10 -> two extra dice: 1 and 10; the 1 blocks the new 10, so the chain ends.
    """“tar bort möjligheten att maxa en tia i samma slag” Reading: a 1 among the extra dice
    blocks a ten thrown in the same handful.
    """
    dice = scripted(10, 10, 1, 10)
    d = roll_d10s(dice, 2)
    assert d.extra == (1, 10)
    assert d.blocks == 1
    assert d.sum == 31
    assert dice.remaining == 0


def test_a_one_cannot_block_the_ten_that_threw_it():
    """“tar bort möjligheten att maxa en tia i samma slag” Reading: a 1 thrown by a ten's
    explosion comes after that ten has exploded, so it cannot block it.
    """
    d = roll_d10s(scripted(10, 5, 1), 2)
    assert d.extra == (1,)
    assert d.blocks == 0
    assert d.sum == 16


def test_damage_dice_block_per_one():
    # 3T: 10, 10, 1 -> one ten blocked, the other explodes once (6).
    """“every 1 rolled cancels one exploding ten in the same roll. This applies to difficulty
    rolls, opposed rolls and damage rolls alike.”
    """
    d = roll_d10s(scripted(10, 10, 1, 6), 3)
    assert (d.blocks, d.extra, d.sum) == (1, (6,), 27)


def test_spaerr_can_be_switched_off():
    """Reading: a table option to play without the spärr rule (“När en etta slås och denna tar
    bort en maxad tio kallas det för spärr.”).
    """
    d = roll_d10s(scripted(10, 1, 4), 2, spaerr=False)
    assert d.extra == (4,)


def test_chain_stops_at_the_safety_limit():
    """“Sålunda kan resultatet bli mycket högt om flera tior slås efter varandra i samma slag.”
    Reading: a safety limit on extra dice stops a scripted endless chain; it is no rule.
    """
    d = roll_d10s(scripted(*[10] * (MAX_EXTRA_DICE + 2)), 2)
    assert len(d.extra) == MAX_EXTRA_DICE
    assert d.capped


def test_l_h_a_readings_include_exploded_dice():
    """“Lägsta innebär att det är den lägsta siffran på någon av tärningarna i slaget som är
    viktig, Högsta innebär att det är den högsta siffran på någon av tärningarna i slaget som
    är central, medan Alla innebär att summan av alla tärningar (inklusive maxade tärningar)
    är avgörande.” Reading: L and H look at every die, exploded ones included, as A does.
    """
    d = roll_d10s(scripted(10, 6, 2), 2)
    assert (d.low, d.high, d.sum) == (2, 10, 18)


def test_exceptional_counts_only_the_two_base_dice():
    """“Ett slag räknas som exceptionellt om de två tärningarna som slås visar samma siffror,
    exempelvis två stycken ettor, två stycken tvåor, etc.” “Exceptionella slag räknas alltid
    på de två grundläggande tärningarna, och räknas inte på eventuellt maxade tärningar.”
    “Exceptionella slag kan påverka positivt eller negativt och kan inträffa vid både
    svårighetsslag och motståndsslag.” (so not on damage rolls)
    """
    assert roll_d10s(scripted(3, 3), 2).exceptional
    assert roll_d10s(scripted(10, 10, 4, 4), 2).exceptional
    assert not roll_d10s(scripted(10, 4, 4), 2).exceptional  # the extra 4 does not count
    assert not roll_d10s(scripted(4, 4, 4), 3).exceptional  # damage rolls have no exceptions


# --- Hypothesis properties ---

faces = st.lists(
    st.integers(1, 10), min_size=2 * MAX_EXTRA_DICE + 10, max_size=2 * MAX_EXTRA_DICE + 10
)
counts = st.integers(1, 5)


@given(faces, counts)
def test_explosion_chains_terminate_within_the_limit(script, count):
    """“Varje tia som slås medför att tärningen maxades. Det innebär att ytterligare 1T skall
    slås och läggas till resultatet. Detta gäller varje tia som slås fram, även eventuella
    nyslagna tior.” Reading: the chain ends at the safety limit at the latest.
    """
    dice = ScriptedDice(script)
    d = roll_d10s(dice, count)
    assert len(d.base) == count
    assert len(d.extra) <= MAX_EXTRA_DICE
    assert len(d.faces) == len(script) - dice.remaining


@given(faces, counts)
def test_a_spaerr_never_increases_a_total(script, count):
    """“Varje etta som slås tar bort möjligheten att maxa en tia i samma slag – detta gäller både
    för svårighetsslag, motståndsslag och vid framtagning av skadeverkan. När en etta slås och
    denna tar bort en maxad tio kallas det för spärr.” Reading: a blocked ten loses its extra
    die, so a spärr can only lower a total.
    """
    with_ones = roll_d10s(ScriptedDice(script), count)
    without = roll_d10s(ScriptedDice(script), count, spaerr=False)
    assert with_ones.sum <= without.sum
    if with_ones.blocks == 0:
        assert with_ones == without


@given(faces, counts)
def test_low_is_at_most_high_and_all_is_the_sum(script, count):
    """“Lägsta innebär att det är den lägsta siffran på någon av tärningarna i slaget som är
    viktig, Högsta innebär att det är den högsta siffran på någon av tärningarna i slaget som
    är central, medan Alla innebär att summan av alla tärningar (inklusive maxade tärningar)
    är avgörande.”
    """
    d = roll_d10s(ScriptedDice(script), count)
    assert 1 <= d.low <= d.high <= 10
    assert d.sum == sum(d.base) + sum(d.extra)


@given(st.integers(0, 2**32))
def test_chains_with_real_dice_end(seed):
    """“Varje tia som slås medför att tärningen maxades. Det innebär att ytterligare 1T skall
    slås och läggas till resultatet. Detta gäller varje tia som slås fram, även eventuella
    nyslagna tior.” Reading: with real dice every ten that is not blocked adds exactly one
    die.
    """
    d = roll_d10s(Dice(random.Random(seed)), 2)
    assert not d.capped
    assert len(d.extra) == len([f for f in d.faces if f == 10]) - d.blocks


# --- difficulty rolls ---


def test_difficulty_succeeds_at_20():
    """“Resultatet av detta jämförs alltid mot en fast svårighetsgrad på 20. Är resultatet lika
    med eller över 20 räknas utfallet som lyckat.”
    """
    roll = difficulty_roll(scripted(4, 4), 7, modifier=5)
    assert roll.total == 20
    assert roll.succeeded
    assert roll.outcome is Outcome.EXCEPTIONAL_SUCCESS  # two 4s


def test_difficulty_fails_below_20():
    """“Resultatet av detta jämförs alltid mot en fast svårighetsgrad på 20. Är resultatet lika
    med eller över 20 räknas utfallet som lyckat.”
    """
    roll = difficulty_roll(scripted(3, 9), 7)
    assert roll.total == 19
    assert roll.outcome is Outcome.FAILURE
    assert "19 < 20: failure" in roll.render()


def test_exceptional_failure():
    """“Om ett slag räknas som misslyckat – man slog lägre än svårighetsgraden vid ett
    svårighetsslag, eller man var den person som slog lägst vid ett motståndsslag – och slaget
    var exceptionellt så kallas det för ett exceptionellt misslyckande”
    """
    assert difficulty_roll(scripted(2, 2), 5).outcome is Outcome.EXCEPTIONAL_FAILURE


def test_routine_plus_20_succeeds_without_a_roll():
    """“Notera att den generella modifikationen vid rutinmässiga situationer är (+20), vilket
    medför att om inget annat gäller så lyckas utövaren automatiskt – inget slag behöver då
    slås.” The taxi driver: “En taxichaufför med förmågavärde sju i Fordon behöver inte slå
    slag för att hitta till olika vanliga adresser”
    """
    dice = scripted()
    roll = difficulty_roll(dice, 7, modifier=COMPLEXITY["routine"])
    assert roll.automatic and roll.succeeded and roll.dice is None
    assert roll.total == 27
    assert dice.faces == ()


def test_the_narrator_can_demand_a_roll_anyway():
    """“Handlingsslag skall däremot slås så fort stress infinner sig, eller om svårigheten stiger
    av olika anledningar.”
    """
    roll = difficulty_roll(scripted(1, 1), 7, modifier=20, automatic=False)
    assert not roll.automatic
    assert roll.outcome is Outcome.EXCEPTIONAL_SUCCESS  # 2 + 27 >= 20, and a double


def test_skill_plus_modifier_below_20_still_rolls():
    """“Notera att den generella modifikationen vid rutinmässiga situationer är (+20), vilket
    medför att om inget annat gäller så lyckas utövaren automatiskt – inget slag behöver då
    slås.” Reading: only skill plus modifiers of 20 or more make the roll automatic.
    """
    roll = difficulty_roll(scripted(5, 6), 12, modifier=7)
    assert not roll.automatic and roll.total == 30


# --- opposed rolls ---


def test_opposed_higher_total_wins():
    """“Den person som får högst på sitt slag räknas som vinnare, och lyckas genomföra det som
    denne har tänkt sig. Den andre personen misslyckas sålunda.”
    """
    roll = opposed_roll(scripted(5, 6, 2, 3), 6, 8)
    assert (roll.actor_total, roll.opponent_total) == (17, 13)
    assert roll.winner is Side.ACTOR
    assert roll.decided_by == "total"
    assert roll.outcome_for(Side.OPPONENT) is Outcome.FAILURE


def test_opposed_tie_goes_to_the_higher_skill():
    """“Vid de fall som båda parter når samma summa vinner den som har högst totalvärde eller
    attributvärde.”
    """
    roll = opposed_roll(scripted(7, 5, 5, 5), 6, 8)  # 18 vs 18
    assert roll.winner is Side.OPPONENT
    assert roll.decided_by == "skill"
    assert roll.outcome_for(Side.OPPONENT) is Outcome.EXCEPTIONAL_SUCCESS
    assert roll.tie_breaks == ()


def test_opposed_tie_with_equal_skill_rolls_d10s_until_different():
    """“Om båda parter har samma totalvärde slår varje part 1T och den som slår högst vinner över
    den andre.” Reading: repeated while tied.
    """
    dice = scripted(4, 5, 6, 3, 7, 7, 2, 9)  # 15 vs 15, skills 6 and 6; 7-7 again, then 2-9
    roll = opposed_roll(dice, 6, 6)
    assert roll.tie_breaks == ((7, 7), (2, 9))
    assert roll.winner is Side.OPPONENT
    assert roll.decided_by == "tie-break"
    assert dice.remaining == 0


def test_opposed_modifiers_count_for_the_total_not_the_tie_break():
    """“vinner den som har högst totalvärde eller attributvärde” Reading: the tie compares the
    skill totals without this roll's modifiers.
    """
    roll = opposed_roll(scripted(5, 5, 5, 6), 8, 6, actor_modifier=-1, opponent_modifier=0)
    assert roll.actor_total == roll.opponent_total == 17
    assert roll.winner is Side.ACTOR  # skill 8 beats 6


def test_both_sides_can_be_exceptional():
    """“Exceptionella slag kan påverka positivt eller negativt och kan inträffa vid både
    svårighetsslag och motståndsslag.”
    """
    roll = opposed_roll(scripted(9, 9, 2, 2), 5, 5)
    assert roll.outcome_for(Side.ACTOR) is Outcome.EXCEPTIONAL_SUCCESS
    assert roll.outcome_for(Side.OPPONENT) is Outcome.EXCEPTIONAL_FAILURE
    assert "opponent: exceptional failure" in roll.render()


# --- damage ---


@pytest.mark.parametrize(
    "text, dice, modifier",
    [("3T+2", 3, 2), ("2T–1", 2, -1), ("2t-1", 2, -1), ("1T", 1, 0), ("4d10 + 3", 4, 3)],
)
def test_damage_codes(text, dice, modifier):
    """“Den första siffran i skadevärdet ger alltid antalet tärningar som skall slås.” “Every
    attack has a damage code: a number of dice, optionally followed by `–x` or `+x` (e.g.
    `3T+2`, `2T–1`).” Reading: a hyphen for the dash, and NdM notation, are accepted.
    """
    assert DamageCode.parse(text) == DamageCode(dice, modifier)


@pytest.mark.parametrize("text", ["3X", "T+2", "3T+", ""])
def test_bad_damage_codes(text):
    """“Every attack has a damage code: a number of dice, optionally followed by `–x` or `+x`” —
    anything else is refused.
    """
    with pytest.raises(RollSyntaxError):
        DamageCode.parse(text)


def test_damage_code_limits():
    """Reading: a damage code may roll 1 to 100 dice, a bound of the service (the rules set
    none).
    """
    with pytest.raises(RollLimitError):
        DamageCode.parse("101T")
    with pytest.raises(RollLimitError):
        DamageCode.parse("99999999T")


def test_damage_roll_explodes_and_blocks_like_other_rolls():
    """“Varje etta som slås tar bort möjligheten att maxa en tia i samma slag – detta gäller både
    för svårighetsslag, motståndsslag och vid framtagning av skadeverkan. När en etta slås och
    denna tar bort en maxad tio kallas det för spärr.”
    """
    roll = damage_roll(scripted(10, 4, 1, 10, 5), DamageCode(4, 2))
    # 10, 4, 1, 10: the 1 blocks one ten, the other throws a 5
    assert roll.dice == NoirDice((10, 4, 1, 10), (5,), 1)
    assert roll.total == 32
    assert roll.render() == "4T+2: [10!, 4, 1, 10!] +[5] (1 spärr) +2 = 32 damage"


# --- modifiers and cooperation ---


def test_complexity_table():
    """“+20 Rutinmässigt, exempelvis att starta sin egen bil.” “+10 Mycket lätt, exempelvis att
    köra om en bil på en ödslig landsväg” “-2 Ganska svårt” “-30 Hopplöst”
    """
    assert complexity_modifier("routine") == 20
    assert complexity_modifier("Very-Easy") == 10
    assert complexity_modifier("fairly hard") == -2
    assert complexity_modifier("hopeless") == -30
    with pytest.raises(RollError, match="very-hard"):
        complexity_modifier("impossible")


def test_cooperation_gives_two_per_helper():
    """“Varje person som hjälper till, och som är kvalificerad inom handlings ämne, ger den
    person som skall slå slaget (vanligen den person som har högst totalvärde i den aktuella
    förmågan) en bonus om två (+2).” “Berättaren måste avgöra hur många personer som rimligen
    kan hjälpa till på en och samma gång”
    """
    assert cooperation_bonus(0) == 0
    assert cooperation_bonus(3) == 6
    with pytest.raises(RollError, match="at most 2"):
        cooperation_bonus(3, max_helpers=2)
    with pytest.raises(RollError):
        cooperation_bonus(-1)
