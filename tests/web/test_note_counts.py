"""Issue #27 item 4: every note says how it counts, in the tally's words; the note form says
before posting when a position will not count; a marker typed and chosen shows once; a
character who joined mid-turn is not offered a challenge the tally would rule invalid."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from sqlmodel import select

from pbp.models import Note, User
from pbp.services import campaigns
from pbp.services.accounts import logins as accounts
from pbp.services.noteworthy import hosted_blog, turns
from tests.factories import make_user
from tests.helpers import PASSWORD, T0, Api, make_token, wire


@pytest.fixture
def challenged(db_session, game, clock):
    """Turn 1 open (no opening turns): Ada challenges Bram, Cleo supports, Bram (the
    target) writes "Oppose", and Gus, added to the roster after the turn opened, too."""
    campaign, referee, (ada, bram, cleo, *_) = game
    turns.post_event(session=db_session, campaign=campaign, text="Go.", actor=None, now=T0)
    gus_user = make_user(db_session, "Gus")
    gus_user.password_hash = accounts.hash_password(PASSWORD)
    gus = campaigns.add_character(session=db_session, campaign=campaign, name="Gus", user=gus_user)
    entry = hosted_blog.store_entry(
        session=db_session,
        character=ada,
        title="Bram, beware",
        body_markdown="Target: Bram\n\nYou lied.",
        mood="Challenging",
        now=T0 + timedelta(hours=1),
    )
    for minutes, (who, stance) in enumerate(((cleo, "support"), (bram, "oppose"), (gus, "oppose"))):
        hosted_blog.store_note(
            session=db_session,
            entry=entry,
            author=who,
            body_markdown=f"{who.name} has a say.",
            stance=stance,
            now=T0 + timedelta(hours=2, minutes=minutes),
        )
    db_session.commit()
    clock.now = T0 + timedelta(hours=3)
    return campaign, entry, gus


def _labels(html: str) -> dict[str, str]:
    """Each note's author and the label beside it."""
    found = re.findall(
        r'<span class="who[^"]*">([^<]+)</span>\s*<span class="muted">·</span>\s*'
        r'<span class="note-count[^"]*">([^<]+)</span>',
        html,
    )
    return dict(found)


def test_every_note_says_how_it_counts_in_the_tallys_words(client, challenged):
    campaign, entry, _ = challenged
    ada_slug = "ada"
    for url in (f"/c/{campaign.slug}/", f"/c/{campaign.slug}/{ada_slug}/{entry.id}"):
        page = client.get(url).get_data(as_text=True)
        assert "1 support</span>" in page and "0 oppose</span>" in page
        assert _labels(page) == {
            "Cleo": "counts: supports",
            "Bram": "does not count: the target&#39;s own note",
            "Gus": "does not count: joined after the turn opened",
        }, url
        assert "counts: opposes" not in page


def test_the_note_form_says_a_joiners_position_will_not_count(client, auth, db_session, challenged):
    campaign, entry, gus = challenged
    auth.login(db_session.get(User, gus.user_id))
    url = f"/c/{campaign.slug}/ada/{entry.id}"
    page = client.get(url).get_data(as_text=True)
    form = page[page.index('class="note-form"') :]
    assert "<fieldset disabled>" in form
    assert "Gus joined after turn 1 opened: a position taken this turn does not count" in form
    refused = auth.post(url + "/notes", {"body": "Still.", "stance": "oppose"})
    assert refused.status_code == 422
    assert "joined after turn 1 opened" in refused.get_data(as_text=True)


