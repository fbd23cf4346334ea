"""adapters.mood: the "Current mood:" line under the title (Noteworthy's one required line)."""

from __future__ import annotations

import pytest

from adapters.mood import extract_mood

CASES = [
    ("<b>Current mood:</b> challenging<br>Body here", "challenging", "Body here"),
    ("<b>Current mood:</b> challenging<br /><br />Body", "challenging", "Body"),
    ("<p>Current Mood: Challenging</p><p>Body</p>", "Challenging", "<p>Body</p>"),
    ("<p><strong>Mood:</strong> curious</p>\n\n<p>Body</p>", "curious", "<p>Body</p>"),
    ("<div>Mood: hopeful</div><div>Body</div>", "hopeful", "<div>Body</div>"),
    ("Current mood: joyful\n\nThe bells.", "joyful", "The bells."),
    ("Mood: weary\nrest", "weary", "rest"),
    ("Current mood: furious", "furious", ""),
    (
        "<p><b>Current mood:</b>\n challenging<br/>rest of para</p>",
        "challenging",
        "<p>rest of para</p>",
    ),
    ("Current mood: <img src='mood.gif'> sad &amp; lonely<br>b", "sad & lonely", "b"),
    ("  \n<p>\n<i>current MOOD :</i> bored</p>x", "bored", "x"),
]


@pytest.mark.parametrize(("body", "mood", "rest"), CASES)
def test_mood_line_is_read_and_removed(body: str, mood: str, rest: str) -> None:
    assert extract_mood(body) == (mood, rest)


@pytest.mark.parametrize(
    "body",
    [
        "<p>The mood: was grim</p>",  # not at the start of the line
        "<p>Intro</p><p>Current mood: late</p>",  # not the first line
        "Current mood:\n\nNo value at all",
        "Current mood: " + "word " * 40 + "without any line break at all",  # not a line
        "",
        "<p>No label here</p>",
    ],
)
def test_no_mood_leaves_body_unchanged(body: str) -> None:
    assert extract_mood(body) == (None, body)


def test_mood_markup_is_reduced_to_text() -> None:
    mood, _ = extract_mood("<p>Current mood: <script>alert(1)</script>evil</p><p>x</p>")
    assert mood == "evil"
