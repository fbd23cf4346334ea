"""Where a character blogs: pbp's built-in blog, or the player's own blog elsewhere.

A player gives any address of their blog: the feed itself or the home page. The address
goes through the same checks as every fetch (adapters.ssrf: only http(s), no private
networks), then autodiscovery (adapters.discover) finds the feed, and the feed is read
once, so a typo or a page without a feed is refused now, with the adapters' reason,
rather than failing silently at the next poll.

Switching keeps every entry already stored (a feed is a window onto the blog, and the
built-in entries stay where they are); the poller's memory of the old feed (validators,
failures, schedule) is forgotten, so the new feed is read on the scheduler's next pass.
"""

from __future__ import annotations

from datetime import datetime

from sqlmodel import Session, col, select

from adapters import DiscoveredFeed, FeedError, Fetcher, check_url, discover_feeds, parse_feed
from pbp.db import release
from pbp.errors import Conflict, UserError
from pbp.models import Blog, Campaign, Character, User
from pbp.services import audit_actions as lines
from pbp.services import audit_log
from pbp.services.noteworthy import play, websub

NO_FEED = (
    "No feed was found at {url}: the page declares none, and none of the usual feed "
    "addresses answered with one. Give the feed's own address (it often ends in /feed/, "
    "/rss or atom.xml)."
)


def blog_of(*, session: Session, character: Character) -> Blog:
    return session.exec(select(Blog).where(Blog.character_id == character.id)).one()


def choose_blog(
    *,
    session: Session,
    actor: User | None,
    campaign: Campaign,
    kind: str,
    url: str | None,
    character_id: int | None = None,
    fetcher: Fetcher,
    allow_private: bool,
    now: datetime,
) -> tuple[Character, Blog]:
    """A player chooses where their character blogs: pbp's built-in blog ("builtin"), or
    their own blog at `url` ("external"), whose feed is found and read once first."""
    character = play.player_character(
        session=session, campaign=campaign, user=actor, character_id=character_id
    )
    if kind == "builtin":
        return character, set_builtin_blog(
            session=session, character=character, now=now, actor=actor
        )
    if kind != "external":
        raise UserError("choose the built-in blog or your own blog")
    row = set_external_blog(
        session=session,
        character=character,
        url=url or "",
        fetcher=fetcher,
        allow_private=allow_private,
        now=now,
        actor=actor,
    )
    # The fetch ran with no transaction open: the player is checked again before the
    # change commits.
    play.player_character(session=session, campaign=campaign, user=actor, character_id=character.id)
    return character, row


def normalize_address(url: str) -> str:
    """What the player typed, trimmed; "myblog.example" means https://myblog.example."""
    url = (url or "").strip()
    if not url:
        raise UserError("give your blog's address (its home page or its feed)")
    if "://" not in url and not url.startswith("//"):
        url = "https://" + url
    return url


def set_external_blog(
    *,
    session: Session,
    character: Character,
    url: str,
    fetcher: Fetcher,
    allow_private: bool,
    now: datetime,
    actor: User | None = None,
) -> Blog:
    """Point the character's blog at the player's own blog and have it polled soon.

    Raises UserError with the adapters' message when the address is blocked (SSRF),
    unreachable, or has no feed; nothing is changed then. The fetches run with no
    transaction open (they can take the fetcher's whole deadline); the checks and the
    change run after them, in a short one.
    """
    url = normalize_address(url)
    release(session)
    feed = find_feed(url=url, fetcher=fetcher, allow_private=allow_private)
    home_url = None if feed.source == "direct" else url
    return point_at_feed(
        session=session, character=character, feed_url=feed.url, home_url=home_url,
        now=now, actor=actor,
    )  # fmt: skip


def point_at_feed(
    *,
    session: Session,
    character: Character,
    feed_url: str,
    home_url: str | None,
    now: datetime,
    actor: User | None,
) -> Blog:
    """Read the character's blog from `feed_url` (already checked), polled afresh; audited.
    Refused when another character reads that feed."""
    _refuse_shared_feed(session, character, feed_url)
    blog = blog_of(session=session, character=character)
    before = (blog.kind, blog.feed_url)
    blog.kind = "external"
    blog.feed_url = feed_url
    blog.home_url = home_url
    blog.adapter_kind = None  # a new blog may be another dialect: detect it again
    _forget_polling(session, blog, before, now)
    session.add(blog)
    _audit(session, character, actor, now, before, blog)
    session.flush()
    return blog


