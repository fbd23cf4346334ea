"""The game's forms are read with the API's input models (#18 item 2): one place says
what is accepted, and a refusal speaks the service's words, not pydantic's."""

import pytest

from pbp import limits
from pbp.inputs.entries import EntryIn, NoteIn
from pbp.inputs.forum import MoveIn
from pbp.inputs.invites import InviteIn
from pbp.web.forms import FormRefused, parsed


def test_a_form_is_read_with_the_apis_model():
    typed = {"title": "Day", "mood": "Challenging", "body": "Go.", "target_id": "7", "csrf": "x"}
    entry = parsed(EntryIn, typed)
    assert (entry.title, entry.mood, entry.target_id) == ("Day", "Challenging", 7)
    assert parsed(EntryIn, {**typed, "target_id": ""}).target_id is None  # "no choice"


def test_missing_texts_are_named_as_the_service_names_them():
    with pytest.raises(FormRefused, match="an entry needs a title") as refused:
        parsed(EntryIn, {"title": "", "mood": "Calm", "body": "b"})
    assert refused.value.status == 422
    with pytest.raises(FormRefused, match='needs a "Current mood:"'):
        parsed(EntryIn, {"title": "t", "mood": "", "body": "b"})


def test_an_over_long_text_says_by_how_much():
    body = "x" * (limits.NOTE_BODY + 3)
    with pytest.raises(FormRefused, match=f"a note may be at most {limits.NOTE_BODY:,} .*by 3"):
        parsed(NoteIn, {"body": body})


def test_a_choice_outside_the_list_and_a_bad_number_are_refused():
    with pytest.raises(FormRefused, match="a position is Support, Oppose or No position"):
        parsed(NoteIn, {"body": "b", "stance": "both"})
    with pytest.raises(FormRefused, match="the target"):
        parsed(EntryIn, {"title": "t", "mood": "Challenging", "target_id": "Bram"})


def test_the_invitation_form_reads_like_the_api_body():
    typed = {"email": "", "role": "referee", "character": "", "days": "7"}
    invite = parsed(InviteIn, typed)
    assert (invite.email, invite.role, invite.character, invite.days) == (None, "referee", None, 7)
    assert InviteIn.model_validate({"role": "referee", "days": 7}) == invite  # the API's body
    for days in ("0", "91", "a week"):
        with pytest.raises(FormRefused, match="an invite works for 1 to 90 days"):
            parsed(InviteIn, {**typed, "days": days})
    with pytest.raises(FormRefused, match="the role is Player or Co-referee"):
        parsed(InviteIn, {**typed, "role": "gm"})


def test_a_card_move_reads_like_the_api_body():
    move = parsed(MoveIn, {"action": "draw", "params": {"n": "1"}, "version": "3"})
    assert (move.action, move.params, move.version) == ("draw", {"n": "1"}, 3)
    assert parsed(MoveIn, {"action": "draw", "version": ""}).version is None
    with pytest.raises(FormRefused, match="the form is damaged"):
        parsed(MoveIn, {"action": "draw", "version": "-1"})
    with pytest.raises(FormRefused, match="the move may be at most 40 characters"):
        parsed(MoveIn, {"action": "x" * 41})
