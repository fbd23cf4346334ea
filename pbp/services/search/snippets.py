"""A snippet as safe HTML: every character of the stored text escaped, the database's
highlight marks (index.START/STOP, which no stored text contains) turned into <mark>."""

from __future__ import annotations

from markupsafe import Markup, escape

from pbp.services.search.index import START, STOP


def highlighted(snippet: str) -> Markup:
    text = str(escape(snippet))
    opened = text.count(START)
    text = text.replace(START, "<mark>").replace(STOP, "</mark>")
    # A snippet cut inside a highlight keeps its tags balanced.
    text += "</mark>" * max(0, opened - snippet.count(STOP))
    return Markup(text)
