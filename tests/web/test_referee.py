"""The referee's dashboard through the web: permissions, a turn's whole life, idempotence."""

import threading
from datetime import UTC, timedelta

import pytest
import sqlalchemy as sa
from sqlmodel import Session, select

from pbp import create_app
from pbp.models import AuditLog, Campaign, Character, OutboxMessage, Turn, User
from pbp.services import campaigns
from pbp.services.accounts import logins as accounts
from pbp.services.noteworthy import hosted_blog
from tests.helpers import PASSWORD, T0, post_form

REFEREE_POSTS = [
    "event",
    "close",
    "rule",
    "resolve",
    "characters",
    "alias",
    "settings",
    "final-notice",
]


def test_strangers_and_players_get_403_on_every_referee_page(client, auth, game, db_session):
    campaign, _, (ada, *_) = game
    base = f"/c/{campaign.slug}/referee"
    stranger = auth.create_user()
    for who in (stranger, db_session.get(User, ada.user_id)):
        auth.login(who)
        assert client.get(base + "/").status_code == 403
        assert client.get(base + "/audit").status_code == 403
        for action in REFEREE_POSTS:
            assert auth.post(f"{base}/{action}", {"text": "x"}).status_code == 403
        auth.logout()


def test_visitor_is_sent_to_login(client, game):
    campaign, _, _ = game
    page = client.get(f"/c/{campaign.slug}/referee/")
    assert page.status_code == 302 and "/login" in page.headers["Location"]


def test_post_without_csrf_token_is_refused(client, auth, game):
    campaign, referee, _ = game
    auth.login(referee)
    page = client.post(f"/c/{campaign.slug}/referee/event", data={"text": "x"})
    assert page.status_code == 400


def test_a_whole_turn_from_the_dashboard(client, auth, game, clock, db_session):
    campaign, referee, (ada, bram, cleo, dov, eli, fay) = game
    base = f"/c/{campaign.slug}/referee"
    auth.login(referee)
    board = client.get(base + "/")
    assert board.status_code == 200 and b"Event for turn 1" in board.data
    page = auth.post(
        base + "/event",
        {
            "text": "The duke <b>falls</b>.",
            "expected_number": "1",
            f"tailor_{ada.id}": "Only Ada saw it.",
            f"mode_{ada.id}": "addition",
        },
    )
    assert page.status_code == 302
    turn = db_session.exec(select(Turn).where(Turn.campaign_id == campaign.id)).one()
    assert turn.number == 1 and turn.status == "open"
    mails = db_session.exec(select(OutboxMessage).where(OutboxMessage.campaign_id == campaign.id))
    bodies = {m.recipient: m.body_text for m in mails}
    ada_email = db_session.get(User, ada.user_id).email
    assert len(bodies) == 6 and "Only Ada saw it." in bodies[ada_email]
    assert all("Only Ada" not in text for who, text in bodies.items() if who != ada_email)

    clock.now = T0 + timedelta(hours=1)
    entry = hosted_blog.store_entry(
        session=db_session,
        character=ada,
        title="Bram, beware",
        body_markdown="Target: Bram\n\nI challenge you.",
        mood="Challenging",
        now=clock.now,
    )
    for who, stance in ((cleo, "support"), (dov, "support"), (eli, "oppose")):
        hosted_blog.store_note(
            session=db_session,
            entry=entry,
            author=who,
            body_markdown="noted",
            stance=stance,
            now=clock.now + timedelta(minutes=5),
        )
    db_session.commit()

    board = client.get(base + "/")
    assert b"Ada challenges Bram" in board.data and b"Support (2)" in board.data
    clock.now = T0 + timedelta(hours=12)
    assert auth.post(base + "/close", {}).status_code == 302
    page = auth.post(
        base + "/resolve", {f"consequence_{entry.id}": "Bram leaves court."}, follow_redirects=True
    )
    assert b"Turn 1 is resolved" in page.data
    db_session.expire_all()
    assert db_session.get(Character, bram.id).status == "outsider"
    assert db_session.get(Turn, turn.id).status == "resolved"
    audit = client.get(base + "/audit")
    # The audit log reads as sentences, not identifiers.
    text = audit.get_data(as_text=True)
    assert "resolved turn 1; Bram became an outsider" in text
    assert "posted the event for turn 1" in text
    assert "resolve_turn" not in text and "post_event" not in text


