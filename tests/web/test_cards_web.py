"""The card tables through the web client: a complete short game of One Can Have Her, a Sex &
Violence scene with a mayhem fight, and secrecy – as another player, a member who does not
play, a stranger and a visitor, every cards page, the forum's pages, export and feed, the API,
the email and the error pages are searched for hand cards, deck order and rat notes."""

from __future__ import annotations

import html
import io
import json
import random
import zipfile
from dataclasses import dataclass

import markupsafe
import pytest
from flask.testing import FlaskClient
from sqlmodel import select

from pbp.models import OutboxMessage, User
from pbp.models.cards import CardEvent, CardGame
from pbp.models.forum import Thread
from pbp.rules import dice
from pbp.rules.cards import Card
from pbp.web import cards as cards_web
from pbp.web import forum as forum_web
from tests.helpers import PASSWORD, post_form
from tests.routes import every_get_url, forum_values
from tests.services.forum.tables import make_table, write


@pytest.fixture
def app(app):
    if "forum" not in app.blueprints:
        app.register_blueprint(forum_web.bp)
    if "cards" not in app.blueprints:
        app.register_blueprint(cards_web.bp)
    return app


@dataclass
class Seats:
    """Each person at the table logged in on a client of their own."""

    table: object
    thread: Thread
    gm: FlaskClient
    ann: FlaskClient
    ben: FlaskClient
    cat: FlaskClient  # a player of the campaign who has no seat at this table
    stan: FlaskClient  # logged in, not a member
    anon: FlaskClient  # not logged in

    @property
    def base(self) -> str:
        return f"/c/{self.table.campaign.slug}/forum/t/{self.thread.id}/cards"

    def ids(self) -> tuple[str, str]:
        return str(self.table.ada_user.id), str(self.table.bram_user.id)


def _login(app, user: User) -> FlaskClient:
    client = app.test_client()
    page = post_form(client, "/login", {"email": user.email, "password": PASSWORD, "next": ""})
    assert page.status_code == 302
    return client


def _seats(app, auth, db_session, ruleset: str) -> Seats:
    users = [auth.create_user(display_name=n) for n in ("Gail GM", "Ann", "Ben", "Cat", "Stan")]
    table = make_table(db_session, ruleset=ruleset, users=users)
    opening = write(db_session, table, table.gm, "The rain on Water Street.")
    db_session.commit()
    thread = db_session.get(Thread, opening.thread_id)
    clients = [_login(app, u) for u in (table.gm, table.ada_user, table.bram_user, table.cleo_user)]
    return Seats(table, thread, *clients, _login(app, table.stranger), app.test_client())


def _view(client, seats) -> dict:
    page = client.get(seats.base + "/view.json")
    assert page.status_code == 200
    return page.get_json()


def _act(client, seats, action, data=None, status=302):
    version = _view(client, seats)["version"]
    page = post_form(client, f"{seats.base}/{action}", {**(data or {}), "version": str(version)})
    assert page.status_code == status, page.get_data(as_text=True)[-2000:]
    return page


def _open_table(seats, **form):
    page = post_form(seats.gm, seats.base + "/new", form)
    assert page.status_code == 302


# -- what must stay hidden --------------------------------------------------------------------


def _forms(text: str) -> set[str]:
    """A secret as it may appear on a page: raw, HTML-escaped (both quote styles), in JSON."""
    return {
        text,
        html.escape(text),
        html.escape(text, quote=False),
        str(markupsafe.escape(text)),
        json.dumps(text, ensure_ascii=False)[1:-1],
    }


def _private_texts(db_session, game: CardGame, reader: str | None) -> set[str]:
    """Private texts of the record that `reader` (a player id; None: nobody) may not read."""
    hidden = set()
    for row in db_session.exec(select(CardEvent).where(CardEvent.game_id == game.id)):
        for event in row.events:
            if event["private_text"] and event["owner"] != reader:
                hidden |= _forms(event["private_text"])
    return hidden


