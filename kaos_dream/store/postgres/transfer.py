"""Opening a PostgreSQL library as the source or the target of an export, import or copy.

A SQLite import builds a new file under a temporary name and renames it; on a server the same
all-or-nothing is one transaction: the missing migrations (each a savepoint inside it, see
:func:`migrate_inside`), the rows, the identity sequences moved past the loaded ids and the full-text
index (both at COMMIT, by :class:`.adapter.PgConnection`). A failure anywhere rolls back all of it,
so a database that held no library still holds none.
"""

from __future__ import annotations

from ...errors import StoreError
from ..dialect import table_names
from ..engine import Engine
from .adapter import PgConnection


def open_source(engine: Engine, *, busy_timeout_ms: int, verb: str) -> PgConnection:
    """A read-only connection to a kaos-dream library on the server (refusing a database without one)."""
    from .connect import connect
    from .migrations import check_ownership

    raw = connect(engine, autocommit=True)
    try:
        if check_ownership(raw, engine.shown) == 0:
            raise StoreError(f"{engine.shown} is not a kaos-dream library (no schema); nothing to {verb}")
        return PgConnection(raw, engine.shown, busy_timeout_ms, readonly=True)
    except BaseException:
        raw.close()
        raise


def open_target(engine: Engine, *, busy_timeout_ms: int) -> PgConnection:
    """A connection to the database an import fills; nothing is read or written yet."""
    from .connect import connect
    from .migrations import check_ownership

    raw = connect(engine, autocommit=True)
    try:
        check_ownership(raw, engine.shown)  # another application's tables: refused before anything
        return PgConnection(raw, engine.shown, busy_timeout_ms)
    except BaseException:
        raw.close()
        raise


def schema_version_of(conn: PgConnection) -> int:
    from .migrations import check_ownership

    return check_ownership(conn.raw, conn.kaos_path)


def migrate_inside(conn: PgConnection, now: float, upto: int | None = None) -> None:
    """Apply the missing migrations (up to ``upto``) inside the caller's open transaction: psycopg runs
    each step's own transaction as a savepoint, so the caller's ROLLBACK undoes the schema as well."""
    from .migrations import MIGRATIONS, apply_one

    if not conn.in_transaction:
        raise RuntimeError("migrate_inside needs an open transaction")
    for migration in MIGRATIONS[schema_version_of(conn):upto]:
        apply_one(conn.raw, migration, now, conn.kaos_path)
    conn.refresh_catalog()


def clear_library(conn: PgConnection) -> None:
    """Empty every table of the library (the ``--force`` replace), in the caller's transaction.
    TRUNCATE skips the row triggers (the coordination log refuses row deletes) and restarts the
    identity sequences; the schema stays."""
    names = table_names(conn)
    if names:
        conn.native("TRUNCATE " + ", ".join(f'"{n}"' for n in names) + " RESTART IDENTITY")
