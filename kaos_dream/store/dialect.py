"""The few places where a store's logic (not its SQL) depends on the engine under the connection.

The SQL itself is shared (PostgreSQL's form is derived in :mod:`.postgres.translate`); what remains
are behaviours: PostgreSQL aborts a whole transaction on a failed statement unless it sits in a
savepoint, and it returns the ids of a multi-row insert instead of handing out consecutive rowids.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any


def is_postgres(conn: Any) -> bool:
    """True for a PostgreSQL connection (:class:`.postgres.adapter.PgConnection`)."""
    return getattr(conn, "engine", "sqlite") == "postgresql"


@contextlib.contextmanager
def recoverable(conn: Any) -> Iterator[None]:
    """Around a statement whose failure the caller handles before carrying on in the same transaction
    (SQLite undoes just the statement; PostgreSQL needs a savepoint for that)."""
    if is_postgres(conn):
        with conn.savepoint():
            yield
    else:
        yield


def inserted_ids(cursor: Any, first: int, count: int) -> Sequence[int]:
    """The ids an ``executemany`` INSERT gave its rows: as PostgreSQL returned them, else consecutive
    from ``first`` (SQLite hands out max(rowid) + 1 under the write lock)."""
    found = getattr(cursor, "inserted_ids", None)
    return found if found is not None else range(first, first + count)


_PG_TABLES = (
    "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() "
    "AND table_type = 'BASE TABLE' ORDER BY table_name"
)
_SQLITE_TABLES = "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"


def table_names(conn: Any) -> list[str]:
    """Every table of the library, in name order (SQLite's own tables excluded)."""
    return [str(r[0]) for r in conn.execute(_PG_TABLES if is_postgres(conn) else _SQLITE_TABLES)]
