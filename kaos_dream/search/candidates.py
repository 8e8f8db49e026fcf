"""The candidate pool that weighted ranking re-scores, with each candidate's outcome counters.

Scoring every match with FTS5's ``bm25()`` is what makes a broad OR query slow (a query matching
45 % of 10k skills scores 4,500 rows). The pool uses coordination-level matching instead: entries
containing all query words first; only when fewer than ``pool_min`` match is the level relaxed to
"any k-1 of the k words", then k-2 …, and finally to the plain OR query. Each level is a superset of
the one above, so the first level with enough matches is the pool, and ``bm25()`` only scores rows
of that level. At most ``pool`` rows per kind, best BM25 first, ties by id.

Counters come from ``skill_stats`` / ``skill_task_stats`` (kept by triggers), one indexed lookup
per candidate, so ranking never aggregates telemetry at query time. Memories have no outcomes: their
counters are zero and their recency is their last edit.
"""

from __future__ import annotations

import math
import sqlite3
from dataclasses import dataclass
from itertools import combinations
from math import comb
from typing import TYPE_CHECKING, Any

from .lexical import SNIPPET_CHARS
from .query import content_tokens, fts_query
from .semantic import SemanticMatches

if TYPE_CHECKING:
    import numpy as np

MAX_GROUPS_PER_LEVEL = 16  # past this many word subsets a level is skipped in favour of plain OR


# Pool columns: one float64 matrix per kind, so ranking is a handful of numpy operations.
ID, BM25, LAST_USED, USES, SUCCESSES, TASK_USES, TASK_SUCCESSES = range(7)
COLUMNS = 7


@dataclass(frozen=True)
class Pool:
    """Candidates of one kind: ``matrix[i]`` holds the columns above for candidate ``i`` (``BM25`` is
    FTS5's value negated, so higher is better; ``LAST_USED`` falls back to the entry's last edit)."""

    kind: str
    matrix: np.ndarray
    shown: dict[int, tuple[str, str, bool]] | None = None  # name, snippet, deprecated when already fetched
    ordered: bool = False  # rows are already in final weighted order (memories, scored in SQL)
    sql_scores: list[float] | None = None  # their weighted scores, when scored in SQL
    lexical: np.ndarray | None = None  # BM25 alone when ``BM25`` holds the fused relevance of a hybrid search

    def __len__(self) -> int:
        return int(self.matrix.shape[0])


# Deprecated skills are excluded by rowid against the (deprecated, id) index, so the FTS query never
# reads a skills row per match; counters are joined for the pool only, and names and snippets are
# fetched afterwards for the results actually returned.
_SKILLS = """
SELECT c.id, -c.b, coalesce(st.last_used_at, s.updated_at), coalesce(st.uses, 0), coalesce(st.successes, 0),
       coalesce(tt.uses, 0), coalesce(tt.successes, 0)
FROM (SELECT rowid AS id, bm25(skills_fts) AS b FROM skills_fts
      WHERE skills_fts MATCH ? {deprecated}
      ORDER BY b, rowid LIMIT ?) AS c
JOIN skills AS s ON s.id = c.id
LEFT JOIN skill_stats AS st ON st.skill_id = c.id
LEFT JOIN skill_task_stats AS tt ON tt.task_id = ? AND tt.skill_id = c.id
ORDER BY c.b, c.id
"""
_NOT_DEPRECATED = "AND rowid NOT IN (SELECT id FROM skills WHERE deprecated = 1)"
# Semantic neighbours that no lexical level matched: the same columns, relevance 0 (fused later).
_SKILLS_BY_ID = """
SELECT s.id, 0.0, coalesce(st.last_used_at, s.updated_at), coalesce(st.uses, 0), coalesce(st.successes, 0),
       coalesce(tt.uses, 0), coalesce(tt.successes, 0)
FROM skills AS s
LEFT JOIN skill_stats AS st ON st.skill_id = s.id
LEFT JOIN skill_task_stats AS tt ON tt.task_id = ? AND tt.skill_id = s.id
WHERE s.id IN (SELECT value FROM json_each(?))
"""
_MEMORIES_BY_ID = """
SELECT id, updated_at, key, substr(content, 1, ?) FROM memories WHERE id IN (SELECT value FROM json_each(?))
"""

