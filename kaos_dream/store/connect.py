"""Opening a database file safely.

The connection runs in autocommit mode (``isolation_level=None``) and every write goes through
:func:`transaction`, so the library decides exactly where ``BEGIN IMMEDIATE`` and ``COMMIT`` happen.
Errors from SQLite that a user can cause are turned into :class:`StoreError` with one clear line.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from ..errors import StoreError

SQLITE_HEADER = b"SQLite format 3\x00"


def describe_sqlite_error(exc: sqlite3.Error, path: str) -> str:
    """One line that tells a user what went wrong with the file and what to do."""
    text = str(exc)
    low = text.lower()
    if "file is not a database" in low or "malformed" in low or "file is encrypted" in low:
        return f"{path} is not a valid kaos-dream database (SQLite says: {text})"
    if "readonly" in low or "read-only" in low:
        return f"{path} is read-only: cannot write to it ({text})"
    if "locked" in low or "busy" in low:
        return f"{path} is locked by another process beyond the busy timeout; try again"
    if "full" in low:
        return f"{path}: the database or disk is full ({text})"
    if "unable to open" in low:
        return f"cannot open {path} ({text})"
    return f"{path}: {text}"


def _check_header(path: str) -> None:
    """Refuse a non-empty file that is not SQLite before SQLite gets a chance to touch it."""
    if path == ":memory:" or path.startswith("file:"):
        return
    p = Path(path)
    if p.is_dir():
        raise StoreError(f"{path} is a directory, not a database file")
    if not p.exists():
        return
    try:
        with p.open("rb") as fh:
            head = fh.read(len(SQLITE_HEADER))
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc.strerror}") from None
    if head and head != SQLITE_HEADER:
        raise StoreError(f"{path} is not a SQLite database (wrong file header); refusing to touch it")


def connect(
    path: str,
    *,
    readonly: bool = False,
    busy_timeout_ms: int = 10_000,
    synchronous: str = "NORMAL",
) -> sqlite3.Connection:
    """Open ``path`` with the pragmas every kaos-dream connection uses.

    ``readonly=True`` opens with ``mode=ro`` so a read path cannot write even by mistake; a missing
    file is then an error instead of being created.
    """
    _check_header(path)
    if readonly and path != ":memory:":
        if not os.path.exists(path):
            raise StoreError(f"no database at {path} (create one with `kaos init` or any write command)")
        uri = "file:" + Path(path).resolve().as_posix() + "?mode=ro"
        target, is_uri = uri, True
    else:
        if path not in (":memory:",) and not path.startswith("file:"):
            parent = Path(path).resolve().parent
            if not parent.exists():
                raise StoreError(f"cannot create {path}: folder {parent} does not exist")
        target, is_uri = path, path.startswith("file:")
    try:
        conn = sqlite3.connect(
            target, uri=is_uri, isolation_level=None, timeout=busy_timeout_ms / 1000, check_same_thread=False
        )
    except sqlite3.Error as exc:
        raise StoreError(describe_sqlite_error(exc, path)) from None
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        conn.execute("PRAGMA foreign_keys = ON")
        # Touch the schema first so a corrupt file fails here, before any pragma could write.
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        conn.execute(f"PRAGMA synchronous = {synchronous.upper()}")
    except sqlite3.Error as exc:
        conn.close()
        raise StoreError(describe_sqlite_error(exc, path)) from None
    conn.row_factory = sqlite3.Row
    return conn


def enable_wal(conn: sqlite3.Connection, path: str) -> None:
    """Switch the file to WAL (persistent). Called only once the file is known to be ours."""
    if path == ":memory:":
        return
    try:
        mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
        if str(mode).lower() != "wal":
            conn.execute("PRAGMA journal_mode = WAL").fetchone()
    except sqlite3.Error as exc:
        raise StoreError(describe_sqlite_error(exc, path)) from None


@contextlib.contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` … ``COMMIT``; joins an enclosing transaction instead of nesting.

    Taking the write lock up front (IMMEDIATE) means a writer waits for the busy timeout at BEGIN
    rather than failing half-way with SQLITE_BUSY on lock upgrade.
    """
    if conn.in_transaction:
        yield conn
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    else:
        conn.execute("COMMIT")
