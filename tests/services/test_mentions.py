"""Issue #29 item 4: "@Name" links to the character and mails its player once per item,
under the "mentions" preference; a whisper or a GM-only post mentions only those who may
read it (every audience of pbp.services.forum.visibility below)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from html.parser import HTMLParser

import pytest
from sqlmodel import select

from pbp.markup import link_mentions, mention_key, render_markdown
from pbp.models import Membership, OutboxMessage, Turn, User
from pbp.services import campaigns
from pbp.services.forum import posts
from pbp.services.mail.preferences import set_preference
from pbp.services.noteworthy import hosted_blog, planet, turns
from tests.factories import make_campaign, make_characters, make_user
from tests.services.forum.tables import MAIL, T0, make_table, write

pytestmark = pytest.mark.db

TARGETS = {
    mention_key(name): f"/c/game/{slug}/"
    for name, slug in (
        ("Ada", "ada"),
        ("Lady Vance", "vance"),
        ("Lady", "lady"),
        ("Tom & Jo", "tj"),
    )
}


def _linked(markdown: str) -> tuple[str, list[str]]:
    return link_mentions(render_markdown(markdown), TARGETS)


# -- the link, in the rendering step -------------------------------------------------------


def test_a_name_or_alias_after_at_becomes_a_link_the_longest_name_first():
    html, found = _linked("Hi @ada and @Lady  Vance, then @Lady; @Tom & Jo too.")
    rel = 'rel="nofollow noopener noreferrer ugc"'
    assert f'<a href="/c/game/ada/" {rel}>@ada</a>' in html
    assert f'<a href="/c/game/vance/" {rel}>@Lady  Vance</a>' in html
    assert f'<a href="/c/game/lady/" {rel}>@Lady</a>;' in html
    assert f'<a href="/c/game/tj/" {rel}>@Tom &amp; Jo</a>' in html
    assert found == ["ada", "lady vance", "lady", "tom & jo"]


def test_no_mention_in_code_links_addresses_or_longer_words():
    text = "`@Ada` [@Ada](https://example.org/) ada@ada.example @Adam\n\n    @Ada in code\n"
    html, found = _linked(text)
    assert found == [] and "/c/game/ada/" not in html


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[str, tuple]] = []

    def handle_starttag(self, tag, attrs):
        self.seen.append((tag, tuple(attrs)))


def test_a_mention_opens_no_markup():
    """Markdown, then nh3, then the link: what was typed cannot add a tag or an attribute;
    what looks like one stays text."""
    html, found = _linked(
        '@Ada<script>alert(1)</script> @Ada" onmouseover="x <img src=x onerror=y>'
    )
    assert found == ["ada"]
    parser = _Tags()
    parser.feed(html)
    link = ("a", (("href", "/c/game/ada/"), ("rel", "nofollow noopener noreferrer ugc")))
    assert parser.seen == [("p", ()), link, link, ("img", (("src", "x"),))]


def test_a_name_inside_an_attribute_is_no_mention():
    """A ">" in a quoted attribute ends no tag: the "@Ada" in a title stays in the title."""
    html, found = _linked('<abbr title="x>@Ada onmouseover=alert(1)">hi</abbr> and @Ada')
    assert found == ["ada"]
    parser = _Tags()
    parser.feed(html)
    abbr = ("abbr", (("title", "x>@Ada onmouseover=alert(1)"),))
    link = ("a", (("href", "/c/game/ada/"), ("rel", "nofollow noopener noreferrer ugc")))
    assert parser.seen == [("p", ()), abbr, link]


# -- the forum: every audience --------------------------------------------------------------


@pytest.fixture
def table(db_session):
    return make_table(db_session)


def _mentions_to(db_session) -> list[str]:
    db_session.expire_all()
    rows = db_session.exec(
        select(OutboxMessage).where(OutboxMessage.kind == "mention").order_by(OutboxMessage.id)
    )
    return [row.recipient for row in rows]


def test_a_post_for_everyone_mails_each_mentioned_player_once(db_session, table):
    post = write(db_session, table, table.bram_user, "@Ada and @Cleo, and @Ada again. @Bram.")
    assert 'href="/c/' in post.body_html and "/sheets/ada" in post.body_html
    # Bram is Ben's own character: no mail to the writer.
    assert sorted(_mentions_to(db_session)) == sorted([table.ada_user.email, table.cleo_user.email])
    (mail,) = [
        m
        for m in db_session.exec(select(OutboxMessage).where(OutboxMessage.kind == "mention"))
        if m.recipient == table.ada_user.email
    ]
    assert "Bram mentioned Ada" not in mail.subject  # Ben posts as himself, not as Bram
    assert "Ben mentioned Ada" in mail.subject and "@Cleo" in mail.body_text
    posts.change_post(
        session=db_session,
        campaign=table.campaign,
        post_id=post.id,
        editor=table.bram_user,
        body="@Ada, @Cleo: edited.",
        now=T0 + timedelta(minutes=5),
        mail=MAIL,
    )
    assert len(_mentions_to(db_session)) == 2  # once per item: the edit mails nobody again


@pytest.mark.parametrize(
    ("author", "draft", "mailed"),
    [
        ("bram", {"audience": "all"}, {"ada", "cleo"}),
        ("bram", {"audience": "gm"}, set()),
        ("bram", {"audience": "whisper", "recipient_ids": ("ada",)}, {"ada"}),
        ("gm", {"audience": "whisper", "recipient_ids": ("cleo",)}, {"cleo"}),
        ("gm", {"audience": "gm"}, set()),
    ],
    ids=["everyone", "gm-only", "whisper", "gm's whisper", "gm's note to self"],
)
def test_a_post_mentions_only_those_who_may_read_it(db_session, table, author, draft, mailed):
    users = {"ada": table.ada_user, "bram": table.bram_user, "cleo": table.cleo_user}
    users["gm"] = table.gm
    if "recipient_ids" in draft:
        draft = {**draft, "recipient_ids": tuple(users[n].id for n in draft["recipient_ids"])}
    write(db_session, table, table.ada_user, "Opening.", title="Scene")  # a public thread
    write(db_session, table, users[author], "Listen, @Ada and @Cleo.", **draft)
    assert sorted(_mentions_to(db_session)) == sorted(users[n].email for n in mailed)


def test_a_player_who_switched_mentions_off_is_not_mailed(db_session, table):
    membership = campaigns.membership(
        session=db_session, campaign=table.campaign, user=table.ada_user
    )
    assert isinstance(membership, Membership)
    set_preference(session=db_session, membership=membership, preference="mentions", on=False)
    write(db_session, table, table.bram_user, "@Ada, @Cleo.")
    assert _mentions_to(db_session) == [table.cleo_user.email]


# -- the blog: entries and notes ------------------------------------------------------------

NOW = datetime(2026, 5, 1, 13, 0, tzinfo=UTC)


def test_an_entry_and_a_note_link_and_mail_the_characters_they_name(db_session):
    campaign = make_campaign(db_session, referee=make_user(db_session, "Referee"))
    ada, bram, cleo, *_ = make_characters(db_session, campaign)
    db_session.add(Turn(campaign_id=campaign.id, number=1, opened_at=NOW - timedelta(hours=1)))
    db_session.flush()

    def player(character) -> User:
        return db_session.get(User, character.user_id)

    entry = hosted_blog.write_entry(
        session=db_session,
        actor=player(ada),
        campaign=campaign,
        title="The ball",
        mood="Calm",
        body="I saw @Bram dance. `@Cleo` did not.",
        now=NOW,
        mail=MAIL,
    )
    assert f'href="/c/{campaign.slug}/{bram.slug}/"' in entry.body_html
    assert f"/{cleo.slug}/" not in entry.body_html
    assert _mentions_to(db_session) == [player(bram).email]
    hosted_blog.post_note(
        session=db_session,
        actor=player(cleo),
        campaign=campaign,
        entry_id=entry.id,
        body="@Ada, @Bram: I was there.",
        now=NOW + timedelta(minutes=5),
        mail=MAIL,
    )
    assert sorted(_mentions_to(db_session)) == sorted(
        [player(bram).email, player(ada).email, player(bram).email]
    )


def test_an_event_mentions_everyone_and_a_tailored_part_only_its_reader(db_session):
    """A tailored event is read by its character's player only: it mentions no one else."""
    campaign = make_campaign(db_session, referee=make_user(db_session, "Referee"))
    ada, bram, cleo, *_ = make_characters(db_session, campaign)
    turns.post_event(
        session=db_session,
        campaign=campaign,
        text="A ball at @Ada's house.",
        tailored=[turns.Tailored(bram.id, "addition", "You saw @Cleo steal; tell @Bram's heart.")],
        actor=None,
        now=NOW,
        mail=MAIL,
    )
    emails = {c.id: db_session.get(User, c.user_id).email for c in (ada, bram, cleo)}
    assert sorted(_mentions_to(db_session)) == sorted([emails[ada.id], emails[bram.id]])
    header = planet.turn_header(session=db_session, campaign=campaign, reader=bram)
    assert f'<a href="/c/{campaign.slug}/{ada.slug}/" rel=' in header.event
    (part,) = header.tailored
    assert (
        f'<a href="/c/{campaign.slug}/{cleo.slug}/" rel=' in part.text and "@Cleo</a>" in part.text
    )
