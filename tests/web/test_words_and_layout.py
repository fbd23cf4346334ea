"""Issue #27 item 10: words and layout. Rolls read as a sentence first; History's
abbreviations have a legend; deadlines read as dates; "the first turn"; the endgame line
says who is not active; the turn's actions sit in one row; schedule-only texts hide under a
manual cadence; mail preferences offer what the campaign sends; the write page is under
Planet. (The layouts at 390 and 1280 px wide: tests/browser/test_narrow_pages.py.)"""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from sqlmodel import select

from pbp.models import User
from pbp.models.forum import Roll
from pbp.rules.dice import ScriptedDice, execute, parse_roll_command
from pbp.rules.dice.sentences import plain_sentence
from pbp.services.noteworthy import hosted_blog, turns
from pbp.web import forum as forum_web
from tests.helpers import T0
from tests.services.forum.tables import make_table, write


@pytest.mark.parametrize(
    ("command", "faces", "sentence"),
    [
        # The line: 2T [3, 3] + 7 +5 = 18 < 20: exceptional failure (L 3, H 3, A 6)
        (
            "/roll noir difficulty skill=7 mod=+5",
            [3, 3],
            "Exceptional failure: 18 against the 20 needed.",
        ),
        ("/roll noir difficulty skill=9 mod=+5", [4, 2], "Success: 20 against the 20 needed."),
        (
            "/roll noir difficulty skill=15 mod=+5",
            [],
            "Automatic success: skill and modifiers reach 20 without a roll.",
        ),
        ("/roll noir damage 3T+2", [4, 2, 5], "13 damage."),
        ("/roll one skill=8", [3, 4], "Success: rolled 7, needing 8 or less."),
        ("/roll 2d6+1", [3, 5], "A total of 9."),
        ("/roll 3d6>=5", [5, 2, 6], "2 successes."),
    ],
)
def test_a_roll_reads_as_a_plain_sentence(command, faces, sentence):
    result = execute(parse_roll_command(command), ScriptedDice(faces))
    assert plain_sentence(result.to_dict()) == sentence


@pytest.fixture
def forum_app(app):
    if "forum" not in app.blueprints:
        app.register_blueprint(forum_web.bp)
    return app


def test_the_sentence_comes_first_and_the_algorithm_is_behind_how_to_check(
    forum_app, client, auth, db_session
):
    users = [auth.create_user(display_name=n) for n in ("Gail GM", "Ann", "Ben", "Cat", "Stan")]
    table = make_table(db_session, ruleset="noir", users=users)
    post = write(
        db_session, table, table.ada_user, "Into the rain.\n/roll noir difficulty skill=7 mod=+5"
    )
    db_session.commit()
    roll = db_session.exec(select(Roll).where(Roll.post_id == post.id)).one()
    auth.login(table.bram_user)
    page = client.get(f"/c/{table.campaign.slug}/forum/t/{post.thread_id}").get_data(as_text=True)
    line = page[page.index(f'id="roll-{roll.id}"') :]
    sentence = re.search(r'<strong class="roll-sentence">([^<]+)</strong>', line).group(1)
    assert re.fullmatch(
        r"(Exceptional success|Success|Failure|Exceptional failure): \d+ against the 20 needed\.",
        sentence,
    )
    assert line.index("roll-sentence") < line.index('class="result"')
    page = client.get(f"/c/{table.campaign.slug}/rolls/{roll.id}").get_data(as_text=True)
    assert sentence in page
    check = page[page.index("<details") : page.index("</details>")]
    assert "<summary>How to check this roll</summary>" in check
    assert "pbp-dice-1" in check and page.count("pbp-dice-1") == 1


def test_deadlines_read_as_a_day_and_a_time(client, auth, game, clock):
    campaign, referee, _ = game
    auth.login(referee)
    base = f"/c/{campaign.slug}/referee"
    auth.post(base + "/settings", {"time_zone": "Europe/Stockholm", "opening_turns": "0"})
    auth.post(base + "/event", {"text": "Go.", "expected_number": "1", "deadline_hours": "30"})
    # T0 is 09:00 UTC on Wednesday 1 July; 30 hours later is 15:00 UTC, 17:00 in Stockholm.
    for url in (
        f"/c/{campaign.slug}/",
        f"/c/{campaign.slug}/turns/1",
        f"/c/{campaign.slug}/turns/",
        base + "/",
    ):
        page = client.get(url).get_data(as_text=True)
        assert ">Thursday 2 July, 17:00 CEST</time>" in page, url
        assert '<span class="your-time"> (<time datetime="2026-07-02T15:00:00+00:00"' in page, url
        assert ">15:00 UTC</time>)</span>" in page, url  # the reader's, until the script runs
        assert "2026-07-02 17:00" not in page, url


