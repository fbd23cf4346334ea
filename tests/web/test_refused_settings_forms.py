"""Refused forms beyond entries, notes and posts (tests/web/test_refused_forms.py): the
player's blog settings, the referee's page per character, the invitation form, character
sheets and a card move with a damaged version. Each comes back on its form with status 422,
the reason, and the text exactly as typed (pbp.web.refusals)."""

from __future__ import annotations

import html

import pytest
from markupsafe import escape
from sqlmodel import select

from pbp.models import Blog, CardGame, Character, Invite, Sheet, User
from pbp.services import campaigns
from tests.helpers import post_form
from tests.services.forum.tables import ONE_STATS, make_table
from tests.web.test_cards_web import MAX, _open_table, _seats
from tests.web.test_refused_forms import TYPED, fields


def _refused(page, reason: str, status: int = 422) -> str:
    """The page's text, once it is known to be a refused form showing `reason`."""
    assert page.status_code == status, page.get_data(as_text=True)[-1500:]
    text = page.get_data(as_text=True)
    assert 'role="alert"' in text
    assert reason in html.unescape(text), html.unescape(text)[-3000:]
    assert "csrf_token" not in fields(page)  # the form's token is not echoed as typed text
    return text


# -- the player's blog settings (pbp.web.player) ----------------------------------------------


def _player(auth, db_session, chars):
    auth.login(db_session.get(User, chars[0].user_id))
    return chars[0]


def test_a_refused_blog_address_is_422_with_the_address_as_typed(auth, db_session, game):
    campaign, _, chars = game
    ada = _player(auth, db_session, chars)
    url = f"/c/{campaign.slug}/me/blog"
    page = auth.post(url, {"kind": "external", "url": TYPED, "character_id": str(ada.id)})
    _refused(page, "is not a valid web address")
    assert fields(page)["blog-url"] == TYPED
    assert db_session.exec(select(Blog).where(Blog.kind == "external")).all() == []


def test_a_refused_commenter_identity_is_422_with_the_addresses_as_typed(auth, db_session, game):
    campaign, _, chars = game
    ada = _player(auth, db_session, chars)
    url = f"/c/{campaign.slug}/me/commenter"
    page = auth.post(url, {"uris": TYPED, "character_id": str(ada.id)})
    _refused(page, "is not a profile address")
    assert fields(page)["uris"] == TYPED


# -- the referee's page per character (pbp.web.roster_admin) ----------------------------------


def _character_page(auth, campaign, referee, character) -> str:
    auth.login(referee)
    return f"/c/{campaign.slug}/referee/characters/{character.id}"


@pytest.mark.parametrize(
    ("form", "field", "value", "element", "reason"),
    [
        ("name", "name", TYPED + "x" * 120, "char-name", "at most 120 characters"),
        ("aliases", "aliases", TYPED + ", " + "y" * 121, "char-aliases", "at most 120 characters"),
        ("feed", "feed_url", TYPED, "char-feed", "http"),
        ("drop", "reason", TYPED + "z" * 2000, "drop-reason", "at most 2,000 characters"),
        ("player", "email", TYPED, "char-invite-email", "not an email address"),
    ],
)
def test_a_refused_roster_change_is_422_on_its_form_with_the_text_as_typed(
    auth, db_session, game, form, field, value, element, reason
):
    campaign, referee, chars = game
    bram = chars[1]
    before = (bram.name, list(bram.aliases or []), bram.status, bram.user_id)
    url = _character_page(auth, campaign, referee, bram)
    page = auth.post(f"{url}/{form}", {field: value})
    text = _refused(page, reason)
    assert fields(page)[element] == value
    assert str(escape(value)) in text  # escaped, never raw markup
    db_session.expire_all()
    bram = db_session.get(Character, bram.id)
    assert (bram.name, list(bram.aliases or []), bram.status, bram.user_id) == before


def test_a_roster_change_to_a_missing_character_keeps_its_404(auth, db_session, game):
    campaign, referee, chars = game
    auth.login(referee)
    page = auth.post(f"/c/{campaign.slug}/referee/characters/2147483647/name", {"name": "X"})
    assert page.status_code == 404


# -- the invitation form (pbp.web.auth, read with pbp.inputs.invites.InviteIn) ----------------


