"""The rules' ids and the database's.

The rules take a character's or an entry's id as `int | str` (pbp.rules.noteworthy
CharacterId, EntryId: a rules test may name them "ada"); the services always pass the
database's int ids in, so every id the rules hand back is one of those ints. `row_id` says
so where an id goes back into a row or a lookup, and fails loudly if it is not.
"""

from __future__ import annotations


def row_id(value: int | str) -> int:
    """`value` as the database row id it is (see the module docstring)."""
    if not isinstance(value, int):
        raise TypeError(f"the rules returned the id {value!r}, not a database row id")
    return value


def row_id_or_none(value: int | str | None) -> int | None:
    return None if value is None else row_id(value)
