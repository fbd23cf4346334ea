"""The card tables' service: one action at a time through the engine, randomness from the
campaign's seed, nothing saved on a refused move, secrets only through ``view_for``, and an
export that replays exactly once the seed is public."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import timedelta

import pytest
import sqlalchemy as sa
from click.testing import CliRunner
from sqlmodel import select

from pbp.errors import Conflict, Forbidden, NotFound, UserError
from pbp.forum_cli import verify_cards
from pbp.models.cards import CardEvent, CardGame
from pbp.models.forum import Post, Thread
from pbp.rules import dice
from pbp.rules import one_can_have_her as ochh
from pbp.rules import sex_and_violence as sv
from pbp.rules.cards import RulesError, Viewer
from pbp.services.cards import actions as card_actions
from pbp.services.cards import tables as cards
from pbp.services.forum import gm, rolls, visibility
from pbp.services.forum.rolls import ANONYMOUS
from tests.services.forum.tables import MAIL, T0, make_table, write

WARRIOR = {
    "name": "Max",
    "archetype": "warrior",
    "criminal_background": "Enforcer",
    "redeeming_quality": "Loyal to his friends",
    "angle": "bodyguard",
    "fields": ["C"],
}
SURVIVOR = {**WARRIOR, "name": "Burke", "archetype": "survivor", "fields": ["D", "H"]}


@pytest.fixture
def sv_table(db_session):
    return make_table(db_session, ruleset="sex-and-violence")


@pytest.fixture
def ochh_table(db_session):
    return make_table(db_session, ruleset="one-can-have-her")


def _thread(session, table) -> Thread:
    opening = write(session, table, table.gm, "The rain on Water Street.")
    return session.get(Thread, opening.thread_id)


def _open(session, table, **settings) -> tuple[Thread, CardGame]:
    thread = _thread(session, table)
    game = cards.create_game(
        session=session,
        campaign=table.campaign,
        thread=thread,
        user=table.gm,
        settings=settings,
        mail=MAIL,
        now=T0,
    )
    session.commit()
    return thread, game


def _play(session, table, thread, user, action, minutes=1, **params):
    event = cards.play(
        session=session,
        campaign=table.campaign,
        thread=thread,
        user=user,
        action=action,
        params=params,
        mail=MAIL,
        now=T0 + timedelta(minutes=minutes),
    )
    session.commit()
    return event


def _view(session, table, game, user):
    session.refresh(game)
    return cards.table_view(
        session=session, campaign=table.campaign, game=game, viewer=table.viewer(user)
    )


def _seat(view, player_id):
    return next(c for c in view.view["characters"] if c["player_id"] == player_id)


def test_the_gm_opens_a_table_once_with_a_committed_seed(db_session, sv_table):
    thread, game = _open(db_session, sv_table)
    assert game.version == 0 and game.ruleset == "sex-and-violence"
    assert rolls.get_secret(session=db_session, campaign=sv_table.campaign) is not None
    (created,) = db_session.exec(select(CardEvent)).all()
    assert (created.seq, created.action, created.actor) == (0, "create", "gm")
    assert created.params == {"settings": sv.Settings().to_dict()}
    with pytest.raises(Conflict, match="has a card table already"):
        cards.create_game(
            session=db_session,
            campaign=sv_table.campaign,
            thread=thread,
            user=sv_table.gm,
            settings={},
            mail=MAIL,
            now=T0,
        )


def test_only_the_gm_opens_a_table_and_only_in_a_card_game(db_session, sv_table):
    thread = _thread(db_session, sv_table)
    for user, error in ((sv_table.ada_user, Forbidden), (sv_table.stranger, Forbidden)):
        with pytest.raises(error):
            cards.create_game(
                session=db_session,
                campaign=sv_table.campaign,
                thread=thread,
                user=user,
                settings={},
                mail=MAIL,
                now=T0,
            )
    dice_table = make_table(db_session, ruleset="one")
    with pytest.raises(NotFound, match="not played with cards"):
        _open(db_session, dice_table)


def test_a_move_deals_from_the_campaign_seed_and_is_recorded(db_session, sv_table):
    thread, game = _open(db_session, sv_table)
    event = _play(db_session, sv_table, thread, sv_table.ada_user, "create_character", **WARRIOR)
    db_session.refresh(game)
    assert (game.version, event.seq, event.actor) == (1, 1, str(sv_table.ada_user.id))
    secret = rolls.get_secret(session=db_session, campaign=sv_table.campaign)
    rng = dice.derive_rng(bytes.fromhex(secret.seed), f"cards:{game.id}:1")
    expected = sv.add_character(
        sv.new_game(),
        player_id=str(sv_table.ada_user.id),
        name="Max",
        archetype=sv.Archetype.WARRIOR,
        criminal_background="Enforcer",
        redeeming_quality="Loyal to his friends",
        angle="bodyguard",
        fields=[sv.Suit.CLUBS],
        rng=rng,
    )
    assert game.state == cards._plain(expected.state.to_dict())
    assert event.events == [cards._plain(e.to_dict()) for e in expected.events]
    assert len(game.state["characters"][0]["hand"]) == 10


def test_a_refused_move_saves_nothing(db_session, sv_table):
    thread, game = _open(db_session, sv_table)
    posts_before = len(db_session.exec(select(Post)).all())
    bad = {**WARRIOR, "fields": ["C", "D", "H", "S"]}
    with pytest.raises(RulesError, match="may not excel in all four"):
        cards.play(
            session=db_session,
            campaign=sv_table.campaign,
            thread=thread,
            user=sv_table.ada_user,
            action="create_character",
            params=bad,
            mail=MAIL,
            now=T0,
        )
    db_session.rollback()
    db_session.refresh(game)
    assert game.version == 0
    assert len(db_session.exec(select(CardEvent)).all()) == 1
    assert len(db_session.exec(select(Post)).all()) == posts_before


@pytest.mark.parametrize(
    ("user_attr", "action", "params", "error", "message"),
    [
        ("ada_user", "end_scene", {}, RulesError, "Only the GM"),
        ("gm", "keep", {}, RulesError, "Only a player"),
        ("ada_user", "no_such_move", {}, RulesError, "has no action"),
        ("ada_user", "swap", {"card": "ZZ"}, RulesError, "is not a card"),
        ("ada_user", "create_character", {"fields": "C"}, RulesError, "damaged"),
        ("stranger", "keep", {}, Forbidden, "only members"),
    ],
)
def test_who_may_move_and_malformed_moves(
    db_session, sv_table, user_attr, action, params, error, message
):
    thread, _ = _open(db_session, sv_table)
    with pytest.raises(error, match=message):
        cards.play(
            session=db_session,
            campaign=sv_table.campaign,
            thread=thread,
            user=getattr(sv_table, user_attr),
            action=action,
            params={**WARRIOR, **params} if action == "create_character" else params,
            mail=MAIL,
            now=T0,
        )


def test_a_form_from_an_older_table_is_refused(db_session, sv_table):
    thread, game = _open(db_session, sv_table)
    _play(db_session, sv_table, thread, sv_table.ada_user, "create_character", **WARRIOR)
    with pytest.raises(Conflict, match="changed since you loaded it"):
        cards.play(
            session=db_session,
            campaign=sv_table.campaign,
            thread=thread,
            user=sv_table.ada_user,
            action="keep",
            params={},
            mail=MAIL,
            now=T0,
            expected_version=0,
        )


def test_two_simultaneous_moves_cannot_both_apply(db_session, sv_table, monkeypatch):
    """Another request stores its move while this one runs the engine: this one is refused."""
    thread, game = _open(db_session, sv_table)
    real = card_actions.apply_action

    def racing(*args, **kwargs):
        outcome = real(*args, **kwargs)
        db_session.execute(
            sa.update(CardGame).where(CardGame.id == game.id).values(version=CardGame.version + 1)
        )
        return outcome

    monkeypatch.setattr(cards, "apply_action", racing)
    with pytest.raises(Conflict, match="same moment"):
        cards.play(
            session=db_session,
            campaign=sv_table.campaign,
            thread=thread,
            user=sv_table.ada_user,
            action="create_character",
            params=WARRIOR,
            mail=MAIL,
            now=T0,
        )
    assert db_session.exec(select(CardEvent).where(CardEvent.seq == 1)).first() is None


def test_hands_are_seen_by_their_player_and_the_gm_and_counted_by_others(db_session, sv_table):
    thread, game = _open(db_session, sv_table)
    _play(db_session, sv_table, thread, sv_table.ada_user, "create_character", **WARRIOR)
    ada = str(sv_table.ada_user.id)
    own = _seat(_view(db_session, sv_table, game, sv_table.ada_user), ada)
    assert len(own["hand"]) == 10 and "deck" not in own
    for user in (sv_table.bram_user, sv_table.stranger, None):
        view = _view(db_session, sv_table, game, user)
        seat = _seat(view, ada)
        assert seat["hand"] is None and seat["usable_cards"] is None
        assert seat["hand_size"] == 10 and seat["deck_count"] == 30
        draws = [e for entry in view.log for e in entry.events if e["kind"] == "draw"]
        assert draws and all("cards" not in e["data"] for e in draws)
    assert _seat(_view(db_session, sv_table, game, sv_table.gm), ada)["hand"] is not None


def test_a_campaign_can_keep_hands_from_the_gm(db_session, sv_table):
    thread, game = _open(db_session, sv_table, gm_sees_hands=False)
    _play(db_session, sv_table, thread, sv_table.ada_user, "create_character", **WARRIOR)
    view = _view(db_session, sv_table, game, sv_table.gm)
    assert _seat(view, str(sv_table.ada_user.id))["hand"] is None
    draws = [e for entry in view.log for e in entry.events if e["kind"] == "draw"]
    assert all("cards" not in e["data"] for e in draws)


def test_every_move_is_announced_in_the_thread_with_its_public_text_only(db_session, sv_table):
    thread, game = _open(db_session, sv_table)
    _play(db_session, sv_table, thread, sv_table.ada_user, "create_character", **WARRIOR)
    posts = visibility.visible_posts(
        session=db_session, campaign=sv_table.campaign, viewer=ANONYMOUS, thread=thread
    )
    assert len(posts) == 3  # the opening post, the table, the character
    assert "Max drew 10 cards (deal)." in posts[-1].body
    assert posts[-1].author_id == sv_table.ada_user.id and posts[-1].kind == "ooc"
    db_session.refresh(game)
    hand = [sv.Slot.from_dict(s).card.name for s in game.state["characters"][0]["hand"]]
    assert not any(name in posts[-1].body for name in hand)


def test_a_player_name_cannot_smuggle_a_roll_into_the_announcement(db_session, sv_table):
    thread, _ = _open(db_session, sv_table)
    sneaky = {**WARRIOR, "name": "Max\n/roll 1d6"}
    _play(db_session, sv_table, thread, sv_table.ada_user, "create_character", **sneaky)
    assert rolls.campaign_rolls(session=db_session, campaign=sv_table.campaign) == []


def _ochh_started(session, table):
    thread, game = _open(session, table)
    for user, name in ((table.ada_user, "Johnny"), (table.bram_user, "Vic")):
        _play(
            session,
            table,
            thread,
            user,
            "add_player",
            character_name=name,
            archetype="Hardboiled Private Detective",
            drive="Find the girl",
            dream_woman="Rita",
            future_with_lula="A house by the sea",
        )
    _play(session, table, thread, table.gm, "start_game")
    return thread, game


def test_rat_notes_are_for_the_gm_only(db_session, ochh_table):
    thread, game = _ochh_started(db_session, ochh_table)
    state = ochh.Game.from_dict(game.state)
    game.state = replace(state, round=4, phase=ochh.Phase.NOTES).to_dict()  # skip ahead
    db_session.add(game)
    db_session.commit()
    _play(db_session, ochh_table, thread, ochh_table.ada_user, "hand_in_note", rat=True)
    ada = str(ochh_table.ada_user.id)
    for user in (ochh_table.bram_user, ochh_table.cleo_user, ochh_table.stranger, None):
        view = _view(db_session, ochh_table, game, user)
        assert view.view["notes"]["handed_in"][ada] is True
        assert all(n["player_id"] != ada for n in view.view["notes"].get("notes", []))
        johnny = next(p for p in view.view["players"] if p["player_id"] == ada)
        assert "rat_left" not in johnny
        texts = [e["text"] for entry in view.log for e in entry.events]
        assert "Johnny hands the GM a rat note." in texts
        assert not any('"Rat"' in text for text in texts)
    gm_view = _view(db_session, ochh_table, game, ochh_table.gm)
    assert gm_view.view["notes"]["notes"] == [{"round": 4, "player_id": ada, "rat": True}]


def test_the_export_shows_the_viewers_table_until_the_end_then_replays(
    db_session, sv_table, tmp_path
):
    thread, game = _open(db_session, sv_table)
    _play(db_session, sv_table, thread, sv_table.ada_user, "create_character", **WARRIOR)
    _play(db_session, sv_table, thread, sv_table.bram_user, "create_character", **SURVIVOR)
    hand = [s["card"] for s in game.state["characters"][0]["hand"]]
    lowest = min(hand, key=lambda code: sv.Card.from_code(code).rank)
    _play(db_session, sv_table, thread, sv_table.ada_user, "swap", card=lowest)
    _play(db_session, sv_table, thread, sv_table.gm, "add_gm_character", name="Mr. White")
    db_session.refresh(game)
    before = cards.export_game(
        session=db_session,
        campaign=sv_table.campaign,
        game=game,
        viewer=sv_table.viewer(sv_table.bram_user),
        now=T0,
    )
    assert "state" not in before and "record" not in before and before["fairness"]["seed"] is None
    assert before["view"]["characters"][0]["hand"] is None
    with pytest.raises(UserError, match="no seed"):
        cards.verify_card_export(before)

    gm.end_campaign(session=db_session, campaign=sv_table.campaign, actor=sv_table.gm, now=T0)
    after = cards.export_game(
        session=db_session, campaign=sv_table.campaign, game=game, viewer=ANONYMOUS, now=T0
    )
    assert [r["seq"] for r in after["record"]] == [0, 1, 2, 3, 4]
    report = cards.verify_card_export(after)
    assert report.ok, report.mismatches
    assert report.summary() == "5 card actions verified"

    tampered = {**after, "record": [dict(r) for r in after["record"]]}
    tampered["record"][3]["params"] = {"card": max(hand, key=lambda c: sv.Card.from_code(c).rank)}
    assert not cards.verify_card_export(tampered).ok
    wrong_seed = {**after, "fairness": {**after["fairness"], "seed": "00" * 32}}
    with pytest.raises(UserError, match="commitment"):
        cards.verify_card_export(wrong_seed)

    # The same checks from the command line (issue #32 item 7: `pbp verify-cards`).
    for export, code, said in ((after, 0, "5 card actions verified"), (tampered, 1, "mismatch")):
        path = tmp_path / "table.json"
        path.write_text(json.dumps(export), encoding="utf-8")
        result = CliRunner().invoke(verify_cards, [str(path)])
        assert result.exit_code == code and said in result.output, result.output


def test_no_move_once_the_campaign_has_ended(db_session, sv_table):
    thread, _ = _open(db_session, sv_table)
    gm.end_campaign(session=db_session, campaign=sv_table.campaign, actor=sv_table.gm, now=T0)
    with pytest.raises(Conflict, match="has ended"):
        _play(db_session, sv_table, thread, sv_table.ada_user, "create_character", **WARRIOR)


def test_the_record_is_append_only(db_session, sv_table):
    _open(db_session, sv_table)
    row = db_session.exec(select(CardEvent)).one()
    row.action = "forged"
    with pytest.raises(sa.exc.InvalidRequestError, match="cannot be changed"):
        db_session.flush()
    db_session.rollback()


def test_the_card_viewer_follows_the_forum_role(sv_table):
    assert cards.card_viewer(sv_table.viewer(sv_table.gm)) == Viewer.gm()
    ada = sv_table.viewer(sv_table.ada_user)
    assert cards.card_viewer(ada) == Viewer.player(str(sv_table.ada_user.id))
    assert cards.card_viewer(sv_table.viewer(sv_table.stranger)) == Viewer.spectator()
    assert cards.actor_for(ANONYMOUS) is None
