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
from .candidates import Candidate

FORMULAS = ("weighted", "wilson")
_KIND_ORDER = {"memory": 0, "skill": 1}


@dataclass(frozen=True)
class RankParams:
    alpha: float = 3.0
    half_life_days: float = 14.0
    z: float = 1.96
    floor: float = 0.01
    task_context: bool = True


def score_candidates(candidates: Sequence[Candidate], now: float, formula: str, params: RankParams) -> np.ndarray:
    """One score per candidate (higher is better)."""
    if formula not in FORMULAS:
        raise ValueError(f"unknown formula {formula!r}")
    if not candidates:
        return np.zeros(0)
    bm25 = np.fromiter((c.bm25 for c in candidates), np.float64, len(candidates))
    uses = np.fromiter((c.uses for c in candidates), np.float64, len(candidates))
    wins = np.fromiter((c.successes for c in candidates), np.float64, len(candidates))
    last = np.fromiter(
        (c.last_used_at if c.last_used_at is not None else c.updated_at for c in candidates),
        np.float64,
        len(candidates),
    )
    recency = recency_weight(now - last, params.half_life_days)
    if formula == "wilson":
        usage = seed_usage_factor(wins, uses, params.alpha, params.z)
    else:
        t_uses = np.fromiter((c.task_uses for c in candidates), np.float64, len(candidates))
        t_wins = np.fromiter((c.task_successes for c in candidates), np.float64, len(candidates))
        has_task = (t_uses > 0) & params.task_context
        usage = evidence_usage_factor(
            np.where(has_task, t_wins, wins), np.where(has_task, t_uses, uses), params.alpha, params.z
        )
    return np.maximum(bm25, params.floor) * usage * recency


def order(candidates: Sequence[Candidate], scores: np.ndarray) -> list[int]:
    """Indices best first: score descending, then kind, then id."""
    if len(candidates) == 0:
        return []
    kinds = np.fromiter((_KIND_ORDER.get(c.kind, 9) for c in candidates), np.int64, len(candidates))
    ids = np.fromiter((c.id for c in candidates), np.int64, len(candidates))
    return [int(i) for i in np.lexsort((ids, kinds, -scores))]
