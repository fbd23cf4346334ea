"""gunicorn settings for the Procfile's web process (`gunicorn -c python:pbp.gunicorn_conf`).

gunicorn's threaded worker gives a thread to a connection as soon as it opens: the Procfile's
web process must stand behind a buffering proxy (deploy/nginx.conf; docs/operating.md, Deployment).
"""

import gc


def post_fork(_server=None, _worker=None) -> None:
    """Move everything loaded at start-up out of the garbage collector's reach: a page
    that builds a few thousand objects otherwise triggers full collections over the whole
    app every dozen requests (150-230 ms each in the planet benchmark)."""
    gc.freeze()
