"""pyproject.toml declares every package the code imports, and tests/packaging/lowest.txt pins
each dependency to its lower bound (tests/packaging/smoke.sh installs the wheel with those)."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

CHECKOUT = Path(__file__).resolve().parents[2]
OWN = {"pbp", "adapters", "scheduler", "templates"}


def _pyproject() -> dict:
    return tomllib.loads((CHECKOUT / "pyproject.toml").read_text())


def _declared() -> dict[str, Requirement]:
    requirements = (Requirement(line) for line in _pyproject()["project"]["dependencies"])
    return {canonicalize_name(r.name): r for r in requirements}


def _imported_top_level_names() -> set[str]:
    names = set()
    for package in ("pbp", "adapters", "scheduler"):
        for path in (CHECKOUT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Import):
                    names.update(alias.name.split(".")[0] for alias in node.names)
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names.add(node.module.split(".")[0])
    return {n for n in names if n not in sys.stdlib_module_names and n not in OWN}


def test_every_imported_package_is_a_declared_dependency():
    distributions = packages_distributions()
    declared = _declared()
    undeclared = {
        name: distributions.get(name)
        for name in _imported_top_level_names()
        if not any(canonicalize_name(d) in declared for d in distributions.get(name, []))
    }
    assert undeclared == {}


def test_every_dependency_has_a_lower_bound_pinned_in_lowest_txt():
    pins = {}
    for line in (CHECKOUT / "tests" / "packaging" / "lowest.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, version = re.fullmatch(r"([A-Za-z0-9_.\-]+)==(\S+)", line.strip()).groups()
            pins[canonicalize_name(name)] = version
    lower_bounds = {}
    for name, requirement in _declared().items():
        bounds = [s.version for s in requirement.specifier if s.operator == ">="]
        assert len(bounds) == 1, f"{name} needs one lower bound (>=), has {requirement.specifier}"
        lower_bounds[name] = bounds[0]
    assert pins == lower_bounds


def test_urllib3_has_an_upper_bound_since_the_ssrf_guard_uses_its_internals():
    assert "<3" in str(_declared()["urllib3"].specifier)
