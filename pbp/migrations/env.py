"""Alembic environment: pbp passes its own engine connection in `config.attributes`."""

from alembic import context
from sqlmodel import SQLModel

import pbp.models  # noqa: F401  (registers the tables on SQLModel.metadata)
from pbp.models import UTCDateTime


def render_item(type_, obj, autogen_context):
    # Migrations must not import application code that may change later.
    if type_ == "type" and isinstance(obj, UTCDateTime):
        return "sa.DateTime()"
    return False


def compare_type(context, inspected_column, metadata_column, inspected_type, metadata_type):
    if isinstance(metadata_type, UTCDateTime):
        return inspected_type._type_affinity is not metadata_type.impl._type_affinity
    return None


# Made by migration 0023 with op.execute, outside the models (pbp.models.search says why):
# SQLite's FTS5 table with its shadow tables; PostgreSQL's generated tsvector column and
# its GIN index.
UNMODELLED_TABLES = ("search_fts",)
UNMODELLED_COLUMNS = ("tsv",)
UNMODELLED_INDEXES = ("ix_search_doc_tsv",)


def include_object(obj, name, type_, reflected, compare_to):
    if not reflected:
        return True
    if type_ == "table":
        return not name.startswith(UNMODELLED_TABLES)
    if type_ == "column":
        return not (obj.table.name == "search_doc" and name in UNMODELLED_COLUMNS)
    return not (type_ == "index" and name in UNMODELLED_INDEXES)


def run_migrations() -> None:
    connection = context.config.attributes["connection"]
    context.configure(
        connection=connection,
        target_metadata=SQLModel.metadata,
        render_as_batch=True,  # SQLite can only alter tables by rebuilding them
        render_item=render_item,
        compare_type=compare_type,
        include_object=include_object,
    )
    with context.begin_transaction():
        context.run_migrations()


run_migrations()
