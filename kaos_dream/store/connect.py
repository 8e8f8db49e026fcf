"""Opening a database file safely.

The connection runs in autocommit mode (``isolation_level=None``) and every write goes through
:func:`transaction`, so the library decides exactly where ``BEGIN IMMEDIATE`` and ``COMMIT`` happen.
Errors from SQLite that a user can cause are turned into :class:`StoreError` with one clear line.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ..errors import StoreError, StoreFaultError
from . import lock_trace
from .lock_retry import retry_begin

SQLITE_HEADER = b"SQLite format 3\x00"


# SQLite's primary result codes for problems with the file itself (not with the SQL or the data).
_FAULTS = {
    "SQLITE_FULL": "full",
    "SQLITE_READONLY": "readonly",
    "SQLITE_BUSY": "locked",
    "SQLITE_LOCKED": "locked",
    "SQLITE_IOERR": "io",
    "SQLITE_CORRUPT": "corrupt",
    "SQLITE_NOTADB": "corrupt",
    "SQLITE_CANTOPEN": "cantopen",
    "SQLITE_PERM": "readonly",
    "SQLITE_AUTH": "readonly",
}


def fault_kind(exc: BaseException) -> str | None:
    """Which storage fault an SQLite error is ("full", "readonly", "locked", "io", "corrupt",
    "cantopen"), or None when it is about the SQL or the data rather than the file."""
    if not isinstance(exc, sqlite3.Error):
        return None
    name = getattr(exc, "sqlite_errorname", None) or ""
    primary = "_".join(name.split("_")[:2])  # SQLITE_READONLY_DBMOVED -> SQLITE_READONLY
    if primary in _FAULTS:
        return _FAULTS[primary]
    low = str(exc).lower()
    if "file is not a database" in low or "malformed" in low or "file is encrypted" in low:
        return "corrupt"
    if "readonly" in low or "read-only" in low:
        return "readonly"
    if "locked" in low or "busy" in low:
        return "locked"
    if "disk is full" in low or "database or disk is full" in low:
        return "full"
    if "disk i/o error" in low:
        return "io"
    if "unable to open" in low:
        return "cantopen"
    return None


def read_only_reason(path: str) -> str | None:
    """Why ``path`` cannot be written, when the file system says so: a read-only mount, a file without
    write permission, or a folder where SQLite cannot create the ``-wal`` file; None otherwise. SQLite
    reports a read-only mount as "unable to open database file" (it cannot create the -wal beside the
    file), which named no cause (issue 33 item 8)."""
    if path == ":memory:" or path.startswith("file:"):
        return None
    file = Path(path)
    folder = file.resolve().parent
    try:
        if os.statvfs(folder).f_flag & os.ST_RDONLY:
            return f"{path} is on a read-only file system: cannot write to it (mount it read-write, or copy it)"
    except (OSError, AttributeError):  # statvfs is POSIX only
        pass
    if file.exists() and not os.access(file, os.W_OK):
        return f"{path} is read-only: no write permission on the file (chmod u+w, or copy it)"
    if file.exists() and not os.access(folder, os.W_OK):
        return (f"{path} cannot be written: its folder {folder} is read-only "
                "(SQLite needs to create a -wal file beside the database)")
    return None


def describe_sqlite_error(exc: sqlite3.Error, path: str, written: str = "nothing was written") -> str:
    """One line that tells a user what went wrong with the file and what to do. ``written`` says
    what the failed operation left behind (one rolled-back transaction: nothing)."""
    if isinstance(exc, StoreFaultError):  # already described: describing it again doubled the message
        return str(exc)
    text = str(exc)
    kind = fault_kind(exc)
    if kind == "corrupt":
        return (
            f"{path} is damaged or not a valid kaos-dream database (SQLite says: {text}); "
            "run `kaos db check` and restore from a backup"
        )
    if kind in ("readonly", "cantopen") and (reason := read_only_reason(path)) is not None:
        return reason
    if kind == "readonly":
        return f"{path} is read-only: cannot write to it ({text})"
    if kind == "locked":
        return (
            f"{path} is locked by another process beyond the busy timeout; try again "
            "(or raise KAOS_BUSY_TIMEOUT_MS)"
        )
    if kind == "full":
        return f"{path}: the database or disk is full; {written} (free space or raise the size limit)"
    if kind == "io":
        return f"{path}: disk I/O error ({text}); {written}"
    if kind == "cantopen":
        return f"cannot open {path} ({text})"
    return f"{path}: {text}"


def as_fault(exc: sqlite3.Error, path: str) -> StoreFaultError | None:
    """The :class:`StoreFaultError` for a storage fault, or None for any other SQLite error."""
    if fault_kind(exc) is None or isinstance(exc, StoreFaultError):
        return None
    fault = StoreFaultError(describe_sqlite_error(exc, path))
    fault.kind = fault_kind(exc) or "unknown"
    if fault.kind == "cantopen" and read_only_reason(path) is not None:
        fault.kind = "readonly"
    fault.sqlite_errorcode = getattr(exc, "sqlite_errorcode", None)  # type: ignore[attr-defined]
    fault.sqlite_errorname = getattr(exc, "sqlite_errorname", None)  # type: ignore[attr-defined]
    return fault


_execute = sqlite3.Connection.execute
_executemany = sqlite3.Connection.executemany
_executescript = sqlite3.Connection.executescript
_cursor = sqlite3.Connection.cursor


class KaosConnection(sqlite3.Connection):
    """A connection that remembers which file it is on, so errors can name it, and its busy timeout,
    the total budget for taking the write lock.

    Its write transactions take the lock by :func:`.lock_retry.retry_begin` with SQLite's own busy
    wait off (``busy_timeout = 0``). The wait is switched back on lazily, by the first statement run
    (or cursor made) outside a transaction, rather than right after ``BEGIN``: back-to-back writes
    (an agent recording outcome after outcome) then skip two PRAGMAs each, about 3 µs of a 25 µs
    outcome, while every statement outside a write transaction still sees the full busy timeout.
    Inside a write transaction nothing waits on a lock: the connection already holds the write lock
    and its read snapshot."""

    kaos_path: str = "database"
    kaos_busy_timeout_ms: int | None = None
    kaos_lock_wait_off: bool = False  # busy_timeout is 0 since the last write transaction began

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        if self.kaos_lock_wait_off and not self.in_transaction:
            self.restore_lock_wait()
        return _execute(self, sql, parameters)

    def executemany(self, sql: str, parameters: Any, /) -> sqlite3.Cursor:
        if self.kaos_lock_wait_off and not self.in_transaction:
            self.restore_lock_wait()
        return _executemany(self, sql, parameters)

    def executescript(self, script: str, /) -> sqlite3.Cursor:
        if self.kaos_lock_wait_off and not self.in_transaction:
            self.restore_lock_wait()
        return _executescript(self, script)

    def cursor(self, factory: Any = sqlite3.Cursor) -> sqlite3.Cursor:  # type: ignore[override]
        """A cursor, with the busy wait restored first when it is made outside a transaction: the
        package makes its cursors where it runs them (a plain cursor, as a per-statement check in a
        Python subclass cost a search 0.3 µs a statement)."""
        if self.kaos_lock_wait_off and not self.in_transaction:
            self.restore_lock_wait()
        return _cursor(self, factory)

    def begin_immediate(self) -> int:
        """``BEGIN IMMEDIATE`` by the fair retry loop within the busy timeout, leaving SQLite's busy
        wait off for the transaction (see the class); returns the retries it took."""
        budget = self.kaos_busy_timeout_ms
        if budget is None:  # no budget of its own: SQLite's busy handler, as a plain connection
            _execute(self, "BEGIN IMMEDIATE")
            return 0
        if not self.kaos_lock_wait_off:
            _execute(self, "PRAGMA busy_timeout = 0")
            self.kaos_lock_wait_off = True
        try:
            return retry_begin(self, budget)
        except BaseException:
            self.restore_lock_wait()
            raise

    def restore_lock_wait(self) -> None:
        """SQLite's busy wait back to the connection's busy timeout."""
        _execute(self, f"PRAGMA busy_timeout = {int(self.kaos_busy_timeout_ms or 0)}")
        self.kaos_lock_wait_off = False


def connection_path(conn: sqlite3.Connection) -> str:
    return getattr(conn, "kaos_path", "database")


def refuse_special_file(path: Path, what: str) -> None:
    """Refuse a path that exists but is not a regular file: opening a FIFO blocks forever, and a
    device such as /dev/null makes SQLite write a ``-journal`` beside it and fail with an I/O error."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return  # vanished or unreadable: the open reports it
    if not stat.S_ISREG(mode):
        kind = "a named pipe (FIFO)" if stat.S_ISFIFO(mode) else (
            "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "not a regular file")
        raise StoreError(f"{path} is {kind}, not a regular file; refusing to use it as a {what}")


def _check_header(path: str) -> None:
    """Refuse a non-empty file that is not SQLite before SQLite gets a chance to touch it."""
    if path == ":memory:" or path.startswith("file:"):
        return
    p = Path(path)
    if p.is_dir():
        raise StoreError(f"{path} is a directory, not a database file")
    if not p.exists():
        return
    refuse_special_file(p, "database file")
    try:
        with p.open("rb") as fh:
            head = fh.read(len(SQLITE_HEADER))
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc.strerror}") from None
    if head and head != SQLITE_HEADER:
        raise StoreError(f"{path} is not a SQLite database (wrong file header); refusing to touch it")


