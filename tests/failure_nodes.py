"""Failure fingerprints with chosen ids, so graph tests can link to ``failure:N`` nodes that exist.

Graph nodes must exist; the failures feature makes fingerprints from real error text, which gives ids
in order of first sight. Tests that want particular ids write the rows directly (one per id).
"""

from __future__ import annotations

import sqlite3

from kaos_dream.store import transaction

from .conftest import T0


def add_fingerprints(conn: sqlite3.Connection, *ids: int) -> None:
    """Insert a minimal fingerprint row for each id (existing ids are left alone)."""
    with transaction(conn):
        conn.executemany(
            "INSERT OR IGNORE INTO failure_fingerprints (id, hash, algorithm, tool, normalized, key_text, example, "
            "first_seen, last_seen) VALUES (?, ?, 1, 'test', ?, ?, ?, ?, ?)",
            [(i, f"test-fingerprint-{i}", f"failure {i}", f"failure {i}", f"failure {i}", T0, T0) for i in ids],
        )