def _hand_and_deck_secrets(game: CardGame, reader: str | None) -> set[str]:
    """Sex & Violence: other characters' hands and every deck's order, as they could be
    written: codes and names, in order, with the separators pages and JSON use."""
    hidden = set()
    for character in game.state["characters"]:
        piles = [character["deck"][:4]]
        if character["player_id"] != reader:
            piles.append([slot["card"] for slot in character["hand"]])
            hidden.add(f'aria-label="{html.escape(character["name"])}\'s hand"')
        for codes in (pile for pile in piles if len(pile) >= 3):
            names = [Card.from_code(code).name for code in codes]
            for sequence in (codes, names):
                hidden |= {", ".join(sequence), " ".join(sequence), json.dumps(sequence)}
                hidden.add(json.dumps(sequence, separators=(",", ":")))
    return hidden


def _get_urls(app, db_session, seats) -> list[str]:
    """Every GET route of the application (pages, feeds, exports, the API), filled with the
    campaign's threads, posts, rolls and characters: a new route is searched without
    editing this test (issue #16: every channel)."""
    table = seats.table
    urls = every_get_url(app, forum_values(db_session, table))
    api = f"/api/v1/campaigns/{table.campaign.slug}/forum/threads/{seats.thread.id}/posts"
    return [*urls, api]


def _wire_api(app) -> None:
    from pbp import api

    if "api" not in app.blueprints:
        api.init_app(app)


def _text(page) -> str:
    """The body as text; a zip (the static archive, a scene's EPUB) as the text of all its
    files."""
    if page.mimetype not in ("application/zip", "application/epub+zip"):
        return page.get_data(as_text=True)
    with zipfile.ZipFile(io.BytesIO(page.get_data())) as archive:
        return "\n".join(archive.read(n).decode("utf-8", "replace") for n in archive.namelist())


def _assert_nothing_leaks(app, db_session, seats, client, hidden: set[str], who: str) -> int:
    urls = _get_urls(app, db_session, seats)
    assert any(u.endswith("/cards") for u in urls) and any("feed.atom" in u for u in urls)
    for url in urls:
        page = client.get(url)
        assert page.status_code in (200, 302, 400, 401, 403, 404), (url, page.status_code)
        text = _text(page)
        for needle in hidden:
            assert needle not in text, f"{who} sees {needle!r} at {url}"
    return len(urls)


def _assert_error_pages_keep_secrets(seats, client, hidden: set[str], who: str) -> None:
    """Moves the rules refuse this person: the refusal shows no secret either (a visitor is
    sent to log in)."""
    tries = [
        ("bid", {"bid:AS": "bid", "bid:10H": "bid"}),
        ("swap", {"card": "KH"}),
        ("hand_in_note", {"rat": ""}),
        ("flip_turn", {"conflict": "r1-nobody"}),
        ("order_scenes", {"order": ["1", "2"]}),
        ("no_such_move", {}),
        ("take_wounds", {}),
    ]
    for action, data in tries:
        page = post_form(client, f"{seats.base}/{action}", data)
        expected = (302,) if client is seats.anon else (403, 404, 409, 422)
        assert page.status_code in expected, (who, action, page.status_code)
        text = page.get_data(as_text=True)
        for needle in hidden:
            assert needle not in text, f"{who} sees {needle!r} refused at {action}"


def _assert_mail_keeps_secrets(db_session, game) -> None:
    everyone_hidden = _private_texts(db_session, game, None)
    messages = db_session.exec(select(OutboxMessage)).all()
    assert messages  # the watchers were emailed the moves
    for message in messages:
        for needle in everyone_hidden:
            assert needle not in message.body_text and needle not in (message.body_html or "")


# -- One Can Have Her: a complete short game --------------------------------------------------


def _sheet(name: str) -> dict:
    return {
        "character_name": name,
        "archetype": "Down-and-Out Journalist",
        "drive": f"{name} wants the ledger back",
        "dream_woman": "a singer from the Blue Note",
        "future_with_lula": "a boat to Havana",
    }


def _current(view: dict) -> list[dict]:
    v = view["view"]
    return [c for c in v["conflicts"] if c["round"] == v["round"]]


