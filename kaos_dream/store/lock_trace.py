"""How long each write transaction holds SQLite's write lock, per process and per dream phase.

Writers beside a dream pass starve when one transaction keeps the write lock long (issue 33 item 13).
To see who holds it, set ``KAOS_LOCK_TRACE`` to a file: every write transaction a process then
commits or rolls back appends one JSON line to it: ``pid``, ``at`` (when it ended), ``label`` (the
dream phase or step that opened it, empty for an ordinary write), ``hold_ms`` (from the moment
``BEGIN IMMEDIATE`` took the lock to the end of ``COMMIT``), ``commit_ms`` (the ``COMMIT`` alone:
the WAL write and any automatic checkpoint, which SQLite runs after releasing the lock), ``rows``
(rows inserted, updated or deleted inside it, triggers included), ``retries`` (attempts the lock
took), ``imports`` (modules first imported while it held the lock: loading code under the lock
makes every other writer wait for it) and ``ok`` (false for a rollback). Unset, the trace costs one
attribute test per transaction.

The file is opened in append mode and each line written with one ``write`` call, so many processes
can share it. It is a diagnostic: ``demo_reliability_bench`` turns it on to report the hold-time
distribution per phase.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

ENV = "KAOS_LOCK_TRACE"


class _Trace:
    """The trace's state in this process: the file (or None) and the current label."""

    __slots__ = ("fd", "label", "lock", "path")

    def __init__(self) -> None:
        self.path = os.environ.get(ENV) or None
        self.fd: int | None = None
        self.label = ""
        self.lock = threading.Lock()


TRACE = _Trace()


def enabled() -> bool:
    return TRACE.path is not None


@contextmanager
def labelled(label: str) -> Iterator[None]:
    """Name the write transactions opened inside this block (nested blocks restore the outer name)."""
    outer, TRACE.label = TRACE.label, label
    try:
        yield
    finally:
        TRACE.label = outer


def record(hold_s: float, commit_s: float, rows: int, retries: int, ok: bool, imports: int) -> None:
    """Append one transaction's line (``at``: when it ended, epoch seconds, to line up processes)."""
    path = TRACE.path  # a trace that cannot be written is dropped, never raised
    if path is None:
        return
    fields = {"pid": os.getpid(), "at": round(time.time(), 4), "label": TRACE.label,
              "hold_ms": round(hold_s * 1000.0, 3), "commit_ms": round(commit_s * 1000.0, 3), "rows": rows,
              "retries": retries, "ok": ok, "imports": imports}
    line = json.dumps(fields, separators=(",", ":")) + "\n"
    with TRACE.lock:
        try:
            if TRACE.fd is None:
                TRACE.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            os.write(TRACE.fd, line.encode())
        except OSError:
            TRACE.path = None  # a diagnostic must never break a write


def read(path: str) -> list[dict[str, object]]:
    """The lines of a trace file (a torn last line, from a process killed mid-write, is skipped)."""
    out: list[dict[str, object]] = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            try:
                out.append(json.loads(line))
            except ValueError:
                continue
    return out
