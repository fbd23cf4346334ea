"""Shapes of Markdown text that make Python-Markdown slow, and the longest text of each
shape that pbp accepts (for tests/bench/test_bench_markup.py and tests/security).

Found by a quick fuzz: one unit repeated to the length limit. The known bad ones are the
runs of "[" (each scans the rest of its paragraph), unclosed "](" links, footnote and
reference brackets, deep nesting (quotes, lists, indentation), and the many cheap-looking
elements that each cost a pass of every processor (lines, headers, rules, tables, emphasis).
"""

from __future__ import annotations

from collections.abc import Callable

from pbp.markup import MAX_INDENT, MAX_NESTING, TooIntricate, check_shape

UNITS = (
    "[", "]", "[]", "[x](", "![", "![x](", "*[", "[^", "[a][", "[a]", "(", "*", "**", "*a",
    "**a", "*a*", "_a_ ", "`", "`a", "<", "<a ", "<b>x</b>", "&", "&amp;", "\\", "\\[",
    ">", "> ", "- ", "* ", "1. ", "> - ", "a\n", "a\n\n", "# a\n", "---\n", "|x|y|\n",
    "a\n: b\n", "```\na\n```\n", "    a\n", "*[A]: x\n", "<div>\n", "<http://a.b>", "a  \n",
    "~~", "{@", "[x]: http://a.b\n", "[^1]: x\n", "<!--", "&#123;", "*a* b\n", "[x](y) ",
    "![x](y)\n", "> a\n", "- a\n", "1. a\n", "    - a\n", "a_b_", "__a", "`a`\n", "\n\n",
)  # fmt: skip


def _nested_lists(width: int) -> str:
    return "".join(" " * (4 * (i % (width // 4 + 1))) + "- a\n" for i in range(4000))


def _nested_quotes(depth: int) -> str:
    return "".join(">" * (1 + i % depth) + " a\n" for i in range(4000))


GENERATED: dict[str, Callable[[], str]] = {
    "lists nested by indentation": lambda: _nested_lists(MAX_INDENT),
    "quotes nested to the limit": lambda: _nested_quotes(MAX_NESTING),
    "lists nested to the limit": lambda: "".join(
        "- " * (1 + i % MAX_NESTING) + "a\n" for i in range(4000)
    ),
}


def shapes() -> dict[str, str]:
    """name -> the unbounded text of that shape (longer than any limit)."""
    found = {repr(unit): unit * (40_000 // len(unit) + 1) for unit in UNITS}
    return found | {name: make() for name, make in GENERATED.items()}


def accepted(text: str) -> bool:
    try:
        check_shape(text)
    except TooIntricate:
        return False
    return True


def longest_accepted(text: str, limit: int) -> str:
    """The longest prefix of *text* within *limit* characters that pbp accepts."""
    text = text[:limit]
    if accepted(text):
        return text
    low, high = 0, len(text)  # accepted(text[:low]) holds; text[:high] is refused
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if accepted(text[:middle]) else (low, middle)
    return text[:low]
