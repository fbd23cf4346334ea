"""The derived generator and the dice sources: determinism, independence, fairness."""

import hashlib
import hmac
import random

import pytest

from pbp.rules.dice.source import (
    Dice,
    Face,
    ScriptedDice,
    ScriptExhausted,
    derive_rng,
    draw_face,
    seed_commitment,
)

SEED = b"campaign seed for tests"

# Upper 0.1% points of the chi-square distribution (standard tables).
CHI2_999 = {5: 20.515, 9: 27.877}


def chi_square(counts: list[int]) -> float:
    expected = sum(counts) / len(counts)
    return sum((c - expected) ** 2 / expected for c in counts)


def test_commitment_is_the_sha256_of_the_seed():
    assert seed_commitment(SEED) == hashlib.sha256(SEED).hexdigest()
    assert seed_commitment(SEED) != seed_commitment(SEED + b"!")


def test_derived_generator_is_seeded_with_hmac_of_the_roll_id():
    # The documented algorithm, spelled out independently of derive_rng.
    key = hmac.new(SEED, b"roll-1", hashlib.sha256).digest()
    reference = random.Random(int.from_bytes(key, "big"))
    assert derive_rng(SEED, "roll-1").getrandbits(64) == reference.getrandbits(64)


def test_same_seed_and_id_give_the_same_faces_and_other_ids_do_not():
    def faces(seed, roll_id):
        rng = derive_rng(seed, roll_id)
        return [draw_face(rng, 20) for _ in range(20)]

    assert faces(SEED, "a") == faces(SEED, "a")
    assert faces(SEED, "a") != faces(SEED, "b")
    assert faces(SEED, "a") != faces(b"another seed", "a")


def test_empty_seed_is_refused():
    with pytest.raises(ValueError):
        derive_rng(b"", "roll-1")


@pytest.mark.parametrize("sides", [1, 2, 3, 6, 10, 20, 100, 1000])
def test_draw_face_stays_on_the_die(sides):
    rng = random.Random(sides)
    faces = {draw_face(rng, sides) for _ in range(3000)}
    assert faces <= set(range(1, sides + 1))
    if sides <= 20:
        assert faces == set(range(1, sides + 1))


def test_draw_face_refuses_a_die_without_sides():
    with pytest.raises(ValueError):
        draw_face(random.Random(1), 0)


def test_chi_square_of_100000_d6_each_from_its_own_roll_id():
    """Every roll has its own generator, so test faces across roll ids (fixed seed)."""
    counts = [0] * 6
    for i in range(100_000):
        counts[draw_face(derive_rng(SEED, f"roll-{i}"), 6) - 1] += 1
    assert chi_square(counts) < CHI2_999[5], counts


def test_chi_square_of_100000_d10_from_one_generator():
    dice = Dice(derive_rng(SEED, "long roll"))
    counts = [0] * 10
    for _ in range(100_000):
        counts[dice.roll(10) - 1] += 1
    assert chi_square(counts) < CHI2_999[9], counts


def test_the_chi_square_check_catches_a_loaded_die():
    """The statistic must be able to fail: a d6 showing 6 one time in five is caught."""
    rng = random.Random(7)
    counts = [0] * 6
    for _ in range(100_000):
        face = 6 if rng.random() < 0.2 else rng.randint(1, 5)
        counts[face - 1] += 1
    assert chi_square(counts) > CHI2_999[5]


def test_dice_record_every_face_in_order():
    dice = Dice(random.Random(3))
    drawn = [dice.roll(6), dice.roll(10), dice.roll(6)]
    assert dice.faces == (Face(6, drawn[0]), Face(10, drawn[1]), Face(6, drawn[2]))
    assert Face(6, 4).to_list() == [6, 4]


def test_scripted_dice_show_their_script_and_record_it():
    dice = ScriptedDice([3, 10, 1])
    assert [dice.roll(6), dice.roll(10), dice.roll(4)] == [3, 10, 1]
    assert dice.faces == (Face(6, 3), Face(10, 10), Face(4, 1))
    assert dice.remaining == 0


def test_scripted_dice_refuse_an_impossible_face_and_running_out():
    with pytest.raises(ValueError, match="cannot come up on a d6"):
        ScriptedDice([7]).roll(6)
    dice = ScriptedDice([2])
    dice.roll(6)
    with pytest.raises(ScriptExhausted):
        dice.roll(6)
