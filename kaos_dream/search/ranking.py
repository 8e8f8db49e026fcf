"""Weighted ranking of a candidate pool, vectorised with numpy.

The interface is "candidates with a relevance value -> weighted ranking": a :class:`Pool` carries
each candidate's relevance (``BM25``: positive, higher is better, from whichever retrieval produced
it) and exact counters; the effective (aged) record comes from :mod:`kaos_dream.plasticity.evidence`.

Two formulas:

* ``wilson`` — the seed's formula exactly, kept as the benchmarks' reference:
  ``max(bm25, floor) * usage * 2^(-age / 14 d)``, global all-time record, usage 0.5 when never used,
  else ``0.5 + alpha * wilson_lower(s, n)``.
* ``weighted`` — the default: ``relevance * usage``, where relevance is the candidate's BM25 divided
  by the best BM25 of the query's candidates (so the best match is 1.0 whatever the library's size)
  and usage is :func:`evidence_usage_factor` of the *effective* record of the same task when that
  task has history for the skill (else the skill's global effective record), where an outcome's
  weight halves with every ``evidence_half_life`` later outcomes that contradict it. No floor and no
  time factor: FTS5's ``bm25()`` is positive for every match, so with no outcome evidence (usage 0.5 for
  all) the order is exactly the relevance order, at any library size. The seed's floor is what
  flattened a small library (FTS5 clamps the IDF of a term in more than half the rows to 1e-6, so
  every match fell under 0.01 and recency decided).
* ``weighted`` with ``explore`` — Thompson sampling: each candidate's success rate is drawn from
  ``Beta(1 + effective successes, 1 + effective failures)`` with a seeded generator, and the score
  is ``relevance * draw``. Untried candidates draw from the uniform prior, so they sometimes outrank
  a proven one; the same seed and data give the same order.

Ties are broken by kind then id, so the same data and clock always give the same order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..plasticity.evidence import Effective
from ..plasticity.signals import evidence_usage_factor, recency_weight, seed_usage_factor
from .candidates import BM25, ID, LAST_USED, SUCCESSES, USES, Pool

FORMULAS = ("weighted", "wilson")
_KIND_ORDER = {"memory": 0, "skill": 1}


@dataclass(frozen=True)
class RankParams:
    alpha: float = 3.0
    half_life_days: float = 14.0
    z: float = 1.96
    floor: float = 0.01
    task_context: bool = True
    evidence_half_life: float = 1.0  # contradicting outcomes; 0 = all-time record
    explore_seed: int | None = None  # set: Thompson sampling with this seed (weighted only)


def best_relevance(pools: Sequence[Pool]) -> float:
    """The best relevance among the query's candidates (1.0 when there is none), the unit of the
    weighted score, so that kinds stay comparable and the score does not depend on the library's
    size."""
    best = max((float(p.matrix[:, BM25].max()) for p in pools if len(p)), default=0.0)
    return best if best > 0 else 1.0


def chosen_record(effective: Effective, task_context: bool) -> tuple[np.ndarray, np.ndarray]:
    """Effective (successes, outcomes) per candidate: the task's record where it has history for
    the skill, else the skill's global record."""
    wins, uses = effective.successes, effective.uses
    if task_context:
        has_task = effective.task_uses > 0
        wins = np.where(has_task, effective.task_successes, wins)
        uses = np.where(has_task, effective.task_uses, uses)
    return wins, uses


def thompson_draws(ids: np.ndarray, wins: np.ndarray, uses: np.ndarray, seed: int) -> np.ndarray:
    """One Beta(1 + s, 1 + f) draw per candidate, made in id order from a generator seeded with
    ``seed`` and the pool's evidence, so the draw depends on the data and the seed only."""
    order = np.argsort(ids, kind="stable")
    evidence = int(round(float(uses.sum()) * 1_000))
    rng = np.random.default_rng([int(seed) & 0xFFFFFFFF, evidence & 0xFFFFFFFF])
    draws = np.empty(len(ids))
    draws[order] = rng.beta(1.0 + wins[order], 1.0 + np.maximum(uses[order] - wins[order], 0.0))
    return draws


def score_pool(
    pool: Pool,
    now: float,
    formula: str,
    params: RankParams,
    *,
    effective: Effective | None = None,
    unit: float = 1.0,
) -> np.ndarray:
    """One score per candidate (higher is better). ``unit`` is the query's best relevance
    (:func:`best_relevance`) and ``effective`` the pool's effective records (weighted skills)."""
    if formula not in FORMULAS:
        raise ValueError(f"unknown formula {formula!r}")
    m = pool.matrix
    if m.shape[0] == 0:
        return np.zeros(0)
    if pool.sql_scores is not None:  # scored in SQL with the same formula (memories have no outcomes)
        return np.asarray(pool.sql_scores, dtype=np.float64) / (unit if formula == "weighted" else 1.0)
    uses, wins = m[:, USES], m[:, SUCCESSES]
    if formula == "wilson":
        recency = recency_weight(now - m[:, LAST_USED], params.half_life_days)
        usage = seed_usage_factor(wins, uses, params.alpha, params.z) if uses.any() else np.full(m.shape[0], 0.5)
        return np.maximum(m[:, BM25], params.floor) * usage * recency
    relevance = m[:, BM25] / unit
    if effective is None:
        effective = Effective(wins, uses, np.zeros(m.shape[0]), np.zeros(m.shape[0]))
    wins, uses = chosen_record(effective, params.task_context)
    if params.explore_seed is not None:
        return relevance * thompson_draws(m[:, ID], wins, uses, params.explore_seed)
    return relevance * evidence_usage_factor(wins, uses, params.alpha, params.z)


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
