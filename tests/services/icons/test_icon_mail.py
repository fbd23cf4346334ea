"""Issue #33 item 1: icons show "in the mails' HTML part" (a forum post's mail; the notes
on an entry), by their address on pbp, which serves them."""

from __future__ import annotations

from datetime import timedelta

from sqlmodel import select

from pbp.models import OutboxMessage, User
from pbp.models.forum import Thread
from pbp.services import icons
from pbp.services.forum import threads
from pbp.services.mail.notifications import queue_note_notification
from pbp.services.noteworthy import hosted_blog, turns
from tests.factories import make_campaign, make_characters
from tests.helpers import API_NOW as NOW
from tests.services.forum.tables import MAIL, T0, make_table, write
from tests.services.icons.pictures import picture


def _html_to(session, user) -> str:
    rows = session.exec(select(OutboxMessage).where(OutboxMessage.recipient == user.email))
    return "\n".join(m.body_html or "" for m in rows)


def test_a_forum_post_mail_shows_its_icon(db_session):
    table = make_table(db_session)
    icon = icons.add_icon(
        session=db_session, campaign=table.campaign, actor=table.ada_user,
        character_slug=table.ada.slug, keyword="k", alt="MKMAILICON", data=picture(), now=T0,
    )  # fmt: skip
    opening = write(db_session, table, table.gm, "Rain.")
    thread = db_session.get(Thread, opening.thread_id)
    threads.set_watch(
        session=db_session, campaign=table.campaign, thread=thread, user=table.bram_user,
        on=True, now=T0,
    )  # fmt: skip
    write(db_session, table, table.ada_user, "Hello.", thread=thread, minutes=1)
    html = _html_to(db_session, table.bram_user)
    assert f'src="{MAIL.base_url}{icon.path}" alt="MKMAILICON"' in html


def test_a_notes_mail_shows_each_notes_icon(db_session):
    from tests.factories import make_user

    campaign = make_campaign(db_session, referee=make_user(db_session, "Ref"))
    ada, bram = make_characters(db_session, campaign, names=("Ada", "Bram"))
    turns.post_event(session=db_session, campaign=campaign, text="Go.", actor=None, now=NOW)
    icon = icons.add_icon(
        session=db_session, campaign=campaign, actor=db_session.get(User, bram.user_id),
        character_slug=bram.slug, keyword="k", alt="MKNOTEICON", data=picture(), now=NOW,
    )  # fmt: skip
    entry = hosted_blog.store_entry(
        session=db_session, character=ada, title="T", body_markdown="B.", mood="Calm", now=NOW
    )
    note = hosted_blog.store_note(
        session=db_session, entry=entry, author=bram, body_markdown="Nice.",
        now=NOW + timedelta(minutes=1),
    )  # fmt: skip
    queue_note_notification(session=db_session, settings=MAIL, entry=entry, notes=[note], now=NOW)
    html = _html_to(db_session, db_session.get(User, ada.user_id))
    assert f'src="{MAIL.base_url}{icon.path}" alt="MKNOTEICON"' in html


def test_the_archive_carries_the_icons_beside_entries_and_notes(db_session):
    """Issue #33 item 1: icons show "in the archive export": each picture in the zip,
    beside its entry and note, readable offline."""
    import io
    import zipfile

    from pbp.models import Campaign
    from pbp.services import export
    from tests.factories import make_user

    campaign = make_campaign(db_session, referee=make_user(db_session, "Ref"))
    ada, bram = make_characters(db_session, campaign, names=("Ada", "Bram"))
    turns.post_event(session=db_session, campaign=campaign, text="Go.", actor=None, now=NOW)
    icon = icons.add_icon(
        session=db_session, campaign=campaign, actor=db_session.get(User, ada.user_id),
        character_slug=ada.slug, keyword="k", alt="MKARCHIVEICON", data=picture(), now=NOW,
    )  # fmt: skip
    hosted_blog.store_entry(
        session=db_session, character=ada, title="T", body_markdown="B.", mood="Calm", now=NOW
    )
    data = export.archive_zip(session=db_session, campaign=db_session.get(Campaign, campaign.id))
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        names = archive.namelist()
        assert f"{campaign.slug}/icons/{icon.id}.png" in names
        blog = archive.read(f"{campaign.slug}/blogs/{ada.slug}.html").decode()
    assert f'src="../icons/{icon.id}.png" alt="MKARCHIVEICON"' in blog
    assert bram  # Bram has no icon: his entries (none) would show none
