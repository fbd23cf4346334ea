"""Issue #27 item 9: pages that left a new group guessing. The planet before turn 1 says
what the game waits for, then the deadline; it shows the reader's own tailored event text;
a forum campaign's front page opens with its scenes, the reader's character and how to
roll, the fairness text on a page of its own."""

from __future__ import annotations

from datetime import timedelta

import pytest

from pbp.models import User
from pbp.services.noteworthy import turns
from pbp.web import forum as forum_web
from tests.helpers import T0
from tests.services.forum.tables import make_table


def test_the_planet_says_what_the_game_waits_for_and_then_the_deadline(
    client, auth, db_session, game, clock
):
    campaign, referee, (ada, *_) = game
    auth.login(db_session.get(User, ada.user_id))
    page = client.get(f"/c/{campaign.slug}/").get_data(as_text=True)
    assert "The game has not started yet: it waits for the referee's first event" in page
    assert "its deadline shows here once the referee sets one" in page
    assert "/referee/" not in page  # the dashboard link is the referee's
    auth.logout()
    auth.login(referee)
    page = client.get(f"/c/{campaign.slug}/").get_data(as_text=True)
    assert f'href="/c/{campaign.slug}/referee/">the referee dashboard</a>' in page

    turns.post_event(session=db_session, campaign=campaign, text="Go.", actor=None, now=T0)
    db_session.commit()
    page = client.get(f"/c/{campaign.slug}/").get_data(as_text=True)
    assert "not started" not in page
    assert "no deadline set yet: the referee closes the turn" in page
    assert "No entries yet in turn 1." in page

    turn = turns.latest_turn(session=db_session, campaign=campaign)
    turn.deadline = T0 + timedelta(hours=30)
    db_session.add(turn)
    db_session.commit()
    page = client.get(f"/c/{campaign.slug}/").get_data(as_text=True)
    assert "deadline" in page and "no deadline set yet" not in page
    assert f'datetime="{(T0 + timedelta(hours=30)).isoformat()}"' in page


def test_the_planet_shows_the_readers_own_tailored_event_text(
    client, auth, db_session, game, clock
):
    campaign, _, (ada, bram, *_) = game
    turns.post_event(
        session=db_session,
        campaign=campaign,
        text="The duke falls.",
        actor=None,
        now=T0,
        tailored=[turns.Tailored(character_id=ada.id, mode="addition", text="Only Ada saw it.")],
    )
    db_session.commit()
    url = f"/c/{campaign.slug}/"
    assert "Only Ada saw it." not in client.get(url).get_data(as_text=True)  # a visitor
    auth.login(db_session.get(User, ada.user_id))
    page = client.get(url).get_data(as_text=True)
    assert "The duke falls." in page and "Only Ada saw it." in page
    assert "Also, for Ada" in page
    auth.logout()
    auth.login(db_session.get(User, bram.user_id))
    page = client.get(url).get_data(as_text=True)
    assert "The duke falls." in page and "Only Ada saw it." not in page


@pytest.fixture
def forum_app(app):
    if "forum" not in app.blueprints:
        app.register_blueprint(forum_web.bp)
    return app


def test_a_forum_front_page_opens_with_the_scenes_then_your_character_and_rolling(
    forum_app, client, auth, db_session
):
    users = [auth.create_user(display_name=n) for n in ("Gail GM", "Ann", "Ben", "Cat", "Stan")]
    table = make_table(db_session, ruleset="noir", users=users)
    auth.login(table.ada_user)
    front = f"/c/{table.campaign.slug}/"
    page = client.get(front).get_data(as_text=True)
    main = page[page.index("<main") :]
    scenes, mine, rolling = (
        main.index('id="threads-title"'),
        main.index('id="mine-title"'),
        main.index('id="roll-title"'),
    )
    assert scenes < mine < rolling
    assert f'href="/c/{table.campaign.slug}/sheets/{table.ada.slug}">Ada</a>' in main
    assert "<code>/roll noir difficulty skill=7 mod=+5</code>" in main
    assert "SHA-256" not in main and "HMAC" not in main
    fairness = f"/c/{table.campaign.slug}/forum/fairness"
    assert f'href="{fairness}"' in main
    page = client.get(fairness).get_data(as_text=True)
    assert "HMAC-SHA256(seed, the roll's random id)" in page
    assert 'aria-current="page"' in page  # still under the campaign's Scenes
