"""`kaos db backup`: a consistent copy of a live library, taken with SQLite's online backup API.

The backup API copies pages under a read snapshot, so agents can keep writing while it runs and the
copy is still one consistent state. The copy is built under a temporary name, checked with
``PRAGMA integrity_check`` and only then renamed to the requested path.

A library on PostgreSQL has no pages to copy: its backup is ``db copy`` to a SQLite file (one
REPEATABLE READ snapshot of the server, the file built under a temporary name and verified row for
row against the source's export), with the existing-file rule of a backup.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from ..errors import StoreError
from .connect import describe_sqlite_error
from .engine import parse_db
from .files import check_target, file_mode, finish_as_rollback_journal, open_copy_source, staged_file
from .migrations import schema_version


@dataclass(frozen=True)
class BackupResult:
    source: str
    target: str
    schema_version: int
    pages: int
    size_bytes: int


def backup_database(
    source: str, target: str | Path, *, force: bool = False, busy_timeout_ms: int = 10_000
) -> BackupResult:
    """Copy the library at ``source`` to ``target`` (refusing to replace an existing file unless ``force``)."""
    if source == ":memory:":
        raise StoreError("cannot back up an in-memory database")
    target_path = Path(target)
    if parse_db(source).kind == "postgresql":
        return _backup_postgres(source, target_path, force=force, busy_timeout_ms=busy_timeout_ms)
    src = open_copy_source(source, target, noun="backup", verb="back up", busy_timeout_ms=busy_timeout_ms)
    try:
        with staged_file(target_path, "backup", force=force, what="backup", mode=file_mode(source)) as temp:
            dst = sqlite3.connect(str(temp), isolation_level=None)
            try:
                # One step under one read snapshot: in WAL mode writers carry on, and the copy never
                # restarts because of them (a stepped copy restarts on every concurrent write).
                src.backup(dst)
                finish_as_rollback_journal(dst, temp)
                try:
                    verdict = dst.execute("PRAGMA integrity_check").fetchone()[0]
                except sqlite3.DatabaseError as exc:
                    verdict = str(exc)
                if verdict != "ok":
                    raise StoreError(
                        f"{source} is damaged, so the copy failed its integrity check ({verdict}); "
                        f"{target} was not written (run `kaos db check`)"
                    )
                pages = int(dst.execute("PRAGMA page_count").fetchone()[0])
                copied_version = schema_version(dst)
            except sqlite3.Error as exc:
                raise StoreError(describe_sqlite_error(exc, str(target))) from None
            finally:
                dst.close()
    except sqlite3.Error as exc:
        raise StoreError(describe_sqlite_error(exc, source)) from None
    finally:
        src.close()
    return BackupResult(
        source=str(Path(source).resolve()),
        target=str(target_path.resolve()),
        schema_version=copied_version,
        pages=pages,
        size_bytes=target_path.stat().st_size,
    )


def _backup_postgres(source: str, target: Path, *, force: bool, busy_timeout_ms: int) -> BackupResult:
    """A PostgreSQL library's backup: its copy into a SQLite file (see the module docstring)."""
    from .copy import copy_library

    check_target(target, force=force, what="backup")  # an existing file only with --force, as for SQLite
    result = copy_library(source, target, force=True)
    dst = sqlite3.connect("file:" + quote(target.resolve().as_posix()) + "?mode=ro", uri=True)
    try:
        pages = int(dst.execute("PRAGMA page_count").fetchone()[0])
    finally:
        dst.close()
    return BackupResult(source=result.source, target=result.target, schema_version=result.upgraded_to,
                        pages=pages, size_bytes=target.stat().st_size)
