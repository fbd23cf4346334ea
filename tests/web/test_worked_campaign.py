"""The rules' worked campaign (tests/rules/noteworthy/worked_campaign.py), played through the web
from the campaign's creation to the winner and the final notice.

The referee does everything on the dashboard; players join by invite and post entries,
edits, withdrawals and notes through the blog pages, at the worked campaign's times (a
fixed clock). Where the web form refuses what the rules text allows a player to do on
their own blog (an entry without a mood line, a challenge in an opening turn), the test
checks the refusal and then brings the item in through the ingest path an external blog
takes — which is what such a player would have done. A note the form refuses because the
turn is closed would be late anyway. After every turn the standings must equal the ones
the rules tests expect.
"""

import re

import pytest
from sqlmodel import select

from adapters.base import FeedEntry, ParsedFeed, fallback_key
from pbp.models import Blog, Campaign, Character, Entry, Invite, OutboxMessage
from pbp.rules.noteworthy import detect_target, is_challenging
from pbp.services.noteworthy import ingest
from tests.helpers import PASSWORD, post_form
from tests.rules.noteworthy import worked_campaign as wc

NAMES = {
    wc.ADA: "Ada",
    wc.BRAM: "Bram",
    wc.CYRA: "Cyra",
    wc.DOV: "Dov",
    wc.ESME: "Esme",
    wc.FENN: "Fenn",
}


class Game:
    def __init__(self, app, client, db_session, auth):
        self.app, self.ref, self.db, self.auth = app, client, db_session, auth
        self.players = {}
        self.char = {}
        self.entry_ids = {}
        self.note_ids = {}
        self.slug = None

    def at(self, moment):
        self.app.config["PBP_CLOCK"] = lambda: moment

    def ref_post(self, path, data, expect=302):
        page = post_form(self.ref, f"/c/{self.slug}/referee/{path}", data)
        assert page.status_code == expect, page.get_data(as_text=True)[:2000]
        return page

    def as_player(self, cid):
        return self.players[cid]

    def write(self, cid, title, mood, text, target=""):
        return post_form(
            self.as_player(cid),
            f"/c/{self.slug}/write",
            {"title": title, "mood": mood or "", "body": text, "target": target},
        )


def _setup(game: Game, app):
    referee = game.auth.create_user(display_name="The Referee")
    game.auth.login(referee)
    page = post_form(
        game.ref, "/campaigns/new", {"name": "Worked Campaign", "ruleset": "noteworthy"}
    )
    assert page.status_code == 302
    game.slug = game.db.exec(select(Campaign.slug).where(Campaign.name == "Worked Campaign")).one()
    for cid, name in NAMES.items():
        aliases = "the Duke" if cid == wc.DOV else ""
        game.ref_post("characters", {"name": name, "aliases": aliases})
    game.ref_post(
        "settings",
        {"opening_turns": "2", "custom_moods": "Scheming = Plot a scheme", "cadence": "manual"},
    )
    for cid, name in NAMES.items():
        character = game.db.exec(select(Character).where(Character.name == name)).one()
        game.char[cid] = character
        page = post_form(
            game.ref,
            f"/c/{game.slug}/invites",
            {"role": "player", "days": "7", "character": character.slug, "email": ""},
        )
        link = re.search(r"/invite/[A-Za-z0-9_.\-]+", page.get_data(as_text=True)).group(0)
        client = app.test_client()
        joined = post_form(
            client,
            link,
            {
                "email": f"{name.lower()}@worked.test",
                "display_name": name,
                "password": PASSWORD,
                "confirm": PASSWORD,
            },
            token_url=link,
        )
        assert joined.status_code == 302, joined.get_data(as_text=True)[:1500]
        game.players[cid] = client
    assert game.db.exec(select(Invite).where(Invite.used_at.is_(None))).all() == []


def _external(game: Game, item, when):
    """The player's own blog says it: through the ingest path, like a polled feed."""
    character = game.char[item.owner_id]
    blog = game.db.exec(select(Blog).where(Blog.character_id == character.id)).one()
    feed_entry = FeedEntry(
        source_id=f"https://{character.slug}.blog.test/{item.id}",
        url=None,
        title=item.title,
        author=None,
        published=when,
        updated=None,
        body_html=f"<p>{item.text}</p>",
        raw_mood=item.mood,
        mood_source="field",
        fallback_key=fallback_key(item.title, when),
    )
    ingest.ingest_parsed(
        session=game.db,
        blog=blog,
        now=when,
        campaign_id=character.campaign_id,
        parsed=ParsedFeed(kind="test", title="", site_url=None, entries=(feed_entry,)),
    )
    game.db.commit()
    return (
        game.db.exec(select(Entry).where(Entry.blog_id == blog.id).order_by(Entry.id.desc()))
        .first()
        .id
    )


