"""Every mail pbp promises is sent: a person does what they would do on the site (a form
or an API call, never a `queue_*` function) and the message is in the outbox, addressed
to the right person. And every box on the preferences page, unchecked, stops its mail.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest
from sqlmodel import select

from pbp.models import Character, Entry, OutboxMessage, User
from pbp.services import campaigns
from pbp.services.forum import posts
from pbp.services.forum.drafts import Draft
from pbp.services.mail import notifications
from pbp.services.mail.preferences import (
    FORUM_PREFERENCES,
    NOTEWORTHY_PREFERENCES,
    PREFERENCE_LABELS,
    PREFERENCES,
)
from pbp.services.mail.settings import MailSettings
from pbp.services.noteworthy import hosted_blog, turns
from tests.helpers import Api, AuthActions, make_token, wire

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
_seq = itertools.count(1)


@pytest.fixture
def app(app):
    wire(app)
    app.config["PBP_CLOCK"] = lambda: NOW + timedelta(hours=1)
    # The once-per-app schema check opens its own connection, which on SQLite would wait
    # inside a POST for the test's open transaction; the suite's migrations already ran.
    app.extensions["pbp_schema_ok"] = True
    return app


@dataclass
class Game:
    """A Noteworthy campaign with turn 1 open and challenges allowed from the start."""

    slug: str
    referee: User
    users: dict[str, User]  # character name -> its player
    characters: dict[str, Character]
    tokens: dict[str, str]  # character name (or "referee") -> API write token
    auth: AuthActions
    api: Api

    def login(self, name: str) -> None:
        self.auth.logout()
        self.auth.login(self.referee if name == "referee" else self.users[name])

    def call(self, who: str, method: str, path: str, **kw):
        return self.api.call(method, path, token=self.tokens[who], **kw)


def make_game(db_session, client, names=("Ada", "Bram", "Cleo"), ruleset="noteworthy") -> Game:
    auth = AuthActions(client, db_session)
    n = next(_seq)
    referee = auth.create_user(email=f"promise{n}-referee@example.test", display_name="Rita")
    campaign = campaigns.create_campaign(
        session=db_session,
        referee=referee,
        name=f"Promises {n}",
        ruleset=ruleset,
        settings={"opening_turns": 0} if ruleset == "noteworthy" else None,
    )
    users, characters = {}, {}
    for name in names:
        users[name] = auth.create_user(email=f"promise{n}-{name.lower()}@example.test")
        characters[name] = campaigns.add_character(
            session=db_session, campaign=campaign, name=name, user=users[name]
        )
    if ruleset == "noteworthy":
        turns.post_event(
            session=db_session, campaign=campaign, text="The ball.", actor=None, now=NOW
        )
    tokens = {name: make_token(db_session, user) for name, user in users.items()}
    tokens["referee"] = make_token(db_session, referee)
    db_session.commit()
    return Game(campaign.slug, referee, users, characters, tokens, auth, Api(client))


@pytest.fixture
def game(db_session, client) -> Game:
    return make_game(db_session, client)


def outbox(db_session, kind: str) -> list[str]:
    """The recipients of every message of `kind`, oldest first."""
    db_session.expire_all()
    rows = db_session.exec(
        select(OutboxMessage).where(OutboxMessage.kind == kind).order_by(OutboxMessage.id)
    )
    return [row.recipient for row in rows]


def messages(db_session, kind: str) -> list[OutboxMessage]:
    db_session.expire_all()
    query = select(OutboxMessage).where(OutboxMessage.kind == kind).order_by(OutboxMessage.id)
    return list(db_session.exec(query))


def entry_of(db_session, game: Game, name: str, title="An entry", mood="Calm") -> Entry:
    """An entry written before the test's action (a fixture, so no mail)."""
    entry = hosted_blog.store_entry(
        session=db_session,
        character=game.characters[name],
        title=title,
        body_markdown="Words.",
        mood=mood,
        now=NOW + timedelta(minutes=5),
    )
    db_session.commit()
    return entry


