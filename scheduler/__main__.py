"""`python -m scheduler`: the worker process (same as `pbp worker`)."""

from pbp import create_app
from pbp.db import check_connection, database
from pbp.migrate import require_current
from scheduler.jobs import run_blocking

app = create_app()
check_connection(database(app).engine)
require_current(database(app).engine)
run_blocking(app)
