"""Generic feeds: Atom (Jekyll's jekyll-feed), RSS 2.0 (Hugo, summary only) and JSON Feed.

Everything generic lives in FeedAdapter; this module names it for the registry.
"""

from __future__ import annotations

from adapters.common import FeedAdapter


class GenericAdapter(FeedAdapter):
    name = "generic"