def switch_off(game: Game, name: str, preference: str) -> None:
    """Uncheck one box on the preferences page and save (the others stay as they were)."""
    game.login(name)
    page = game.auth._client.get(f"/c/{game.slug}/me/mail")
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    chosen = [k for k in PREFERENCES if f'value="{k}" checked' in html and k != preference]
    saved = game.auth.post(f"/c/{game.slug}/me/mail", {"on": chosen})
    assert saved.status_code == 302


def note_page(game: Game, author: str, owner: str, entry: Entry, **form):
    game.login(author)
    owner_slug = game.characters[owner].slug
    url = f"/c/{game.slug}/{owner_slug}/{entry.id}/notes"
    return game.auth.post(url, {"body": "Well said.", "stance": "none", **form})


def challenge_api(game: Game, challenger: str, target: str):
    return game.call(
        challenger,
        "POST",
        f"/campaigns/{game.slug}/entries",
        json={
            "title": f"{challenger} challenges {target}",
            "body": "Pistols at dawn.",
            "mood": "Challenging",
            "target_id": game.characters[target].id,
        },
    )


# -- notes on my entries ----------------------------------------------------------------------


def test_a_note_on_the_page_mails_the_entrys_player_not_for_their_own(db_session, game):
    entry = entry_of(db_session, game, "Ada")
    assert note_page(game, "Bram", "Ada", entry).status_code == 302
    assert outbox(db_session, "note") == [game.users["Ada"].email]
    (row,) = messages(db_session, "note")
    assert "Bram left a note" in row.body_text and "Well said." in row.body_text
    assert note_page(game, "Ada", "Ada", entry).status_code == 302  # her own: no mail
    assert outbox(db_session, "note") == [game.users["Ada"].email]


def test_a_note_through_the_api_mails_the_entrys_player(db_session, game):
    entry = entry_of(db_session, game, "Ada")
    path = f"/campaigns/{game.slug}/entries/{entry.id}/notes"
    answer = game.call("Cleo", "POST", path, json={"body": "Hear, hear."})
    assert answer.status_code == 201, answer.get_json()
    assert outbox(db_session, "note") == [game.users["Ada"].email]


# -- challenges against my character ----------------------------------------------------------


def test_a_challenge_on_the_write_page_mails_its_target_once(db_session, game):
    game.login("Bram")
    form = {
        "title": "Bram challenges Ada",
        "mood": "Challenging",
        "body": "You cheated.",
        "target": str(game.characters["Ada"].id),
    }
    assert game.auth.post(f"/c/{game.slug}/write", form).status_code == 302
    assert outbox(db_session, "challenge") == [game.users["Ada"].email]
    (row,) = messages(db_session, "challenge")
    assert row.subject.endswith("Bram challenges Ada")
    entry = db_session.exec(select(Entry).where(Entry.title == "Bram challenges Ada")).one()
    edit = f"/c/{game.slug}/{game.characters['Bram'].slug}/{entry.id}/edit"
    changed = {**form, "body": "You cheated, twice.", "mood": "Challenging"}
    assert game.auth.post(edit, changed).status_code == 302
    assert outbox(db_session, "challenge") == [game.users["Ada"].email]  # not again


def test_a_challenge_through_the_api_mails_its_target(db_session, game):
    answer = challenge_api(game, "Cleo", "Bram")
    assert answer.status_code == 201, answer.get_json()
    assert outbox(db_session, "challenge") == [game.users["Bram"].email]


def test_an_edit_that_makes_a_challenge_mails_the_target(db_session, game):
    entry = entry_of(db_session, game, "Ada", title="Target: Cleo")
    path = f"/campaigns/{game.slug}/entries/{entry.id}"
    body = {"title": "Target: Cleo", "body": "Target: Cleo\n\nEnough.", "mood": "Challenging"}
    answer = game.call("Ada", "PUT", path, json=body)
    assert answer.status_code == 200, answer.get_json()
    assert outbox(db_session, "challenge") == [game.users["Cleo"].email]