def test_double_submitted_event_opens_one_turn(client, auth, game, db_session):
    campaign, referee, _ = game
    auth.login(referee)
    form = {"text": "Once.", "expected_number": "1"}
    first = auth.post(f"/c/{campaign.slug}/referee/event", form)
    second = auth.post(f"/c/{campaign.slug}/referee/event", form)
    assert first.status_code == second.status_code == 302
    turns = db_session.exec(select(Turn).where(Turn.campaign_id == campaign.id)).all()
    assert [t.number for t in turns] == [1]


def test_resolving_an_open_turn_is_a_clear_conflict(client, auth, game):
    campaign, referee, _ = game
    auth.login(referee)
    auth.post(f"/c/{campaign.slug}/referee/event", {"text": "E", "expected_number": "1"})
    page = auth.post(f"/c/{campaign.slug}/referee/resolve", {})
    # Refused on the dashboard (409, the refusal's own status), the reason beside the resolve form.
    assert page.status_code == 409 and b"close the turn" in page.data


def test_once_a_character_has_won_the_dashboard_offers_no_next_turn(client, auth, game, db_session):
    """Noteworthy: "The last PC left wins." Before, the dashboard offered turn 2's event
    form, and posting it set the ended campaign running again."""
    campaign, referee, (ada, *others) = game
    for character in others:
        character.status = "outsider"
        db_session.add(character)
    db_session.commit()
    base = f"/c/{campaign.slug}/referee"
    auth.login(referee)
    auth.post(base + "/event", {"text": "The last ball.", "expected_number": "1"})
    auth.post(base + "/close", {})
    assert auth.post(base + "/resolve", {}).status_code == 302
    board = client.get(base + "/").get_data(as_text=True)
    assert "The game is over: no turn follows." in board
    assert "Event for turn 2" not in board and "Queue the event for turn 2" not in board
    page = auth.post(base + "/event", {"text": "One more ball.", "expected_number": "2"})
    assert page.status_code == 409 and "the game is over" in page.get_data(as_text=True)
    db_session.expire_all()
    assert db_session.get(Campaign, campaign.id).status == "ended"
    turns = db_session.exec(select(Turn.number).where(Turn.campaign_id == campaign.id)).all()
    assert turns == [1]


def test_the_event_form_starts_from_the_event_queued_for_the_schedule(
    client, auth, game, db_session
):
    """A turn the schedule could not resolve is resolved by hand; the referee then posts
    the next event by hand too, from what they had queued, not from a blank form."""
    campaign, referee, (ada, *_) = game
    base = f"/c/{campaign.slug}/referee"
    auth.login(referee)
    queued = {"text": "The masked ball.", f"tailor_{ada.id}": "Ada's mask slips."}
    assert auth.post(base + "/queue", {**queued, f"mode_{ada.id}": "replacement"}).status_code
    board = client.get(base + "/").get_data(as_text=True)
    assert 'name="text" rows="5" required>The masked ball.</textarea>' in board
    assert 'rows="3">Ada&#39;s mask slips.</textarea>' in board
    assert '<option value="replacement" selected>' in board
    page = auth.post(base + "/event", {"text": "The masked ball.", "expected_number": "1"})
    assert page.status_code == 302
    db_session.expire_all()
    assert "queued_event" not in db_session.get(Campaign, campaign.id).settings


def test_bad_settings_are_refused_with_the_reason(client, auth, game):
    campaign, referee, _ = game
    auth.login(referee)
    page = auth.post(
        f"/c/{campaign.slug}/referee/settings", {"opening_turns": "two", "custom_moods": ""}
    )
    assert page.status_code == 422 and b"whole number" in page.data


def test_hours_between_turns_that_are_not_a_number_are_refused_in_words(client, auth, game):
    """The settings service reads the hours itself (before, int() raised a ValueError)."""
    campaign, referee, _ = game
    auth.login(referee)
    page = auth.post(
        f"/c/{campaign.slug}/referee/settings",
        {"opening_turns": "2", "cadence": "hours", "cadence_hours": "a day"},
    )
    assert page.status_code == 422 and b"whole number" in page.data
    assert 'name="cadence_hours" inputmode="numeric" size="4" value="a day"' in page.get_data(
        as_text=True
    )


