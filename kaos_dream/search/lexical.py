"""BM25 candidate retrieval from the FTS5 indexes (never a Python scan of the corpus)."""

from __future__ import annotations

import sqlite3
from dataclasses import asdict, dataclass, replace
from typing import Any

from .query import fts_query

SNIPPET_CHARS = 160


@dataclass(frozen=True)
class Hit:
    """One search result. ``score`` is what the ranking sorted by (higher is better); ``bm25`` is the
    lexical relevance alone, negated from FTS5's convention so that higher is better too."""

    kind: str
    id: int
    name: str
    text: str
    bm25: float
    score: float
    deprecated: bool = False
    uses: int = 0  # outcomes reported for this skill, over all tasks (memories: 0)
    successes: int = 0
    # Calibrated chance that the hit answers the query, in [0, 1], comparable across queries and
    # libraries (search/relevance.py); ``score`` is the ranking, which also weighs the track record.
    relevance: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# The FTS query ranks and cuts to LIMIT on its own (deprecated skills excluded by rowid against the
# (deprecated, id) index, as the weighted pool does); only the rows kept are joined to their entry
# table for name and snippet. Joining before the LIMIT fetched a skills row for every match (measured
# at 100k skills: 37.7 ms joined first, 26.5 ms for the FTS query alone).
_SKILL_SQL = """
SELECT s.id, s.name, substr(s.description, 1, ?1) AS text, s.deprecated, f.b AS b
FROM (SELECT rowid AS id, bm25(skills_fts) AS b FROM skills_fts
      WHERE skills_fts MATCH ?2 {deprecated} ORDER BY b, rowid LIMIT ?3) AS f
JOIN skills AS s ON s.id = f.id
ORDER BY f.b, f.id
"""

_NOT_DEPRECATED = "AND rowid NOT IN (SELECT id FROM skills WHERE deprecated = 1)"

_MEMORY_SQL = """
SELECT m.id, m.key AS name, substr(m.content, 1, ?1) AS text, 0 AS deprecated, f.b AS b
FROM (SELECT rowid AS id, bm25(memories_fts) AS b FROM memories_fts
      WHERE memories_fts MATCH ?2 ORDER BY b, rowid LIMIT ?3) AS f
JOIN memories AS m ON m.id = f.id
ORDER BY f.b, f.id
"""


# Rows ranked past the limit when deprecated skills are dropped after ranking (see _ranked_rows).
_DEPRECATED_SLACK = 16


def _ranked_rows(
    conn: sqlite3.Connection, kind: str, match: str, limit: int, include_deprecated: bool
) -> list[sqlite3.Row]:
    """The top ``limit`` rows in (bm25, id) order.

    Deprecated skills are few, and testing each match against them costs a fifth of the query
    (measured at 100k skills), so the skills are ranked unfiltered past the limit (twice it, plus a margin) and the
    deprecated ones dropped afterwards: that is exactly the filtered top ``limit`` when enough rows
    remain, or when the unfiltered query ran out of matches. Otherwise the filtered query runs."""
    if kind == "memory":
        return conn.execute(_MEMORY_SQL, (SNIPPET_CHARS, match, limit)).fetchall()
    if kind != "skill":
        raise ValueError(f"unknown kind {kind!r}")
    if include_deprecated:
        return conn.execute(_SKILL_SQL.format(deprecated=""), (SNIPPET_CHARS, match, limit)).fetchall()
    fetch = 2 * limit + _DEPRECATED_SLACK
    rows = conn.execute(_SKILL_SQL.format(deprecated=""), (SNIPPET_CHARS, match, fetch)).fetchall()
    kept = [row for row in rows if not row["deprecated"]]
    if len(kept) >= limit or len(rows) < fetch:
        return kept[:limit]
    return conn.execute(_SKILL_SQL.format(deprecated=_NOT_DEPRECATED), (SNIPPET_CHARS, match, limit)).fetchall()


def lexical_candidates(
    conn: sqlite3.Connection, text: str, kind: str, limit: int, include_deprecated: bool = False
) -> list[Hit]:
    """Top ``limit`` matches of one kind by BM25, ties broken by id."""
    match = fts_query(text)
    if match is None or limit <= 0:
        return []
    out: list[Hit] = []
    for row in _ranked_rows(conn, kind, match, limit, include_deprecated):
        relevance = -float(row["b"])
        out.append(Hit(kind, row["id"], row["name"], row["text"], relevance, relevance, bool(row["deprecated"])))
    return out


def with_skill_counts(conn: sqlite3.Connection, hits: list[Hit]) -> list[Hit]:
    """``hits`` with each skill's outcome counters filled in: one lookup for the hits shown, not for
    every match the lexical order scored (the weighted ranking reads them with its pool)."""
    skill_ids = [h.id for h in hits if h.kind == "skill"]
    if not skill_ids:
        return hits
    counts = {
        row[0]: (row[1], row[2])
        for row in conn.execute(
            "SELECT skill_id, uses, successes FROM skill_stats WHERE skill_id IN (SELECT value FROM json_each(?))",
            ("[" + ",".join(map(str, skill_ids)) + "]",),
        )
    }
    return [
        replace(h, uses=counts[h.id][0], successes=counts[h.id][1]) if h.kind == "skill" and h.id in counts else h
        for h in hits
    ]
