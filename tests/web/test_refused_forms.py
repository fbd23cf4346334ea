"""Nothing a player writes is lost (issue #15, item 5): a refused entry, note, forum post or
card move shows its form again with status 422, the reason next to it and the text exactly
as typed; a form refused for its CSRF token shows the text to copy."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from markupsafe import escape
from sqlmodel import select

from pbp.models import CardGame, Entry, Note, Post
from pbp.services.noteworthy import hosted_blog, turns
from pbp.web import forum as forum_web
from tests.factories import make_campaign, make_characters
from tests.services.forum.tables import make_table
from tests.web.test_blog_pages import T0, _players, login_as, next_turn, write
from tests.web.test_cards_web import MAX, _act, _open_table, _seats
from tests.web.test_forum import _base, _new_thread


@pytest.fixture
def clock(app):
    state = {"now": T0}
    app.config["PBP_CLOCK"] = lambda: state["now"]
    return state


@pytest.fixture
def game(db_session, clock):
    """Turn 1 of a Noteworthy game whose first turn permits no challenge."""
    campaign = make_campaign(db_session, settings={"opening_turns": 1})
    chars = make_characters(db_session, campaign)
    _players(db_session, chars)
    turns.post_event(session=db_session, campaign=campaign, text="Turn one.", actor=None, now=T0)
    db_session.commit()
    return campaign, chars


# Several lines, a leading blank line, markup characters and quotes: all must come back.
TYPED = "\nFirst line: <b>bold?</b> & \"double\" 'single'\n  indented </textarea> line\n\nlast\n"


class _Fields(HTMLParser):
    """The values of a page's form fields as a browser reads them (a textarea drops the one
    newline right after its start tag)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.values: dict[str, str] = {}
        self._in: str | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "textarea":
            self._in = attrs.get("id") or attrs.get("name")
            self.values[self._in] = ""
        elif tag == "input" and attrs.get("id"):
            self.values[attrs["id"]] = attrs.get("value") or ""

    def handle_data(self, data):
        if self._in is not None:
            self.values[self._in] += data

    def handle_endtag(self, tag):
        if tag == "textarea" and self._in is not None:
            self.values[self._in] = self.values[self._in].removeprefix("\n")
            self._in = None


def fields(page) -> dict[str, str]:
    parser = _Fields()
    parser.feed(page.get_data(as_text=True))
    return parser.values


def test_a_refused_entry_is_422_with_the_reason_and_the_text_as_typed(auth, game, db_session):
    campaign, (ada, bram, *_) = game
    login_as(auth, db_session, ada)
    title = 'A "title" & <more>'
    page = write(auth, campaign, title=title, mood="Challenging", target=str(bram.id), body=TYPED)
    assert page.status_code == 422
    html = page.get_data(as_text=True)
    assert 'role="alert"' in html
    assert "No challenges are permitted in the first turn of the game" in html
    assert fields(page)["body"] == TYPED and fields(page)["title"] == title
    assert str(escape(TYPED)) in html  # escaped, never raw markup
    assert db_session.exec(select(Entry)).all() == []


def test_a_refused_edit_is_422_with_the_text_as_typed(auth, game, db_session, clock):
    campaign, (ada, bram, *_) = game
    entry = hosted_blog.store_entry(
        session=db_session,
        character=ada,
        title="T",
        body_markdown="b",
        mood="Calm",
        now=clock["now"],
    )
    db_session.commit()
    login_as(auth, db_session, ada)
    url = f"/c/{campaign.slug}/{ada.slug}/{entry.id}/edit"
    page = auth.post(url, {"title": "T", "mood": "Challenging", "body": TYPED})
    assert page.status_code == 422 and "No challenges are permitted" in page.get_data(True)
    assert fields(page)["body"] == TYPED


def test_a_refused_note_is_422_with_the_reason_and_the_text_as_typed(auth, game, db_session, clock):
    campaign, (ada, bram, *_) = game
    entry = hosted_blog.store_entry(
        session=db_session,
        character=ada,
        title="T",
        body_markdown="b",
        mood="Calm",
        now=clock["now"],
    )
    db_session.commit()
    login_as(auth, db_session, bram)
    url = f"/c/{campaign.slug}/{ada.slug}/{entry.id}/notes"
    page = auth.post(url, {"body": TYPED, "fate": 'jail & "worse"', "stance": "sideways"})
    assert page.status_code == 422
    # The reason beside the note's form (pbp.web.actions.refusal), as well as at the top.
    form = page.get_data(as_text=True).split('class="note-form"')[1]
    assert "a position is Support, Oppose or No position" in form
    assert fields(page)["note-body"] == TYPED
    assert db_session.exec(select(Note)).all() == []


def test_a_note_refused_because_the_turn_moved_on_keeps_its_text(auth, game, db_session, clock):
    campaign, (ada, bram, *_) = game
    entry = hosted_blog.store_entry(
        session=db_session,
        character=ada,
        title="T",
        body_markdown="b",
        mood="Calm",
        now=clock["now"],
    )
    db_session.commit()
    next_turn(db_session, campaign, clock)
    login_as(auth, db_session, bram)
    page = auth.post(f"/c/{campaign.slug}/{ada.slug}/{entry.id}/notes", {"body": TYPED})
    assert page.status_code == 422 and "only on the current turn" in page.get_data(True)
    assert fields(page)["note-body"] == TYPED


@pytest.fixture
def forum_app(app):
    if "forum" not in app.blueprints:
        app.register_blueprint(forum_web.bp)
    return app


