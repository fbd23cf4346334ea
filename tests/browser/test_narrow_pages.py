"""Issue #27 item 10, where the layout is the point: roster tables fit a 390 px phone, the
standings chart reads at 390 and at 1280 px, deadlines are not monospace and show the
reader's own time, and the schedule's fields hide under a manual cadence."""

from __future__ import annotations

from datetime import timedelta
from zoneinfo import ZoneInfo

import pytest
from playwright.sync_api import expect
from sqlmodel import select

from pbp.models import Campaign, Turn, utcnow
from tests.helpers import log_in, no_horizontal_scroll

pytestmark = pytest.mark.browser
PHONE, DESK = 390, 1280

FITS = """sel => Array.from(document.querySelectorAll(sel)).map(t =>
    [t.scrollWidth, t.parentElement.clientWidth])"""
CHART = """() => { const svg = document.querySelector('figure.chart svg');
    const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
    return [scale, scale * parseFloat(svg.getAttribute('font-size'))]; }"""


def test_roster_tables_fit_a_phone(new_page, seed_game, shoot):
    game = seed_game(("Ada Lovelace-Byron", "Bram Stoker", "Cleo Patra", "Dov"), turn=1)
    page = new_page(width=PHONE, height=800)
    log_in(page, game.referee_email)
    for name, url, table in (
        ("referee", f"/c/{game.slug}/referee/", "table.roster-table"),
        ("characters", f"/c/{game.slug}/characters/", "table.roster"),
    ):
        page.goto(url)
        sizes = page.evaluate(FITS, table)
        assert sizes and all(wide <= room for wide, room in sizes), (name, sizes)
        no_horizontal_scroll(page, PHONE)
        shoot(page, f"roster-{name}-{PHONE}")


@pytest.mark.parametrize("width", [PHONE, DESK])
def test_the_standings_chart_reads_at_its_own_size(new_page, seed_game, shoot, width):
    game = seed_game(("Ada Lovelace-Byron", "Bram", "Cleo", "Dov", "Eli"), turn=4)
    page = new_page(width=width, height=900)
    log_in(page, game.referee_email)
    page.goto(f"/c/{game.slug}/history")
    scale, text = page.evaluate(CHART)
    assert scale >= 0.99, f"the chart is shrunk to {scale:.2f} at {width} px"
    assert text >= 14, f"the chart's text is {text:.1f} px at {width} px"
    no_horizontal_scroll(page, width)  # a wide chart scrolls inside its figure
    expect(page.locator(".grid-legend")).to_contain_text("M = challenges made")
    shoot(page, f"history-{width}")


def test_a_deadline_reads_as_a_day_and_shows_the_readers_time(chromium, live_server, seed_game):
    game = seed_game(turn=1)
    with live_server.session() as session:
        campaign = session.exec(select(Campaign).where(Campaign.slug == game.slug)).one()
        turn = session.exec(
            select(Turn).where(Turn.campaign_id == campaign.id, Turn.number == 1)
        ).one()
        # 03:42 UTC on a day to come: 04:42 or 05:42 in Stockholm, the same day.
        deadline = (utcnow() + timedelta(days=3)).replace(hour=3, minute=42, second=0)
        turn.deadline = deadline
        session.add(turn)
        session.commit()
    context = chromium.new_context(
        base_url=live_server.url,
        timezone_id="Europe/Stockholm",
        viewport={"width": 1100, "height": 800},
    )
    try:
        page = context.new_page()
        page.goto(f"/c/{game.slug}/")
        shown = page.locator(".turn-line time.deadline")
        day = f"{deadline:%A} {deadline.day} {deadline:%B}, 03:42 UTC"
        expect(shown).to_have_text(day)
        there = deadline.astimezone(ZoneInfo("Europe/Stockholm"))
        expect(page.locator(".turn-line .your-time")).to_have_text(f" ({there:%H:%M} your time)")
        font = shown.evaluate("el => getComputedStyle(el).fontFamily")
        assert "mono" not in font.lower(), font
    finally:
        context.close()


def test_the_schedules_fields_hide_under_a_manual_cadence(page, seed_game):
    game = seed_game(turn=1)
    log_in(page, game.referee_email)
    page.goto(f"/c/{game.slug}/referee/")
    cadence = page.locator("#cadence")
    cadence.select_option("manual")
    expect(page.locator("#cadence-at")).to_be_hidden()
    expect(page.locator("#cadence-hours")).to_be_hidden()
    cadence.select_option("daily")
    expect(page.locator("#cadence-at")).to_be_visible()
    expect(page.locator("#cadence-hours")).to_be_hidden()
    cadence.select_option("hours")
    expect(page.locator("#cadence-hours")).to_be_visible()
    expect(page.locator("#cadence-at")).to_be_hidden()
