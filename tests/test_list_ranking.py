"""A search that takes no semantic step ranks its pool on lists (:mod:`kaos_dream.search.list_ranking`)
instead of numpy (:mod:`kaos_dream.search.ranking`). The two must give the same hits in the same order
with the same scores, bit for bit: compared here on a library with global and per-task outcomes,
aged records, deprecated skills and memories, over many queries."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import numpy as np
import pytest

from kaos_dream import Library, ManualClock, Settings
from kaos_dream.plasticity import signals, usage
from kaos_dream.plasticity.evidence import effective_records
from kaos_dream.plasticity.task import task_hash, task_key
from kaos_dream.search import list_ranking, ranking
from kaos_dream.search.candidates import ID, SUCCESSES, TASK_SUCCESSES, TASK_USES, USES, candidate_rows

WORDS = "csv parquet deploy postgres retry backoff schema cache batch stream token auth quota shard".split()


def test_usage_factor_is_bit_identical_to_numpys() -> None:
    values = sorted({0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 7.0, 10.0, 0.3535533905932738, 1e-9, 123.456, 1000.0})
    for (s, n), alpha, z in itertools.product(itertools.product(values, values), (3.0, 0.5, 1.0), (1.96, 1.0, 2.58)):
        if s > n:
            continue
        want = float(signals.evidence_usage_factor(np.array([s]), np.array([n]), alpha, z)[0])
        assert usage.evidence_usage_factor(s, n, alpha, z) == want, (s, n, alpha, z)
        assert usage.wilson_lower(s, n, z) == float(signals.wilson_lower(np.array([s]), np.array([n]), z)[0])


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("lists") / "lib.db"
    rng = random.Random(7)
    clock = ManualClock(1_700_000_000.0)
    with Library(path, clock=clock, settings=Settings(semantic=False)) as lib:
        ids = []
        for i in range(300):
            words = " ".join(rng.sample(WORDS, 5))
            ids.append(lib.skills.add(f"skill-{i}", words, "run it", [rng.choice(WORDS)]).id)
        for i in range(40):
            lib.memories.add(" ".join(rng.sample(WORDS, 4)), key=f"note-{i}")
        for _ in range(900):  # outcomes, some under a task, so records age and tasks override
            clock.advance(rng.uniform(1, 5000))
            task = " ".join(rng.sample(WORDS, 2)) if rng.random() < 0.4 else None
            lib.record_outcome(rng.choice(ids[:120]), rng.random() < 0.6, task=task)
        for skill_id in ids[::17]:
            lib.skills.deprecate(skill_id, "old")
    return path


def numpy_ranked(lib: Library, query: str, kinds: tuple[str, ...], limit: int, task_id: int | None,
                 include_deprecated: bool) -> list[tuple[str, int, float]]:
    """What the numpy path ranks for the same candidates."""
    s = lib.settings
    candidates = rows_of(lib, query, kinds, limit, task_id, include_deprecated)
    pools = [c.pool() for c in candidates]
    params = ranking.RankParams(alpha=s.rank_alpha, half_life_days=s.rank_half_life_days, z=s.rank_z,
                                floor=s.rank_floor, task_context=s.rank_task_context,
                                evidence_half_life=s.evidence_half_life)
    unit = ranking.best_relevance(pools)
    scores = []
    for p in pools:
        m = p.matrix
        effective = (effective_records(lib.conn, m[:, ID], (m[:, USES], m[:, SUCCESSES], m[:, TASK_USES],
                                                            m[:, TASK_SUCCESSES]), task_id, s.evidence_half_life)
                     if p.kind == "skill" and len(p) else None)
        scores.append(ranking.score_pool(p, lib.now(), "weighted", params, effective=effective, unit=unit))
    return [(k, int(pools[pi].matrix[row, ID]), score) for k, pi, row, score in ranking.top(pools, scores, limit)]


def rows_of(lib: Library, query: str, kinds: tuple[str, ...], limit: int, task_id: int | None,
            include_deprecated: bool) -> list:
    s = lib.settings
    memory_order = (0.0, lib.now(), s.rank_half_life_days * 86_400.0, limit)
    return [candidate_rows(lib.conn, query, k, pool=max(s.rank_pool, limit), pool_min=max(s.rank_pool_min, limit),
                           task_id=task_id, include_deprecated=include_deprecated, memory_order=memory_order)
            for k in kinds]


def test_list_ranking_equals_numpy_ranking(library: Path) -> None:
    rng = random.Random(11)
    compared = with_outcomes = 0
    with Library(library, readonly=True, clock=ManualClock(1_700_000_000.0 + 4e6),
                 settings=Settings(semantic=False)) as lib:
        task_ids = [r[0] for r in lib.conn.execute("SELECT id FROM tasks ORDER BY id")] + [None]
        for _ in range(150):
            query = " ".join(rng.sample(WORDS, rng.randint(1, 4)))
            kinds = rng.choice([("skill",), ("memory",), ("skill", "memory")])
            limit = rng.choice([1, 5, 10, 40])
            task_id = rng.choice(task_ids)
            deprecated = rng.random() < 0.3
            candidates = rows_of(lib, query, kinds, limit, task_id, deprecated)
            s = lib.settings
            unit = list_ranking.best_relevance(candidates)
            scores = [list_ranking.scores(lib.conn, c, unit, task_id=task_id, alpha=s.rank_alpha, z=s.rank_z,
                                          task_context=s.rank_task_context, half_life=s.evidence_half_life)
                      for c in candidates]
            listed = [(k, int(candidates[ci].rows[row][ID]), score)
                      for k, ci, row, score in list_ranking.top(candidates, scores, limit)]
            assert listed == numpy_ranked(lib, query, kinds, limit, task_id, deprecated), query
            compared += bool(listed)
            with_outcomes += any(c.kind == "skill" and any(r[USES] for r in c.rows) for c in candidates)
    assert compared > 100 and with_outcomes > 50  # the comparison really ranked records


def test_the_search_uses_the_list_path_and_returns_the_numpy_order(library: Path) -> None:
    """``lib.search`` (semantic off, so no query takes the semantic step) returns what the numpy path ranks."""
    with Library(library, readonly=True, clock=ManualClock(1_700_000_000.0 + 4e6),
                 settings=Settings(semantic=False, min_relevance=0.0)) as lib:
        for query in ("csv parquet", "deploy postgres retry", "token", "quota shard cache batch"):
            hits = lib.search(query, limit=10)
            task = lib.conn.execute("SELECT id FROM tasks WHERE hash = ?", (task_key(task_hash(query)),)).fetchone()
            want = numpy_ranked(lib, query, ("skill", "memory"), 10, None if task is None else task[0], False)
            assert [(h.kind, h.id, h.score) for h in hits] == want
