"""LiveJournal RSS (``/data/rss``): mood, security and reply count in the lj: namespace.

LiveJournal has no comment feeds; ``lj:reply-count`` still tells the referee that notes
exist. Entries whose ``lj:security`` is not ``public`` (friends-only "usemask", "private")
are skipped: a game must never republish a locked entry.
"""

from __future__ import annotations

import re
from typing import Any, cast

from adapters.base import Parsed
from adapters.common import (
    FeedAdapter,
    generator_name,
    get,
    host_of,
    namespace_prefix,
    ns_get,
    to_int,
)
from adapters.sanitize import clean_text

LJ_NS = "http://www.livejournal.org/rss/lj/1.0/"
_USERNAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def _is_lj_ns(uri: str) -> bool:
    return uri.rstrip("/").lower() == LJ_NS.rstrip("/")


class LiveJournalAdapter(FeedAdapter):
    name = "livejournal"
    #: Host suffix that journals live under, for building a poster's journal URL.
    journal_domain = "livejournal.com"

    def matches(self, parsed: Parsed) -> bool:
        return (
            namespace_prefix(parsed, _is_lj_ns) is not None
            or generator_name(parsed).lower().startswith("livejournal")
            or host_of(self.site_url(parsed)).endswith(".livejournal.com")
        )

    def is_comment_feed(self, parsed: Parsed) -> bool:
        return False

    def prefixes(self, parsed: Parsed) -> tuple[str | None, ...]:
        return (namespace_prefix(parsed, _is_lj_ns), "lj")

    def field(self, item: Any, parsed: Parsed, local: str) -> Any:
        return ns_get(item, self.prefixes(parsed), local)

    def is_public(self, item: Any, parsed: Parsed) -> bool:
        security = self.field(item, parsed, "security")
        return security is None or str(security).strip().lower() == "public"

    def field_mood(self, item: Any, parsed: Parsed) -> str | None:
        return cast(str | None, self.field(item, parsed, "mood"))  # lj:mood is text

    def comment_count(self, item: Any, parsed: Parsed) -> int | None:
        return to_int(self.field(item, parsed, "reply-count"))

    def comment_feed_url(self, item: Any, parsed: Parsed) -> str | None:
        return None

    def journal_url(self, username: str) -> str | None:
        """``lord_ashby`` → ``https://lord-ashby.livejournal.com/`` (None if not a username)."""
        if not _USERNAME.match(username):
            return None
        return f"https://{username.replace('_', '-')}.{self.journal_domain}/"

    def author(self, item: Any, parsed: Parsed) -> tuple[str | None, str | None]:
        """Community posts name their poster (``lj:poster``); personal journals don't."""
        poster = clean_text(self.field(item, parsed, "poster"))
        if poster:
            return poster, self.journal_url(poster)
        feed = get(parsed, "feed") or {}
        journal = ns_get(feed, self.prefixes(parsed), "journal")
        if isinstance(journal, dict):  # Dreamwidth Atom: <dw:journal username="..." />
            journal = get(journal, "username")
        journal = clean_text(journal)
        name = clean_text(get(feed, "title")) or journal or None
        return name, self.journal_url(journal) if journal else self.site_url(parsed)