def test_a_target_named_by_the_referees_ruling_gets_the_mail(db_session, game):
    """A challenge naming nobody mails nobody; the referee's target ruling (API) names
    the target, who is told then."""
    entry = entry_of(db_session, game, "Ada", title="Enough")
    body = {"title": "Enough", "body": "Someone here cheats.", "mood": "Challenging"}
    path = f"/campaigns/{game.slug}/entries/{entry.id}"
    assert game.call("Ada", "PUT", path, json=body).status_code == 200
    assert outbox(db_session, "challenge") == []
    ruling = {
        "kind": "target",
        "subject_id": entry.id,
        "value": game.characters["Cleo"].id,
        "reason": "She means Cleo.",
    }
    answer = game.call("referee", "POST", f"/campaigns/{game.slug}/turns/1/rulings", json=ruling)
    assert answer.status_code == 201, answer.get_json()
    assert outbox(db_session, "challenge") == [game.users["Cleo"].email]


# -- invitations, password resets, events, results, the final notice --------------------------


def test_an_invitation_by_email_is_mailed_to_that_address(db_session, game):
    game.login("referee")
    form = {"email": "newcomer@example.test", "role": "player", "days": "7", "character": ""}
    page = game.auth.post(f"/c/{game.slug}/invites", form)
    assert page.status_code == 200, page.get_data(as_text=True)[:500]
    assert outbox(db_session, "invite") == ["newcomer@example.test"]


def test_a_password_reset_is_mailed_to_the_account(db_session, game, client):
    game.auth.logout()
    page = game.auth.post("/reset", {"email": game.users["Bram"].email})
    assert page.status_code == 200
    assert outbox(db_session, "password_reset") == [game.users["Bram"].email]


def _close_and_resolve(game: Game) -> None:
    game.login("referee")
    assert game.auth.post(f"/c/{game.slug}/referee/close").status_code == 302
    assert game.auth.post(f"/c/{game.slug}/referee/resolve").status_code == 302


def test_an_event_results_and_the_final_notice_reach_every_player(db_session, game):
    players = sorted(u.email for u in game.users.values())
    _close_and_resolve(game)
    assert sorted(outbox(db_session, "results")) == players
    page = game.auth.post(
        f"/c/{game.slug}/referee/event", {"text": "The duel.", "expected_number": "2"}
    )
    assert page.status_code == 302
    assert sorted(outbox(db_session, "event")) == players
    page = game.auth.post(f"/c/{game.slug}/referee/final-notice", {"text": "Ada wins."})
    assert page.status_code == 302
    assert sorted(outbox(db_session, "final")) == sorted([*players, game.referee.email])


def statuses(db_session, kind: str) -> list[str]:
    return sorted({row.status for row in messages(db_session, kind)})


def test_results_and_the_final_notice_leave_at_the_commit_as_an_event_does(db_session, game):
    """The brief: every player is mailed each event "at the same moment" -- the results
    and the final notice too, not at the scheduler's next sweep."""
    _close_and_resolve(game)
    assert statuses(db_session, "results") == ["sent"]
    page = game.auth.post(f"/c/{game.slug}/referee/final-notice", {"text": "Ada wins."})
    assert page.status_code == 302
    assert statuses(db_session, "final") == ["sent"]


def test_results_and_the_final_notice_through_the_api_leave_at_the_commit(db_session, game):
    assert game.call("referee", "POST", f"/campaigns/{game.slug}/turns/1/close").status_code == 200
    answer = game.call(
        "referee", "POST", f"/campaigns/{game.slug}/turns/1/resolve", json={"consequences": []}
    )
    assert answer.status_code == 200, answer.get_json()
    assert statuses(db_session, "results") == ["sent"]
    answer = game.call(
        "referee", "POST", f"/campaigns/{game.slug}/final-notice", json={"text": "Ada wins."}
    )
    assert answer.status_code == 200, answer.get_json()
    assert statuses(db_session, "final") == ["sent"]


