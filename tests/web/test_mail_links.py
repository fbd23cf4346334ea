"""Every link in every mail pbp sends opens, for the person it was sent to (issue #15).

A Noteworthy campaign is played (an event tailored for one character, a challenge, a
supporting note, a reminder, the results, a final notice, a digest), a Noir scene is
played (posts to watchers, a whisper), a Sex & Violence table is opened (the card mail),
and the account mails go out (an invitation, a password reset, a sign-up confirmation).
The outbox is then delivered for real to an aiosmtpd server; each received message is
parsed with the email package, every link of its text and HTML parts is extracted, and
each is opened with the test client as its recipient would open it:

- links in campaign mails, logged in as the recipient;
- invitation, password-reset, sign-up-confirmation and unsubscribe links, anonymously
  (whoever holds the mail, without an account or session).

Each must answer 200 without a redirect, except the sign-up confirmation link, whose
intended behaviour is to confirm the address and send the new member to the front page
(followed, then 200).
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from datetime import timedelta
from email.message import EmailMessage
from html.parser import HTMLParser
from urllib.parse import urlsplit

import pytest
from sqlmodel import select

from pbp.db import database
from pbp.models import OutboxMessage, Thread, User, utcnow
from pbp.services import campaigns
from pbp.services.accounts import backoff, signup
from pbp.services.accounts import logins as accounts
from pbp.services.alive import nudges
from pbp.services.cards import tables as cards
from pbp.services.forum import posts
from pbp.services.forum.drafts import Draft
from pbp.services.mail import notifications
from pbp.services.mail import preferences as mail_preferences
from pbp.services.mail.send import SmtpTransport, send_pending
from pbp.services.mail.settings import MailSettings
from pbp.services.noteworthy import hosted_blog, turns
from tests.helpers import PASSWORD, make_test_app, post_form

BASE = "http://pbp.test"
SECRET = "test-secret-key-" + "x" * 32
MAIL_FROM = "pbp <pbp@pbp.test>"
MAIL = MailSettings(BASE, SECRET, MAIL_FROM)
# Whoever holds these mails opens their links without a session: the invitee and the
# new sign-up have no usable account yet, and someone resetting a password is logged out.
ANONYMOUS_KINDS = {"invite", "password_reset", "signup_confirmation"}
# Links whose intended answer is a redirect (path prefix -> why): none today (the sign-up
# confirmation link opens a page that asks for the password, issue #28 item 7).
REDIRECTING: dict[str, str] = {}
EXPECTED_KINDS = {
    *("event", "challenge", "note", "reminder", "results", "final", "digest"),
    *("forum_post", "invite", "password_reset", "signup_confirmation"),
    *("signup_existing", "login_failures"),
    *("nudge", "overdue", "overdue_list", "away", "back"),  # keeping a game alive, #30
}
_TEXT_URL = re.compile(r"https?://[^\s<>\"']+")


class _Hrefs(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []

    def handle_starttag(self, tag, attrs) -> None:
        for name, value in attrs:
            if name in ("href", "src") and value and not value.startswith(("mailto:", "#")):
                self.links.append(value)


def links_of(message: EmailMessage) -> list[str]:
    """Every web link in the message's text and HTML parts, in order."""
    found: list[str] = []
    for part in message.walk():
        if part.get_content_maintype() == "multipart":
            continue
        body = part.get_content()
        if part.get_content_type() == "text/html":
            parser = _Hrefs()
            parser.feed(body)
            found += parser.links
        elif part.get_content_type() == "text/plain":
            # A Markdown link "([look](url))" quoted in a forum mail ends in brackets.
            found += [u.rstrip(").,;:!?]") for u in _TEXT_URL.findall(body)]
    return found


@functools.cache
def _password_hash() -> str:
    return accounts.hash_password(PASSWORD)  # scrypt is slow: once per run


@pytest.fixture
def app(engine, connection, database_url, tmp_path, smtp):
    """The test app, sending through the real SMTP server (not the instance folder),
    with open sign-up so the confirmation mail exists."""
    return make_test_app(
        engine,
        connection,
        database_url,
        tmp_path / "instance",
        SMTP_URL=f"smtp://{smtp.host}:{smtp.port}?timeout=10",
        MAIL_FROM=MAIL_FROM,
        PBP_SIGNUP="open",
        PBP_LOGIN_LIMIT="1000 per minute",
    )


