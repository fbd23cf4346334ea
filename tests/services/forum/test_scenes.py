"""The forum's services: who sees which post and roll (one rule, used by pages, feed,
mail and export), edits with history, deletion that keeps rolls, idempotent posting,
and refusals that leave nothing half-saved."""

from __future__ import annotations

import pytest
from sqlmodel import select

from pbp.errors import Conflict, Forbidden, NotFound, UserError
from pbp.models import AuditLog
from pbp.models.forum import Post, PostRevision, Roll, Thread
from pbp.rules.dice import RollSyntaxError
from pbp.services.forum import drafts, gm, posts, rolls
from pbp.services.forum.threads import get_thread, list_threads
from pbp.services.forum.visibility import get_roll_view, visible_posts
from tests.services.forum.tables import T0, make_table, write


@pytest.fixture
def table(db_session):
    return make_table(db_session)


def _ids(views) -> list[int]:
    return [v.id for v in views]


def _everyone(table):
    return {
        "gm": table.gm,
        "author": table.ada_user,
        "recipient": table.bram_user,
        "other player": table.cleo_user,
        "stranger": table.stranger,
        "visitor": None,
    }


@pytest.mark.parametrize(
    ("audience", "readers"),
    [
        ("all", {"gm", "author", "recipient", "other player", "stranger", "visitor"}),
        ("gm", {"gm", "author"}),
        ("whisper", {"gm", "author", "recipient"}),
    ],
)
def test_who_reads_a_post(db_session, table, audience, readers):
    opening = write(db_session, table, table.gm, "A scene for everyone.")
    thread = db_session.get(Thread, opening.thread_id)
    recipients = (table.bram_user.id,) if audience == "whisper" else ()
    post = write(
        db_session,
        table,
        table.ada_user,
        "The secret plan.",
        thread=thread,
        audience=audience,
        recipient_ids=recipients,
    )
    for who, user in _everyone(table).items():
        views = visible_posts(
            session=db_session, campaign=table.campaign, viewer=table.viewer(user), thread=thread
        )
        assert (post.id in _ids(views)) == (who in readers), who


ROLL_SEERS = {
    "public": {"gm", "author", "recipient", "other player", "stranger", "visitor"},
    "gm": {"gm", "author"},
    "blind": {"gm"},
}


@pytest.mark.parametrize("visibility", ["public", "gm", "blind"])
def test_who_sees_a_rolls_dice(db_session, table, visibility):
    post = write(db_session, table, table.ada_user, "/roll 4d6 # sneak", roll_visibility=visibility)
    (roll,) = db_session.exec(select(Roll).where(Roll.post_id == post.id)).all()
    faces = roll.result["faces"]
    for who, user in _everyone(table).items():
        view = rolls.roll_view(roll, table.viewer(user), post_visible=True, revealed=False)
        shown = who in ROLL_SEERS[visibility]
        assert (view.state == "shown") == shown, who
        assert (view.result is not None) == shown, who
        if not shown:
            assert roll.result["text"] not in view.text
            assert "faces" not in view.as_export() and "total" not in view.as_export()
            assert view.faces == []
        else:
            assert view.faces == [tuple(f) for f in faces]
    blind_roller = rolls.roll_view(
        roll, table.viewer(table.ada_user), post_visible=True, revealed=False
    )
    if visibility == "blind":
        assert blind_roller.state == "blind" and blind_roller.command == roll.command


def test_a_hidden_post_hides_its_rolls_entirely(db_session, table):
    post = write(db_session, table, table.ada_user, "/roll d6", audience="gm")
    (roll,) = db_session.exec(select(Roll).where(Roll.post_id == post.id)).all()
    for user in (table.cleo_user, table.stranger, None):
        assert rolls.roll_view(roll, table.viewer(user), post_visible=False, revealed=False) is None
        with pytest.raises(NotFound):
            get_roll_view(
                session=db_session,
                campaign=table.campaign,
                roll_id=roll.id,
                viewer=table.viewer(user),
            )


