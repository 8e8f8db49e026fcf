"""`kaos db copy SRC DST`: move a library between engines (SQLite file ↔ PostgreSQL database).

A copy is an export of SRC streamed straight into an import of DST, so it inherits both halves'
guarantees without a file in between: SRC is read in one snapshot and never written; DST is built
all-or-nothing (a temporary file renamed into place, or one PostgreSQL transaction); the loaded rows
are exported again and must equal SRC's export byte for byte, so a copy is exact or it fails and
writes nothing. Identity sequences end past the copied ids and the full-text index is rebuilt from
the entries on DST. A DST that already holds a library with data is refused unless ``force``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import StoreError
from .catalogue import read_snapshot
from .connect import describe_sqlite_error
from .engine import Engine, parse_db
from .files import refuse_the_database_itself
from .jsonl import export_lines, import_lines, open_export_source
from .migrations import schema_version


@dataclass(frozen=True)
class CopyResult:
    source: str  # masked
    target: str  # masked
    source_engine: str
    target_engine: str
    schema_version: int
    upgraded_to: int
    rows: int
    tables: dict[str, int]


def _same_server_database(a: Engine, b: Engine) -> bool:
    from psycopg.conninfo import conninfo_to_dict

    def where(engine: Engine) -> tuple[str, str, str]:
        params = {k: str(v) for k, v in conninfo_to_dict(engine.target).items()}
        return (params.get("host", ""), params.get("port", "5432"), params.get("dbname", params.get("user", "")))

    try:
        return where(a) == where(b)
    except Exception:  # a malformed URL: the connection reports it
        return False


def database_identity(engine: Engine) -> tuple[str, ...] | None:
    """What makes a PostgreSQL database itself whatever its URL says (``localhost`` or ``127.0.0.1``,
    a socket, another user): the server's system identifier (made at initdb, kept by its replicas'
    primary) and the database's oid. Without the right to read the control data (older servers
    restrict it), the server's start time and port stand in for the system identifier. None when the
    database cannot be reached: the import that follows reports that."""
    from .postgres.connect import connect

    try:
        with connect(engine, autocommit=True) as raw:
            oid = raw.execute("SELECT oid FROM pg_database WHERE datname = current_database()").fetchone()
            try:
                server = raw.execute("SELECT system_identifier::text FROM pg_control_system()").fetchone()
            except Exception:
                server = raw.execute(
                    "SELECT pg_postmaster_start_time()::text || ':' || current_setting('port')").fetchone()
            return ("postgresql", str(server[0] if server else ""), str(oid[0] if oid else ""))
    except Exception:
        return None


def _refuse_same(src: Engine, dst: Engine) -> None:
    """A copy onto its own source would wait on its own lock and then fail as "locked by another
    writer" (issue 33 item 7): recognise the same database however it is spelled, and say so at once."""
    if src.kind == dst.kind == "postgresql":
        if _same_server_database(src, dst):
            raise StoreError(f"{dst.shown} is the source database itself; copy to another database")
        same = database_identity(src)
        if same is not None and same == database_identity(dst):
            raise StoreError(f"{dst.shown} is the source database itself ({src.shown}, the same server system "
                             "identifier and database oid under another address); copy to another database")
    elif src.kind == dst.kind == "sqlite":
        refuse_the_database_itself(dst.target, src.target, "copy")  # also the same device and inode


def _encoded(lines: Iterator[str]) -> Iterator[tuple[int, bytes]]:
    for number, line in enumerate(lines, start=1):
        yield number, line.encode("utf-8")


def copy_library(source: str, target: str | Path, *, force: bool = False, now: float = 0.0,
                 busy_timeout_ms: int = 10_000) -> CopyResult:
    """Copy the library at ``source`` to ``target`` (each a file path or a ``postgresql://`` URL)."""
    src, dst = parse_db(source), parse_db(str(target))
    if src.target == ":memory:" or dst.target == ":memory:":
        raise StoreError("db copy needs a file or a PostgreSQL database on both sides, not :memory:")
    _refuse_same(src, dst)
    conn: Any = open_export_source(source, None, verb="copy", busy_timeout_ms=busy_timeout_ms)
    try:
        with read_snapshot(conn):
            version = schema_version(conn)
            result = import_lines(_encoded(export_lines(conn)), dst.target, force=force, now=now,
                                  busy_timeout_ms=busy_timeout_ms,
                                  mode_from=source if src.kind == "sqlite" else None)
    except sqlite3.Error as exc:  # a fault while reading the source
        raise StoreError(describe_sqlite_error(exc, src.shown)) from None
    finally:
        conn.close()
    return CopyResult(
        source=str(Path(source).resolve()) if src.kind == "sqlite" else src.shown,
        target=result.target if dst.kind == "sqlite" else dst.shown,
        source_engine=src.kind,
        target_engine=dst.kind,
        schema_version=version,
        upgraded_to=result.upgraded_to,
        rows=result.rows,
        tables=result.tables,
    )


__all__ = ["CopyResult", "copy_library"]
