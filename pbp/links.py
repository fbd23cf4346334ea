"""Every address pbp writes into something that leaves the request: mail, Atom feeds,
the archive, a post that links its card table.

Pages build their links with Flask's `url_for`, which knows the routes; mail, feeds and
exports are built in services, outside any request, so they build them here instead. One
module, so a moved route breaks one test (tests/test_links.py matches every function
below against the app's routes) rather than a link in someone's inbox.

Each function returns a path ("/c/<slug>/turns/3"); `absolute` puts the site's address
in front where the reader is outside the site (mail). Plain values in, no models and no
Flask, so the rules-free layers below the web can use it.
"""

from __future__ import annotations

from urllib.parse import quote


def _part(value: str | int) -> str:
    """One path segment: slugs and tokens are already URL-safe, but a path never trusts
    that (a "/" in a segment would point somewhere else)."""
    return quote(str(value), safe="")


def absolute(base_url: str, path: str) -> str:
    """`path` on the site at `base_url` (PBP_BASE_URL, with or without a trailing /)."""
    return base_url.rstrip("/") + path


# -- a campaign ---------------------------------------------------------------------------


def campaign(slug: str) -> str:
    return f"/c/{_part(slug)}/"


def turns(slug: str) -> str:
    return f"/c/{_part(slug)}/turns/"


def turn(slug: str, number: int) -> str:
    return f"/c/{_part(slug)}/turns/{int(number)}"


def write(slug: str) -> str:
    """The page where a player writes an entry on the built-in blog."""
    return f"/c/{_part(slug)}/write"


def character(slug: str, character_slug: str) -> str:
    return f"/c/{_part(slug)}/{_part(character_slug)}/"


def entry(slug: str, character_slug: str, entry_id: int) -> str:
    """An entry's page on pbp (external entries have one too, with their notes)."""
    return f"/c/{_part(slug)}/{_part(character_slug)}/{int(entry_id)}"


def note(slug: str, character_slug: str, entry_id: int, note_id: int) -> str:
    return f"{entry(slug, character_slug, entry_id)}#note-{int(note_id)}"


def referee_board(slug: str) -> str:
    """The referee's dashboard of a campaign."""
    return f"/c/{_part(slug)}/referee/"


def away(slug: str) -> str:
    """A player's hiatus page (issue #30 item 3)."""
    return f"/c/{_part(slug)}/me/away"


def activity(slug: str) -> str:
    """The referee's activity check (issue #30 item 2)."""
    return f"/c/{_part(slug)}/referee/activity"


def mail_preferences(slug: str) -> str:
    return f"/c/{_part(slug)}/me/mail"


# -- the forum and its card tables ----------------------------------------------------------


def forum(slug: str) -> str:
    return f"/c/{_part(slug)}/forum/"


def thread(slug: str, thread_id: int) -> str:
    return f"/c/{_part(slug)}/forum/t/{int(thread_id)}"


def post(slug: str, thread_id: int, post_id: int) -> str:
    return f"{thread(slug, thread_id)}#post-{int(post_id)}"


def card_table(slug: str, thread_id: int) -> str:
    return f"{thread(slug, thread_id)}/cards"


# -- feeds ----------------------------------------------------------------------------------


def campaign_feed(slug: str) -> str:
    return f"/c/{_part(slug)}/feed.atom"


def events_feed(slug: str) -> str:
    return f"/c/{_part(slug)}/events.atom"


def blog_feed(slug: str, character_slug: str) -> str:
    return f"/c/{_part(slug)}/{_part(character_slug)}/feed.atom"


def notes_feed(slug: str, character_slug: str) -> str:
    return f"/c/{_part(slug)}/{_part(character_slug)}/comments.atom"


def forum_feed(slug: str) -> str:
    return f"/c/{_part(slug)}/forum/feed.atom"


def calendar_feed(secret: str) -> str:
    """A person's secret calendar address (iCalendar): their campaigns' deadlines."""
    return f"/calendar/{_part(secret)}.ics"


# -- the account pages a mail points to -------------------------------------------------------


def login() -> str:
    return "/login"


def reset_request() -> str:
    """The page that mails a password-reset link."""
    return "/reset"


def calendar_page() -> str:
    """The page of a person's calendar address: make a new one, revoke it."""
    return "/account/calendar"


# -- signed links in mail -------------------------------------------------------------------


def invite(token: str) -> str:
    return f"/invite/{_part(token)}"


def password_reset(token: str) -> str:
    return f"/reset/{_part(token)}"


def signup_confirmation(token: str) -> str:
    return f"/signup/confirm/{_part(token)}"


def unsubscribe(token: str) -> str:
    return f"/mail/unsubscribe/{_part(token)}"
