"""Weighted ranking of a candidate pool, vectorised with numpy.

Two formulas, both ``max(bm25, floor) * usage_factor * recency_weight``:

* ``wilson`` — the seed's formula exactly: global record, usage 0.5 when never used, else
  ``0.5 + alpha * wilson_lower(s, n)``. Kept as the reference.
* ``weighted`` — the default: the outcomes of the same task when that task has history for the
  skill (else the skill's global record), and :func:`evidence_usage_factor`, under which proven
  failures fall below an untried alternative. Chosen by ``demo_neuroplasticity_bench``.

Recency is measured from the skill's last reported outcome, or from its last edit when it was never
used. Ties are broken by kind then id, so the same data and clock always give the same order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..plasticity.signals import evidence_usage_factor, recency_weight, seed_usage_factor
from .candidates import BM25, ID, LAST_USED, SUCCESSES, TASK_SUCCESSES, TASK_USES, USES, Pool

FORMULAS = ("weighted", "wilson")
_KIND_ORDER = {"memory": 0, "skill": 1}


@dataclass(frozen=True)
class RankParams:
    alpha: float = 3.0
    half_life_days: float = 14.0
    z: float = 1.96
    floor: float = 0.01
    task_context: bool = True


def score_pool(pool: Pool, now: float, formula: str, params: RankParams) -> np.ndarray:
    """One score per candidate (higher is better)."""
    if formula not in FORMULAS:
        raise ValueError(f"unknown formula {formula!r}")
    m = pool.matrix
    if m.shape[0] == 0:
        return np.zeros(0)
    if pool.sql_scores is not None:  # scored in SQL with the same formula (memories have no outcomes)
        return np.asarray(pool.sql_scores, dtype=np.float64)
    uses, wins = m[:, USES], m[:, SUCCESSES]
    recency = recency_weight(now - m[:, LAST_USED], params.half_life_days)
    if not uses.any():  # no outcome evidence in the pool (always so for memories): both formulas give 0.5
        usage = np.full(m.shape[0], 0.5)
    elif formula == "wilson":
        usage = seed_usage_factor(wins, uses, params.alpha, params.z)
    else:
        if params.task_context:
            has_task = m[:, TASK_USES] > 0
            wins = np.where(has_task, m[:, TASK_SUCCESSES], wins)
            uses = np.where(has_task, m[:, TASK_USES], uses)
        usage = evidence_usage_factor(wins, uses, params.alpha, params.z)
    return np.maximum(m[:, BM25], params.floor) * usage * recency


def top(pools: Sequence[Pool], scores: Sequence[np.ndarray], limit: int) -> list[tuple[str, int, int, float]]:
    """The best ``limit`` as (kind, pool index, row, score): score descending, then kind, then id."""
    entries = [(p, s) for p, s in zip(pools, scores, strict=True) if len(p)]
    if not entries or limit <= 0:
        return []
    all_scores = np.concatenate([s for _, s in entries])
    kinds = np.concatenate([np.full(len(p), _KIND_ORDER[p.kind]) for p, _ in entries])
    ids = np.concatenate([p.matrix[:, ID] for p, _ in entries])
    which = np.concatenate([np.full(len(p), i) for i, (p, _) in enumerate(entries)])
    rows = np.concatenate([np.arange(len(p)) for p, _ in entries])
    best = np.lexsort((ids, kinds, -all_scores))[:limit]
    index = {id(p): pools.index(p) for p, _ in entries}
    return [
        (entries[which[i]][0].kind, index[id(entries[which[i]][0])], int(rows[i]), float(all_scores[i])) for i in best
    ]
