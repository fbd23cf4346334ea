"""Issue #33 item 5: the contrast of every colour pair pbp's style sheets make, in the light
palette and the dark one (prefers-color-scheme), without a browser.

The pairs are not listed by hand, so none can be forgotten: they are read from the rules.
A rule that sets a text colour and a background is one pair; a text colour set alone lands
on any of the page's grounds (the backgrounds set by rules that leave the text colour
alone, and the page's own); an outline (a focus ring) likewise, at 3:1. A rule inside a
dark bar (the site's header and footer, table headings) lands on the bar instead, and so
does the ring of the skip link, which shows over the header. Every colour must be a palette
variable: a colour literal anywhere outside the two palettes fails, so no pair escapes the
check. (What CSS cannot tell, such as a .muted span placed in a table heading, the browser
tests' axe-core run finds: tests/browser/test_accessibility.py.)

`python -m tests.web.test_palette` prints the table of ratios."""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

STATIC = Path(__file__).resolve().parents[2] / "pbp" / "static"
SHEETS = sorted(STATIC.glob("*.css"))
DARK_MEDIA = "prefers-color-scheme: dark"
BAR_SCOPES = ("header.site", "footer.site", "thead")
OVER_BARS = (".skip-link",)  # shown over the header: its ring lands on the bar
TEXT, RING = 4.5, 3.0

_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_VAR = re.compile(r"var\(--([\w-]+)\)")
_LITERAL = re.compile(r"#[0-9a-fA-F]{3,8}\b|\b(?:rgba?|hsla?|hwb|lab|lch|oklab|oklch)\(")
_NAMED = re.compile(r"(?<![\w-])(?:white|black|red|green|blue|gray|grey|silver|yellow)(?![\w-])")


@dataclass
class Rule:
    selector: str
    declarations: dict[str, str]
    media: str


def rules(text: str, media: str = "") -> list[Rule]:
    """The style rules of a sheet, @media blocks opened (each rule keeps its condition)."""
    found, i = [], 0
    text = _COMMENT.sub("", text)
    while True:
        start = text.find("{", i)
        if start < 0:
            return found
        head = text[i:start].strip()
        depth, end = 1, start + 1
        while depth:
            depth += {"{": 1, "}": -1}.get(text[end], 0)
            end += 1
        body = text[start + 1 : end - 1]
        if head.startswith("@media"):
            found += rules(body, head)
        else:
            pairs = (d.split(":", 1) for d in body.split(";") if ":" in d)
            declared = {k.strip(): v.strip() for k, v in pairs}
            found += [Rule(s.strip(), declared, media) for s in head.split(",")]
        i = end


def all_rules() -> list[Rule]:
    return [r for sheet in SHEETS for r in rules(sheet.read_text(encoding="utf-8"))]


def palettes() -> tuple[dict[str, str], dict[str, str]]:
    light, dark = {}, {}
    for rule in all_rules():
        if rule.selector == ":root":
            into = dark if DARK_MEDIA in rule.media else light
            into.update({k[2:]: v for k, v in rule.declarations.items() if k.startswith("--")})
    return light, {**light, **dark}


def colour_vars(value: str) -> list[str]:
    return _VAR.findall(value)


def pairs() -> tuple[set[tuple[str, str, str]], set[tuple[str, str, str]]]:
    """(text pairs, ring pairs): (foreground variable, background variable, the rule)."""
    grounds, coloured, bars, text, rings = {"paper"}, [], set(), set(), set()
    for rule in all_rules():
        if rule.selector == ":root":
            continue
        d = rule.declarations
        backs = colour_vars(d.get("background", "") + d.get("background-color", ""))
        fore = colour_vars(d.get("color", ""))
        ring = colour_vars(d.get("outline", "") + d.get("outline-color", ""))
        is_bar = any(scope in rule.selector for scope in BAR_SCOPES)
        in_bar = is_bar or any(scope in rule.selector for scope in OVER_BARS)
        if backs and fore:
            text |= {(f, b, rule.selector) for f in fore for b in backs}
            (bars if is_bar else set()).update(backs)
        elif backs and not in_bar:
            grounds.update(backs)
        if (fore and not backs) or ring:
            coloured.append((rule.selector, fore if not backs else [], ring, in_bar))
    assert bars, "no bar sets its background: BAR_SCOPES no longer matches the sheets"
    body = next(colour_vars(r.declarations["color"]) for r in all_rules() if r.selector == "body")
    coloured.append(("body (inherited)", body, [], False))  # the page's text on every ground
    for selector, fore, ring, in_bar in coloured:
        under = bars if in_bar else grounds
        text |= {(f, b, selector) for f in fore for b in under}
        rings |= {(f, b, selector) for f in ring for b in under}
    return text, rings