def test_a_short_game_of_one_can_have_her(app, auth, db_session):
    _wire_api(app)
    seats = _seats(app, auth, db_session, "one-can-have-her")
    ann, ben = seats.ids()
    _open_table(seats, conclusion_tie_break="highest_card")
    _act(seats.ann, seats, "add_player", _sheet("Johnny"))
    _act(seats.ben, seats, "add_player", _sheet("Vic"))
    _act(seats.gm, seats, "start_game")
    game = db_session.exec(select(CardGame)).one()
    played_rounds, checked_secrecy = [], False
    while (state := _view(seats.gm, seats))["view"]["phase"] != "epilogues":
        number = state["view"]["round"]
        played_rounds.append(number)
        if state["view"]["phase"] == "notes":
            _act(seats.ann, seats, "hand_in_note", {"rat": "yes"})  # Ann rats every time
            if not checked_secrecy:
                _assert_notes_stay_secret(app, db_session, seats, game)
                checked_secrecy = True
            _act(seats.ben, seats, "hand_in_note", {"rat": "no"})
        _act(seats.gm, seats, "order_scenes", {"order": [ann, ben]})
        if number >= 4:
            ben_page = seats.ben.get(seats.base).get_data(as_text=True)
            assert f"Round {number}: Johnny ratted on you." in ben_page
            for other in (seats.cat, seats.stan, seats.anon):
                assert "ratted on you" not in other.get(seats.base).get_data(as_text=True)
        for client, who in ((seats.ann, "Johnny"), (seats.ben, "Vic")):
            _act(client, seats, "open_scene", {"monologue": f"{who}: rain like a confession."})
            stakes = f"Will {who} get the ledger quietly or will the guns come out?"
            _act(client, seats, "start_conflict", {"stakes": stakes, "opponent": ""})
        for pid in (ann, ben):
            _act(seats.gm, seats, "accept_stakes", {"conflict": f"r{number}-{pid}"})
        if _view(seats.gm, seats)["view"]["phase"] == "end_roll":
            _act(seats.gm, seats, "roll_end_die")
        _bonus_cards(seats, number, ann, ben)
        for conflict in _current(_view(seats.gm, seats)):
            while not (conflict["concluder"] is not None or conflict["forfeited_by"]):
                flipper = seats.ann if conflict["sides"][0]["owner"] == ann else seats.gm
                _act(flipper, seats, "flip_turn", {"conflict": conflict["id"]})
                conflict = next(
                    c for c in _current(_view(seats.gm, seats)) if c["id"] == conflict["id"]
                )
        _act(seats.gm, seats, "end_round")
    assert checked_secrecy and played_rounds[:4] == [1, 2, 3, 4] and len(played_rounds) <= 7

    # Epilogue choices: Vic was ratted on in the final round; the GM orders the epilogues.
    final = _view(seats.ben, seats)["view"]
    assert final["epilogues"] == {ann: "gets_lula_and_drive", ben: "bad_end"}
    _act(seats.ann, seats, "choose_fate", {"fate": "dead"}, status=422)  # not ratted on
    _act(seats.ben, seats, "choose_fate", {"fate": "jail"})
    _act(seats.gm, seats, "order_epilogues", {"order": [ben, ann]})
    # At the end everyone sees every note.
    cat_view = _view(seats.cat, seats)["view"]
    assert len(cat_view["notes"]["notes"]) == 2 * (len(played_rounds) - 3)
    page = seats.anon.get(seats.base).get_data(as_text=True)
    assert "<td>Johnny</td><td>Rat</td>" in page and "in jail" in page
    assert "Epilogues: Vic, Johnny." in page
    _assert_mail_keeps_secrets(db_session, game)


