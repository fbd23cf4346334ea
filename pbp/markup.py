"""Markdown for the built-in blog and the forum: rendered, then sanitized with nh3."""

from __future__ import annotations

import re

import markdown

from adapters.sanitize import clean_html, clean_text

EXTENSIONS = ["extra", "sane_lists", "nl2br"]


def render_markdown(text: str) -> str:
    # Sanitize after rendering: Markdown passes raw HTML through, and links may carry
    # javascript: URLs; nh3 removes both.
    return clean_html(markdown.markdown(text or "", extensions=EXTENSIONS, output_format="html"))


_BREAKS = re.compile(r"(?i)<br\s*/?>|</(p|div|li|h[1-6]|blockquote|pre|tr)>")


def plain_text(html_fragment: str | None) -> str:
    """Visible text of stored HTML, one line per paragraph or line break.

    The rules read markers line by line ("Stance: support" on its own line, "Target:
    NAME"), so line structure must survive; `sanitize.html_to_text` folds it away.
    """
    marked = _BREAKS.sub("\n", html_fragment or "")
    lines = (clean_text(line) for line in marked.split("\n"))
    return "\n".join(line for line in lines if line)
