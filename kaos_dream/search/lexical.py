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

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


_SKILL_SQL = """
SELECT s.id, s.name, substr(s.description, 1, ?) AS text, s.deprecated, bm25(skills_fts) AS b
FROM skills_fts JOIN skills AS s ON s.id = skills_fts.rowid
WHERE skills_fts MATCH ? {deprecated}
ORDER BY b, s.id
LIMIT ?
"""

_MEMORY_SQL = """
SELECT m.id, m.key AS name, substr(m.content, 1, ?) AS text, 0 AS deprecated, bm25(memories_fts) AS b
FROM memories_fts JOIN memories AS m ON m.id = memories_fts.rowid
WHERE memories_fts MATCH ?
ORDER BY b, m.id
LIMIT ?
"""


def lexical_candidates(
    conn: sqlite3.Connection, text: str, kind: str, limit: int, include_deprecated: bool = False
) -> list[Hit]:
    """Top ``limit`` matches of one kind by BM25, ties broken by id."""
    match = fts_query(text)
    if match is None or limit <= 0:
        return []
    if kind == "skill":
        sql = _SKILL_SQL.format(deprecated="" if include_deprecated else "AND s.deprecated = 0")
    elif kind == "memory":
        sql = _MEMORY_SQL
    else:
        raise ValueError(f"unknown kind {kind!r}")
    out: list[Hit] = []
    for row in conn.execute(sql, (SNIPPET_CHARS, match, limit)):
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
