"""The README is the front door and docs/ holds the rest (issue #32 item 8): what each page
promises is checked against the code, so a new module, command or setting cannot land
without its line."""

from __future__ import annotations

import re
from pathlib import Path

from pbp.cli import cli

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = ROOT / "docs"


def _modules() -> set[str]:
    """Every module and package of pbp, adapters and scheduler, by its name."""
    names = set()
    for top in ("pbp", "adapters", "scheduler"):
        for path in (ROOT / top).rglob("*.py"):
            if "migrations" in path.parts or path.name.startswith("__"):
                if path.name == "__init__.py" and path.parent.name != top:
                    names.add(path.parent.name)
                continue
            names.add(path.stem)
    return names


def test_the_architecture_page_names_every_module():
    text = (DOCS / "architecture.md").read_text(encoding="utf-8")
    named = set(re.findall(r"[a-z_][a-z0-9_]*", text))
    assert sorted(_modules() - named) == []


def test_the_readme_lists_every_command():
    table = {m for m in re.findall(r"^\| `pbp ([a-z-]+)", README, re.M)}
    commands = set(cli.list_commands(None))  # type: ignore[arg-type]
    commands -= {"routes", "run", "shell"}  # Flask's own, not pbp's
    assert sorted(commands - table) == []


def test_the_operating_page_documents_every_setting():
    config = (ROOT / "pbp" / "config.py").read_text(encoding="utf-8")
    read = set(re.findall(r'env(?:\.get\(|\[|, )"([A-Z][A-Z0-9_]+)"', config))
    assert {"DATABASE_URL", "SECRET_KEY", "PBP_BASE_URL"} <= read  # the pattern finds them
    operating = (DOCS / "operating.md").read_text(encoding="utf-8")
    assert sorted(name for name in read if name not in operating) == []


def test_every_link_of_the_readme_and_docs_opens_a_file():
    written = [p for p in DOCS.glob("*.md") if not p.name.startswith("benchmarks")]
    for page in [ROOT / "README.md", *written]:  # (benchmarks*.md: figures, not links)
        text = page.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
            if "://" in target:
                continue
            assert (page.parent / target).exists(), f"{page.name} links {target}"


def test_the_readme_stays_a_front_door():
    """What a newcomer reads first: what pbp is, two screenshots, the commands, links."""
    assert len(README.splitlines()) < 150
    assert README.count("](docs/screens/") >= 2 and "```sh" in README