def _bonus_cards(seats, number, ann, ben):
    """Round 1: the GM spends an Opposition card (it goes to the Coolness pool); round 2: Ann
    awards it to Ben, and Ben adds a Coolness card to Ann's side."""
    phase = _view(seats.gm, seats)["view"]["phase"]
    if phase != "bonus":
        return
    if number == 1:
        counts = {"count_1": "0", "count_2": "0", "count_3": "1"}
        _act(seats.gm, seats, "add_bonus_cards", {"conflict": f"r1-{ann}", "side": "gm", **counts})
        early = {"conflict": f"r1-{ann}", "side": "gm", "count_1": "1", "count_2": "0"}
        # refused: later turns must hold at least as many cards as earlier ones
        _act(seats.gm, seats, "add_bonus_cards", {**early, "count_3": "0"}, status=422)
    if number == 2:
        _act(seats.ann, seats, "award_coolness", {"receiver": ben})
        assert _view(seats.gm, seats)["view"]["players"][1]["coolness"] == 3
        counts = {"count_1": "0", "count_2": "0", "count_3": "1"}
        _act(seats.ben, seats, "add_bonus_cards", {"conflict": f"r2-{ann}", "side": ann, **counts})


def _assert_notes_stay_secret(app, db_session, seats, game):
    """Ann has handed in a "Rat" note; the scenes are not open yet."""
    db_session.refresh(game)
    ann = seats.ids()[0]
    hidden = _private_texts(db_session, game, None)
    hidden |= {"<td>Johnny</td><td>Rat</td>", "Johnny</td><td>Rat", "ratted on you", "come for"}
    assert any('"Rat" note' in text for text in hidden)
    for who, client in (
        ("another player", seats.ben),
        ("a member without a seat", seats.cat),
        ("a stranger", seats.stan),
        ("a visitor", seats.anon),
    ):
        count = _assert_nothing_leaks(app, db_session, seats, client, hidden, who)
        assert count > 5
        _assert_error_pages_keep_secrets(seats, client, hidden, who)
        view = _view(client, seats)["view"]
        johnny = next(p for p in view["players"] if p["player_id"] == ann)
        assert "rat_left" not in johnny and "dont_rat_left" not in johnny
        assert all(n["player_id"] != ann for n in view["notes"].get("notes", []))
        page = client.get(seats.base).get_data(as_text=True)
        assert page.count("Rat notes left") == (1 if client is seats.ben else 0)
    gm_page = seats.gm.get(seats.base).get_data(as_text=True)
    assert "<td>Johnny</td><td>Rat</td>" in gm_page
    ann_page = seats.ann.get(seats.base).get_data(as_text=True)
    assert "<td>Johnny</td><td>Rat</td>" in ann_page and '3 "Rat"' in ann_page


# -- Sex & Violence: a scene with a mayhem fight ----------------------------------------------

MAX = {
    "name": "Max",
    "archetype": "warrior",
    "criminal_background": "Enforcer for the Lamberti family",
    "redeeming_quality": "Protects the kids on his block",
    "angle": "bodyguard",
    "fields": ["C"],
}
BURKE = {
    "name": "Burke",
    "archetype": "survivor",
    "criminal_background": "Ex-convict",
    "redeeming_quality": "His family of choice",
    "angle": "hustler",
    "fields": ["D", "C"],
}


def _seat(view: dict, player_id: str) -> dict:
    return next(c for c in view["view"]["characters"] if c["player_id"] == player_id)


def _rank(code: str) -> int:
    return Card.from_code(code).rank


def _fixed_shuffles(monkeypatch, label: str) -> None:
    """Each action's randomness from its sequence number alone, not from the campaign's
    random seed and the game's id (which differs between databases and test orders): the
    fight below then deals the same cards every run, so its asserts can't depend on luck."""

    def derive_rng(_seed: bytes, message: str) -> random.Random:
        return random.Random(f"{label}:{message.rsplit(':', 1)[-1]}")

    monkeypatch.setattr(dice, "derive_rng", derive_rng)


