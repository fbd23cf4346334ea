"""gunicorn settings for the Procfile's web process (`gunicorn -c python:pbp.gunicorn_conf`)."""

from pbp.server import freeze_startup_objects

post_fork = freeze_startup_objects