def test_after_the_end_every_roll_is_shown_but_hidden_posts_keep_their_words(db_session, table):
    post = write(
        db_session,
        table,
        table.ada_user,
        "Poison the duke.\n/roll 2d6 # poison the duke",
        audience="whisper",
        recipient_ids=(table.bram_user.id,),
        roll_visibility="blind",
    )
    gm.end_campaign(session=db_session, campaign=table.campaign, actor=table.gm, now=T0)
    view, post_view = get_roll_view(
        session=db_session,
        campaign=table.campaign,
        roll_id=db_session.exec(select(Roll.id).where(Roll.post_id == post.id)).one(),
        viewer=table.viewer(table.cleo_user),
    )
    assert post_view is None and view.state == "shown" and view.faces
    assert "duke" not in view.command and "duke" not in view.text


def test_threads_list_only_what_the_viewer_can_read(db_session, table):
    write(db_session, table, table.ada_user, "For the GM.", title="Secret", audience="gm")
    write(db_session, table, table.gm, "Open.", title="Open")
    for user, titles in (
        (table.gm, {"Secret", "Open"}),
        (table.ada_user, {"Secret", "Open"}),
        (table.cleo_user, {"Open"}),
        (None, {"Open"}),
    ):
        threads = list_threads(
            session=db_session, campaign=table.campaign, viewer=table.viewer(user)
        )
        assert {t.title for t in threads} == titles
    secret = db_session.exec(select(Thread).where(Thread.title == "Secret")).one()
    with pytest.raises(NotFound):
        get_thread(
            session=db_session,
            campaign=table.campaign,
            thread_id=secret.id,
            viewer=table.viewer(table.cleo_user),
        )


def test_edit_marks_the_post_and_keeps_every_version_for_the_gm(db_session, table):
    post = write(db_session, table, table.ada_user, "First words.\n/roll d6")
    later = T0.replace(hour=21)
    posts.edit_post(
        session=db_session,
        campaign=table.campaign,
        post=post,
        editor=table.ada_user,
        body="Second thoughts.",
        now=later,
    )
    assert post.edited_at == later and post.body == "Second thoughts."
    history = posts.post_history(
        session=db_session, campaign=table.campaign, post=post, viewer=table.viewer(table.gm)
    )
    assert [r.body for r in history] == ["First words.", "Second thoughts."]
    with pytest.raises(Forbidden):
        posts.post_history(
            session=db_session,
            campaign=table.campaign,
            post=post,
            viewer=table.viewer(table.ada_user),
        )
    assert len(db_session.exec(select(Roll).where(Roll.post_id == post.id)).all()) == 1


def test_an_edit_cannot_roll_or_be_made_by_someone_else(db_session, table):
    post = write(db_session, table, table.ada_user, "Words.")
    with pytest.raises(UserError, match="new post"):
        posts.edit_post(
            session=db_session,
            campaign=table.campaign,
            post=post,
            editor=table.ada_user,
            body="Words.\n/roll d20",
            now=T0,
        )
    with pytest.raises(Forbidden):
        posts.edit_post(
            session=db_session,
            campaign=table.campaign,
            post=post,
            editor=table.cleo_user,
            body="Mine now.",
            now=T0,
        )
    assert post.body == "Words." and post.edited_at is None


def test_the_gm_may_edit_a_players_post(db_session, table):
    post = write(db_session, table, table.ada_user, "Typo here.")
    posts.edit_post(
        session=db_session,
        campaign=table.campaign,
        post=post,
        editor=table.gm,
        body="Typo fixed.",
        now=T0,
    )
    revision = db_session.exec(select(PostRevision).order_by(PostRevision.id.desc())).first()
    assert revision.edited_by == table.gm.id


def test_deleting_a_post_hides_its_words_but_not_its_rolls(db_session, table):
    post = write(db_session, table, table.ada_user, "I cheat.\n/roll d20 # bad luck")
    posts.delete_post(
        session=db_session, campaign=table.campaign, post=post, actor=table.ada_user, now=T0
    )
    (player_view,) = visible_posts(
        session=db_session, campaign=table.campaign, viewer=table.viewer(table.cleo_user)
    )
    assert player_view.deleted and player_view.body is None and player_view.html == ""
    assert len(player_view.rolls) == 1 and player_view.rolls[0].state == "shown"
    (gm_view,) = visible_posts(
        session=db_session, campaign=table.campaign, viewer=table.viewer(table.gm)
    )
    assert "I cheat." in gm_view.html
    assert db_session.exec(select(AuditLog).where(AuditLog.action == "post.delete")).one()