def _person(session, name: str) -> User:
    user = campaigns.create_user(
        session=session, email=f"{name.lower()}@links.test", display_name=name
    )
    user.password_hash = _password_hash()
    session.add(user)
    session.flush()
    return user


def _login(app, user: User):
    client = app.test_client()
    page = post_form(client, "/login", {"email": user.email, "password": PASSWORD, "next": ""})
    assert page.status_code == 302, f"{user.email} cannot log in"
    return client


def _play_noteworthy(app, session, now) -> None:
    referee = _person(session, "Rita")
    campaign = campaigns.create_campaign(
        session=session, referee=referee, name="Links Noteworthy", settings={"opening_turns": 0}
    )
    ada, bram, cleo = (
        campaigns.add_character(
            session=session, campaign=campaign, name=n, user=_person(session, n)
        )
        for n in ("Ada", "Bram", "Cleo")
    )
    ada_member = campaigns.membership(
        session=session, campaign=campaign, user=session.get(User, ada.user_id)
    )
    mail_preferences.set_preference(
        session=session, membership=ada_member, preference="digest", on=True
    )
    turns.post_event(
        session=session,
        campaign=campaign,
        text="The ball at the embassy.",
        actor=referee,
        now=now,
        tailored=[turns.Tailored(ada.id, "addition", "You carry the letter.")],
        mail=MAIL,
    )
    challenge = hosted_blog.store_entry(
        session=session,
        character=ada,
        title="A glove thrown",
        body_markdown="Target: Bram\n\nAda calls Bram a coward in front of everyone.",
        mood="Challenging",
        now=now + timedelta(minutes=5),
        mail=MAIL,
    )
    hosted_blog.store_entry(
        session=session,
        character=bram,
        title="Calm",
        body_markdown="Bram smiles.",
        mood="Calm",
        now=now + timedelta(minutes=6),
        mail=MAIL,
    )
    hosted_blog.store_note(
        session=session,
        entry=challenge,
        author=cleo,
        body_markdown="Cleo stands by Ada.",
        stance="support",
        now=now + timedelta(minutes=7),
        mail=MAIL,
    )
    session.commit()
    # The reminder, the results and the final notice are the referee's buttons.
    rita = _login(app, referee)
    for action, data in (
        ("remind", {}),
        ("close", {}),
        ("resolve", {}),
        ("final-notice", {"text": "Thank you all for playing."}),
    ):
        page = post_form(rita, f"/c/{campaign.slug}/referee/{action}", data)
        assert page.status_code in (302, 303), f"{action}: {page.status_code}"
    notifications.queue_digests(
        session=session, settings=MAIL, campaign=campaign, now=now + timedelta(1)
    )
    session.commit()


def _play_forum(session, now) -> None:
    gm, ann, ben = (_person(session, n) for n in ("Gail", "Ann", "Ben"))
    noir = campaigns.create_campaign(session=session, referee=gm, name="Links Noir", ruleset="noir")
    for name, user in (("Sam", ann), ("Vera", ben)):
        campaigns.add_character(session=session, campaign=noir, name=name, user=user)
    opening = posts.create_thread(
        session=session,
        campaign=noir,
        author=gm,
        title="Rain on Water Street",
        draft=Draft(body="The rain does not stop."),
        mail=MAIL,
        now=now,
    )
    thread = session.get(Thread, opening.thread_id)
    for minutes, author in enumerate((ann, ben), start=1):  # each reply mails the watchers
        posts.create_post(
            session=session,
            campaign=noir,
            thread=thread,
            author=author,
            draft=Draft(body=f"{author.display_name} waits.\n/roll 2d6"),
            mail=MAIL,
            now=now + timedelta(minutes=minutes),
        )
    posts.create_post(
        session=session,
        campaign=noir,
        thread=thread,
        author=gm,
        draft=Draft(body="Ann, you hear a step.", audience="whisper", recipient_ids=[ann.id]),
        mail=MAIL,
        now=now + timedelta(minutes=5),
    )
    # A card table: opening it posts in the scene, which mails the scene's watchers.
    sv = campaigns.create_campaign(
        session=session, referee=gm, name="Links Cards", ruleset="sex-and-violence"
    )
    campaigns.add_character(session=session, campaign=sv, name="Max", user=ann)
    first = posts.create_thread(
        session=session,
        campaign=sv,
        author=ann,
        title="The back room",
        draft=Draft(body="Max shuffles."),
        mail=MAIL,
        now=now,
    )
    table = session.get(Thread, first.thread_id)
    cards.create_game(
        session=session, campaign=sv, thread=table, user=gm, settings={}, mail=MAIL, now=now
    )
    session.commit()


