"""`kaos db check` for any file: what is wrong with it, as a list of problems, without writing.

:meth:`Library.check` needs a library it can open. A damaged file, or one whose schema is too new or
too old, cannot be opened as a library, yet a user asking "what is wrong with this file?" deserves
the answer rather than an error: this module reports those as problems and still runs SQLite's own
integrity checks on whatever can be read.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from urllib.parse import quote

from .errors import SchemaOutdatedError, SchemaTooNewError, StoreFaultError
from .library import Library
from .settings import Settings


def check_file(path: str, settings: Settings | None = None) -> list[str]:
    """Problems found in the library file at ``path`` (empty when sound). Reads only.

    Errors that say nothing about the file's health (it is missing, locked, or not SQLite at all)
    are raised as usual; damage and schema mismatches are returned as problems.
    """
    settings = settings or Settings.from_env()
    try:
        lib = Library(path, settings=settings, readonly=True)
    except (SchemaTooNewError, SchemaOutdatedError) as exc:
        return [f"schema: {exc}", *sqlite_checks(path)]
    except StoreFaultError as exc:
        if exc.kind != "corrupt":
            raise
        return [f"file: {exc}", *sqlite_checks(path)]
    with lib:
        try:
            return lib.check()
        except sqlite3.DatabaseError as exc:
            return [f"integrity: {exc}", *sqlite_checks(path)]


def sqlite_checks(path: str, limit: int = 20) -> list[str]:
    """SQLite's integrity and foreign-key checks on a read-only connection; failures become lines."""
    if path == ":memory:" or not Path(path).exists():
        return []
    problems: list[str] = []
    try:
        conn = sqlite3.connect("file:" + quote(Path(path).resolve().as_posix()) + "?mode=ro", uri=True)
    except sqlite3.Error as exc:
        return [f"integrity: cannot open for checking ({exc})"]
    try:
        try:
            for (line,) in conn.execute(f"PRAGMA integrity_check({int(limit)})"):
                if line != "ok":
                    problems.append(f"integrity: {line}")
        except sqlite3.DatabaseError as exc:
            problems.append(f"integrity: check could not run ({exc})")
        try:
            for row in conn.execute("PRAGMA foreign_key_check"):
                problems.append(f"foreign key: {row[0]} row {row[1]} points at a missing {row[2]}")
        except sqlite3.DatabaseError as exc:
            problems.append(f"foreign key: check could not run ({exc})")
    finally:
        conn.close()
    return problems