def test_a_position_on_a_void_challenge_is_said_not_to_count(
    client, auth, db_session, game, challenged
):
    campaign, entry, _ = challenged
    _, _, (ada, _, cleo, dov, *_) = game
    ada_user = db_session.get(User, ada.user_id)
    second = hosted_blog.store_entry(
        session=db_session,
        character=ada,
        title="And Cleo",
        body_markdown="Target: Cleo\n\nYou too.",
        mood="Challenging",
        now=T0 + timedelta(hours=2, minutes=30),
    )
    db_session.commit()
    auth.login(db_session.get(User, dov.user_id))
    page = client.get(f"/c/{campaign.slug}/ada/{second.id}").get_data(as_text=True)
    form = page[page.index('class="note-form"') :]
    assert "<fieldset disabled>" in form
    assert (
        "This challenge is invalid (the challenger already challenged this turn): positions "
        "on it do not count." in form
    )
    # Withdrawn, the first challenge has no effect: its notes say so.
    hosted_blog.withdraw_entry(
        session=db_session,
        actor=ada_user,
        campaign=campaign,
        entry_id=entry.id,
        now=T0 + timedelta(hours=3),
        mail=None,
    )
    db_session.commit()
    for url in (f"/c/{campaign.slug}/ada/{entry.id}", f"/c/{campaign.slug}/"):
        page = client.get(url).get_data(as_text=True)
        assert _labels(page)[cleo.name] == "does not count: the challenge is invalid or withdrawn"


def test_a_chosen_position_already_typed_shows_once(client, auth, db_session, game, challenged):
    campaign, entry, _ = challenged
    _, _, (_, _, _, dov, *_) = game
    auth.login(db_session.get(User, dov.user_id))
    posted = auth.post(
        f"/c/{campaign.slug}/ada/{entry.id}/notes", {"body": "Oppose. He lied.", "stance": "oppose"}
    )
    assert posted.status_code == 302
    note = db_session.exec(
        select(Note).where(Note.entry_id == entry.id, Note.author_character_id == dov.id)
    ).one()
    assert note.body_html.count("Oppose") == 1 and note.stance == "oppose"
    page = client.get(f"/c/{campaign.slug}/ada/{entry.id}").get_data(as_text=True)
    assert _labels(page)["Dov"] == "counts: opposes"


def test_a_joiner_is_not_offered_a_challenge_and_the_api_says_why(
    app, client, auth, db_session, game, challenged
):
    wire(app)
    campaign, _, gus = challenged
    gus_user = db_session.get(User, gus.user_id)
    auth.login(gus_user)
    page = client.get(f"/c/{campaign.slug}/write").get_data(as_text=True)
    reason = "Gus joined after turn 1 opened: a challenge this turn would be invalid"
    assert '<fieldset id="challenge" disabled>' in page and reason in page
    option = Api(client).get(
        f"/campaigns/{campaign.slug}/challenge-option", token=make_token(db_session, gus_user)
    )
    assert option.status_code == 200
    assert option.json["allowed"] is False and reason in option.json["reason"]
    # Nor is anyone offered Gus as a target: that challenge would be invalid too.
    _, _, (_, _, cleo, *_) = game
    cleo_user = db_session.get(User, cleo.user_id)
    option = Api(client).get(
        f"/campaigns/{campaign.slug}/challenge-option", token=make_token(db_session, cleo_user)
    )
    assert option.json["allowed"] is True
    assert "Gus" not in [t["name"] for t in option.json["targets"]]
    assert "Not offered: Gus, who joined after this turn opened" in option.json["reason"]


def test_a_resolved_turns_notes_keep_the_labels_it_was_resolved_with(
    client, auth, db_session, game, challenged
):
    """The planet and the HTML archive read a resolved turn's labels from its stored
    result, not from a tally computed again."""
    import io
    import zipfile

    campaign, entry, _ = challenged
    _, referee, _ = game
    turns.close_turn(session=db_session, campaign=campaign, actor=None, now=T0 + timedelta(hours=4))
    turns.resolve_turn(
        session=db_session, campaign=campaign, actor=None, now=T0 + timedelta(hours=4)
    )
    db_session.commit()
    expected = {
        "Cleo": "counts: supports",
        "Bram": "does not count: the target&#39;s own note",
        "Gus": "does not count: joined after the turn opened",
    }
    assert _labels(client.get(f"/c/{campaign.slug}/").get_data(as_text=True)) == expected
    auth.login(referee)
    archive = zipfile.ZipFile(io.BytesIO(client.get(f"/c/{campaign.slug}/archive.zip").data))
    turn_page = archive.read(f"{campaign.slug}/turns/turn-1.html").decode()
    assert _labels(turn_page) == expected
