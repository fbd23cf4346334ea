"""`pbp verify-rolls EXPORT.json` and `pbp verify-cards EXPORT.json`: recompute every roll of
a forum export, or replay every deal of a card table's export, offline.

Needs no database and no app: only the export (downloaded after the GM ended the
campaign, when it carries the revealed seed). Exit 0 with "N rolls verified" (or "N card
actions verified") when the seed matches its published commitment and reproduces every
roll or deal; exit 1 listing every mismatch otherwise.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import click

from pbp.errors import REFUSALS
from pbp.services.cards.tables import verify_card_export
from pbp.services.forum.rolls import verify_export


@click.command("verify-rolls")
@click.argument("export", type=click.File("r", encoding="utf-8"))
def verify_rolls(export) -> None:
    """Check every roll in a forum EXPORT (JSON) against the campaign's revealed seed."""
    _verify(export, verify_export)


@click.command("verify-cards")
@click.argument("export", type=click.File("r", encoding="utf-8"))
def verify_cards(export) -> None:
    """Replay every action of a card table's EXPORT (JSON) with the campaign's revealed
    seed: each deal must give the recorded events, ending in the recorded state."""
    _verify(export, verify_card_export)


def _verify(export, verify: Callable[[Any], Any]) -> None:
    try:
        data = json.load(export)
    except json.JSONDecodeError as exc:
        raise click.ClickException(
            f"{export.name} is not JSON: {exc.msg} at line {exc.lineno}"
        ) from exc
    try:
        report = verify(data)
    except REFUSALS as exc:
        raise click.ClickException(str(exc)) from exc
    if report.ok:
        click.echo(report.summary())
        return
    for mismatch in report.mismatches:
        click.echo(str(mismatch))
    click.echo(report.summary())
    raise SystemExit(1)
