"""The board, "Waiting on you" (issue #29 item 1): each kind of line appears when there is
something to do and goes when it is done; most urgent first; a whisper to someone else
never shows; the number of queries does not grow with the member's campaigns."""

from __future__ import annotations

from datetime import timedelta

from sqlmodel import select

from pbp.models import Blog, Invite, OutboxMessage
from pbp.models.forum import Thread
from pbp.services import board, campaigns
from pbp.services.accounts import logins as accounts
from pbp.services.noteworthy import hosted_blog, referee
from tests.bench.test_bench_pages import count_selects
from tests.factories import make_campaign, make_characters, make_user
from tests.services.forum.tables import T0, make_table, write

KEY = "test-secret-key-" + "x" * 32


def _board(session, user, now=T0):
    return board.board(session=session, user=user, now=now, secret_key=KEY)


def _kinds(found) -> list[str]:
    return [item.kind for item in found.items]


def _game(session, n_turn_deadline_hours=24, member=None):
    """A Noteworthy game of Ada, Bram and Cleo (and `member`'s Mo) in its first turn."""
    referee_user = make_user(session, "Rita Referee")
    campaign = make_campaign(session, referee=referee_user, settings={"opening_turns": 0})
    chars = make_characters(session, campaign, names=("Ada", "Bram", "Cleo"))
    if member is not None:
        chars.append(
            campaigns.add_character(session=session, campaign=campaign, name="Mo", user=member)
        )
    for character in chars:
        hosted_blog.builtin_blog(session=session, character=character)
    referee.open_turn(
        session=session,
        campaign=campaign,
        actor=referee_user,
        now=T0,
        text="The ball.",
        deadline_hours=n_turn_deadline_hours,
    )
    session.commit()
    return campaign, referee_user, chars


def _user(session, character):
    from pbp.models import User

    return session.get(User, character.user_id)


def test_a_player_is_waited_on_for_their_entry_until_it_is_written(db_session):
    """Noteworthy: "In a turn, you post at least one in-character entry." """
    campaign, _, (ada, *_) = _game(db_session)
    ada_user = _user(db_session, ada)
    (line,) = _board(db_session, ada_user).items
    assert line.kind == "entry" and "Ada's entry for turn 1" in line.text
    assert line.path == f"/c/{campaign.slug}/write" and line.due == T0 + timedelta(hours=24)
    hosted_blog.write_entry(
        session=db_session,
        actor=ada_user,
        campaign=campaign,
        title="Dear diary",
        mood="Pensive",
        body="Nothing today.",
        now=T0,
        mail=None,
    )
    db_session.commit()
    assert _board(db_session, ada_user).items == ()


def test_a_challenge_against_my_character_shows_its_count_and_its_end(db_session):
    campaign, _, (ada, bram, cleo) = _game(db_session)
    campaign.settings = {**campaign.settings, "fair_interval_hours": 12}
    db_session.add(campaign)
    bram_user = _user(db_session, bram)
    hosted_blog.write_entry(
        session=db_session,
        actor=_user(db_session, ada),
        campaign=campaign,
        title="En garde",
        mood="Challenging",
        body="Bram, you cad.",
        target_id=bram.id,
        now=T0 + timedelta(hours=1),
        mail=None,
    )
    db_session.commit()
    lines = {item.kind: item for item in _board(db_session, bram_user).items}
    challenge = lines["challenge"]
    assert challenge.text == "Ada challenges Bram: 0 support · 0 oppose"
    assert challenge.due == T0 + timedelta(hours=13)
    assert challenge.path == f"/c/{campaign.slug}/turns/1"
    # Most urgent first: the fair interval ends before the turn's deadline.
    assert _kinds(_board(db_session, bram_user)) == ["challenge", "entry"]
    # Nobody else is challenged.
    assert "challenge" not in _kinds(_board(db_session, _user(db_session, cleo)))


def test_a_referee_is_told_of_a_turn_past_its_deadline_failed_mail_and_failing_feeds(
    db_session,
):
    campaign, referee_user, (ada, *_) = _game(db_session, n_turn_deadline_hours=1)
    assert "overdue" not in _kinds(_board(db_session, referee_user))
    blog = db_session.exec(select(Blog).where(Blog.character_id == ada.id)).one()
    blog.last_error = "http_status: 404"
    db_session.add(blog)
    db_session.add(
        OutboxMessage(
            campaign_id=campaign.id,
            kind="event",
            recipient="x@example.test",
            subject="s",
            body_text="b",
            status="failed",
            message_id="<m@pbp.test>",
            dedupe_key="board-test-failed-mail",
        )
    )
    db_session.commit()
    found = _board(db_session, referee_user, now=T0 + timedelta(hours=2))
    lines = {item.kind: item for item in found.items}
    assert lines["overdue"].text == "Turn 1 is past its deadline: close it"
    assert lines["feeds"].text == "1 feed(s) failed at their last read"
    assert lines["mail"].text == "1 mail(s) could not be delivered"
    assert _kinds(found)[0] == "overdue"  # the only line with a time, and it has passed


