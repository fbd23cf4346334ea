"""The layers the code enforces (issue #18 item 4): what importing a layer loads, the rules'
own error base as the pages and the API show it, and the stdlib-only contract type that
pyproject.toml's `lint-imports` contracts use (.ci/run runs `lint-imports` itself)."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys
import textwrap
from pathlib import Path

import grimp

import pbp.rules
from pbp.rules.cards import CardError
from pbp.rules.dice import RollError
from pbp.rules.errors import RulesError
from tests.layers.stdlib_contract import StdlibOnlyContract

CHECKOUT = Path(__file__).resolve().parents[2]
HEAVY = ("flask", "werkzeug", "flask_login", "sqlalchemy", "sqlmodel", "alembic")


def test_importing_the_rules_and_the_adapters_loads_no_web_framework_or_database():
    # A fresh interpreter: this test process has long imported Flask.
    code = f"import sys, pbp.rules, adapters; print([m for m in {HEAVY!r} if m in sys.modules])"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=CHECKOUT, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]"


def _rules_exceptions():
    for info in pkgutil.walk_packages(pbp.rules.__path__, "pbp.rules."):
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            is_error = isinstance(value, type) and issubclass(value, Exception)
            if is_error and value.__module__ == module.__name__:
                yield value


def test_every_refusal_the_rules_raise_derives_from_their_own_base():
    # ScriptExhausted is a mistake in a test's scripted dice, not a refusal for a player.
    refusals = {e for e in _rules_exceptions() if e.__name__ != "ScriptExhausted"}
    assert {RollError, CardError, RulesError} <= refusals
    assert all(issubclass(e, RulesError) for e in refusals)
    assert RulesError.__mro__ == (RulesError, Exception, BaseException, object)


def _refusing_app(app):
    @app.get("/_test/refuse")
    def refuse():
        raise CardError("The queen of hearts is not in your hand.")

    return app


def test_a_rules_error_that_reaches_the_web_layer_is_a_clear_422_page(app):
    """422: refused for what it asks (pbp.errors.REFUSAL_STATUSES), as the API answers."""
    response = _refusing_app(app).test_client().get("/_test/refuse")
    assert response.status_code == 422
    assert "The queen of hearts is not in your hand." in response.get_data(as_text=True)


# The API's side: tests/api/test_forum_api.py::test_a_bad_roll_command_says_what_is_wrong (a
# RollError from the dice rules reaches pbp.api.problems and becomes a 400 problem).


def _graph_of(tmp_path: Path, files: dict[str, str]) -> grimp.ImportGraph:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    sys.path.insert(0, str(tmp_path))
    try:
        return grimp.build_graph("game", include_external_packages=True, cache_dir=None)
    finally:
        sys.path.remove(str(tmp_path))


def _check(graph):
    contract = StdlibOnlyContract(
        name="rules are pure",
        session_options={"root_packages": ["game"]},
        contract_options={"packages": ["game.rules"]},
    )
    return contract.check(graph, verbose=False)


def test_the_stdlib_only_contract_refuses_any_import_from_outside(tmp_path):
    graph = _graph_of(
        tmp_path,
        {
            "game/__init__.py": "",
            "game/web.py": "import flask\n",
            "game/rules/__init__.py": "from game.rules import dice\n",
            "game/rules/dice.py": "import random\nfrom collections.abc import Sequence\n",
            "game/rules/cards.py": "import json\nfrom game import web\nimport nh3\n",
        },
    )
    check = _check(graph)
    assert not check.kept
    assert check.metadata["outside"] == [
        "game.rules.cards -> game.web (l.2)",
        "game.rules.cards -> nh3 (l.3)",
    ]


def test_the_stdlib_only_contract_keeps_a_package_of_stdlib_and_its_own_modules(tmp_path):
    graph = _graph_of(
        tmp_path,
        {
            "game/__init__.py": "import flask\n",
            "game/rules/__init__.py": "from __future__ import annotations\nfrom . import dice\n",
            "game/rules/dice.py": "import random\nimport hmac\nfrom game.rules import errors\n",
            "game/rules/errors.py": "class RulesError(Exception):\n    pass\n",
        },
    )
    assert _check(graph).kept
