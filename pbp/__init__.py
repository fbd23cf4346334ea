"""pbp: play-by-post role-playing games.

`create_app` is a list of `init_app(app)` calls, as in Flask's tutorial (flaskr).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from flask import Flask

ROOT = Path(__file__).resolve().parent.parent


def default_instance_path() -> Path:
    """`PBP_INSTANCE_PATH`, else Flask's convention: `instance/` in a checkout, and
    `<prefix>/var/pbp-instance` for an installed wheel (never inside site-packages)."""
    if os.environ.get("PBP_INSTANCE_PATH"):
        return Path(os.environ["PBP_INSTANCE_PATH"]).resolve()
    if (ROOT / "pyproject.toml").is_file():
        return (ROOT / "instance").resolve()
    return Path(sys.prefix, "var", "pbp-instance").resolve()


def create_app(config: dict | None = None) -> Flask:
    # Flask is imported here, not at the top: `import pbp.rules` (and anything else under pbp)
    # must not load the web framework.
    from flask import Flask

    from pbp import api, request_db, web
    from pbp import config as config_module

    config = dict(config or {})
    instance_path = Path(config.pop("INSTANCE_PATH", None) or default_instance_path())
    config_module.ensure_instance_folder(instance_path)
    app = Flask(
        "pbp",
        instance_path=str(instance_path),
        template_folder=str(ROOT / "templates"),
        static_folder=str(Path(__file__).parent / "static"),
    )
    environ = config.pop("ENVIRON", None)
    if "SECRET_KEY" in config:
        environ = {**(environ or os.environ), "SECRET_KEY": config["SECRET_KEY"]}
    app.config.from_mapping(config_module.load_config(instance_path, environ))
    app.config.from_mapping(config)

    request_db.init_app(app, engine=config.get("ENGINE"))
    web.init_app(app)
    # /api/v1: bearer tokens instead of cookies, problem+json errors. Wired here, not by
    # pbp.web: the pages and the API do not import each other (pyproject.toml's contracts).
    api.init_app(app)
    return app