# -- forum watching ---------------------------------------------------------------------------


@pytest.fixture
def forum_game(db_session, client) -> tuple[Game, int]:
    game = make_game(db_session, client, names=("Ada", "Bram"), ruleset="one")
    campaign = campaigns.get_campaign(session=db_session, slug=game.slug)
    post = posts.create_thread(
        session=db_session,
        campaign=campaign,
        author=game.referee,
        title="The docks",
        draft=Draft(body="Fog."),
        mail=MailSettings("http://pbp.test", "s" * 32, "pbp <pbp@localhost>"),
        now=NOW,
    )
    db_session.commit()
    return game, post.thread_id


def _watch_and_reply(game: Game, thread_id: int) -> None:
    game.login("Ada")
    watch = game.auth.post(f"/c/{game.slug}/forum/t/{thread_id}/watch", {"watch": "on"})
    assert watch.status_code == 302
    path = f"/campaigns/{game.slug}/forum/threads/{thread_id}/posts"
    answer = game.call("Bram", "POST", path, json={"body": "I row out.", "kind": "ic"})
    assert answer.status_code == 201, answer.get_json()


def test_watching_a_scene_mails_its_new_posts(db_session, forum_game):
    game, thread_id = forum_game
    _watch_and_reply(game, thread_id)
    assert game.users["Ada"].email in outbox(db_session, "forum_post")
    assert game.users["Bram"].email not in outbox(db_session, "forum_post")  # his own post


# -- the digest -------------------------------------------------------------------------------


def test_the_digest_goes_to_who_switched_it_on(app, db_session, game):
    game.login("Cleo")
    on = [k for k, v in PREFERENCES.items() if v] + ["digest"]
    assert game.auth.post(f"/c/{game.slug}/me/mail", {"on": on}).status_code == 302
    entry_of(db_session, game, "Ada", title="Yesterday's news")
    campaign = campaigns.get_campaign(session=db_session, slug=game.slug)
    campaign.status = "running"
    db_session.commit()
    app.config["PBP_CLOCK"] = lambda: NOW + timedelta(days=1)
    _run_digest_job(app)
    assert outbox(db_session, "digest") == [game.users["Cleo"].email]


def _run_digest_job(app) -> None:
    """The scheduler's hourly job, at the day after the entries."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("pbp.models.utcnow", lambda: NOW + timedelta(days=1))
        notifications.queue_daily_digests(app)


# -- the preferences page ---------------------------------------------------------------------


def test_the_preferences_page_has_a_box_for_every_preference(db_session, game):
    """Every preference a Noteworthy campaign's mail has; the forum's scenes are a forum
    campaign's (tests/web/test_words_and_layout.py)."""
    game.login("Ada")
    html = game.auth._client.get(f"/c/{game.slug}/me/mail").get_data(as_text=True)
    for key, label in PREFERENCE_LABELS.items():
        shown = f'value="{key}"' in html and label in html
        assert shown == (key in NOTEWORTHY_PREFERENCES), key
    assert set(PREFERENCE_LABELS) == set(PREFERENCES)
    assert set(NOTEWORTHY_PREFERENCES) | set(FORUM_PREFERENCES) == set(PREFERENCES)


def test_the_preferences_api_matches_the_page(db_session, game):
    path = f"/campaigns/{game.slug}/me/mail"
    assert game.call("Ada", "GET", path).get_json() == PREFERENCES
    wanted = {**PREFERENCES, "challenges": False, "digest": True}
    answer = game.call("Ada", "PUT", path, json=wanted)
    assert answer.status_code == 200 and answer.get_json() == wanted
    game.login("Ada")
    html = game.auth._client.get(f"/c/{game.slug}/me/mail").get_data(as_text=True)
    assert 'value="challenges" checked' not in html and 'value="digest" checked' in html


