"""Roll commands: parsing, canonical text, finding them in posts."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pbp.rules.dice import (
    GenericRoll,
    NoirRoll,
    OneRoll,
    RollError,
    RollLimitError,
    RollSyntaxError,
    SkillRef,
    find_roll_commands,
    parse_roll_command,
)
from pbp.rules.noir import DamageCode


def test_generic_command_with_label():
    command = parse_roll_command("/roll 2d6 + 1 # open the door")
    assert isinstance(command, GenericRoll)
    assert command.label == "open the door"
    assert command.canonical() == "/roll 2d6+1 # open the door"


def test_one_command_with_a_named_skill():
    command = parse_roll_command('/roll one skill="Short Blade" mod=-2')
    assert command == OneRoll(kind="check", skill=SkillRef("Short Blade"), mod=-2)
    assert command.needs_score
    resolved = command.with_score(11)
    assert not resolved.needs_score
    assert resolved.canonical() == '/roll one check skill="Short Blade" score=11 mod=-2'
    assert parse_roll_command(resolved.canonical()) == resolved


def test_phone_quotes_and_dashes_are_understood():
    command = parse_roll_command("/roll one skill=“Short Blade” mod=–2")
    assert command.skill.name == "Short Blade" and command.mod == -2


def test_one_contest_and_quick():
    contest = parse_roll_command("/roll ONE Contest skill=8 vs=7 vsmod=-1")
    assert contest == OneRoll(kind="contest", skill=SkillRef(score=8), vs=7, vs_mod=-1)
    quick = parse_roll_command("/roll one quick skill=DEX vs=9")
    assert quick.kind == "quick" and quick.skill.name == "DEX"


def test_noir_commands_from_the_issue():
    assert parse_roll_command("/roll noir difficulty skill=7 mod=+5") == NoirRoll(
        kind="difficulty", skill=SkillRef(score=7), mod=5
    )
    assert parse_roll_command("/roll noir opposed skill=6 vs=8") == NoirRoll(
        kind="opposed", skill=SkillRef(score=6), vs=8
    )
    assert parse_roll_command("/roll noir damage 3T+2") == NoirRoll(
        kind="damage", damage=DamageCode(3, 2)
    )


def test_noir_modifiers_by_name_sum_and_helpers():
    command = parse_roll_command("/roll noir difficulty skill=7 mod=very-hard help=2 force")
    assert (command.mod, command.helpers, command.force) == (-10, 2, True)
    assert parse_roll_command("/roll noir difficulty skill=7 mod=+5-2").mod == 3
    assert parse_roll_command('/roll noir difficulty skill=7 mod="fairly easy"').mod == 2


def test_noir_extended_and_contests():
    task = parse_roll_command("/roll noir extended skill=8 successes=4 max=20")
    assert (task.successes, task.max_attempts) == (4, 20)
    best = parse_roll_command("/roll noir contest skill=6 vs=8 best=5")
    assert best.best == 5
    more = parse_roll_command("/roll noir contest skill=6 vs=8 attempts=4")
    assert more.attempts == 4


@pytest.mark.parametrize(
    "text, error, words",
    [
        ("/roll", RollSyntaxError, "write what to roll"),
        ("/roll one", RollSyntaxError, "check needs skill="),
        ("/roll one skill=8 vs=7", RollSyntaxError, "check does not take 'vs=7'"),
        ("/roll one contest skill=8", RollSyntaxError, "contest needs vs="),
        ("/roll one skill=8 skill=9", RollSyntaxError, "skill is given twice"),
        ("/roll one skill=8 mod=hard", RollSyntaxError, "mod= needs a number"),
        ("/roll one skill=8 score=3", RollSyntaxError, "not both"),
        ("/roll one skill", RollSyntaxError, "write skill="),
        ('/roll one skill="Short', RollSyntaxError, "quote is not closed"),
        ("/roll one skill=8 mod=-5000", RollLimitError, "mod must be from -1000 to 1000"),
        ("/roll noir skill=7", RollSyntaxError, "say which roll"),
        ("/roll noir difficulty skill=7 force=no", RollSyntaxError, "plain word"),
        ("/roll noir difficulty skill=7 help=50", RollLimitError, "help must be from 0 to 20"),
        ("/roll noir contest skill=6 vs=8", RollError, "either best=N"),
        ("/roll noir contest skill=6 vs=8 best=4", RollError, "odd N"),
        ("/roll noir extended skill=6 successes=0", RollLimitError, "successes must be"),
        ("/roll noir damage", RollSyntaxError, "damage code"),
        ("/roll noir damage 500T", RollLimitError, "1 to 100 dice"),
        ("/roll 99999d99999", RollLimitError, "at most 100 dice"),
        ("/roll " + "1" * 600, RollLimitError, "at most 500 characters"),
    ],
)
def test_bad_commands_say_what_to_fix(text, error, words):
    with pytest.raises(error, match=words):
        parse_roll_command(text)


def test_a_huge_dice_count_gets_the_same_limit_and_message_as_a_large_one():
    """Reading: /roll 100000d6 and /roll 1000000d6 both hit the one dice limit (100)."""
    messages = set()
    for text in ("/roll 100000d6", "/roll 1000000d6"):
        with pytest.raises(RollLimitError) as raised:
            parse_roll_command(text)
        messages.add(str(raised.value).rsplit(",", 1)[0])
    assert messages == {"a roll may use at most 100 dice"}


def test_find_roll_commands_in_a_post():
    post = "\n".join(
        [
            "Larry lunges.",
            "/roll one skill=8 mod=-2",
            "   /roll 2d6",
            "    /roll 1d4   (indented code: not a roll)",
            "> /roll 1d20   (a quote: not a roll)",
            "/rollover is not a command",
            "```",
            "/roll 1d100 (in a code block)",
            "```",
            "/ROLL noir damage 2T-1",
        ]
    )
    commands = find_roll_commands(post)
    assert [c.canonical() for c in commands] == [
        "/roll one check skill=8 mod=-2",
        "/roll 2d6",
        "/roll noir damage 2T-1",
    ]


def test_find_roll_commands_reports_every_bad_line():
    post = "/roll 2x6\nfine text\n/roll one\n/roll 1d6"
    with pytest.raises(RollSyntaxError) as caught:
        find_roll_commands(post)
    message = str(caught.value)
    assert message.startswith("line 1: could not read '2x6'")
    assert "line 3: check needs skill=" in message


def test_a_post_may_not_roll_too_often():
    with pytest.raises(RollLimitError, match="at most 20"):
        find_roll_commands("/roll 1d6\n" * 21)
    assert len(find_roll_commands("/roll 1d6\n" * 20)) == 20


@given(st.text(max_size=60))
def test_any_command_text_parses_or_raises_a_roll_error(text):
    try:
        command = parse_roll_command("/roll " + text)
    except RollError:
        return
    assert parse_roll_command(command.canonical()) == command


names = st.text(
    alphabet=st.characters(categories=["L", "N", "Zs"], exclude_characters="#"),
    min_size=1,
    max_size=20,
).filter(lambda s: s.strip() and not s.strip().lstrip("+-").isdigit())
skills = st.builds(SkillRef, score=st.integers(-50, 50)) | st.builds(
    SkillRef, st.builds(lambda s: " ".join(s.split()), names), st.none() | st.integers(0, 30)
)
mods = st.integers(-30, 30)
labels = st.just("") | st.text(alphabet="abc xyz", min_size=1, max_size=10).map(
    lambda s: " ".join(s.split())
)
one_commands = st.builds(
    OneRoll,
    kind=st.just("check"),
    skill=skills,
    mod=mods,
    label=labels,
) | st.builds(
    OneRoll,
    kind=st.sampled_from(["contest", "quick"]),
    skill=skills,
    mod=mods,
    vs=st.integers(0, 20),
    vs_mod=mods,
)
noir_commands = st.builds(
    NoirRoll,
    kind=st.just("difficulty"),
    skill=skills,
    mod=mods,
    helpers=st.integers(0, 5),
    force=st.booleans(),
) | st.builds(
    NoirRoll,
    kind=st.just("contest"),
    skill=skills,
    vs=st.integers(0, 20),
    best=st.sampled_from([1, 3, 5, 7]),
    max_attempts=st.integers(1, 100),
)


@given(one_commands | noir_commands)
def test_canonical_text_parses_back_to_the_same_command(command):
    assert parse_roll_command(command.canonical()) == command