# Memories carry no outcomes, so their weighted score (relevance x 0.5 x recency of the last edit)
# needs no counters: SQL orders the level by it and returns only the best ``limit``, with their
# keys and snippets. A memory level is used as soon as it has ``limit`` matches.
_MEMORIES = """
SELECT m.id, m.updated_at, m.key, substr(m.content, 1, ?),
       max(-f.b / ?, ?) * pow(2.0, -max(? - m.updated_at, 0.0) / ?) AS w
FROM (SELECT rowid AS id, bm25(memories_fts) AS b FROM memories_fts WHERE memories_fts MATCH ? ORDER BY b, rowid) AS f
JOIN memories AS m ON m.id = f.id
ORDER BY w DESC, m.id
LIMIT ?
"""
_MAX_ROWID = {
    "skill": "SELECT coalesce(max(rowid), 0) FROM skills",
    "memory": "SELECT coalesce(max(rowid), 0) FROM memories",
}

_DETAILS = {
    "skill": "SELECT id, name, substr(description, 1, ?), deprecated FROM skills WHERE id IN ({marks})",
    "memory": "SELECT id, key, substr(content, 1, ?), 0 FROM memories WHERE id IN ({marks})",
}


def ensure_sql_math(conn: sqlite3.Connection) -> None:
    """Memory ranking uses SQL ``pow``; SQLite builds without the math functions get a Python one."""
    try:
        conn.execute("SELECT pow(2.0, 1.0)").fetchone()
    except sqlite3.OperationalError:
        conn.create_function("pow", 2, math.pow, deterministic=True)


def _quote(token: str) -> str:
    return '"' + token.replace('"', '""') + '"'


def coordination_levels(text: str) -> list[tuple[str, int]]:
    """FTS5 expressions from strictest (all words) to loosest (any word), skipping levels with too
    many word subsets, each with its repeat factor. Every expression uses quoted tokens only, so none
    can be a syntax error.

    A level "any m of the k words" ORs every m-word subset, so each word appears in C(k-1, m-1)
    subsets, and the level's score is divided by that factor. FTS5's ``bm25()`` gives zero to the
    phrases of an AND group a row does not satisfy, so the division gives back the query's own BM25
    only for a row holding every word; a row holding j of the k words keeps C(j-1, m-1)/C(k-1, m-1)
    of it, a bonus for holding more of the words. Rescoring those rows with their true BM25 left the
    weighted top-1 of demo_relevance_bench unchanged and lowered the seed formula's.
    """
    tokens = content_tokens(text)
    k = len(tokens)
    if k == 0:
        return []
    quoted = [_quote(t) for t in tokens]
    levels: list[tuple[str, int]] = []
    for m in range(k, 1, -1):
        if comb(k, m) > MAX_GROUPS_PER_LEVEL:
            break
        if k == 4 and m == 3:
            # "Any 3 of a, b, c, d" as (a AND b AND (c OR d)) OR (c AND d AND (a OR b)): 8 phrases instead
            # of 12, still every word exactly twice (so BM25 stays the query's own, times 2); about
            # half the cost of the subset form for the most common relaxed level.
            a, b, c, d = quoted
            levels.append((f"({a} AND {b} AND ({c} OR {d})) OR ({c} AND {d} AND ({a} OR {b}))", 2))
            continue
        groups = [" AND ".join(group) for group in combinations(quoted, m)]
        expression = groups[0] if len(groups) == 1 else " OR ".join(f"({g})" for g in groups)
        levels.append((expression, comb(k - 1, m - 1)))
    levels.append((" OR ".join(quoted), 1))
    return levels


def _levels(cursor: sqlite3.Cursor, kind: str, text: str, pool: int) -> list[tuple[str, int]]:
    """The coordination levels to try, strictest first. A table with at most ``pool`` rows goes
    straight to the loosest level: its whole match set fits in the pool."""
    if cursor.execute(_MAX_ROWID[kind]).fetchone()[0] <= pool:
        loosest = fts_query(text)  # no level can do better
        return [(loosest, 1)] if loosest is not None else []
    return coordination_levels(text)


RankedMemory = tuple[int, str, str, float, float, float]  # id, key, snippet, bm25 (floored), score, updated_at


