"""axe-core in the browser tests: `audit(page)` injects axe-core (pinned in
tests/browser/package.json, installed by `npm ci --prefix tests/browser`) into the page
Chromium has open and returns the WCAG 2.2 A/AA and best-practice violations it finds,
one line each (rule, impact, the elements). `audit_widths` checks a page at a phone's and
a desk's width and restores the page's own size.

Without node_modules the check is skipped with the reason, except under CI=true, where
it fails (as conftest.py does for Chromium)."""

from __future__ import annotations

import functools
import os
from pathlib import Path

import pytest

AXE = Path(__file__).resolve().parent / "node_modules" / "axe-core" / "axe.min.js"
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"]
WIDTHS = (1280, 390)

_RUN = """tags => axe.run(document, {runOnly: {type: 'tag', values: tags}}).then(r =>
    r.violations.map(v => ({id: v.id, impact: v.impact, nodes: v.nodes.map(n =>
        n.target.join(' ') + (n.any[0] ? ': ' + n.any[0].message : ''))})))"""


@functools.cache
def _source() -> str:
    return AXE.read_text(encoding="utf-8")


def axe_available() -> None:
    if AXE.is_file():
        return
    reason = f"axe-core is not installed ({AXE.parent}: npm ci --prefix tests/browser)"
    if os.environ.get("CI") == "true":
        pytest.fail(f"the accessibility check cannot run in CI: {reason}", pytrace=False)
    pytest.skip(reason)


def audit(page) -> list[str]:
    """The violations on the page as it is now, one line each (empty: none)."""
    axe_available()
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        # Not page.add_script_tag: pbp's CSP (script-src 'self') blocks an inline script,
        # and rightly; what Playwright evaluates through the DevTools protocol is not.
        page.evaluate(_source())
    found = page.evaluate(_RUN, TAGS)
    return [f"{page.url} [{v['id']}, {v['impact']}] " + "; ".join(v["nodes"][:6]) for v in found]


def audit_widths(page, widths=WIDTHS) -> list[str]:
    """`audit` at each width (a scheme set by page.emulate_media stays), then the page's
    own size again."""
    own = page.viewport_size
    found = []
    try:
        for width in widths:
            page.set_viewport_size({"width": width, "height": own["height"]})
            found += [f"{width}px {line}" for line in audit(page)]
    finally:
        page.set_viewport_size(own)
    return found