CREATING_COMMANDS = ("init", "db import", "demo", "skill add", "memory add", "agent start", "record-outcome",
                     "failure record", "prefs set", "hook claude-code", "hook jsonl")


def missing_library_message(path: str) -> str:
    """One line for a library file that does not exist: a mistyped --db must not become a new file."""
    return f"no library at {path}; create it with `kaos --db {path} init` (or check --db / $KAOS_DB)"


def connect(
    path: str,
    *,
    readonly: bool = False,
    busy_timeout_ms: int = 10_000,
    synchronous: str = "NORMAL",
    max_page_count: int = 0,
) -> sqlite3.Connection:
    """Open ``path`` with the pragmas every kaos-dream connection uses.

    ``readonly=True`` opens with ``mode=ro`` so a read path cannot write even by mistake; a missing
    file is then an error instead of being created. ``max_page_count`` > 0 caps the file's size in
    pages (a write that would grow it further fails as "full" and is rolled back).
    """
    _check_header(path)
    if readonly and path != ":memory:":
        if not os.path.exists(path):
            raise StoreError(missing_library_message(path))
        uri = "file:" + quote(Path(path).resolve().as_posix()) + "?mode=ro"
        target, is_uri = uri, True
    else:
        if path not in (":memory:",) and not path.startswith("file:"):
            parent = Path(path).resolve().parent
            if not parent.exists():
                raise StoreError(f"cannot create {path}: folder {parent} does not exist")
        target, is_uri = path, path.startswith("file:")
    try:
        return _open(target, is_uri, path, busy_timeout_ms, synchronous, max_page_count)
    except StoreFaultError as fault:
        if not (readonly and is_uri and fault.kind in ("readonly", "cantopen") and _frozen(path)):
            raise
    # A WAL file in a folder nobody can write to: SQLite cannot create the shared-memory file a reader
    # needs. With no -wal beside it, no writer can exist either, so reading it as immutable is exact.
    return _open(target + "&immutable=1", True, path, busy_timeout_ms, synchronous, max_page_count)


