"""A read-only summary of what the library has learned so far (`kaos dream status`)."""

from __future__ import annotations

import sqlite3
from typing import Any


def library_status(conn: sqlite3.Connection) -> dict[str, Any]:
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
    return {"agents": agents, "edges": edges, "telemetry": telemetry}