def luminance(hex_colour: str) -> float:
    h = hex_colour.lstrip("#")
    if len(h) == 3:
        h = "".join(c * 2 for c in h)
    channels = [int(h[i : i + 2], 16) / 255 for i in (0, 2, 4)]
    r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: str, b: str) -> float:
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def table() -> list[tuple[str, str, float, float, float, str]]:
    """(foreground, background, light ratio, dark ratio, the floor, the first rule)."""
    light, dark = palettes()
    text, rings = pairs()
    rows = {}
    for found, floor in ((text, TEXT), (rings, RING)):
        for f, b, selector in sorted(found):
            if (f, b, floor) not in rows:
                ratios = (contrast(light[f], light[b]), contrast(dark[f], dark[b]))
                rows[f, b, floor] = (f, b, *ratios, floor, selector)
    return sorted(rows.values(), key=lambda r: (r[4], r[0], r[1]))


def test_every_pair_reads_in_both_palettes():
    rows = table()
    assert len(rows) >= 20, rows  # the sheets make many pairs; a parser that finds few is broken
    low = [r for r in rows if min(r[2], r[3]) < r[4]]
    assert low == [], "\n".join(
        f"{f} on {b}: {lo:.2f} / {da:.2f} < {m} ({s})" for f, b, lo, da, m, s in low
    )


def test_both_palettes_define_every_variable_the_sheets_use():
    light, dark = palettes()
    used = {v for r in all_rules() for value in r.declarations.values() for v in colour_vars(value)}
    colours = {name for name, value in light.items() if value.startswith("#")}
    assert used - set(light) == set()
    dark_own = {
        k
        for r in all_rules()
        if r.selector == ":root" and DARK_MEDIA in r.media
        for k in r.declarations
    }
    assert {f"--{c}" for c in colours} - dark_own == set(), "a colour without a dark value"


def test_no_colour_is_written_outside_the_palettes():
    stray = []
    for sheet in SHEETS:
        for rule in rules(sheet.read_text(encoding="utf-8")):
            if rule.selector == ":root":
                continue
            for prop, value in rule.declarations.items():
                if _LITERAL.search(value) or _NAMED.search(value):
                    stray.append(f"{sheet.name}: {rule.selector} {{ {prop}: {value} }}")
    assert stray == []


@pytest.mark.parametrize(
    "a, b, expected",
    [("#000000", "#ffffff", 21.0), ("#777777", "#ffffff", 4.48), ("#fff", "#fff", 1.0)],
)
def test_the_contrast_formula(a, b, expected):
    assert contrast(a, b) == pytest.approx(expected, abs=0.01)


def test_a_pair_below_the_floor_fails(tmp_path, monkeypatch):
    """The check can fail: a muted grey on the paper is found and is too faint."""
    sheet = tmp_path / "x.css"
    sheet.write_text(
        ":root { --paper: #ffffff; --ink: #000000; --faint: #999999; --bar-bg: #000000;"
        " --bar-ink: #ffffff; }\n"
        "@media screen and (prefers-color-scheme: dark) { :root { --paper: #000000;"
        " --ink: #ffffff; --faint: #999999; } }\n"
        "body { background: var(--paper); color: var(--ink); }\n"
        "header.site { background: var(--bar-bg); color: var(--bar-ink); }\n"
        ".hint { color: var(--faint); }\n"
    )
    monkeypatch.setattr(sys.modules[__name__], "SHEETS", [sheet])
    low = [r for r in table() if min(r[2], r[3]) < r[4]]
    assert [(f, b) for f, b, *_ in low] == [("faint", "paper")]


if __name__ == "__main__":
    print(
        f"{'foreground':<12} {'background':<12} {'light':>6} {'dark':>6} {'floor':>5}  first rule"
    )
    for f, b, lo, da, floor, selector in table():
        print(f"{f:<12} {b:<12} {lo:6.2f} {da:6.2f} {floor:5.1f}  {selector}")