def _account_mails(session, now) -> None:
    referee = session.exec(select(User).where(User.email == "rita@links.test")).one()
    campaign = campaigns.get_campaign(session=session, slug="links-noteworthy")
    accounts.create_invite(
        session=session,
        campaign=campaign,
        created_by=referee,
        secret_key=SECRET,
        base_url=BASE,
        now=now,
        email="newcomer@links.test",
        mail_from=MAIL_FROM,
    )
    accounts.request_password_reset(
        session=session,
        email="bram@links.test",
        secret_key=SECRET,
        base_url=BASE,
        now=now,
        mail_from=MAIL_FROM,
    )
    for email in ("walkin@links.test", "bram@links.test"):  # a new address, and an account's
        signup.sign_up(
            session=session,
            email=email,
            display_name="Walk In",
            secret_key=SECRET,
            base_url=BASE,
            now=now,
            mail_from=MAIL_FROM,
        )
    with pytest.raises(accounts.LoginFailed):  # the owner hears of wrong passwords
        backoff.log_in(
            session=session,
            email="bram@links.test",
            password="not the password",
            now=now,
            backoff=backoff.Backoff(mail_after=1),
            secret_key=SECRET,
            mail=MAIL,
        )
    session.commit()


def _open(app, clients: dict, kind: str, recipient: str, url: str):
    parts = urlsplit(url)
    assert f"{parts.scheme}://{parts.netloc}" == BASE, f"a {kind} mail links off-site: {url}"
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")  # as a browser
    anonymous = kind in ANONYMOUS_KINDS or parts.path.startswith("/mail/unsubscribe/")
    if anonymous:
        client = app.test_client()  # fresh each time: an opened link may log in
    else:
        if recipient not in clients:
            with database(app).session_factory() as session:
                user = session.exec(select(User).where(User.email == recipient)).one()
            clients[recipient] = _login(app, user)
        client = clients[recipient]
    redirects = any(parts.path.startswith(p) for p in REDIRECTING)
    return client.get(path, follow_redirects=redirects)


def _keep_alive(app, session, now) -> None:
    """Issue #30: a nudge before the deadline and after it, the referee's overdue list, and
    a player's going away and coming back (through the pages)."""
    referee = _person(session, "Rhea")
    campaign = campaigns.create_campaign(
        session=session, referee=referee, name="Links Alive", settings={"opening_turns": 0}
    )
    dan, eve = (
        campaigns.add_character(
            session=session, campaign=campaign, name=n, user=_person(session, n)
        )
        for n in ("Dan", "Eve")
    )
    deadline = now - timedelta(hours=1)
    turns.post_event(
        session=session, campaign=campaign, text="Waiting.", actor=referee,
        now=deadline - timedelta(hours=72), deadline=deadline,
    )  # fmt: skip
    for at in (deadline - timedelta(hours=24), deadline):
        nudges.run(session=session, campaign=campaign, now=at, mail=MAIL)
    session.commit()
    eve_client = _login(app, session.get(User, eve.user_id))
    until = (now + timedelta(days=10)).date().isoformat()
    away = {"until": until, "note": "A week off."}
    assert post_form(eve_client, f"/c/{campaign.slug}/me/away", away).status_code == 302
    assert post_form(eve_client, f"/c/{campaign.slug}/me/back", {}).status_code == 302
    del dan