def _frozen(path: str) -> bool:
    """True when the folder is not writable and no WAL file exists (nobody can be writing the file)."""
    folder = Path(path).resolve().parent
    return not os.access(folder, os.W_OK) and not Path(path + "-wal").exists()


def _open(
    target: str, is_uri: bool, path: str, busy_timeout_ms: int, synchronous: str, max_page_count: int
) -> sqlite3.Connection:
    try:
        conn = sqlite3.connect(
            target,
            uri=is_uri,
            isolation_level=None,
            timeout=busy_timeout_ms / 1000,
            check_same_thread=False,
            factory=KaosConnection,
        )
    except sqlite3.Error as exc:
        raise (as_fault(exc, path) or StoreError(describe_sqlite_error(exc, path))) from None
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        conn.execute("PRAGMA foreign_keys = ON")
        # Touch the schema first so a corrupt file fails here, before any pragma could write.
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        conn.execute(f"PRAGMA synchronous = {synchronous.upper()}")
        if max_page_count > 0:
            conn.execute(f"PRAGMA max_page_count = {int(max_page_count)}").fetchone()
    except sqlite3.Error as exc:
        conn.close()
        raise (as_fault(exc, path) or StoreError(describe_sqlite_error(exc, path))) from None
    conn.row_factory = sqlite3.Row
    conn.kaos_path = path  # type: ignore[attr-defined]
    conn.kaos_busy_timeout_ms = int(busy_timeout_ms)  # type: ignore[attr-defined]
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
        raise (as_fault(exc, path) or StoreError(describe_sqlite_error(exc, path))) from None


