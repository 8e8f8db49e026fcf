"""Writing whole database files safely: temp name in the target's folder, then an atomic rename.

Backup and import both produce a complete new file. They build it under a hidden temporary name
beside the target and rename it into place only once it is finished and verified, so a crash, a
full disk or a bad input never leaves a half-written file under the name the user asked for.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path

from ..errors import ConflictError, StoreError
from .connect import SQLITE_HEADER, connect, describe_sqlite_error, refuse_special_file
from .migrations import check_ownership

SIDE_FILES = ("-wal", "-shm", "-journal")


def temp_path_for(target: Path, purpose: str) -> Path:
    return target.parent / f".{target.name}.{purpose}-{os.getpid()}.tmp"


def pid_is_alive(pid: int) -> bool:
    """True when a process with this id exists (one we may not signal counts as alive)."""
    if pid <= 0:
        return True  # not a real process id: never treat its file as stale
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


def remove_stale_temp_files(target: Path) -> list[Path]:
    """Remove temp files (and their journals) that a killed backup, export or import left beside
    ``target``: only those whose process is gone, so a run still in progress keeps its file."""
    prefix = f".{target.name}."
    removed: list[Path] = []
    try:
        entries = list(target.parent.iterdir())
    except OSError:
        return removed
    for entry in entries:
        name = entry.name
        if not name.startswith(prefix) or not name.endswith(".tmp"):
            continue
        purpose, dash, pid_text = name[len(prefix) : -len(".tmp")].rpartition("-")
        if not dash or purpose not in _PURPOSES or not pid_text.isdigit():
            continue
        pid = int(pid_text)
        if pid == os.getpid() or pid_is_alive(pid):
            continue
        remove_with_side_files(entry)
        removed.append(entry)
    return removed


_PURPOSES = ("backup", "export", "import")


def remove_with_side_files(path: Path) -> None:
    for suffix in ("", *SIDE_FILES):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(str(path) + suffix)


def open_copy_source(
    source: str, target: str | Path | None, *, noun: str, verb: str, busy_timeout_ms: int
) -> sqlite3.Connection:
    """A read-only connection to the library a backup or export copies, after refusing a target that
    is the library itself and a file that is not a kaos-dream library (nothing to copy)."""
    if target is not None:
        refuse_the_database_itself(target, source, noun)
    conn = connect(source, readonly=True, busy_timeout_ms=busy_timeout_ms)
    try:
        if check_ownership(conn, source) == 0:
            raise StoreError(f"{source} is not a kaos-dream library (no schema); nothing to {verb}")
    except BaseException:
        conn.close()
        raise
    return conn


def refuse_the_database_itself(target: str | Path, database: str, what: str) -> None:
    """A backup, export or copy written over the library it reads would destroy it (or wait on its own
    lock, then fail as "locked by another writer"): say so plainly instead. The same file is the same
    path, or the same device and inode (a hard link, a bind mount; issue 33 item 7)."""
    if database == ":memory:":
        return
    try:
        same = Path(target).resolve() == Path(database).resolve()
    except (OSError, ValueError):  # a path the OS cannot resolve (a NUL byte, …) is reported where it is opened
        return
    if same:
        raise StoreError(f"{target} is the database itself; choose another file for the {what}")
    a, b = _file_identity(str(target)), _file_identity(database)
    if a is not None and a == b:
        raise StoreError(f"{target} is the database itself ({database}: the same device and inode, a hard link "
                         f"or another path to it); choose another file for the {what}")


def _file_identity(path: str) -> tuple[int, int] | None:
    """(device, inode) of an existing file, None when there is none (yet)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino


def check_target(target: Path, *, force: bool, what: str) -> None:
    if "\x00" in str(target):
        raise StoreError(f"cannot write the {what}: the file name contains a NUL character")
    try:
        _check_target(target, force=force, what=what)
    except OSError as exc:
        raise StoreError(f"cannot write the {what} there: {exc.strerror or exc}") from None