def set_builtin_blog(
    *, session: Session, character: Character, now: datetime, actor: User | None = None
) -> Blog:
    """Blog on pbp's own pages from now on; entries read from the old feed stay."""
    blog = blog_of(session=session, character=character)
    before = (blog.kind, blog.feed_url)
    blog.kind = "builtin"
    blog.feed_url = None
    blog.home_url = None
    blog.adapter_kind = None
    _forget_polling(session, blog, before, now)
    session.add(blog)
    _audit(session, character, actor, now, before, blog)
    session.flush()
    return blog


def checked_feed_address(*, session: Session, url: str | None, allow_private: bool) -> str | None:
    """The feed address typed on the roster form (None if blank), checked like every fetch:
    http(s) only, no private network. Resolving the host is network I/O, so it runs with
    no transaction open (pbp.db.release)."""
    url = (url or "").strip() or None
    if url is None:
        return None
    release(session)
    try:
        check_url(url, allow_private=allow_private)
    except FeedError as exc:  # blocked, malformed, or a host that does not resolve
        raise UserError(exc.message) from exc
    return url


def find_feed(*, url: str, fetcher: Fetcher, allow_private: bool) -> DiscoveredFeed:
    """The best feed for *url* that really is a feed; UserError with the reason if none.

    The home page, every guessed address and every linked feed share one deadline
    (PBP_FETCH_TOTAL_SECONDS): a blog that drips its answers cannot hold the web thread."""
    with fetcher.budget():
        return _find_feed(url=url, fetcher=fetcher, allow_private=allow_private)


def _find_feed(*, url: str, fetcher: Fetcher, allow_private: bool) -> DiscoveredFeed:
    try:
        check_url(url, allow_private=allow_private)
        candidates = discover_feeds(url, fetcher=fetcher)
    except FeedError as exc:
        raise UserError(exc.message) from exc
    first_problem = None
    for candidate in candidates:
        if candidate.source != "link":
            return candidate  # "direct" and "guess" were fetched and parsed already
        try:
            _read_feed(candidate.url, fetcher=fetcher, allow_private=allow_private)
        except FeedError as exc:
            first_problem = first_problem or f"{candidate.url}: {exc.message}"
            continue
        return candidate
    if first_problem:
        raise UserError(f"The blog's page names a feed, but it cannot be read ({first_problem})")
    raise UserError(NO_FEED.format(url=url))


def _read_feed(url: str, *, fetcher: Fetcher, allow_private: bool) -> None:
    """Fetch and parse a feed a home page points to (it may live on another host)."""
    check_url(url, allow_private=allow_private)
    document = fetcher.request(url)
    if document.status != 200:
        raise FeedError(f"it answered HTTP {document.status}", url=url)
    parse_feed(document.body, document.headers)


def _refuse_shared_feed(session: Session, character: Character, feed_url: str) -> None:
    """Two characters reading one feed would each get the other's entries."""
    other = session.exec(
        select(Character)
        .join(Blog, col(Blog.character_id) == Character.id)
        .where(
            Character.campaign_id == character.campaign_id,
            Character.id != character.id,
            Blog.kind == "external",
            Blog.feed_url == feed_url,
        )
    ).first()
    if other is not None:
        raise Conflict(f"that feed is already {other.name}'s blog in this campaign")


def _forget_polling(session: Session, blog: Blog, before: tuple, now: datetime) -> None:
    """A new feed starts clean: no validators, no failures, due now (next_poll_at NULL is
    polled first by pbp.services.noteworthy.polling.claim_due), and the WebSub hub of the old one is
    told to stop pushing it."""
    if before != (blog.kind, blog.feed_url) and blog.id is not None:
        websub.feed_changed(session=session, blog_id=blog.id, now=now)
    blog.etag = None
    blog.last_modified = None
    blog.content_hash = None
    blog.last_unconditional_at = None
    blog.last_polled_at = None
    blog.last_success_at = None  # the first poll of a feed also reads its older pages
    blog.failure_count = 0
    blog.last_error = None
    blog.gone = False
    blog.next_poll_at = None


def _audit(session, character, actor, now, before, blog) -> None:
    changed = lines.BlogChanged(
        character.id,
        before={"kind": before[0], "feed_url": before[1]},
        after={"kind": blog.kind, "feed_url": blog.feed_url},
    )
    audit_log.record(session, line=changed, actor=actor, campaign_id=character.campaign_id, now=now)
