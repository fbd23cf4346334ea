from pathlib import Path

import pytest

from pbp import config, create_app
from pbp.errors import ConfigError
from tests.factories import make_campaign, make_characters


def test_factory_boots_with_test_config(app):
    assert app.testing
    assert app.config["PBP_BASE_URL"] == "http://pbp.test"


def test_index_lists_campaigns(client, db_session):
    make_campaign(db_session, name="Salon of Knives")
    db_session.commit()
    page = client.get("/")
    assert page.status_code == 200
    assert b"Salon of Knives" in page.data


def test_campaign_page_shows_roster(client, db_session):
    campaign = make_campaign(db_session, name="Roster Check")
    make_characters(db_session, campaign, names=("Lady Vance", "Pip"))
    db_session.commit()
    page = client.get(f"/c/{campaign.slug}/")
    assert page.status_code == 200
    assert b"Lady Vance" in page.data and b"Pip" in page.data


def test_unknown_campaign_is_a_clear_404(client):
    page = client.get("/c/no-such-game/")
    assert page.status_code == 404
    assert b"there is no campaign called" in page.data


def test_secret_key_is_generated_once_and_private(tmp_path):
    first = config.load_secret_key(tmp_path)
    second = config.load_secret_key(tmp_path)
    assert first == second and len(first) >= 32
    assert (tmp_path / "secret_key").stat().st_mode & 0o077 == 0


def test_secret_key_differs_between_instances(tmp_path):
    assert config.load_secret_key(tmp_path / "a") != config.load_secret_key(tmp_path / "b")


def test_default_database_is_sqlite_in_instance_folder(tmp_path):
    settings = config.load_config(tmp_path, {})
    assert settings["DATABASE_URL"] == f"sqlite:///{tmp_path / 'pbp.sqlite3'}"
    assert settings["PBP_ALLOW_PRIVATE_FEEDS"] is False
    assert settings["SMTP_URL"] is None


def test_environment_overrides(tmp_path):
    env = {
        "DATABASE_URL": "postgresql://u@h/db",
        "SECRET_KEY": "k" * 40,
        "PBP_BASE_URL": "https://pbp.example/",
        "SMTP_URL": "smtp://mail:25",
        "PBP_ALLOW_PRIVATE_FEEDS": "1",
    }
    settings = config.load_config(tmp_path, env)
    assert settings["PBP_BASE_URL"] == "https://pbp.example"
    assert settings["SECRET_KEY"] == "k" * 40
    assert settings["PBP_ALLOW_PRIVATE_FEEDS"] is True
    assert not (tmp_path / "secret_key").exists()


def test_missing_instance_folder_is_created(tmp_path):
    target = tmp_path / "deep" / "instance"
    app = create_app({"INSTANCE_PATH": target, "SECRET_KEY": "s" * 40})
    assert Path(app.instance_path) == target and target.is_dir()


def test_uncreatable_instance_folder_is_one_clear_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(ConfigError, match="cannot create the instance folder"):
        create_app({"INSTANCE_PATH": blocker / "instance"})
