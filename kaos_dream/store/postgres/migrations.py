"""The numbered schema migrations in PostgreSQL's dialect, applied safely by many hosts at once.

The SQL lives in ``postgres/migrations/`` with the same numbers and names as SQLite's
``store/migrations/`` (a test holds the two lists and the resulting tables and columns equal). Each
migration runs in one transaction together with its ``schema_migrations`` row. Before reading the
version, the transaction takes ``pg_advisory_xact_lock`` on a fixed key, so hosts starting at once
queue there and each one re-reads the version under the lock: the first applies the step, the
others find nothing to do. The lock goes with the transaction's end, commit or rollback.

The version is ``max(version)`` of ``schema_migrations`` (PostgreSQL has no ``user_version``). As
on SQLite, a database of a newer kaos-dream is refused before anything is written, and a database
that already holds tables but no ``schema_migrations`` belongs to another application.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING

from ...errors import StoreError
from ..engine import mask
from ..migrations import MIGRATIONS as SQLITE_MIGRATIONS
from ..migrations import check_not_newer, check_not_older

if TYPE_CHECKING:
    import psycopg

_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")
# The advisory-lock key every kaos-dream process uses for schema changes: the first 8 bytes of
# sha256("kaos-dream schema"), so it is unlikely to meet another application's key on a shared server.
SCHEMA_LOCK_KEY = int.from_bytes(hashlib.sha256(b"kaos-dream schema").digest()[:8], "big", signed=True)


@dataclass(frozen=True)
class PgMigration:
    version: int
    name: str
    script: str


def _load() -> tuple[PgMigration, ...]:
    folder = resources.files(__package__).joinpath("migrations")
    found = sorted(
        (PgMigration(int(m.group(1)), m.group(2), entry.read_text("utf-8")) for entry in folder.iterdir()
         if (m := _NAME.match(entry.name))),
        key=lambda m: m.version,
    )
    for expected, migration in enumerate(found, start=1):
        if migration.version != expected:
            raise RuntimeError(f"PostgreSQL migration numbering has a gap: expected {expected:04d}, "
                               f"got {migration.version:04d}")
    sqlite_steps = [(m.version, m.name) for m in SQLITE_MIGRATIONS]
    if [(m.version, m.name) for m in found] != sqlite_steps:
        raise RuntimeError("the PostgreSQL migrations must be the same numbered steps as SQLite's "
                           f"{sqlite_steps}, got {[(m.version, m.name) for m in found]}")
    return tuple(found)


MIGRATIONS: tuple[PgMigration, ...] = _load()


def _identifier_words(conn: psycopg.Connection) -> None:
    """0022: fill the identifier words of every existing name and key (the splitter is Python, so SQL
    alone cannot; SQLite's runner calls the same function). Each entry given words lost its index row
    to the stale trigger and is reindexed here; the others' index is unchanged (their words are empty,
    and a trailing space adds no term)."""
    from ...tokens import identifier_index_words
    from . import fulltext

    for kind, (fts, _postings, _vocab, table, names) in sorted(fulltext.KINDS.items()):
        column = names[0]
        with conn.cursor() as cursor:
            cursor.executemany(
                f"UPDATE {table} SET {column}_words = %s WHERE id = %s",
                [(identifier_index_words(name), entry_id)
                 for entry_id, name in conn.execute(f"SELECT id, {column} FROM {table} ORDER BY id").fetchall()
                 if identifier_index_words(name)],
            )
        rows = conn.execute(f"SELECT e.id, {', '.join(fulltext.SOURCES[kind])} FROM {table} AS e "
                            f"WHERE NOT EXISTS (SELECT 1 FROM {fts} AS f WHERE f.id = e.id) ORDER BY e.id")
        for row in rows.fetchall():
            fulltext.index_entry(conn, kind, int(row[0]), list(row[1:]))


# Python run after a migration's SQL, in its transaction, keyed by name (renumbering keeps them).
PYTHON_STEPS = {"identifier_words": _identifier_words}
LATEST_VERSION: int = len(MIGRATIONS)


_TABLES = """
SELECT coalesce(bool_or(c.relname = 'schema_migrations'), false),
       coalesce(bool_or(c.relname <> 'schema_migrations'), false)
FROM pg_catalog.pg_class AS c JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace
WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p', 'v', 'm')
"""


def _state(conn: psycopg.Connection) -> tuple[int, bool]:
    """(applied version, other tables present), read from one snapshot: a check split over two
    statements could see another host's first migration commit in between and call our own fresh
    tables foreign."""
    ours, others = conn.execute(_TABLES).fetchone()
    if not ours:
        return 0, bool(others)
    return int(conn.execute("SELECT coalesce(max(version), 0) FROM schema_migrations").fetchone()[0]), bool(others)


def schema_version(conn: psycopg.Connection) -> int:
    """The applied version (0 for a database without kaos-dream's tables)."""
    return _state(conn)[0]


def database_schema_version(url: str) -> int:
    """The schema version of the database at ``url``, read on a connection of its own without writing
    (0 for a database without kaos-dream's tables): ``kaos db migrate``'s "from"."""
    from .connect import connect

    raw = connect(url, autocommit=True)
    try:
        return schema_version(raw)
    finally:
        raw.close()


def check_ownership(conn: psycopg.Connection, shown: str) -> int:
    """Refuse, before anything is written, a newer schema or another application's tables."""
    version, others = _state(conn)
    check_not_newer(version, shown, "database")
    if version == 0 and others:
        raise StoreError(f"{shown} holds tables of another application (no schema_migrations); refusing to touch it")
    return version


def require_current(conn: psycopg.Connection, shown: str) -> None:
    """For read-only opens: reads never migrate, so the schema must already be current."""
    check_not_older(check_ownership(conn, shown), shown)


def apply_migrations(conn: psycopg.Connection, now: float, shown: str = "database",
                     upto: int | None = None) -> list[int]:
    """Bring the schema up to date (or up to ``upto``); returns the versions this call applied.

    ``conn`` must not be inside a transaction: each step is its own.
    """
    from psycopg.pq import TransactionStatus

    shown = mask(shown)
    if conn.info.transaction_status != TransactionStatus.IDLE:
        raise RuntimeError("apply_migrations needs a connection outside a transaction (each step is its own)")
    with conn.transaction():
        version = check_ownership(conn, shown)
    return [m.version for m in MIGRATIONS[version:upto] if apply_one(conn, m, now, shown)]


def apply_one(conn: psycopg.Connection, migration: PgMigration, now: float, shown: str = "database") -> bool:
    """Run one migration in one transaction under the schema lock; ``False`` if another process got
    there first."""
    import psycopg

    try:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK_KEY,))
            current = check_ownership(conn, shown)
            if current >= migration.version:
                return False
            if current != migration.version - 1:
                raise StoreError(f"{shown}: cannot apply migration {migration.version} on schema version {current}")
            conn.execute(migration.script.encode("utf-8"))  # no parameters: the whole script in one round trip
            step = PYTHON_STEPS.get(migration.name)
            if step is not None:
                step(conn)
            conn.execute("INSERT INTO schema_migrations (version, name, applied_at) VALUES (%s, %s, %s)",
                         (migration.version, migration.name, now))
    except psycopg.errors.InsufficientPrivilege as exc:
        raise StoreError(
            f"{shown}: the user may not create kaos-dream's schema ({mask(str(exc).splitlines()[0])}); "
            "grant it CREATE on the schema, or migrate once as its owner"
        ) from None
    return True
