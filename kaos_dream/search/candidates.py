"""The candidate pool that weighted ranking re-scores, with each candidate's outcome counters.

Scoring every match with FTS5's ``bm25()`` is what makes a broad OR query slow (a query matching
45 % of 10k skills scores 4,500 rows). The pool uses coordination-level matching instead: entries
containing all query words first; only when fewer than ``pool_min`` match is the level relaxed to
"any k-1 of the k words", then k-2 …, and finally to the plain OR query. Each level is a superset of
the one above, so the first level with enough matches is the pool, and ``bm25()`` only scores rows
of that level. At most ``pool`` rows per kind, best BM25 first, ties by id.

Counters come from ``skill_stats`` / ``skill_task_stats`` (kept by triggers), one indexed lookup
per candidate, so ranking never aggregates telemetry at query time.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from itertools import combinations
from math import comb

from .lexical import SNIPPET_CHARS
from .query import content_tokens

MAX_GROUPS_PER_LEVEL = 16  # past this many word subsets a level is skipped in favour of plain OR


@dataclass(frozen=True)
class Candidate:
    kind: str
    id: int
    name: str
    text: str
    deprecated: bool
    bm25: float  # higher is better
    updated_at: float
    uses: int = 0
    successes: int = 0
    last_used_at: float | None = None
    task_uses: int = 0
    task_successes: int = 0


_SKILLS = """
SELECT c.id, c.name, c.text, c.deprecated, c.b, c.updated_at,
       coalesce(st.uses, 0) AS uses, coalesce(st.successes, 0) AS successes, st.last_used_at,
       coalesce(tt.uses, 0) AS t_uses, coalesce(tt.successes, 0) AS t_successes
FROM (SELECT s.id, s.name, substr(s.description, 1, ?) AS text, s.deprecated, s.updated_at, bm25(skills_fts) AS b
      FROM skills_fts JOIN skills AS s ON s.id = skills_fts.rowid
      WHERE skills_fts MATCH ? {deprecated}
      ORDER BY b, s.id LIMIT ?) AS c
LEFT JOIN skill_stats AS st ON st.skill_id = c.id
LEFT JOIN skill_task_stats AS tt ON tt.task_hash = ? AND tt.skill_id = c.id
ORDER BY c.b, c.id
"""

_MEMORIES = """
SELECT m.id, m.key AS name, substr(m.content, 1, ?) AS text, 0 AS deprecated, bm25(memories_fts) AS b,
       m.updated_at, 0 AS uses, 0 AS successes, NULL AS last_used_at, 0 AS t_uses, 0 AS t_successes
FROM memories_fts JOIN memories AS m ON m.id = memories_fts.rowid
WHERE memories_fts MATCH ?
ORDER BY b, m.id LIMIT ?
"""


def _quote(token: str) -> str:
    return '"' + token.replace('"', '""') + '"'


def coordination_levels(text: str) -> list[str]:
    """FTS5 expressions from strictest (all words) to loosest (any word), skipping levels with too
    many word subsets. Every expression uses quoted tokens only, so none can be a syntax error."""
    tokens = content_tokens(text)
    k = len(tokens)
    if k == 0:
        return []
    quoted = [_quote(t) for t in tokens]
    levels: list[str] = []
    for m in range(k, 1, -1):
        if comb(k, m) > MAX_GROUPS_PER_LEVEL:
            break
        groups = [" AND ".join(group) for group in combinations(quoted, m)]
        levels.append(groups[0] if len(groups) == 1 else " OR ".join(f"({g})" for g in groups))
    levels.append(" OR ".join(quoted))
    return levels


def candidate_pool(
    conn: sqlite3.Connection,
    text: str,
    kind: str,
    *,
    pool: int,
    pool_min: int,
    task_hash: str | None = None,
    include_deprecated: bool = False,
) -> list[Candidate]:
    """Up to ``pool`` candidates of ``kind`` from the strictest coordination level with at least
    ``pool_min`` matches (or the loosest level), best BM25 first, ties by id."""
    if pool <= 0:
        return []
    if kind == "skill":
        sql = _SKILLS.format(deprecated="" if include_deprecated else "AND s.deprecated = 0")
    elif kind == "memory":
        sql = _MEMORIES
    else:
        raise ValueError(f"unknown kind {kind!r}")
    rows: list[sqlite3.Row] = []
    for match in coordination_levels(text):
        if kind == "skill":
            rows = conn.execute(sql, (SNIPPET_CHARS, match, pool, task_hash)).fetchall()
        else:
            rows = conn.execute(sql, (SNIPPET_CHARS, match, pool)).fetchall()
        if len(rows) >= min(pool_min, pool):
            break
    return [
        Candidate(
            kind=kind,
            id=row[0],
            name=row[1],
            text=row[2],
            deprecated=bool(row[3]),
            bm25=-float(row[4]),
            updated_at=float(row[5]),
            uses=int(row[6]),
            successes=int(row[7]),
            last_used_at=row[8],
            task_uses=int(row[9]),
            task_successes=int(row[10]),
        )
        for row in rows
    ]
