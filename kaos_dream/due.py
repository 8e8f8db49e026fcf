"""How many completed episodes a dream pass has not yet accounted for: one SQL statement, no library.

The dream (:mod:`kaos_dream.dream.state`) and the `kaos dream run --if-due` fast path
(:mod:`kaos_dream.cli.dream_due`) both count with :func:`completed_since_mark`, so a cron job that
finds nothing due answers from the file before the library, typer or numpy are imported.
"""

from __future__ import annotations

import sqlite3

ANY_PASS = "episodes_marker"
APPLIED_PASS = "applied_marker"
MARKS = (ANY_PASS, APPLIED_PASS)

# A file written before the applied mark existed: the last completed episode that ended before the
# last applied pass started (what that pass accounted for), so an upgrade neither loses nor invents work.
_APPLIED_BEFORE_MARK = (
    "(SELECT max(a.ended_at) FROM agents a WHERE a.state = 'completed' AND a.ended_at <= "
    "(SELECT max(r.started_at) FROM dream_runs r WHERE r.status = 'completed' AND r.kind = 'run' "
    "AND r.mode = 'apply'))"
)


def mark_for(mode: str) -> str:
    """The mark a pass of ``mode`` counts due episodes from: an applied pass from the last applied one."""
    return APPLIED_PASS if mode == "apply" else ANY_PASS


def completed_since_mark(conn: sqlite3.Connection, mark: str = ANY_PASS) -> tuple[int, float]:
    """(completed episodes that ended after ``mark``, the mark). Indexed: agents (state, ended_at).
    One statement: every completing agent asks (the automatic trigger)."""
    if mark not in MARKS:
        raise ValueError(f"unknown dream mark {mark!r}")
    n, marker = conn.execute(
        "WITH m (v) AS (SELECT coalesce((SELECT value FROM dream_state WHERE key = ?), "
        + (_APPLIED_BEFORE_MARK if mark == APPLIED_PASS else "NULL") + ", 0.0)) "
        "SELECT (SELECT count(*) FROM agents WHERE state = 'completed' AND ended_at > m.v), m.v FROM m",
        (mark,),
    ).fetchone()
    return int(n), float(marker)


def not_due_message(due: int, mode: str, threshold: int) -> str:
    """What `dream run --if-due` says when it has nothing to do."""
    last = "applied dream" if mode == "apply" else "dream"
    return (f"{due} completed episodes since the last {last}; "
            f"a pass is due at {threshold} (KAOS_DREAM_THRESHOLD)")
