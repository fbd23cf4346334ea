"""pbp: play-by-post role-playing games.

`create_app` is a list of `init_app(app)` calls, as in Flask's tutorial (flaskr).
"""

from __future__ import annotations

import os
from pathlib import Path

from flask import Flask

ROOT = Path(__file__).resolve().parent.parent


def default_instance_path() -> Path:
    """`PBP_INSTANCE_PATH`, or `instance/` beside the package (Flask's convention)."""
    return Path(os.environ.get("PBP_INSTANCE_PATH") or ROOT / "instance").resolve()


def create_app(config: dict | None = None) -> Flask:
    from pbp import config as config_module
    from pbp import db, web

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

    db.init_app(app, engine=config.get("ENGINE"))
    web.init_app(app)
    return app