def test_a_scene_with_a_mayhem_fight(app, auth, db_session, monkeypatch):
    _fixed_shuffles(monkeypatch, "mayhem")
    _wire_api(app)
    seats = _seats(app, auth, db_session, "sex-and-violence")
    ann, ben = seats.ids()
    _open_table(seats, gm_sees_hands="yes")
    _act(seats.ann, seats, "create_character", MAX)
    _act(seats.ben, seats, "create_character", BURKE)
    hand = _seat(_view(seats.ann, seats), ann)["usable_cards"]
    assert len(hand) == 10 and _seat(_view(seats.ben, seats), ann)["hand"] is None
    _act(seats.ann, seats, "swap", {"card": min(hand, key=_rank)})
    _act(seats.ben, seats, "keep")
    _act(seats.ben, seats, "swap", {"card": hand[0]}, status=422)  # the chance has passed
    _act(seats.gm, seats, "add_gm_character", {"name": "Mr. White"})

    fights, gm_wounded, player_wounded = 0, False, False
    while fights < 8 and not (gm_wounded and player_wounded):
        fights += 1
        max_seat = _seat(_view(seats.ann, seats), ann)
        if max_seat["dead"]:
            break
        if len(max_seat["usable_cards"]) < 2:
            face = next(s["card"] for s in max_seat["sideboard"] if not s["flipped"])
            _act(seats.ann, seats, "flip_to_draw", {"face_card": face})
            max_seat = _seat(_view(seats.ann, seats), ann)
        targets = ["npc1", ben] if not _seat(_view(seats.gm, seats), ben)["dead"] else ["npc1"]
        fight = {"player": ann, "suit": "C", "kind": "violence", "targets": targets}
        _act(seats.gm, seats, "open_contest", fight)
        usable = sorted(max_seat["usable_cards"], key=_rank, reverse=True)
        bid = {f"bid:{code}": target for code, target in zip(usable, targets, strict=False)}
        _act(seats.ann, seats, "bid", {**bid, "announce_shown": "1", "redraw_shown": "1"})
        gm_wounded |= _view(seats.gm, seats)["view"]["gm_characters"][0]["wounds"] > 0
        while (contest := _view(seats.gm, seats)["view"]["contest"]) is not None:
            assert contest["stage"] == "wounds", contest
            victim = contest["wounds"][0]["victim"]
            _act(seats.ann if victim == ann else seats.ben, seats, "take_wounds")
            player_wounded = True
    assert gm_wounded and player_wounded, f"after {fights} fights"
    _act(seats.gm, seats, "end_scene")

    game = db_session.exec(select(CardGame)).one()
    db_session.refresh(game)
    kinds = {e["kind"] for row in db_session.exec(select(CardEvent)) for e in row.events}
    assert {"bid", "compare", "wounds", "contest_closed", "scene_end"} <= kinds
    gm_page = seats.gm.get(seats.base).get_data(as_text=True)
    assert 'aria-label="Max\'s hand"' in gm_page and 'aria-label="Burke\'s hand"' in gm_page
    ann_page = seats.ann.get(seats.base).get_data(as_text=True)
    assert 'aria-label="Max\'s hand"' in ann_page and "Burke's hand" not in ann_page
    assert "Mr. White" in ann_page and "Your moves" in ann_page

    for who, client, reader in (
        ("another player", seats.ben, ben),
        ("a member without a seat", seats.cat, None),
        ("a stranger", seats.stan, None),
        ("a visitor", seats.anon, None),
    ):
        hidden = _hand_and_deck_secrets(game, reader) | _private_texts(db_session, game, reader)
        _assert_nothing_leaks(app, db_session, seats, client, hidden, who)
        _assert_error_pages_keep_secrets(seats, client, hidden, who)
    _assert_mail_keeps_secrets(db_session, game)


# -- the table's pages ------------------------------------------------------------------------


def test_a_refused_move_is_a_422_page_with_the_rules_message(app, auth, db_session):
    seats = _seats(app, auth, db_session, "sex-and-violence")
    _open_table(seats, gm_sees_hands="no")
    four_fields = {**MAX, "fields": ["C", "D", "H", "S"]}
    page = _act(seats.ann, seats, "create_character", four_fields, status=422)
    text = page.get_data(as_text=True)
    assert 'role="alert"' in text and "you may not excel in all four" in text.lower()
    assert "Nothing was saved" in text
    assert db_session.exec(select(CardGame)).one().version == 0


