"""The few places where a store's logic (not its SQL) depends on the engine under the connection.

The SQL itself is shared (PostgreSQL's form is derived in :mod:`.postgres.translate`); what remains
are behaviours: PostgreSQL aborts a whole transaction on a failed statement unless it sits in a
savepoint, it returns the ids of a multi-row insert instead of handing out consecutive rowids, and
a library is named by its URL rather than by a file.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any


def is_postgres(conn: Any) -> bool:
    """True for a PostgreSQL connection (:class:`.postgres.adapter.PgConnection`)."""
    return getattr(conn, "engine", "sqlite") == "postgresql"


_NOTHING = contextlib.nullcontext()


class WriteLockNeeded(Exception):  # noqa: N818 - a signal to the caller, not an error a person sees
    """A transaction that holds PostgreSQL's database-wide write lock in shared mode
    (:func:`share_write_lock`) ran a statement that needs it exclusively. Everything it did is rolled
    back; the caller runs it again as an ordinary (exclusive) write transaction."""


def share_write_lock(conn: Any) -> bool:
    """Right after the caller's own ``BEGIN IMMEDIATE``: on PostgreSQL hold the database-wide write lock
    in shared mode, so transactions of this kind (episode ends) run side by side and only exclude the
    exclusive holders (the dream's phases, cold writes). True when it did; SQLite has one writer anyway."""
    if not is_postgres(conn):
        return False
    conn.share_write_lock()
    return True


def recoverable(conn: Any) -> contextlib.AbstractContextManager[Any]:
    """Around a statement whose failure the caller handles before carrying on in the same transaction
    (SQLite undoes just the statement; PostgreSQL needs a savepoint for that). A shared no-op on
    SQLite, not a generator: it wraps the single-outcome insert, where a generator's set-up cost
    about a tenth of the statement."""
    return conn.savepoint() if is_postgres(conn) else _NOTHING


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


def library_key(conn: Any) -> str:
    """Which library a connection is on, as a key for caches kept per library in one process: the
    main file's path on SQLite (the connection itself for an in-memory database), the masked URL
    (server and database) on PostgreSQL."""
    if is_postgres(conn):
        return f"postgresql:{conn.kaos_path}"
    row = conn.execute("SELECT file FROM pragma_database_list WHERE name = 'main'").fetchone()
    return row[0] if row and row[0] else f"memory:{id(conn)}"


def column_names(conn: Any, table: str) -> list[str]:
    """The table's columns in declaration order (empty when there is no such table)."""
    if is_postgres(conn):
        return [str(r[0]) for r in conn.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() "
            "AND table_name = ? ORDER BY ordinal_position", (table,))]
    return [str(r[1]) for r in conn.execute(f'PRAGMA table_info("{table}")')]
