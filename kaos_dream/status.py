"""A read-only summary of what the library has learned so far (`kaos dream status`)."""

from __future__ import annotations

import sqlite3
from typing import Any

from .dream.state import ANY_PASS, APPLIED_PASS, completed_since_marker, current_cycle, lease_holder


def library_status(conn: sqlite3.Connection, dream_threshold: int | None = None) -> dict[str, Any]:
    agents = {state: n for state, n in conn.execute("SELECT state, count(*) FROM agents GROUP BY state ORDER BY state")}
    edges = {
        relation: n
        for relation, n in conn.execute(
            "SELECT relation, count(*) FROM edges WHERE pruned_at IS NULL GROUP BY relation ORDER BY relation"
        )
    }
    telemetry = {
        table: conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        for table in ("skill_uses", "skill_hits", "memory_hits", "coactivations")
    }
    since, _marker = completed_since_marker(conn, ANY_PASS)
    since_apply, _applied = completed_since_marker(conn, APPLIED_PASS)
    lease = lease_holder(conn)
    last = conn.execute(
        "SELECT id, mode, status, finished_at FROM dream_runs ORDER BY id DESC LIMIT 1"
    ).fetchone()
    dream = {
        "cycle": current_cycle(conn),
        "completed_since_last_dream": since,
        "completed_since_last_apply": since_apply,
        "threshold": dream_threshold,
        "due": None if dream_threshold is None else since >= dream_threshold,
        "running": None if lease is None else lease.__dict__.copy(),
        "last_run": None if last is None else dict(last),
        "pending_proposals": conn.execute("SELECT count(*) FROM proposals WHERE status = 'pending'").fetchone()[0],
    }
    failures = {
        "fingerprints": conn.execute("SELECT count(*) FROM failure_fingerprints").fetchone()[0],
        "open_alerts": conn.execute("SELECT count(*) FROM systemic_alerts WHERE status <> 'resolved'").fetchone()[0],
    }
    return {"agents": agents, "edges": edges, "telemetry": telemetry, "dream": dream, "failures": failures}