def _check_target(target: Path, *, force: bool, what: str) -> None:
    """Refuse a target we must not replace: an existing file without ``force``, a folder, a missing
    folder, or (even with ``force``) a file that is not a SQLite database (we never clobber a
    stranger's file)."""
    if target.is_dir():
        raise StoreError(f"{target} is a directory; give a file name for the {what}")
    if not target.parent.is_dir():
        raise StoreError(f"cannot write {target}: folder {target.parent} does not exist")
    if not os.access(target.parent, os.W_OK):
        raise StoreError(f"cannot write {target}: folder {target.parent} is read-only")
    if not target.exists():
        return
    refuse_special_file(target, what)
    if not force:
        raise ConflictError(f"{target} already exists; pass --force to replace it")
    if target.stat().st_size:
        with target.open("rb") as fh:
            if fh.read(len(SQLITE_HEADER)) != SQLITE_HEADER:
                raise StoreError(f"{target} exists and is not a SQLite database; refusing to replace it")


def release_target(target: Path) -> None:
    """Before replacing an existing database: fold its WAL back and make sure nobody has it open.

    A stale ``-wal`` beside a renamed-in file would be replayed onto the new file, so the old WAL
    must be gone; if another process holds the file, refuse rather than pull it from under them.
    """
    if not target.exists():
        return
    try:
        conn = sqlite3.connect(str(target), isolation_level=None, timeout=0.5)
        try:
            busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            conn.execute("PRAGMA journal_mode = DELETE").fetchone()
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise StoreError(describe_sqlite_error(exc, str(target))) from None
    if (busy and busy[0]) or any(Path(str(target) + s).exists() for s in ("-wal", "-journal")):
        raise StoreError(f"{target} is open in another process; close it before replacing the file")


def fsync_file(path: Path) -> None:
    fd = os.open(str(path), os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):  # not every filesystem lets a directory be fsynced
        fd = os.open(str(folder), os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def file_mode(path: str | Path) -> int | None:
    """The permission bits of an existing regular file (None when it is missing or not a file)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return stat.S_IMODE(st.st_mode) if stat.S_ISREG(st.st_mode) else None


def _create_with_mode(temp: Path, mode: int | None) -> None:
    """Create the empty temp file with ``mode`` before anything is written into it, so a copy of a
    0600 library is never readable by others, not even while it is being built (SQLite gives its
    -journal and -wal the mode of the file they belong to)."""
    if mode is None:
        return
    fd = os.open(str(temp), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.fchmod(fd, mode)
    finally:
        os.close(fd)


@contextlib.contextmanager
def staged_file(target: Path, purpose: str, *, force: bool, what: str, mode: int | None = None) -> Iterator[Path]:
    """Yield a temp path to build the new file in; on success rename it onto ``target``.

    On any error the temp file (and its journal) is removed and the target is untouched. ``mode``
    (permission bits) is given to the new file from the start; None leaves it to the umask.
    Temp files of earlier runs that were killed (their process is gone) are removed first.
    """
    if purpose not in _PURPOSES:
        raise ValueError(f"unknown staged-file purpose {purpose!r}")
    check_target(target, force=force, what=what)
    remove_stale_temp_files(target)
    temp = temp_path_for(target, purpose)
    remove_with_side_files(temp)
    try:
        _create_with_mode(temp, mode)
        yield temp
        for suffix in SIDE_FILES:
            if Path(str(temp) + suffix).exists():
                raise StoreError(f"internal error: {temp} still has a {suffix} file after closing")
        fsync_file(temp)
        if force:
            release_target(target)
        elif target.exists():  # created by someone else while we worked
            raise ConflictError(f"{target} appeared while the {what} was being written; nothing replaced")
        os.replace(temp, target)
        fsync_dir(target.parent)
    except OSError as exc:
        raise StoreError(f"cannot write {target}: {exc.strerror or exc}") from None
    finally:
        remove_with_side_files(temp)


def finish_as_rollback_journal(conn: sqlite3.Connection, path: Path) -> None:
    """Leave a finished temp file self-contained: checkpoint any WAL and switch to DELETE mode so
    closing it leaves no ``-wal`` behind (the next normal open turns WAL on again)."""
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        conn.execute("PRAGMA journal_mode = DELETE").fetchone()
    except sqlite3.Error as exc:
        raise StoreError(describe_sqlite_error(exc, str(path))) from None
