"""The default weighted rank on plain lists, for a search that took no semantic step.

Such a search (every kind's lexical matches cover the query, or no vector is stored) needs nothing
numpy gives: a pool of at most a few hundred rows, one usage factor each. Importing numpy would cost
a `kaos search` process more CPU than the search itself, so the pool stays lists
(:class:`~.candidates.Rows`) and is scored here with the same formula and the same floating-point
operations as :func:`.ranking.score_pool` and :func:`.ranking.top` (tests/test_list_ranking.py
checks the two give identical hits). Explore, the seed's ``wilson`` formula and hybrid pools keep
the numpy path.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from ..plasticity.evidence import effective_lists
from ..plasticity.usage import evidence_usage_factor
from .candidates import BM25, ID, SUCCESSES, TASK_SUCCESSES, TASK_USES, USES, Rows

_KIND_ORDER = {"memory": 0, "skill": 1}


def best_relevance(pools: Sequence[Rows]) -> float:
    """The best relevance among the query's candidates (1.0 when there is none): see
    :func:`.ranking.best_relevance`."""
    best = max((max(row[BM25] for row in p.rows) for p in pools if len(p)), default=0.0)
    return best if best > 0 else 1.0


def scores(conn: sqlite3.Connection, pool: Rows, unit: float, *, task_id: int | None, alpha: float, z: float,
           task_context: bool, half_life: float) -> list[float]:
    """The weighted score of each candidate: relevance (BM25 / ``unit``) times the usage factor of its
    effective record (the task's where it has history for the skill, else the skill's)."""
    if pool.sql_scores is not None:  # memories: scored in SQL
        return [s / unit for s in pool.sql_scores]
    rows = pool.rows
    wins = [row[SUCCESSES] for row in rows]
    uses = [row[USES] for row in rows]
    task_wins = [0.0] * len(rows)
    task_uses = [0.0] * len(rows)
    if pool.kind == "skill" and rows:
        wins, uses, task_wins, task_uses = effective_lists(
            conn, [int(row[ID]) for row in rows],
            (uses, wins, [row[TASK_USES] for row in rows], [row[TASK_SUCCESSES] for row in rows]),
            task_id, half_life)
    out = []
    for i, row in enumerate(rows):
        w, n = wins[i], uses[i]
        if task_context and task_uses[i] > 0:
            w, n = task_wins[i], task_uses[i]
        out.append(row[BM25] / unit * evidence_usage_factor(w, n, alpha, z))
    return out


def top(pools: Sequence[Rows], pool_scores: Sequence[list[float]], limit: int) -> list[tuple[str, int, int, float]]:
    """The best ``limit`` as (kind, pool index, row, score): score descending, then kind, then id."""
    entries = [
        (-score, _KIND_ORDER[p.kind], p.rows[row][ID], index, row, score)
        for index, (p, s) in enumerate(zip(pools, pool_scores, strict=True))
        for row, score in enumerate(s)
    ]
    if limit <= 0:
        return []
    entries.sort(key=lambda e: e[:3])
    return [(pools[index].kind, index, row, score) for _, _, _, index, row, score in entries[:limit]]
