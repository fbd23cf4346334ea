"""Every Noteworthy test quotes the rules text it checks, and quotes it exactly."""

from tests.rules.rules_texts import misquotes, rules_text

MODULES = [
    "tests.rules.noteworthy.test_text",
    "tests.rules.noteworthy.test_challenges",
    "tests.rules.noteworthy.test_notes",
    "tests.rules.noteworthy.test_outcomes",
    "tests.rules.noteworthy.test_campaign",
    "tests.rules.noteworthy.test_properties",
    # The threaded notes' reading (issue #29 item 3), checked through the service and tally.
    "tests.services.noteworthy.test_reply_stance",
]


def test_every_noteworthy_test_quotes_the_rules_text_verbatim():
    """Noteworthy tests cite the rule they check; a misquote would cite a rule that isn't."""
    found, problems = misquotes(MODULES, [rules_text("noteworthy.txt")], readings_allowed=False)
    assert found > 50
    assert problems == []
