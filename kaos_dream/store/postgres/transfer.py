"""Opening a PostgreSQL library as the source or the target of an export, import or copy.

A SQLite import builds a new file under a temporary name and renames it; on a server the same
all-or-nothing is one transaction: the missing migrations (each a savepoint inside it, see
:func:`migrate_inside`), the rows, the identity sequences moved past the loaded ids and the full-text
index (both at COMMIT, by :class:`.adapter.PgConnection`). A failure anywhere rolls back all of it,
so a database that held no library still holds none.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from ...errors import StoreError
from ..dialect import table_names
from ..engine import Engine, mask
from .adapter import PgConnection


@contextlib.contextmanager
def server_errors(shown: str) -> Iterator[None]:
    """A psycopg error from a statement outside the adapter (catalogue, migrations) as one masked line."""
    import psycopg

    try:
        yield
    except psycopg.Error as exc:
        first = next((line.strip() for line in str(exc).splitlines() if line.strip()), type(exc).__name__)
        raise StoreError(f"{shown}: {mask(first)}") from None


def open_source(engine: Engine, *, busy_timeout_ms: int, verb: str) -> PgConnection:
    """A read-only connection to a kaos-dream library on the server (refusing a database without one)."""
    from .connect import connect
    from .migrations import check_ownership

    raw = connect(engine, autocommit=True)
    try:
        with server_errors(engine.shown):
            version = check_ownership(raw, engine.shown)
        if version == 0:
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
        with server_errors(engine.shown):
            check_ownership(raw, engine.shown)  # another application's tables: refused before anything
        return PgConnection(raw, engine.shown, busy_timeout_ms)
    except BaseException:
        raw.close()
        raise


def schema_version_of(conn: PgConnection) -> int:
    from .migrations import check_ownership

    if conn.in_transaction:
        conn.sync()  # read under this transaction's write lock, not before it
    with server_errors(conn.kaos_path):
        return check_ownership(conn.raw, conn.kaos_path)


def migrate_inside(conn: PgConnection, now: float, upto: int | None = None) -> None:
    """Apply the missing migrations (up to ``upto``) inside the caller's open transaction: psycopg runs
    each step's own transaction as a savepoint, so the caller's ROLLBACK undoes the schema as well."""
    from .migrations import MIGRATIONS, apply_one

    if not conn.in_transaction:
        raise RuntimeError("migrate_inside needs an open transaction")
    conn.sync()  # the steps below use the psycopg connection itself: the BEGIN must be on the server
    for migration in MIGRATIONS[schema_version_of(conn):upto]:
        with server_errors(conn.kaos_path):
            # Rows loaded in this transaction leave deferred "has an index row" checks pending, and
            # PostgreSQL refuses to ALTER a table with pending trigger events: index them and run the
            # checks now, then defer again for the step's own writes.
            conn.flush_fulltext()
            conn.raw.execute("SET CONSTRAINTS ALL IMMEDIATE")
            conn.raw.execute("SET CONSTRAINTS ALL DEFERRED")
            apply_one(conn.raw, migration, now, conn.kaos_path)
        conn.refresh_catalog()  # the next step's flush reads the columns this one added
    conn.refresh_catalog()


def clear_library(conn: PgConnection) -> None:
    """Empty the library (the ``--force`` replace), in the caller's transaction. TRUNCATE skips the
    row triggers (the coordination log refuses row deletes) and restarts the identity sequences; the
    schema and its version stay (the load replaces ``schema_migrations``' rows), and the full-text
    totals, which the index's triggers keep, go back to the zeros the migration seeded."""
    keep = ("schema_migrations", "fulltext_totals")
    names = [n for n in table_names(conn) if n not in keep]
    if names:
        conn.native("TRUNCATE " + ", ".join(f'"{n}"' for n in names) + " RESTART IDENTITY")
    conn.native("UPDATE fulltext_totals SET docs = 0, tokens = 0")


def reset_empty_library(conn: PgConnection) -> None:
    """Drop an empty library's schema (its tables with their triggers and sequences, and its
    ``kaos_`` functions), in the caller's transaction, so an export of an older layout can be loaded
    from its own version up: an export is written in the layout before the storage-only migrations,
    while a freshly initialised database already sits past them. Only ever called on a library
    holding no data; a rollback restores it."""
    conn.sync()
    names = table_names(conn)
    if names:
        conn.native("DROP TABLE " + ", ".join(f'"{n}"' for n in names) + " CASCADE")
    for (signature,) in conn.native(
        "SELECT p.oid::regprocedure::text FROM pg_proc AS p JOIN pg_namespace AS n ON n.oid = p.pronamespace "
        "WHERE n.nspname = current_schema() AND p.proname LIKE 'kaos\\_%' ORDER BY 1"
    ).fetchall():
        conn.native(f"DROP FUNCTION {signature} CASCADE")
    conn.refresh_catalog()
