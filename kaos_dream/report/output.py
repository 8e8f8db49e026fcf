"""Writing the report file: whole or not at all, and never over a file that is not a report.

There is deliberately no ``--force``: the only file a report replaces is an earlier report (a
regular file whose head names this generator). Anything else — a user's notes, ``/dev/null``, the
library — stays as it was, and the person removes it or picks another name.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from ..errors import ConflictError, StoreError
from ..store.files import fsync_dir, refuse_the_database_itself
from .page import GENERATOR


def is_report(path: Path) -> bool:
    try:
        with path.open("rb") as fh:
            head = fh.read(600)
    except OSError:
        return False
    return f'<meta name="generator" content="{GENERATOR}">'.encode() in head


def write_report(document: str, target: str | Path, database: str) -> Path:
    """Write ``document`` to ``target`` via a temp file and a rename; an existing file is replaced
    only when it is an earlier report."""
    path = Path(target)
    if "\x00" in str(path):
        raise StoreError("cannot write the report: the file name contains a NUL character")
    refuse_the_database_itself(path, database, "report")
    if path.is_dir():
        raise StoreError(f"{path} is a directory; give a file name for the report")
    if not path.parent.is_dir():
        raise StoreError(f"cannot write {path}: folder {path.parent} does not exist")
    if path.exists() or path.is_symlink():
        if path.is_symlink() or not path.is_file():
            raise ConflictError(f"{path} exists and is not a regular file; choose another --out")
        if not is_report(path):
            raise ConflictError(f"{path} exists and is not a kaos report; remove it or choose another --out")
    temp = path.parent / f".{path.name}.report-{os.getpid()}.tmp"
    try:
        with temp.open("w", encoding="utf-8", newline="\n") as fh:
            fh.write(document)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(temp, path)
        fsync_dir(path.parent)
    except OSError as exc:
        raise StoreError(f"cannot write {path}: {exc.strerror or exc}") from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
    return path