def test_a_form_sent_twice_applies_once(app, auth, db_session):
    """The same form sent again as a new form (another token: a second tab) is refused by
    the table's version; a double click (the same token) is answered as the first was
    (tests/web/test_forum_double_clicks.py)."""
    seats = _seats(app, auth, db_session, "sex-and-violence")
    _open_table(seats, gm_sees_hands="yes")
    form = {**MAX, "version": "0"}
    assert post_form(seats.ann, f"{seats.base}/create_character", form).status_code == 302
    again = post_form(seats.ann, f"{seats.base}/create_character", form)
    assert again.status_code == 409 and "changed since you loaded it" in again.get_data(True)
    assert db_session.exec(select(CardGame)).one().version == 1


def test_only_the_gm_opens_a_table_and_visitors_are_sent_to_log_in(app, auth, db_session):
    seats = _seats(app, auth, db_session, "one-can-have-her")
    assert post_form(seats.ann, seats.base + "/new", {}).status_code == 403
    assert seats.anon.post(seats.base + "/new").status_code in (302, 400)
    no_table = seats.ann.get(seats.base)
    assert no_table.status_code == 200 and "no card table" in no_table.get_data(True)
    assert seats.ann.get(seats.base + "/view.json").status_code == 404
    _open_table(seats)
    assert post_form(seats.stan, seats.base + "/start_game", {}).status_code == 403
    page = seats.gm.get(seats.base).get_data(as_text=True)
    assert "Start the game" in page and "One Can Have Her" in page


def test_a_thread_the_viewer_cannot_read_has_no_table_for_them(app, auth, db_session):
    seats = _seats(app, auth, db_session, "one-can-have-her")
    secret = write(db_session, seats.table, seats.table.gm, "GM eyes only", audience="gm")
    db_session.commit()
    url = f"/c/{seats.table.campaign.slug}/forum/t/{secret.thread_id}/cards"
    assert post_form(seats.gm, url + "/new", {}).status_code == 302
    for client in (seats.ann, seats.stan, seats.anon):
        assert client.get(url).status_code == 404
        assert client.get(url + "/view.json").status_code == 404
    assert seats.gm.get(url).status_code == 200


def test_the_export_replays_after_the_end(app, auth, db_session):
    from pbp.services.cards import tables as cards

    seats = _seats(app, auth, db_session, "sex-and-violence")
    _open_table(seats, gm_sees_hands="yes")
    _act(seats.ann, seats, "create_character", MAX)
    before = seats.ben.get(seats.base + "/export.json").get_json()
    assert "record" not in before and before["view"]["characters"][0]["hand"] is None
    assert post_form(seats.gm, f"/c/{seats.table.campaign.slug}/forum/end", {}).status_code == 302
    after = seats.anon.get(seats.base + "/export.json").get_json()
    assert after["fairness"]["seed"] and cards.verify_card_export(after).ok
    _act(seats.ann, seats, "keep", status=409)  # the table is closed


def test_a_moves_form_becomes_plain_parameters():
    from werkzeug.datastructures import MultiDict

    form = MultiDict(
        [
            ("csrf_token", "x"),
            ("form_token", "a-one-time-token"),
            ("version", "3"),
            ("bid:7H", "npc1"),
            ("bid:3C", "42"),
            ("bid:AS", ""),
            ("announce_shown", "1"),
            ("redraw_shown", "1"),
            ("targets", "npc1"),
            ("targets", "42"),
            ("meets", "no"),
        ]
    )
    assert cards_web.form_params(form) == {
        "split": {"npc1": ["7H"], "42": ["3C"]},
        "announce": [],
        "redraw": False,
        "targets": ["npc1", "42"],
        "meets": False,
    }
    plain = MultiDict([("bid:7H", "bid"), ("redraw", "yes"), ("count_3", "2"), ("rat", "")])
    assert cards_web.form_params(plain) == {
        "cards": ["7H"],
        "redraw": True,
        "rat": None,
        "counts": [0, 0, 2],
    }