def test_every_link_in_every_mail_opens_for_its_recipient(app, db_session, smtp):
    now = utcnow().replace(microsecond=0) - timedelta(hours=2)
    _play_noteworthy(app, db_session, now)
    _play_forum(db_session, now)
    _keep_alive(app, db_session, now)
    _account_mails(db_session, utcnow())  # a reset link lives an hour

    # Whatever the requests did not send already, delivered over SMTP (a day on: the
    # digest is queued for the morning after).
    send_pending(
        engine_or_sessionmaker=database(app).session_factory,
        transport=SmtpTransport(host=smtp.host, port=smtp.port, security="plain", timeout=10),
        now=utcnow() + timedelta(days=1),
    )
    db_session.expire_all()  # the sender wrote the statuses through its own session
    rows = db_session.exec(select(OutboxMessage)).all()
    assert rows and {r.status for r in rows} == {"sent"}, [
        (r.kind, r.status, r.next_attempt_at, r.last_error) for r in rows if r.status != "sent"
    ]
    kind_of = {r.message_id: r.kind for r in rows}
    assert smtp.message_count() == len(rows)

    clients: dict = {}
    checked: Counter = Counter()
    messages: Counter = Counter()
    lower_bound = 0
    failures = []
    for received in smtp.messages:
        message = received.message
        kind = kind_of[message["Message-ID"].strip()]
        messages[kind] += 1
        links = list(dict.fromkeys(links_of(message)))  # text and HTML repeat most links
        # Each mail links to what it announces; one with a List-Unsubscribe header also
        # shows that link in its body, for readers whose client has no button.
        lower_bound += 1
        if unsubscribe := message["List-Unsubscribe"]:
            assert unsubscribe.strip().strip("<>") in links, f"{kind}: no unsubscribe link"
            lower_bound += 1
        assert links, f"a {kind} mail to {received.recipient} has no link"
        for url in links:
            page = _open(app, clients, kind, received.recipient, url)
            checked[kind] += 1
            if page.status_code != 200:
                failures.append(f"{kind} to {received.recipient}: {url} -> {page.status_code}")
    report = ", ".join(f"{k}: {checked[k]} in {messages[k]} mail(s)" for k in sorted(checked))
    print(f"\nmail links checked: {sum(checked.values())} ({report})")
    assert failures == [], "\n".join(failures)
    assert set(messages) == EXPECTED_KINDS
    assert sum(checked.values()) >= lower_bound > len(EXPECTED_KINDS)


def _statuses(session, kind: str) -> list[str]:
    session.expire_all()  # the sender wrote them through its own session
    rows = session.exec(select(OutboxMessage).where(OutboxMessage.kind == kind)).all()
    return [row.status for row in rows]


def test_the_mails_a_person_waits_for_leave_with_the_request(app, db_session, smtp):
    """A password reset, a sign-up confirmation and an invitation are on the SMTP server
    when the page answers: no sweep runs here (the scheduler's would come within 30 s)."""
    rita = _person(db_session, "Rita")
    campaign = campaigns.create_campaign(session=db_session, referee=rita, name="Mail Now")
    db_session.commit()
    client = app.test_client()

    page = post_form(client, "/reset", {"email": rita.email})
    assert page.status_code == 200
    assert smtp.message_count() == 1 and _statuses(db_session, "password_reset") == ["sent"]

    form = {"email": "newcomer@links.test", "display_name": "Nia"}
    page = post_form(client, "/signup", form)
    assert page.status_code == 200, page.get_data(as_text=True)
    assert smtp.message_count() == 2 and _statuses(db_session, "signup_confirmation") == ["sent"]

    referee = _login(app, rita)
    form = {"email": "player@links.test", "role": "player", "character": "", "days": "14"}
    page = post_form(referee, f"/c/{campaign.slug}/invites", form)
    assert page.status_code == 200, page.get_data(as_text=True)
    assert smtp.message_count() == 3 and _statuses(db_session, "invite") == ["sent"]
    assert {m.recipient for m in smtp.messages} == {
        rita.email,
        "newcomer@links.test",
        "player@links.test",
    }


def test_links_of_reads_both_parts():
    message = EmailMessage()
    message.set_content("See http://pbp.test/a. And ([look](http://pbp.test/b))\n")
    message.add_alternative('<p><a href="http://pbp.test/c">c</a> <a href="#x">x</a></p>', "html")
    assert links_of(message) == ["http://pbp.test/a", "http://pbp.test/b", "http://pbp.test/c"]