def ranked_memories(
    conn: sqlite3.Connection,
    text: str,
    *,
    pool: int,
    memory_order: tuple[float, float, float, int],
) -> list[RankedMemory]:
    """The best ``limit`` memories by weighted score, best first (ties by id), from the strictest
    coordination level with at least ``limit`` matches. ``memory_order`` is (floor, now, half-life in
    seconds, limit). Memories carry no outcomes, so SQL does all the ranking (usage factor 0.5) and
    a memory-only search needs no pool matrix at all."""
    floor, now, half_life_s, limit = memory_order
    rows: list[tuple[Any, ...]] = []
    if pool > 0:
        cursor = conn.cursor()
        cursor.row_factory = None
        for match, repeat in _levels(cursor, "memory", text, pool):
            rows = cursor.execute(_MEMORIES, (SNIPPET_CHARS, repeat, floor, now, half_life_s, match, limit)).fetchall()
            if len(rows) >= limit:
                break
    out: list[RankedMemory] = []
    for entry_id, updated_at, key, snippet, w in rows:
        # w = max(bm25, floor) x recency; recover the floored relevance for the hit's bm25 field.
        recency = math.pow(2.0, -max(now - updated_at, 0.0) / half_life_s)
        out.append((entry_id, key, snippet, w / recency if recency > 0 else floor, 0.5 * w, updated_at))
    return out


def _ids_json(ids: list[int]) -> str:
    return "[" + ",".join(map(str, ids)) + "]"


def hybrid_memories(
    conn: sqlite3.Connection, lexical: list[RankedMemory], semantic: SemanticMatches,
    memory_order: tuple[float, float, float, int],
) -> list[RankedMemory]:
    """The lexical best ``limit`` and the semantic neighbours, re-scored with the fused relevance
    (same formula as SQL's: relevance x 0.5 x recency), best ``limit`` first, ties by id."""
    import numpy as np

    floor, now, half_life_s, limit = memory_order
    seen = {r[0] for r in lexical}
    extra = [i for i, _ in semantic.top if i not in seen]
    rows = list(lexical)
    if extra:
        cursor = conn.cursor()
        cursor.row_factory = None
        for entry_id, updated_at, key, snippet in cursor.execute(_MEMORIES_BY_ID, (SNIPPET_CHARS, _ids_json(extra))):
            rows.append((entry_id, key, snippet, 0.0, 0.0, updated_at))
    ids = np.array([r[0] for r in rows], dtype=np.int64)
    fused = semantic.fuse(np.array([r[3] for r in rows], dtype=np.float64), ids)
    recency = np.power(2.0, -np.maximum(now - np.array([r[5] for r in rows], dtype=np.float64), 0.0) / half_life_s)
    scores = 0.5 * np.maximum(fused, floor) * recency
    order = np.lexsort((ids, -scores))[:limit]
    return [(rows[i][0], rows[i][1], rows[i][2], rows[i][3], float(scores[i]), rows[i][5]) for i in order]


@dataclass(frozen=True)
class Rows:
    """A pool before numpy: ``rows[i]`` holds the :class:`Pool` columns of candidate ``i`` as floats.
    A search that takes no semantic step ranks these lists (:mod:`.list_ranking`) without numpy;
    :meth:`pool` gives the matrix the numpy ranking reads, with the same values."""

    kind: str
    rows: list[list[float]]
    shown: dict[int, tuple[str, str, bool]] | None = None
    sql_scores: list[float] | None = None

    def __len__(self) -> int:
        return len(self.rows)

    def pool(self) -> Pool:
        import numpy as np

        matrix = np.array(self.rows, dtype=np.float64) if self.rows else np.zeros((0, COLUMNS))
        return Pool(self.kind, matrix, self.shown, ordered=self.sql_scores is not None, sql_scores=self.sql_scores)