def test_a_stranger_has_no_preferences_here(db_session, game):
    stranger = game.auth.create_user()
    game.auth.logout()
    game.auth.login(stranger)
    assert game.auth._client.get(f"/c/{game.slug}/me/mail").status_code == 403
    assert game.auth.post(f"/c/{game.slug}/me/mail", {"on": ["events"]}).status_code == 403


def test_an_unknown_kind_of_mail_is_a_clear_error(db_session, game):
    """A refused form: 422, the reason beside it, the boxes as they were ticked."""
    game.login("Ada")
    page = game.auth.post(f"/c/{game.slug}/me/mail", {"on": ["events", "spam"]})
    text = page.get_data(as_text=True)
    assert page.status_code == 422 and "there is no kind of email called &#39;spam&#39;" in text
    assert re.search(r'name="on" value="events"\s+checked', text)
    assert not re.search(r'name="on" value="notes"\s+checked', text)


def _events_action(db_session, game):
    _close_and_resolve(game)
    page = game.auth.post(
        f"/c/{game.slug}/referee/event", {"text": "The duel.", "expected_number": "2"}
    )
    assert page.status_code == 302
    page = game.auth.post(f"/c/{game.slug}/referee/final-notice", {"text": "Ada wins."})
    assert page.status_code == 302
    return ["event", "results", "final"]


def _notes_action(db_session, game):
    entry = entry_of(db_session, game, "Ada")
    path = f"/campaigns/{game.slug}/entries/{entry.id}/notes"
    assert game.call("Bram", "POST", path, json={"body": "Hm."}).status_code == 201
    return ["note"]


def _challenges_action(db_session, game):
    assert challenge_api(game, "Bram", "Ada").status_code == 201
    return ["challenge"]


def _digest_action(db_session, game, app):
    game.login("Ada")
    on = [k for k, v in PREFERENCES.items() if v] + ["digest"]
    assert game.auth.post(f"/c/{game.slug}/me/mail", {"on": on}).status_code == 302
    entry_of(db_session, game, "Bram", title="News")
    campaign = campaigns.get_campaign(session=db_session, slug=game.slug)
    campaign.status = "running"
    db_session.commit()
    return ["digest"]


@pytest.mark.parametrize("preference", ["events", "notes_on_mine", "challenges", "digest"])
def test_switching_a_preference_off_stops_that_mail(app, db_session, game, preference):
    """Ada unchecks one box; the action that would mail her mails her no more, while the
    others still get theirs where the action concerns them too."""
    if preference == "digest":
        kinds = _digest_action(db_session, game, app)
    switch_off(game, "Ada", preference)
    if preference == "events":
        kinds = _events_action(db_session, game)
    elif preference == "notes_on_mine":
        kinds = _notes_action(db_session, game)
    elif preference == "challenges":
        kinds = _challenges_action(db_session, game)
    else:
        _run_digest_job(app)
    ada = game.users["Ada"].email
    for kind in kinds:
        assert ada not in outbox(db_session, kind), kind
    if preference == "events":  # the others still hear of it
        assert game.users["Bram"].email in outbox(db_session, "event")


def test_the_same_actions_mail_ada_while_her_boxes_are_checked(app, db_session, game):
    """The control for the test above: each action does reach Ada by default."""
    ada = game.users["Ada"].email
    _notes_action(db_session, game)
    _challenges_action(db_session, game)
    _events_action(db_session, game)
    for kind in ("note", "challenge", "event", "results", "final"):
        assert ada in outbox(db_session, kind), kind


def test_switching_forum_mail_off_stops_it(db_session, forum_game):
    game, thread_id = forum_game
    switch_off(game, "Ada", "forum")
    _watch_and_reply(game, thread_id)
    assert game.users["Ada"].email not in outbox(db_session, "forum_post")
