"""The standings chart: a History in, an SVG string out (pure, no JavaScript).

One row per character, one column per turn: a dark cell while active, an outlined
dashed cell as an outsider, a red cell for the winner; ▲ marks a challenge won, ✕ one
lost. Colours are never the only cue (dashes, glyphs, a legend and a tooltip per cell),
and the chart is an image with a `<title>` and a `<desc>` for screen readers; the page
around it carries the same figures as a table. Every name is escaped: they are typed by
players and the SVG is inlined into HTML pages.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

from pbp.services.noteworthy.history import History, Standing

INK, PAPER, MUTED, ACCENT = "#1b1b1f", "#f4f1ea", "#5d5a55", "#8c1c13"
# Drawn at the page's size (the figure scrolls rather than shrinks it on a phone) with
# 14-pixel text: legible at 390 and at 1280 pixels wide (issue #27 item 10).
FONT, CHAR_W = 14, 7  # text size, and the width of an average character of it
CELL_W, CELL_H, GAP = 36, 30, 4
HEAD_H, PAD = 26, 8
LABEL_CHARS = 22
LEGEND_ROW = 24
MIN_WIDTH = 320  # the legend wraps to fit the grid, but no narrower than this
LEGEND = (
    ("active", "rect"),
    ("outsider", "dashed"),
    ("winner", "red"),
    ("won a challenge", "▲"),
    ("lost one", "✕"),
)
FILL = {"active": INK, "winner": ACCENT, "outsider": "#ffffff"}
GLYPH_COLOUR = {"active": PAPER, "winner": PAPER, "outsider": INK}


def _e(text) -> str:
    return escape(str(text), quote=True)


def _label(name: str) -> str:
    return name if len(name) <= LABEL_CHARS else name[: LABEL_CHARS - 1] + "…"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def cell_text(name: str, number: int | None, s: Standing) -> str:
    """The tooltip of one cell, in words (`number` None: the "now" column)."""
    if number is None:
        return f"{name} now: {s.status}"
    if s.status is None:
        return f"{name}, turn {number}: not in the game yet"
    parts = [f"{name}, turn {number}: {s.status} at the start"]
    if s.made or s.received:
        parts.append(f"made {s.made}, received {s.received}")
    if s.won or s.lost:
        parts.append(f"won {s.won}, lost {s.lost}")
    if s.status_after and s.status_after != s.status:
        parts.append(f"{s.status_after} after it")
    return "; ".join(parts)


def glyphs(s: Standing) -> str:
    mark = ""
    if s.won:
        mark += "▲" if s.won == 1 else f"▲{s.won}"
    if s.lost:
        mark += "✕" if s.lost == 1 else f"✕{s.lost}"
    return mark


def description(history: History) -> str:
    """The chart in one paragraph of words."""
    people, turns = history.characters, history.turns
    if not people or not turns:
        return "No turns have been played yet."
    lines = [
        f"Standings of {_plural(len(people), 'character')} over {_plural(len(turns), 'turn')}:"
        " one row per character, one column per turn."
    ]
    for t in history.totals:
        fate = t.person.status
        if t.outsider_from is not None:
            fate = f"outsider since turn {t.outsider_from}"
        lines.append(f"{t.person.name}: {fate}, won {t.won}, lost {t.lost}.")
    return " ".join(lines)


def standings_chart(history: History, *, title: str = "Standings", id_prefix: str = "chart") -> str:
    """The chart as a standalone `<svg>` element (inline it, or save it as a file)."""
    people, turns = history.characters, history.turns
    label_w = 12 + CHAR_W * max([len(_label(p.name)) for p in people] + [8])
    grid = Grid(x0=PAD + label_w, y0=PAD + HEAD_H, turns=len(turns))
    width = PAD * 2 + max(grid.now_x - PAD + CELL_W, MIN_WIDTH)
    rows = _legend_rows(width - PAD * 2)
    legend_y = grid.y0 + CELL_H * (len(people) + 1) + 10
    height = legend_y + LEGEND_ROW * len(rows) + 6
    prefix = _e(id_prefix)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" '
        f'aria-labelledby="{prefix}-title {prefix}-desc" '
        f'viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'font-family="Georgia, serif" font-size="{FONT}" class="standings-chart">',
        f'<title id="{prefix}-title">{_e(title)}</title>',
        f'<desc id="{prefix}-desc">{_e(description(history))}</desc>',
        f'<rect width="{width}" height="{height}" fill="{PAPER}"/>',
    ]
    for col, turn in enumerate(turns):
        tip = f"Turn {turn.number} ({turn.status})"
        out.append(_caption(grid.centre(col), PAD + FONT + 2, f"T{turn.number}", tip))
    out.append(_caption(grid.now_x + CELL_W / 2, PAD + FONT + 2, "now", "Standing now"))
    for row, person in enumerate(people):
        y = grid.y0 + row * CELL_H
        out.append(
            f'<text x="{PAD}" y="{y + CELL_H / 2 + 5}" fill="{INK}">'
            f"<title>{_e(person.name)}</title>{_e(_label(person.name))}</text>"
        )
        for col, turn in enumerate(turns):
            out.append(_cell(person.name, turn.number, turn.standings[person.id], grid.x(col), y))
        now = Standing(status=person.status, status_after=None)
        out.append(_cell(person.name, None, now, grid.now_x, y))
    y = grid.y0 + len(people) * CELL_H + CELL_H / 2 + 5
    out.append(f'<text x="{PAD}" y="{y}" fill="{MUTED}">active</text>')
    for col, turn in enumerate(turns):
        tip = f"{turn.active} active at the start of turn {turn.number}"
        out.append(_caption(grid.centre(col), y, str(turn.active), tip))
    out.append(_legend(PAD, legend_y, rows))
    out.append("</svg>")
    return "\n".join(out)


@dataclass(frozen=True)
class Grid:
    """Where the turn columns sit; the "now" column comes after a gap."""

    x0: float
    y0: float
    turns: int

    def x(self, col: int) -> float:
        return self.x0 + col * CELL_W

    def centre(self, col: int) -> float:
        return self.x(col) + (CELL_W - GAP) / 2

    @property
    def now_x(self) -> float:
        return self.x(self.turns) + GAP * 2


def _caption(x: float, y: float, text: str, tip: str) -> str:
    return (
        f'<text x="{x}" y="{y}" text-anchor="middle" fill="{MUTED}">'
        f"<title>{_e(tip)}</title>{_e(text)}</text>"
    )


def _cell(name: str, number: int | None, s: Standing, x: float, y: float) -> str:
    tip = f"<title>{_e(cell_text(name, number, s))}</title>"
    if s.status is None:
        return (
            f'<g class="cell">{tip}<line x1="{x + 6}" y1="{y + CELL_H / 2}" x2="{x + CELL_W - 6}" '
            f'y2="{y + CELL_H / 2}" stroke="{MUTED}" stroke-dasharray="2 3"/></g>'
        )
    fill = FILL.get(s.status, "#ffffff")
    dash = ' stroke-dasharray="3 2"' if s.status == "outsider" else ""
    mark = glyphs(s)
    text = ""
    if mark:
        colour = GLYPH_COLOUR.get(s.status, INK)
        text = (
            f'<text x="{x + (CELL_W - GAP) / 2}" y="{y + CELL_H / 2 + 4}" text-anchor="middle" '
            f'fill="{colour}" font-size="{FONT - 1}">{_e(mark)}</text>'
        )
    return (
        f'<g class="cell">{tip}<rect x="{x}" y="{y + 2}" width="{CELL_W - GAP}" '
        f'height="{CELL_H - GAP}" fill="{fill}" stroke="{MUTED}"{dash}/>{text}</g>'
    )


SWATCHES = {
    "rect": f'<rect width="15" height="15" fill="{INK}" stroke="{MUTED}"/>',
    "dashed": f'<rect width="15" height="15" fill="#ffffff" stroke="{MUTED}" '
    'stroke-dasharray="3 2"/>',
    "red": f'<rect width="15" height="15" fill="{ACCENT}" stroke="{MUTED}"/>',
    "▲": f'<text y="13" fill="{INK}">▲</text>',
    "✕": f'<text y="13" fill="{INK}">✕</text>',
}


def _legend_step(label: str) -> int:
    return 34 + CHAR_W * len(label)


def _legend_rows(width: float) -> list[list[tuple[str, str]]]:
    """The legend's items in rows that fit `width` (wrapped, like words)."""
    rows: list[list[tuple[str, str]]] = [[]]
    used = 0
    for label, swatch in LEGEND:
        step = _legend_step(label)
        if rows[-1] and used + step > width:
            rows.append([])
            used = 0
        rows[-1].append((label, swatch))
        used += step
    return rows


def _legend(x: float, y: float, rows: list[list[tuple[str, str]]]) -> str:
    parts = [f'<g class="legend" transform="translate({x} {y})">']
    for number, row in enumerate(rows):
        offset = 0
        for label, swatch in row:
            parts.append(
                f'<g transform="translate({offset} {number * LEGEND_ROW})">{SWATCHES[swatch]}'
                f'<text x="20" y="13" fill="{INK}">{_e(label)}</text></g>'
            )
            offset += _legend_step(label)
    parts.append("</g>")
    return "".join(parts)