def test_the_endgame_line_says_who_is_not_active_and_why(client, auth, db_session):
    from pbp.models import Character
    from tests.factories import make_campaign, make_characters

    referee = auth.create_user(display_name="Referee")
    campaign = make_campaign(db_session, referee=referee, settings={"opening_turns": 0})
    ada, bram, cleo, dov = make_characters(
        db_session, campaign, names=("Ada", "Bram", "Cleo", "Dov")
    )
    db_session.get(Character, dov.id).status = "outsider"
    turns.post_event(session=db_session, campaign=campaign, text="Go.", actor=None, now=T0)
    db_session.commit()
    auth.login(referee)
    board = client.get(f"/c/{campaign.slug}/referee/").get_data(as_text=True)
    assert "3 characters active; not active: Dov (an outsider before this turn)." in board


def test_a_closed_turns_resolve_and_reopen_sit_in_one_row(client, auth, game):
    campaign, referee, _ = game
    auth.login(referee)
    base = f"/c/{campaign.slug}/referee"
    auth.post(base + "/event", {"text": "Go.", "expected_number": "1"})
    auth.post(base + "/close", {})
    board = client.get(base + "/").get_data(as_text=True)
    row = board[board.index('<div class="turn-actions"') :]
    row = row[: row.index("</div>")]
    assert "Resolve turn 1</button>" in row
    assert '<button form="reopen-turn" class="secondary">Reopen turn 1</button>' in row
    assert '<form id="reopen-turn" method="post" action="/c/' in board
    page = auth.post(base + "/reopen", {}, follow_redirects=True)
    assert "Turn 1 is open again" in page.get_data(as_text=True)


def test_texts_for_a_schedule_are_hidden_under_a_manual_cadence(client, auth, game):
    campaign, referee, _ = game
    auth.login(referee)
    base = f"/c/{campaign.slug}/referee"
    auth.post(base + "/event", {"text": "Go.", "expected_number": "1"})
    board = client.get(base + "/").get_data(as_text=True)
    assert "the scheduler opens it at the deadline" not in board
    # The daily time and the hours are the schedule's: the stylesheet hides them under
    # "manual" (tests/browser/test_narrow_pages.py sees it done).
    assert '<div class="cadence-scheduled cadence-daily">' in board
    assert '<div class="cadence-scheduled cadence-hours">' in board
    auth.post(base + "/settings", {"opening_turns": "0", "cadence": "daily", "cadence_at": "20:00"})
    board = client.get(base + "/").get_data(as_text=True)
    assert "Queue the event for turn 2 (the scheduler opens it at the deadline)" in board


def test_mail_preferences_offer_what_the_campaign_sends(app, client, auth, db_session, game):
    from pbp.models import Membership
    from pbp.services import campaigns

    campaign, _, (ada, *_) = game
    user = db_session.get(User, ada.user_id)
    auth.login(user)
    url = f"/c/{campaign.slug}/me/mail"
    page = client.get(url).get_data(as_text=True)
    assert "scenes you watch" not in page and "challenges against your character" in page
    auth.post(url, {"on": ["events", "challenges"]})
    member = campaigns.membership(session=db_session, campaign=campaign, user=user)
    db_session.refresh(member)
    assert member.notify["challenges"] is True and member.notify["digest"] is False
    assert "forum" not in member.notify  # not offered, so left as it was

    if "forum" not in app.blueprints:
        app.register_blueprint(forum_web.bp)
    users = [auth.create_user(display_name=n) for n in ("Gail GM", "Ann", "Ben", "Cat", "Stan")]
    table = make_table(db_session, ruleset="noir", users=users)
    auth.logout()
    auth.login(table.ada_user)
    page = client.get(f"/c/{table.campaign.slug}/me/mail").get_data(as_text=True)
    assert "scenes you watch" in page and "challenges against your character" not in page
    assert isinstance(member, Membership)


def test_the_write_page_is_under_planet_in_the_navigation(client, auth, db_session, game):
    campaign, _, (ada, *_) = game
    auth.login(db_session.get(User, ada.user_id))
    page = client.get(f"/c/{campaign.slug}/write").get_data(as_text=True)
    current = re.findall(r'<a href="([^"]+)" aria-current="page">([^<]+)</a>', page)
    assert current == [(f"/c/{campaign.slug}/", "Planet")]


def test_historys_abbreviations_have_a_legend(client, auth, db_session, game):
    campaign, referee, (ada, bram, *_) = game
    turns.post_event(session=db_session, campaign=campaign, text="Go.", actor=None, now=T0)
    hosted_blog.store_entry(
        session=db_session,
        character=ada,
        title="Bram!",
        body_markdown="Target: Bram\n\nNow.",
        mood="Challenging",
        now=T0 + timedelta(hours=1),
    )
    db_session.commit()
    auth.login(referee)
    page = client.get(f"/c/{campaign.slug}/history").get_data(as_text=True)
    assert '<abbr title="challenges made">M</abbr> = challenges made' in page
    assert '<abbr title="challenges received">R</abbr> = received' in page