def test_a_scene_with_posts_since_mine_and_whispers(db_session):
    table = make_table(db_session)
    opening = write(db_session, table, table.gm, "The rain falls.")
    thread = db_session.get(Thread, opening.thread_id)
    write(db_session, table, table.ada_user, "Ada waits.", thread=thread)
    assert "scene" not in _kinds(_board(db_session, table.ada_user))
    write(db_session, table, table.gm, "A door opens.", thread=thread)
    write(
        db_session,
        table,
        table.bram_user,
        "Psst, Ada.",
        thread=thread,
        audience="whisper",
        recipient_ids=(table.ada_user.id,),
    )
    (line,) = _board(db_session, table.ada_user).items
    assert line.kind == "whisper"
    assert line.text == f"2 new post(s) in “{thread.title}” since yours, 1 whispered to you"
    assert line.path == f"/c/{table.campaign.slug}/forum/t/{thread.id}"
    write(db_session, table, table.ada_user, "Ada answers.", thread=thread)
    assert _board(db_session, table.ada_user).items == ()


def test_no_board_line_shows_a_whisper_or_a_gm_post_to_someone_else(db_session):
    """Issue #29: the board is a channel; a whisper to Bram and a GM-only post never count
    for Cleo, who posted in the scene before them."""
    table = make_table(db_session)
    opening = write(db_session, table, table.gm, "The rain falls.")
    thread = db_session.get(Thread, opening.thread_id)
    write(db_session, table, table.cleo_user, "Cleo listens.", thread=thread)
    write(
        db_session,
        table,
        table.ada_user,
        "Bram: the key is under the mat.",
        thread=thread,
        audience="whisper",
        recipient_ids=(table.bram_user.id,),
    )
    write(db_session, table, table.ada_user, "For the GM only.", thread=thread, audience="gm")
    assert _board(db_session, table.cleo_user).items == ()
    # The GM reads them all: Cleo's post, the whisper and the GM-only post.
    gm_lines = _board(db_session, table.gm).items
    assert [line.text for line in gm_lines] == [f"3 new post(s) in “{thread.title}” since yours"]


def test_an_invitation_to_my_address_links_to_its_page(db_session):
    campaign, referee_user, _ = _game(db_session)
    someone = make_user(db_session, "Nell")
    issued = accounts.create_invite(
        session=db_session,
        campaign=campaign,
        created_by=referee_user,
        secret_key=KEY,
        base_url="http://pbp.test",
        now=T0,
        email=someone.email.upper(),
    )
    db_session.commit()
    (line,) = _board(db_session, someone).items
    assert line.kind == "invite" and line.path in issued.url
    invite = db_session.get(Invite, issued.invite.id)
    invite.used_at = T0
    db_session.commit()
    assert _board(db_session, someone).items == ()


def test_nothing_waits_on_a_member_without_campaigns(db_session):
    assert _board(db_session, make_user(db_session)).items == ()


def test_the_board_reads_a_fixed_number_of_queries_whatever_the_campaigns(db_session, engine):
    """Issue #29: "queries (constant at both scales)". A member of 2 and of 6 Noteworthy
    campaigns, each with an open turn and a challenge against their character, and of as
    many forum scenes with a post since theirs: the same count of SELECTs, once the
    tallies of the unchanged turns are kept."""
    member = make_user(db_session, "Mo")

    def join(n: int) -> None:
        for _ in range(n):
            campaign, _, (ada, *_, mo) = _game(db_session, member=member)
            hosted_blog.write_entry(
                session=db_session,
                actor=_user(db_session, ada),
                campaign=campaign,
                title="En garde",
                mood="Challenging",
                body="Mo!",
                target_id=mo.id,
                now=T0,
                mail=None,
            )
            others = [make_user(db_session) for _ in range(4)]
            table = make_table(db_session, users=[others[0], member, *others[1:]])
            opening = write(db_session, table, table.gm, "Scene.")
            thread = db_session.get(Thread, opening.thread_id)
            write(db_session, table, member, "Mo arrives.", thread=thread)
            write(db_session, table, table.gm, "Rain.", thread=thread)
            db_session.commit()

    def count() -> tuple[int, list[str]]:
        _board(db_session, member)  # the tallies run once, then are kept
        with count_selects(engine) as seen:
            found = _board(db_session, member)
        return len(seen), sorted(_kinds(found))

    join(2)
    small, kinds = count()
    assert kinds == ["challenge"] * 2 + ["entry"] * 2 + ["scene"] * 2
    join(4)
    larger, kinds = count()
    assert len(kinds) == 18 and larger == small