def _post_entry(game: Game, item):
    game.at(item.published)
    page = game.write(item.owner_id, item.title, item.mood, item.text)
    if item.mood is None:
        assert page.status_code == 422 and b"Current mood" in page.data
        return _external(game, item, item.published)
    if is_challenging(item.mood) and item.turn <= 2:
        assert page.status_code == 422 and b"No challenges are permitted" in page.data
        return _external(game, item, item.published)
    if is_challenging(item.mood):
        # On pbp's blog the picker names the target; an entry whose text names two
        # characters can only come from the player's own blog (and needs a ruling).
        assert page.status_code == 422 and b"exactly one target" in page.data
        reading = detect_target(
            item.title, item.text, wc.CHARACTERS, item.owner_id, wc.SETTINGS.aliases
        )
        if reading.target_id is None:
            return _external(game, item, item.published)
        text = "\n".join(line for line in item.text.splitlines() if not line.startswith("Target:"))
        page = game.write(
            item.owner_id, item.title, item.mood, text, target=str(game.char[reading.target_id].id)
        )
    assert page.status_code == 302, page.get_data(as_text=True)[:1500]
    return int(page.headers["Location"].rstrip("/").rsplit("/", 1)[-1])


def _revise(game: Game, item, entry_id):
    character = game.char[item.owner_id]
    for revision in item.revisions:
        game.at(revision.at)
        url = f"/c/{game.slug}/{character.slug}/{entry_id}/withdraw"
        page = post_form(game.as_player(item.owner_id), url, {})
        assert page.status_code == 302


def _post_note(game: Game, note, turn_closes):
    game.at(note.published)
    entry_id = game.entry_ids[note.entry_id]
    entry = game.db.get(Entry, entry_id)
    owner = game.db.get(Character, entry.character_id)
    url = f"/c/{game.slug}/{owner.slug}/{entry_id}/notes"
    page = post_form(
        game.as_player(note.author_id),
        url,
        {"body": note.text, "stance": "none", "fate": note.fate or ""},
    )
    if note.published > turn_closes:
        # The form refuses notes once the turn is closed; the rules call them late.
        assert page.status_code == 422 and b"current turn" in page.data
        return
    assert page.status_code == 302, page.get_data(as_text=True)[:1500]


def _ruling(game: Game, ruling):
    subject = "" if ruling.subject_id is None else str(game.entry_ids[ruling.subject_id])
    value = ruling.value
    if value in NAMES:
        value = game.char[value].id
    game.ref_post(
        "rule",
        {
            "kind": ruling.kind.value,
            "subject_id": subject,
            "value": str(value),
            "reason": ruling.note,
        },
    )


def _outsiders(game: Game):
    game.db.expire_all()
    rows = game.db.exec(select(Character).where(Character.status == "outsider")).all()
    by_db_id = {c.id: cid for cid, c in game.char.items()}
    return frozenset(by_db_id[c.id] for c in rows)


@pytest.mark.slow
def test_worked_campaign_through_the_web(app, client, db_session, auth):
    game = Game(app, client, db_session, auth)
    _setup(game, app)
    for index, turn in enumerate(wc.TURNS):
        number = turn.number
        game.at(wc.at(number, "00:00"))
        game.ref_post("event", {"text": f"Event of turn {number}.", "expected_number": str(number)})
        for item in sorted(turn.entries, key=lambda e: e.published):
            game.entry_ids[item.id] = _post_entry(game, item)
        for item in turn.entries:
            if item.revisions:
                _revise(game, item, game.entry_ids[item.id])
        closes = wc.closes(number)
        for note in sorted(
            (n for n in turn.notes if n.published <= closes), key=lambda n: n.published
        ):
            _post_note(game, note, closes)
        game.at(closes)
        game.ref_post("close", {})
        for note in (n for n in turn.notes if n.published > closes):
            _post_note(game, note, closes)
        for ruling in turn.rulings:
            _ruling(game, ruling)
        game.at(wc.at(number, "23:30"))
        page = game.ref_post("resolve", {})
        assert _outsiders(game) == wc.EXPECTED_OUTSIDERS[index], f"after turn {number}"
        board = game.ref.get(page.headers["Location"])
        assert board.status_code == 200

    winner = game.db.get(Character, game.char[wc.WINNER].id)
    assert winner.status == "winner"
    assert b"Endgame" in game.ref.get(f"/c/{game.slug}/referee/").data
    game.ref_post("final-notice", {"text": "Ada takes the city; the others scatter."})
    campaign = game.db.exec(select(Campaign).where(Campaign.slug == game.slug)).one()
    assert campaign.status == "ended"
    finals = game.db.exec(select(OutboxMessage).where(OutboxMessage.kind == "final")).all()
    assert len(finals) == 7  # six players and the referee
    assert all("Ada takes the city" in m.body_text for m in finals)
