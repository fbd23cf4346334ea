"""`pbp verify-rolls EXPORT.json`: recompute every roll of a forum export offline.

Needs no database and no app: only the export (downloaded from the forum after the GM
ended the campaign, when it carries the revealed seed). Exit 0 with "N rolls verified"
when the seed matches its published commitment and reproduces every roll; exit 1 listing
every mismatch otherwise.
"""

from __future__ import annotations

import json

import click

from pbp.errors import REFUSALS
from pbp.services.forum.rolls import verify_export


@click.command("verify-rolls")
@click.argument("export", type=click.File("r", encoding="utf-8"))
def verify_rolls(export) -> None:
    """Check every roll in a forum EXPORT (JSON) against the campaign's revealed seed."""
    try:
        data = json.load(export)
    except json.JSONDecodeError as exc:
        raise click.ClickException(
            f"{export.name} is not JSON: {exc.msg} at line {exc.lineno}"
        ) from exc
    try:
        report = verify_export(data)
    except REFUSALS as exc:
        raise click.ClickException(str(exc)) from exc
    if report.ok:
        click.echo(report.summary())
        return
    for mismatch in report.mismatches:
        click.echo(str(mismatch))
    click.echo(report.summary())
    raise SystemExit(1)
