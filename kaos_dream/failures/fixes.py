"""Fix plasticity: a fix attached to a fingerprint keeps its place only while it keeps working.

Each reported outcome counts; once a fix has ``fix_min_attempts`` outcomes and a success rate below
``fix_min_success`` it is withdrawn, and lookups fall back to the diagnosis. Attaching a new fix
retires the current one as ``replaced``; the new fix starts with fresh counters. Nothing is deleted:
every fix and every outcome stays as history.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from .. import limits
from ..errors import InvalidInputError, NotFoundError
from ..settings import Settings

MAX_SUMMARY_CHARS = limits.DIAGNOSIS


def _fix_dict(row: sqlite3.Row | None) -> dict[str, Any] | None:
    if row is None:
        return None
    data = dict(row)
    attempts = data["attempts"]
    data["success_rate"] = (data["successes"] / attempts) if attempts else None
    return data


def active_fix(conn: sqlite3.Connection, fp_id: int) -> dict[str, Any] | None:
    return _fix_dict(
        conn.execute("SELECT * FROM failure_fixes WHERE fingerprint_id = ? AND status = 'active'", (fp_id,)).fetchone()
    )


def attach(
    conn: sqlite3.Connection, fp_id: int, summary: str | None, skill_id: int | None, by: str | None, now: float
) -> dict[str, Any]:
    """Make a new fix the active one (the caller holds the transaction)."""
    text = " ".join(summary.split()) if summary else None
    if not text and skill_id is None:
        raise InvalidInputError("a fix needs a --summary, a --skill, or both")
    if text and len(text) > MAX_SUMMARY_CHARS:
        raise InvalidInputError(f"fix summary is longer than {MAX_SUMMARY_CHARS} characters")
    conn.execute(
        "UPDATE failure_fixes SET status = 'replaced', ended_at = ?, end_reason = 'replaced by a newer fix'"
        " WHERE fingerprint_id = ? AND status = 'active'",
        (now, fp_id),
    )
    fix_id = conn.execute(
        "INSERT INTO failure_fixes (fingerprint_id, summary, skill_id, attached_by, attached_at)"
        " VALUES (?, ?, ?, ?, ?)",
        (fp_id, text or None, skill_id, by, now),
    ).lastrowid
    return _fix_dict(conn.execute("SELECT * FROM failure_fixes WHERE id = ?", (fix_id,)).fetchone()) or {}


def record_outcome(
    conn: sqlite3.Connection, fp_id: int, succeeded: bool, agent: str | None, now: float, settings: Settings
) -> dict[str, Any]:
    """Count one outcome of the active fix; withdraw it when it has proven not to work."""
    fix = active_fix(conn, fp_id)
    if fix is None:
        raise NotFoundError(
            f"fingerprint {fp_id} has no active fix (attach one with `kaos dream fix attach {fp_id} --summary …`)"
        )
    conn.execute(
        "INSERT INTO failure_fix_outcomes (fix_id, succeeded, agent_id, created_at) VALUES (?, ?, ?, ?)",
        (fix["id"], int(succeeded), agent, now),
    )
    attempts = fix["attempts"] + 1
    successes = fix["successes"] + int(succeeded)
    withdrawn = attempts >= settings.fix_min_attempts and successes / attempts < settings.fix_min_success
    if withdrawn:
        conn.execute(
            "UPDATE failure_fixes SET attempts = ?, successes = ?, status = 'withdrawn', ended_at = ?, end_reason = ?"
            " WHERE id = ?",
            (
                attempts,
                successes,
                now,
                f"withdrawn after {attempts} attempts at {successes / attempts:.0%} success",
                fix["id"],
            ),
        )
    else:
        conn.execute(
            "UPDATE failure_fixes SET attempts = ?, successes = ? WHERE id = ?", (attempts, successes, fix["id"])
        )
    updated = _fix_dict(conn.execute("SELECT * FROM failure_fixes WHERE id = ?", (fix["id"],)).fetchone()) or {}
    return {
        "fingerprint_id": fp_id,
        "fix": updated,
        "attempts": attempts,
        "successes": successes,
        "downgraded": withdrawn,
    }


def history(conn: sqlite3.Connection, fp_id: int) -> list[dict[str, Any]]:
    """Every fix this fingerprint ever had, oldest first."""
    return [
        d
        for d in (
            _fix_dict(r)
            for r in conn.execute("SELECT * FROM failure_fixes WHERE fingerprint_id = ? ORDER BY id", (fp_id,))
        )
        if d is not None
    ]