@pytest.fixture
def table(forum_app, auth, db_session):
    users = [auth.create_user(display_name=n) for n in ("Gail GM", "Ann", "Ben", "Cat", "Stan")]
    return make_table(db_session, users=users)


def test_a_refused_forum_post_is_422_with_the_reason_and_the_text_as_typed(
    auth, client, db_session, table
):
    auth.login(table.ada_user)
    body = TYPED + "/roll 2x6 + banana\n"
    page, _ = _new_thread(auth, client, table, body)
    assert page.status_code == 422
    assert "could not read" in page.get_data(as_text=True)
    assert fields(page)["body"] == body
    assert db_session.exec(select(Post)).all() == []


def test_a_forged_form_is_a_styled_page_that_shows_the_text(auth, client, db_session, table):
    auth.login(table.ada_user)
    _new_thread(auth, client, table, "Opening.")
    thread_id = db_session.exec(select(Post)).one().thread_id
    url = f"{_base(table)}/forum/t/{thread_id}"
    page = client.post(url, data={"body": TYPED, "kind": "ic", "csrf_token": "forged"})
    assert page.status_code == 400
    html = page.get_data(as_text=True)
    assert "<h1>" in html and "reload the page" in html and "Error 400" in html
    assert fields(page)["typed-body"] == TYPED
    assert "csrf_token" not in fields(page) and "forged" not in html  # no token echoed


def test_a_refused_card_move_is_422_with_the_reason_next_to_its_form(app, auth, db_session):
    seats = _seats(app, auth, db_session, "sex-and-violence")
    _open_table(seats, gm_sees_hands="no")
    typed = {**MAX, "name": 'Max "the <Axe>" & co', "fields": ["C", "D", "H", "S"]}
    page = _act(seats.ann, seats, "create_character", typed, status=422)
    html = page.get_data(as_text=True)
    form = html[html.index('id="m-create"') :]
    form = form[: form.index("</form>")]
    assert "may not excel in all four" in form.lower()  # the reason is in the move's own form
    values = fields(page)
    assert values["sv-name"] == typed["name"]
    assert values["sv-background"] == MAX["criminal_background"]
    assert db_session.exec(select(CardGame)).one().version == 0


# -- the entry preview (issue #15, item 5: "Entries get a preview, as forum posts already have")

HOSTILE = "Hello **bold** & <i>kept</i>\n\n<script>alert(1)</script><img src=x onerror=alert(2)>\n"


def _preview_section(page) -> str:
    html = page.get_data(as_text=True)
    start = html.index('class="preview"')
    return html[start : html.index("</section>", start)]


def test_the_entry_preview_renders_sanitized_and_saves_nothing(auth, game, db_session):
    campaign, (ada, *_) = game
    login_as(auth, db_session, ada)
    page = write(auth, campaign, mood="Pensive", body=HOSTILE, action="preview")
    assert page.status_code == 200
    shown = _preview_section(page)
    assert "<strong>bold</strong>" in shown and "<i>kept</i>" in shown
    assert "<script" not in shown and "onerror" not in shown
    assert "Current mood: <strong>Pensive</strong>" in shown and "Not a challenge" in shown
    assert fields(page)["body"] == HOSTILE  # the text stays in the form, as typed
    assert db_session.exec(select(Entry)).all() == []


def test_the_entry_preview_says_whom_a_challenge_names_or_why_it_is_refused(
    auth, game, db_session, clock
):
    campaign, (ada, bram, *_) = game
    login_as(auth, db_session, ada)
    early = write(auth, campaign, mood="Challenging", target=str(bram.id), action="preview")
    assert early.status_code == 200
    assert "would be refused: No challenges are permitted" in _preview_section(early)
    next_turn(db_session, campaign, clock)
    page = write(auth, campaign, mood="Challenging", target=str(bram.id), action="preview")
    shown = _preview_section(page)
    assert "A challenge of Bram." in shown and "Target: Bram" in shown
    unnamed = write(auth, campaign, mood="Challenging", target="", action="preview")
    assert "exactly one target" in _preview_section(unnamed)
    assert db_session.exec(select(Entry)).all() == []


def test_the_edit_preview_reads_the_target_from_the_text_and_saves_nothing(
    auth, game, db_session, clock
):
    campaign, (ada, bram, *_) = game
    next_turn(db_session, campaign, clock)
    entry = hosted_blog.store_entry(
        session=db_session,
        character=ada,
        title="T",
        body_markdown="b",
        mood="Calm",
        now=clock["now"],
    )
    db_session.commit()
    login_as(auth, db_session, ada)
    url = f"/c/{campaign.slug}/{ada.slug}/{entry.id}/edit"
    body = "Target: Bram\n\nYou *will* answer."
    page = auth.post(url, {"title": "T", "mood": "Challenging", "body": body, "action": "preview"})
    assert page.status_code == 200
    shown = _preview_section(page)
    assert "A challenge of Bram." in shown and "<em>will</em>" in shown
    assert fields(page)["body"] == body
    db_session.expire_all()
    assert db_session.get(Entry, entry.id).mood == "calm"


def test_an_over_long_preview_is_refused_on_the_form(auth, game, db_session):
    campaign, (ada, *_) = game
    login_as(auth, db_session, ada)
    body = "x" * 20_001
    page = write(auth, campaign, body=body, action="preview")
    assert page.status_code == 422 and "at most 20,000 characters" in page.get_data(True)
    assert fields(page)["body"] == body