def test_the_same_form_submitted_twice_makes_one_post(db_session, table):
    first = write(db_session, table, table.ada_user, "Once.\n/roll d6", client_token="tok-12345678")
    thread = db_session.get(Thread, first.thread_id)
    again = write(
        db_session,
        table,
        table.ada_user,
        "Once.\n/roll d6",
        thread=thread,
        client_token="tok-12345678",
    )
    assert again.id == first.id
    assert len(db_session.exec(select(Post)).all()) == 1
    assert len(db_session.exec(select(Roll)).all()) == 1


def test_the_same_new_thread_form_twice_opens_one_thread(db_session, table):
    a = write(db_session, table, table.ada_user, "Hello.", client_token="thread-token-1")
    b = write(db_session, table, table.ada_user, "Hello.", client_token="thread-token-1")
    assert a.id == b.id
    assert len(db_session.exec(select(Thread)).all()) == 1


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ("Text.\n/roll 2q6", RollSyntaxError),
        ("/roll d6\n/roll noir sideways skill=3", RollSyntaxError),
        ("", UserError),
    ],
)
def test_a_refused_post_leaves_nothing_behind(db_session, table, body, error):
    with pytest.raises(error):
        write(db_session, table, table.ada_user, body)
    assert db_session.exec(select(Post)).all() == []
    assert db_session.exec(select(Thread)).all() == []
    assert db_session.exec(select(Roll)).all() == []


def test_strangers_cannot_post_and_players_only_as_their_own_characters(db_session, table):
    with pytest.raises(Forbidden):
        write(db_session, table, table.stranger, "Let me in.")
    with pytest.raises(Forbidden, match="not your character"):
        write(db_session, table, table.cleo_user, "I am Ada.", character_id=table.ada.id)
    write(db_session, table, table.gm, "I play Ada today.", character_id=table.ada.id)


def test_whispers_need_members_as_recipients(db_session, table):
    with pytest.raises(UserError, match="at least one"):
        write(db_session, table, table.ada_user, "Psst.", audience="whisper")
    with pytest.raises(UserError, match="members"):
        write(
            db_session,
            table,
            table.ada_user,
            "Psst.",
            audience="whisper",
            recipient_ids=(table.stranger.id,),
        )


def test_an_ended_campaign_is_read_only(db_session, table):
    post = write(db_session, table, table.ada_user, "Last words.")
    gm.end_campaign(session=db_session, campaign=table.campaign, actor=table.gm, now=T0)
    with pytest.raises(Conflict):
        write(db_session, table, table.bram_user, "Too late.")
    with pytest.raises(Forbidden):
        posts.edit_post(
            session=db_session,
            campaign=table.campaign,
            post=post,
            editor=table.ada_user,
            body="Changed.",
            now=T0,
        )


def test_noteworthy_campaigns_have_no_forum(db_session):
    table = make_table(db_session, ruleset="noteworthy")
    with pytest.raises(NotFound, match="blogs"):
        write(db_session, table, table.ada_user, "Hello.")


def test_preview_rolls_nothing(db_session, table):
    secret = rolls.get_secret(session=db_session, campaign=table.campaign)
    before = (secret.seed, secret.commitment) if secret else None
    html, commands = drafts.preview(session=db_session, text="**Bold**\n/roll 2d6+1")
    assert "<strong>Bold</strong>" in html and "/roll" not in html
    assert commands == ["/roll 2d6+1"]
    assert db_session.exec(select(Roll)).all() == []
    secret = rolls.get_secret(session=db_session, campaign=table.campaign)
    assert ((secret.seed, secret.commitment) if secret else None) == before


def test_fenced_roll_lines_stay_text(db_session, table):
    post = write(db_session, table, table.ada_user, "How to roll:\n```\n/roll d6\n```")
    assert "/roll d6" in post.body
    assert db_session.exec(select(Roll)).all() == []
