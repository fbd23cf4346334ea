"""Where an installed copy looks for its files: templates and CSS beside the package, and the
instance folder outside site-packages (the smoke test, smoke.sh, covers a real install)."""

from __future__ import annotations

import sys
from pathlib import Path

import pbp


def test_an_installed_copy_keeps_its_instance_folder_under_the_prefix(monkeypatch, tmp_path):
    site_packages = tmp_path / "site-packages"  # no pyproject.toml beside the package
    monkeypatch.setattr(pbp, "ROOT", site_packages)
    monkeypatch.delenv("PBP_INSTANCE_PATH", raising=False)
    assert pbp.default_instance_path() == Path(sys.prefix, "var", "pbp-instance").resolve()


def test_a_checkout_keeps_its_instance_folder_beside_the_package(monkeypatch):
    monkeypatch.delenv("PBP_INSTANCE_PATH", raising=False)
    assert pbp.default_instance_path() == pbp.ROOT / "instance"


def test_pbp_instance_path_wins(monkeypatch, tmp_path):
    monkeypatch.setenv("PBP_INSTANCE_PATH", str(tmp_path / "here"))
    assert pbp.default_instance_path() == tmp_path / "here"


def test_the_app_finds_templates_and_stylesheet_where_the_wheel_puts_them(app):
    # The wheel installs templates/ beside pbp/ and pbp/static inside it (smoke.sh checks the
    # wheel's listing), the same places as in a checkout.
    assert Path(app.template_folder) == pbp.ROOT / "templates"
    assert Path(app.static_folder) == Path(pbp.__file__).parent / "static"
    assert (Path(app.template_folder) / "base.html").is_file()