class transaction:  # noqa: N801 - called like the function it replaced: ``with transaction(conn):``
    """``BEGIN IMMEDIATE`` … ``COMMIT``; joins an enclosing transaction instead of nesting.

    Taking the write lock up front (IMMEDIATE) means a writer waits for the busy timeout at BEGIN
    rather than failing half-way with SQLITE_BUSY on lock upgrade; the wait is a fairer, jittered retry
    loop within the busy timeout (:mod:`.lock_retry`), not SQLite's unfair busy handler. A storage
    fault (full, read-only, locked beyond the timeout, corrupt, I/O) rolls back and is raised as
    :class:`StoreFaultError` naming the file; errors about the data (constraints, SQL) pass through unchanged.

    A class rather than a generator-based context manager: every single-outcome write goes through
    it, and the generator machinery cost about as much as one more SQL statement.
    """

    __slots__ = ("_changes", "_conn", "_modules", "_owned", "_retries", "_t0")

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self._owned = False
        self._t0 = 0.0

    def __enter__(self) -> sqlite3.Connection:
        conn = self._conn
        if conn.in_transaction:
            return conn
        retries = 0
        try:
            begin = getattr(conn, "begin_immediate", None)
            if begin is None:  # a plain connection (a scratch copy): SQLite's own busy handler
                conn.execute("BEGIN IMMEDIATE")
            else:
                retries = begin()
        except sqlite3.Error as exc:
            raise (as_fault(exc, connection_path(conn)) or exc) from exc
        self._owned = True
        if lock_trace.TRACE.path is not None:
            self._t0, self._retries, self._modules = time.perf_counter(), retries, len(sys.modules)
            self._changes = conn.total_changes if isinstance(conn, sqlite3.Connection) else 0
        return conn

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        if not self._owned:
            return
        self._owned = False
        conn = self._conn
        if exc is not None:
            _rollback_quietly(conn)
            if self._t0:
                self._trace(time.perf_counter(), ok=False)
            fault = as_fault(exc, connection_path(conn)) if isinstance(exc, sqlite3.Error) else None
            if fault is not None:
                raise fault from exc
            return  # the exception propagates unchanged
        committing = time.perf_counter() if self._t0 else 0.0
        try:
            # Still inside the transaction: a library connection's Python-level execute has nothing to do.
            (_execute if isinstance(conn, sqlite3.Connection) else type(conn).execute)(conn, "COMMIT")
        except sqlite3.Error as commit_exc:
            _rollback_quietly(conn)
            raise (as_fault(commit_exc, connection_path(conn)) or commit_exc) from commit_exc
        finally:
            if self._t0:
                self._trace(committing, ok=True)

    def cycle(self) -> None:
        """Commit what this transaction wrote so far and take the write lock again (by the same fair
        retry): a long writer lets the writers waiting beside it take a turn between its chunks. Does
        nothing when this object joined an enclosing transaction rather than opening it."""
        if not self._owned:
            return
        self.__exit__(None, None, None)
        self.__enter__()

    def _trace(self, committing: float, ok: bool) -> None:
        """One line of the lock trace (:mod:`.lock_trace`), when it is on."""
        now = time.perf_counter()
        conn = self._conn
        rows = conn.total_changes - self._changes if isinstance(conn, sqlite3.Connection) else 0
        lock_trace.record(now - self._t0, now - committing, rows, self._retries, ok, len(sys.modules) - self._modules)
        self._t0 = 0.0


def _rollback_quietly(conn: sqlite3.Connection) -> None:
    """Roll back if SQLite has not already done so (it does on some I/O and full-disk errors)."""
    if conn.in_transaction:
        with contextlib.suppress(sqlite3.Error):
            conn.execute("ROLLBACK")
