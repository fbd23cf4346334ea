"""The services: one function per user action (see docs/architecture.md).

Importing the package installs the search index's ORM hook, so every writer of entries,
notes, posts and events keeps the index in step (pbp.services.search.index says why).
"""

from pbp.services.search import index as _search_index  # noqa: F401