def candidate_rows(
    conn: sqlite3.Connection,
    text: str,
    kind: str,
    *,
    pool: int,
    pool_min: int,
    task_id: int | None = None,
    include_deprecated: bool = False,
    memory_order: tuple[float, float, float, int] = (0.01, 0.0, 14.0 * 86_400.0, 10),
) -> Rows:
    """Up to ``pool`` candidates of ``kind`` from the strictest coordination level with at least
    ``pool_min`` matches (or the loosest level). A table with at most ``pool`` rows goes straight to
    the loosest level: its whole match set fits in the pool. For memories ``memory_order`` is
    (floor, now, half-life in seconds, limit) and the pool is the best ``limit`` by weighted score
    (:func:`ranked_memories`). :func:`hybrid_pool` adds semantic neighbours afterwards."""
    if kind == "memory":
        return memory_rows(ranked_memories(conn, text, pool=pool, memory_order=memory_order))
    if kind != "skill":
        raise ValueError(f"unknown kind {kind!r}")
    sql = _SKILLS.format(deprecated="" if include_deprecated else _NOT_DEPRECATED)
    found: list[tuple[Any, ...]] = []
    repeat = 1
    if pool > 0:
        cursor = conn.cursor()
        cursor.row_factory = None
        enough = min(pool_min, pool)
        for match, level_repeat in _levels(cursor, kind, text, pool):
            repeat = level_repeat
            found = cursor.execute(sql, (match, pool, task_id)).fetchall()
            if len(found) >= enough:
                break
    rows = [[float(v) for v in row] for row in found]
    if repeat != 1:
        for row in rows:
            row[BM25] /= repeat
    return Rows(kind, rows)


def candidate_pool(conn: sqlite3.Connection, text: str, kind: str, **options: Any) -> Pool:
    """:func:`candidate_rows` as a numpy :class:`Pool`."""
    return candidate_rows(conn, text, kind, **options).pool()


def memory_rows(ranked: list[RankedMemory]) -> Rows:
    """Ranked memories as pool rows (already in final order, scored)."""
    rows = [[float(r[0]), float(r[3]), float(r[5]), 0.0, 0.0, 0.0, 0.0] for r in ranked]
    shown = {r[0]: (r[1], r[2], False) for r in ranked}
    return Rows("memory", rows, shown, sql_scores=[r[4] for r in ranked])


def memory_pool(ranked: list[RankedMemory]) -> Pool:
    """Ranked memories as a pool (already in final order, scored)."""
    return memory_rows(ranked).pool()


def pool_memories(pool: Pool) -> list[RankedMemory]:
    """The inverse of :func:`memory_pool`."""
    assert pool.shown is not None and pool.sql_scores is not None
    return [(int(row[ID]), *pool.shown[int(row[ID])][:2], float(row[BM25]), score, float(row[LAST_USED]))
            for row, score in zip(pool.matrix, pool.sql_scores, strict=True)]


def hybrid_pool(
    conn: sqlite3.Connection, pool: Pool, semantic: SemanticMatches, *, task_id: int | None,
    memory_order: tuple[float, float, float, int],
) -> Pool:
    """``pool`` with the semantic neighbours added and ``BM25`` holding the fused relevance
    (:mod:`.semantic`); the lexical value is kept in ``Pool.lexical``."""
    import numpy as np

    if pool.kind == "memory":
        return memory_pool(hybrid_memories(conn, pool_memories(pool), semantic, memory_order))
    matrix = pool.matrix.copy()
    seen = {int(i) for i in matrix[:, ID]}
    extra = [i for i, _ in semantic.top if i not in seen]
    if extra:
        cursor = conn.cursor()
        cursor.row_factory = None
        more = cursor.execute(_SKILLS_BY_ID, (task_id, _ids_json(extra))).fetchall()
        if more:
            matrix = np.vstack([matrix, np.array(more, dtype=np.float64)])
    lexical = matrix[:, BM25].copy()
    matrix[:, BM25] = semantic.fuse(lexical, matrix[:, ID].astype(np.int64))
    return Pool("skill", matrix, lexical=lexical)


def details(conn: sqlite3.Connection, kind: str, ids: list[int]) -> dict[int, tuple[str, str, bool]]:
    """Name (or key), snippet and deprecated flag of the entries about to be returned."""
    if not ids:
        return {}
    cursor = conn.cursor()
    cursor.row_factory = None
    sql = _DETAILS[kind].format(marks=",".join("?" * len(ids)))
    return {row[0]: (row[1], row[2], bool(row[3])) for row in cursor.execute(sql, (SNIPPET_CHARS, *ids))}
