"""The full-text part of a search, one per database, behind the same two functions.

- SQLite: FTS5 (`search_fts`, migration 0023), ranked by bm25 with the title weighing
  four times the body; snippets by FTS5's `snippet()`.
- PostgreSQL: the stored column `search_doc.tsv`, `to_tsvector('english', title || ' ' ||
  body)` with the GIN index `ix_search_doc_tsv` (migration 0023), matched by
  `plainto_tsquery`, ranked by `ts_rank_cd` (divided by the log of the length, as
  bm25 weighs long texts down); snippets by `ts_headline`.

The reader's words reach neither query language: `words` keeps letters and digits only,
and each database gets them as a bound parameter (FTS5 as quoted strings), so no search
text can be an FTS5 or tsquery operator. Both stem English words (FTS5's porter tokenizer,
PostgreSQL's english configuration), so "rolled" finds "rolls" on both.
"""

from __future__ import annotations

import re
from typing import Any

import sqlalchemy as sa

from pbp.models import SearchDoc
from pbp.services.search.index import START, STOP

_DOC = SearchDoc.__table__  # type: ignore[attr-defined]
_WORD = re.compile(r"\w+")
MAX_WORDS = 12
MAX_WORD = 60
SNIPPET_WORDS = 24

_FTS = sa.table("search_fts", sa.column("rowid"))
_ENGLISH: sa.ColumnClause[Any] = sa.literal_column("'english'")
_TSV: sa.ColumnClause[Any] = sa.literal_column("search_doc.tsv")


def words(query: str) -> list[str]:
    """The words searched for, every other character dropped."""
    return [w[:MAX_WORD] for w in _WORD.findall(query or "")][:MAX_WORDS]


def _fts_query(terms: list[str]) -> str:
    return " ".join(f'"{t}"' for t in terms)


def ranked(dialect: str, terms: list[str], where, limit: int, offset: int) -> sa.Select:
    """The ids of the matching rows that pass `where`, best first, one page."""
    if dialect == "sqlite":
        rank = sa.func.bm25(sa.literal_column("search_fts"), 4.0, 1.0)
        query = (
            sa.select(_DOC.c.id)
            .select_from(_FTS.join(_DOC, _DOC.c.id == _FTS.c.rowid))
            .where(sa.literal_column("search_fts").op("MATCH")(_fts_query(terms)))
            .order_by(rank, _DOC.c.id)
        )
    else:
        tsquery = sa.func.plainto_tsquery(_ENGLISH, " ".join(terms))
        vector = _TSV
        query = (
            sa.select(_DOC.c.id)
            .where(vector.op("@@")(tsquery))
            .order_by(sa.func.ts_rank_cd(vector, tsquery, 1).desc(), _DOC.c.id)
        )
    return query.where(where).limit(limit).offset(offset)


def snippets(dialect: str, terms: list[str], ids: list[int]) -> sa.Select:
    """(id, snippet) of the given rows, the matched words between START and STOP."""
    if dialect == "sqlite":
        snippet = sa.func.snippet(
            sa.literal_column("search_fts"), -1, START, STOP, "…", SNIPPET_WORDS
        )
        return (
            sa.select(_FTS.c.rowid, snippet)
            .where(sa.literal_column("search_fts").op("MATCH")(_fts_query(terms)))
            .where(_FTS.c.rowid.in_(ids))
        )
    tsquery = sa.func.plainto_tsquery(_ENGLISH, " ".join(terms))
    options = f"StartSel={START}, StopSel={STOP}, MaxWords={SNIPPET_WORDS}, MinWords=8"
    headline = sa.func.ts_headline(_ENGLISH, _DOC.c.title + " " + _DOC.c.body, tsquery, options)
    return sa.select(_DOC.c.id, headline).where(_DOC.c.id.in_(ids))
