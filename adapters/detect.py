"""Pick the dialect of a parsed feed, or use the one the referee chose for the blog.

The registry ``adapters.ADAPTERS`` is ordered most specific first (Dreamwidth before
LiveJournal, whose lj: namespace Dreamwidth's RSS also uses; generic last), and the first
adapter whose ``matches`` says yes wins.
"""

from __future__ import annotations

import adapters as registry
from adapters.base import Adapter, Parsed
from adapters.errors import UnknownDialect

FALLBACK = "generic"


def adapter_for(kind: str) -> Adapter:
    """The adapter the referee named; raises UnknownDialect with the valid names."""
    try:
        return registry.ADAPTERS[kind]
    except KeyError:
        names = ", ".join(sorted(registry.ADAPTERS))
        raise UnknownDialect(f"Unknown feed type {kind!r}; choose one of: {names}.") from None


def detect_kind(parsed: Parsed) -> str:
    """Name of the first registered adapter that recognises *parsed*."""
    for name, adapter in registry.ADAPTERS.items():
        if name != FALLBACK and adapter.matches(parsed):
            return name
    return FALLBACK