def test_a_refused_invitation_is_422_with_the_address_as_typed(auth, db_session, game):
    campaign, referee, _ = game
    auth.login(referee)
    form = {"email": TYPED, "role": "player", "character": "", "days": "7"}
    page = auth.post(f"/c/{campaign.slug}/invites", form)
    _refused(page, "is not an email address")
    assert fields(page)["email"] == TYPED and fields(page)["days"] == "7"
    assert db_session.exec(select(Invite)).all() == []


def test_an_invitation_refused_by_its_input_model_keeps_every_field(auth, db_session, game):
    campaign, referee, _ = game
    waiting = campaigns.add_character(session=db_session, campaign=campaign, name="Lady Vance")
    db_session.commit()
    auth.login(referee)
    form = {"email": "pip@example.test", "role": "player", "character": waiting.slug}
    page = auth.post(f"/c/{campaign.slug}/invites", {**form, "days": TYPED})
    _refused(page, "An invite works for 1 to 90 days")
    assert fields(page)["email"] == "pip@example.test" and fields(page)["days"] == TYPED
    assert f'<option value="{waiting.slug}" selected>' in page.get_data(as_text=True)
    assert db_session.exec(select(Invite)).all() == []


def test_an_invitation_for_a_character_that_has_a_player_is_409(auth, db_session, game):
    campaign, referee, chars = game
    auth.login(referee)
    form = {"email": TYPED, "role": "player", "character": chars[0].slug, "days": "7"}
    page = auth.post(f"/c/{campaign.slug}/invites", form)
    _refused(page, f"{chars[0].name} already has a player", 409)
    assert fields(page)["email"] == TYPED
    assert db_session.exec(select(Invite)).all() == []


# -- character sheets (pbp.web.forum, read with pbp.inputs.forum.SheetIn) ---------------------


@pytest.fixture
def one_table(auth, db_session):
    users = [auth.create_user(display_name=n) for n in ("Gail GM", "Ann", "Ben", "Cat", "Stan")]
    return make_table(db_session, ruleset="one", users=users)


def test_a_refused_one_sheet_is_422_with_the_notes_and_skills_as_typed(auth, db_session, one_table):
    auth.login(one_table.ada_user)
    url = f"/c/{one_table.campaign.slug}/sheets/{one_table.ada.slug}/edit"
    skills = "\nShort Blade: 4\nStealth: 1\n"
    form = {**{k: str(v) for k, v in ONE_STATS.items()}, "STR": "13"}
    page = auth.post(url, {**form, "skills": skills, "hit_points_lost": "0", "notes": TYPED})
    _refused(page, "STR is 13")
    assert fields(page)["notes"] == TYPED and fields(page)["skills"] == skills
    assert fields(page)["stat-STR"] == "13"
    assert db_session.exec(select(Sheet)).all() == []


def test_a_refused_json_sheet_is_422_with_the_text_as_typed(auth, db_session):
    users = [auth.create_user(display_name=n) for n in ("Gail GM", "Ann", "Ben", "Cat", "Stan")]
    table = make_table(db_session, ruleset="noir", users=users)
    auth.login(table.ada_user)
    url = f"/c/{table.campaign.slug}/sheets/{table.ada.slug}/edit"
    page = auth.post(url, {"sheet": TYPED})
    _refused(page, "JSON")
    assert fields(page)["sheet"] == TYPED
    assert db_session.exec(select(Sheet)).all() == []


# -- a card move whose form is damaged (pbp.web.cards, read with pbp.inputs.forum.MoveIn) ----


def test_a_card_move_with_a_damaged_version_is_422_with_the_text_as_typed(app, auth, db_session):
    seats = _seats(app, auth, db_session, "sex-and-violence")
    _open_table(seats, gm_sees_hands="no")
    typed = {**MAX, "name": TYPED, "version": "one"}
    page = post_form(seats.ann, f"{seats.base}/create_character", typed)
    text = _refused(page, "form is damaged (its version is not a number)")
    form = text[text.index('id="m-create"') :]
    assert "the form is damaged" in form[: form.index("</form>")].lower()
    assert fields(page)["sv-name"] == TYPED
    assert db_session.exec(select(CardGame)).one().version == 0
