"""The dream's small persistent counters and its one-run-at-a-time lease.

* ``cycle`` — dream cycles applied so far. LTD measures dormancy in cycles: episode-end code stamps an
  edge it activates with ``last_activated_cycle = current_cycle(conn)``.
* two episode marks, each the end time of the last completed episode a pass accounted for:
  ``episodes_marker`` after a pass of any kind (the automatic dry-run trigger and a dry ``--if-due``
  count from it) and ``applied_marker`` after an applied pass (``--apply --if-due`` counts from it).
  One mark would let the automatic dry runs reset the count a cron ``--apply --if-due`` reads, so it
  would never fire. Both count completed episodes after the mark, not ``count % N``.
* the lease — one row (holder, run, expiry). A run renews it at every phase; a crashed holder's lease
  expires, and on the same host a holder whose process is gone is taken over at once.
"""

from __future__ import annotations

import os
import socket
import sqlite3
import uuid
from dataclasses import dataclass

from ..due import ANY_PASS as ANY_PASS
from ..due import APPLIED_PASS as APPLIED_PASS  # the marks live in ..due; importers of this module keep them
from ..due import MARKS, completed_since_mark
from ..due import mark_for as mark_for
from ..errors import ConflictError
from ..store import transaction

_HOST = socket.gethostname()


def new_holder() -> str:
    return f"{_HOST}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def get_state(conn: sqlite3.Connection, key: str, default: float = 0.0) -> float:
    row = conn.execute("SELECT value FROM dream_state WHERE key = ?", (key,)).fetchone()
    return default if row is None else float(row[0])


def set_state(conn: sqlite3.Connection, key: str, value: float) -> None:
    conn.execute(
        "INSERT INTO dream_state (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (key, value),
    )


def current_cycle(conn: sqlite3.Connection) -> int:
    """Dream cycles applied so far (what ``edges.last_activated_cycle`` is compared with)."""
    return int(get_state(conn, "cycle"))


def completed_since_marker(conn: sqlite3.Connection, mark: str = ANY_PASS) -> tuple[int, float]:
    """(completed episodes that ended after ``mark``, the mark): see :func:`kaos_dream.due.completed_since_mark`."""
    return completed_since_mark(conn, mark)


def advance_marker(conn: sqlite3.Connection, marks: tuple[str, ...] = (ANY_PASS,)) -> float:
    """Move ``marks`` to the latest completed episode's end (inside the caller's transaction)."""
    latest = float(conn.execute("SELECT max(ended_at) FROM agents WHERE state = 'completed'").fetchone()[0] or 0.0)
    for mark in marks:
        if mark not in MARKS:
            raise ValueError(f"unknown dream mark {mark!r}")
        set_state(conn, mark, max(get_state(conn, mark), latest))
    return latest


def holder_alive(holder: str) -> bool:
    """False only when the holder ran on this host and its process is gone."""
    host, _, rest = holder.partition(":")
    pid_text = rest.partition(":")[0]
    if host != _HOST or not pid_text.isdigit():
        return True
    try:
        os.kill(int(pid_text), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@dataclass(frozen=True)
class LeaseInfo:
    holder: str
    run_id: int | None
    acquired_at: float
    expires_at: float


def lease_holder(conn: sqlite3.Connection) -> LeaseInfo | None:
    row = conn.execute(
        "SELECT holder, run_id, acquired_at, expires_at FROM dream_lease WHERE name = 'dream'"
    ).fetchone()
    return None if row is None else LeaseInfo(row[0], row[1], row[2], row[3])


def try_acquire(conn: sqlite3.Connection, holder: str, now: float, ttl: float) -> LeaseInfo | None:
    """Take the lease; returns None on success, else the live lease that blocks us."""
    with transaction(conn):
        current = lease_holder(conn)
        if (
            current is not None
            and current.holder != holder
            and current.expires_at > now
            and holder_alive(current.holder)
        ):
            return current
        conn.execute(
            "INSERT INTO dream_lease (name, holder, run_id, acquired_at, expires_at) VALUES ('dream', ?, NULL, ?, ?) "
            "ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, run_id = NULL, "
            "acquired_at = excluded.acquired_at, expires_at = excluded.expires_at",
            (holder, now, now + ttl),
        )
    return None


def renew(conn: sqlite3.Connection, holder: str, now: float, ttl: float, run_id: int | None) -> None:
    """Extend our lease (inside the caller's transaction); losing it aborts the run before it writes."""
    cur = conn.execute(
        "UPDATE dream_lease SET expires_at = ?, run_id = ? WHERE name = 'dream' AND holder = ?",
        (now + ttl, run_id, holder),
    )
    if cur.rowcount != 1:
        raise ConflictError("the dream lease was taken over by another run (this run took longer than its lease)")


def release(conn: sqlite3.Connection, holder: str) -> None:
    conn.execute("DELETE FROM dream_lease WHERE name = 'dream' AND holder = ?", (holder,))