def test_the_schedule_reminder_is_set_on_the_settings_form(client, auth, game, db_session):
    campaign, referee, _ = game
    auth.login(referee)
    base = f"/c/{campaign.slug}/referee"
    form = {"opening_turns": "2", "cadence": "hours", "cadence_hours": "24"}
    page = auth.post(base + "/settings", {**form, "remind_hours": "six"})
    assert page.status_code == 422 and b"whole number" in page.data
    assert auth.post(base + "/settings", {**form, "remind_hours": "6"}).status_code == 302
    db_session.expire_all()
    cadence = db_session.get(Campaign, campaign.id).settings["cadence"]
    assert cadence == {"kind": "hours", "hours": 24, "remind_hours": 6}
    assert 'name="remind_hours" inputmode="numeric" size="4" value="6"' in client.get(
        base + "/"
    ).get_data(as_text=True)
    # The dashboard says when the schedule will nudge, once a turn has a deadline: the
    # old reminder is the one nudge before it (issue #30), then the overdue one.
    auth.post(base + "/event", {"text": "The ball.", "expected_number": "1"})
    turn = db_session.exec(select(Turn).where(Turn.campaign_id == campaign.id)).one()
    at = turn.deadline.replace(tzinfo=turn.deadline.tzinfo or UTC) - timedelta(hours=6)
    board = client.get(base + "/").get_data(as_text=True)
    when = f'<time class="deadline" datetime="{at.isoformat()}">'
    reminded = f"players with no entry yet are nudged {when}"
    assert reminded in board


def test_private_feed_address_is_refused_when_private_feeds_are_off(client, auth, game, app):
    campaign, referee, _ = game
    app.config["PBP_ALLOW_PRIVATE_FEEDS"] = False
    auth.login(referee)
    page = auth.post(
        f"/c/{campaign.slug}/referee/characters",
        {"name": "Spy", "feed_url": "http://169.254.169.254/latest/"},
    )
    assert page.status_code == 422
    assert 'name="name" required value="Spy"' in page.get_data(as_text=True)


@pytest.fixture
def committed_game(engine, database_url, tmp_path):
    """Concurrency needs real, separate connections: commit, then clean up."""
    app = create_app(
        {
            "TESTING": True,
            "INSTANCE_PATH": tmp_path,
            "SECRET_KEY": "k" * 40,
            "DATABASE_URL": database_url,
            "ENGINE": engine,
        }
    )
    with Session(engine, expire_on_commit=False) as session:
        referee = campaigns.create_user(
            session=session, email=f"race{id(app)}@x.test", display_name="Racer"
        )
        referee.password_hash = accounts.hash_password(PASSWORD)
        campaign = campaigns.create_campaign(
            session=session, referee=referee, name=f"Race {id(app)}"
        )
        session.commit()
    yield app, campaign, referee
    with Session(engine) as session:
        session.execute(sa.delete(Campaign).where(Campaign.id == campaign.id))
        session.execute(sa.delete(AuditLog).where(AuditLog.actor_id == referee.id))
        session.execute(sa.delete(User).where(User.id == referee.id))
        session.commit()


def test_concurrent_advance_requests_open_exactly_one_turn(committed_game, engine):
    app, campaign, referee = committed_game
    clients = []
    for _ in range(4):
        client = app.test_client()
        post_form(client, "/login", {"email": referee.email, "password": PASSWORD})
        clients.append(client)
    statuses = []
    barrier = threading.Barrier(len(clients))

    def advance(client):
        barrier.wait()
        response = post_form(
            client, f"/c/{campaign.slug}/referee/event", {"text": "Race!", "expected_number": "1"}
        )
        statuses.append(response.status_code)

    threads = [threading.Thread(target=advance, args=(c,)) for c in clients]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    with Session(engine) as session:
        turns = session.exec(select(Turn).where(Turn.campaign_id == campaign.id)).all()
    assert [t.number for t in turns] == [1]
    assert set(statuses) <= {302, 409} and 302 in statuses


def test_reminder_goes_to_players_without_an_entry_once_per_hour(
    client, auth, game, clock, db_session
):
    campaign, referee, (ada, *others) = game
    auth.login(referee)
    auth.post(f"/c/{campaign.slug}/referee/event", {"text": "E", "expected_number": "1"})
    hosted_blog.store_entry(
        session=db_session,
        character=ada,
        title="Here",
        body_markdown="b",
        mood="Calm",
        now=clock.now,
    )
    db_session.commit()
    for _ in range(2):  # a double click queues nothing twice
        assert auth.post(f"/c/{campaign.slug}/referee/remind", {}).status_code == 302
    reminders = db_session.exec(select(OutboxMessage).where(OutboxMessage.kind == "reminder")).all()
    emails = {db_session.get(User, c.user_id).email for c in others}
    assert {m.recipient for m in reminders} == emails
    page = client.get(f"/c/{campaign.slug}/referee/outbox")
    assert page.status_code == 200 and b"your entry is awaited" in page.data
