"""The audit log's typed lines (issue #32 item 4): each action is one dataclass that
stores its fields as the row's detail and reads back as its own sentence."""

from __future__ import annotations

import dataclasses

import pytest

from pbp.services import audit_actions as lines
from pbp.services.audit_actions import KINDS, sentence_of


@pytest.mark.parametrize("action", sorted(KINDS))
def test_every_line_reads_back_from_what_it_stores(action):
    kind = KINDS[action]
    line = kind()  # every field has a default: an old row missing a key still reads
    again = kind.from_detail(line.detail())
    assert again == line
    assert sentence_of(action, line.detail(), {}).strip()
    assert "no words for" not in sentence_of(action, line.detail(), {})


def test_a_line_reads_as_the_sentence_the_referee_reads():
    names = {7: "Ada", 8: "Bram"}
    assert (
        sentence_of("post_event", lines.EventPosted(turn=4, tailored=2).detail(), names)
        == "posted the event for turn 4, tailored for 2 characters"
    )
    resolved = lines.TurnResolved(turn=2, eliminated=[8])
    assert resolved.detail() == {"turn": 2, "eliminated": [8]}
    assert sentence_of("resolve_turn", resolved.detail(), names) == (
        "resolved turn 2; Bram became an outsider"
    )


def test_the_stored_keys_stay_those_older_rows_have():
    """Rows written before the lines were typed read the same way: the blog's change kept
    "from" and "to", the settings their own keys, a button's reminder no "scheduled"."""
    changed = lines.BlogChanged(3, before={"kind": "builtin"}, after={"kind": "external"})
    assert changed.detail() == {
        "character_id": 3,
        "from": {"kind": "builtin"},
        "to": {"kind": "external"},
    }
    assert lines.SettingsChanged(settings={"opening_turns": 2}).detail() == {"opening_turns": 2}
    assert "scheduled" not in lines.Reminded(count=2, turn=1).detail()
    assert lines.Reminded(count=2, turn=1, scheduled=True).detail()["scheduled"] is True
    old_row = {"character_id": 7, "reason": "moved away", "extra": "ignored"}
    assert sentence_of("character.dropped", old_row, {7: "Ada"}).startswith(
        "ruled that Ada dropped out of the game"
    )


def test_an_action_without_words_still_reads_as_words():
    assert sentence_of("later_thing", {}, {}) == (
        "did something pbp has no words for yet (later thing)"
    )


def test_lines_are_frozen_dataclasses():
    for kind in KINDS.values():
        assert dataclasses.is_dataclass(kind)
        assert kind.__dataclass_params__.frozen  # type: ignore[attr-defined]
