"""All mail text lives in templates/mail/, each kind with a plain-text and an HTML part,
rendered by the one Jinja environment that also writes the archive (pbp.templating)."""

from __future__ import annotations

import ast

import jinja2
import pytest

from pbp import ROOT, templating

MAIL = ROOT / "templates" / "mail"
SERVICES = ROOT / "pbp" / "services"


def _kinds() -> set[str]:
    return {p.stem for p in MAIL.glob("*.txt") if not p.name.startswith("_")}


def _templates_named_in_letters() -> set[str]:
    """Every `template="..."` a service passes to a Letter."""
    names = set()
    for path in SERVICES.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Letter":
                for keyword in node.keywords:
                    if keyword.arg == "template" and isinstance(keyword.value, ast.Constant):
                        names.add(keyword.value.value)
    return names


def test_every_kind_of_mail_has_both_parts():
    assert {p.stem for p in MAIL.glob("*.html") if not p.name.startswith("_")} == _kinds()


def test_every_letter_a_service_writes_has_its_templates():
    named = _templates_named_in_letters()
    # forum posts and reminders were once written in Python; they are templates now
    assert {"forum_post", "reminder", "event", "invite"} <= named
    assert named <= _kinds()


def test_no_service_writes_a_mail_body_itself():
    """queue_message takes finished text; only the queue module may call it with text it
    rendered (the referee's test mail aside, which is in pbp.web). Issue #31: a push is
    made from the letter `queue` renders, and a chat post is no mail (public text only)."""
    callers = sorted(
        path.relative_to(ROOT).as_posix()
        for path in SERVICES.rglob("*.py")
        if "queue_message(" in path.read_text()
    )
    assert callers == [
        "pbp/services/mail/chat.py",
        "pbp/services/mail/push.py",
        "pbp/services/mail/queue.py",
    ]


def test_html_escapes_and_text_does_not():
    env = templating.environment()
    page = env.get_template("mail/reminder.html").render(
        campaign={"name": "A & B"},
        campaign_url="https://pbp.example/c/ab/",
        unsubscribe_url=None,
        unsubscribe_label="",
        turn={"number": 2, "deadline": None},
        character={"name": "<Ada>"},
        write_url="https://pbp.example/c/ab/write",
        turn_url="https://pbp.example/c/ab/turns/2",
    )
    assert "&lt;Ada&gt;" in page and "A &amp; B" in page
    text = env.get_template("mail/reminder.txt").render(
        campaign={"name": "A & B"},
        campaign_url="https://pbp.example/c/ab/",
        turn={"number": 2, "deadline": None},
        character={"name": "<Ada>"},
        write_url="https://pbp.example/c/ab/write",
        turn_url="https://pbp.example/c/ab/turns/2",
    )
    assert text.startswith("<Ada> has not posted an entry in turn 2 of A & B yet.")


def test_a_misspelt_variable_is_an_error_not_an_empty_string():
    with pytest.raises(jinja2.UndefinedError):
        templating.environment().get_template("mail/reminder.txt").render(campaign_url="x")
