"""Quality-preserving sparsification (seed 003 layer 3).

Three orderings of the edges to prune:

* ``weight`` — weakest first (then least activated, then id); in the library only edges that are
  weak ∧ dormant ∧ never activated are candidates;
* ``coverage`` — edges that lie on the fewest retrieval paths of the recorded queries first (the
  path to each query's target, or to its top-k answers when it has none), weakest first among equals;
* ``random`` — a seeded shuffle, the baseline.

:func:`greedy_prune` walks an ordering in batches and stops before quality on the recorded queries
falls more than ``epsilon`` below the unpruned graph's (a failing batch is halved until a single
edge fails). The library wrapper :func:`sparsify` records every pruned edge in ``edge_prunes`` and
sets ``edges.pruned_at``; :func:`restore` undoes a run or single edges until :func:`purge` deletes
them for good.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InvalidInputError, NotFoundError
from ..limits import QUERY, capped
from ..store import transaction
from .activation import DEFAULT_BETA, spread
from .arrays import EdgeList, GraphArrays, load_edge_list
from .nodes import Node
from .objective import EvalQuery, quality, reference_answers

if TYPE_CHECKING:
    from ..store.context import Context

STRATEGIES = ("weight", "coverage", "random")


def coverage_counts(edges: EdgeList, queries: Sequence[EvalQuery], *, mode: str = "gated",
                    beta: float = DEFAULT_BETA, k: int = 3) -> np.ndarray:
    """How many retrieval paths (query -> its target, or query -> each top-k answer) use each edge."""
    graph = GraphArrays.build(edges)
    position = {int(e): i for i, e in enumerate(edges.edge_id)}
    counts = np.zeros(len(edges), dtype=np.int64)
    for q in queries:
        act = spread(graph, q.seeds, mode=mode, beta=beta, paths=True)
        # The paths the quality objective depends on: to the target when there is one, else to
        # every answer in the top k.
        answers = [q.target] if q.target is not None else [key for key, _ in act.ranked()[:k]]
        for key in answers:
            for edge_id in act.path_edge_ids(key):
                counts[position[edge_id]] += 1
    return counts


def prune_order(
    edges: EdgeList,
    strategy: str,
    *,
    queries: Sequence[EvalQuery] = (),
    activations: np.ndarray | None = None,
    seed: int = 0,
    mode: str = "gated",
    beta: float = DEFAULT_BETA,
    k: int = 3,
) -> np.ndarray:
    """Edge positions in the order ``strategy`` would prune them (ties broken by edge id)."""
    m = len(edges)
    ids = edges.edge_id
    acts = np.zeros(m) if activations is None else np.asarray(activations, dtype=np.float64)
    if strategy == "weight":
        return np.lexsort((ids, acts, edges.strength))
    if strategy == "coverage":
        counts = coverage_counts(edges, queries, mode=mode, beta=beta, k=k)
        return np.lexsort((ids, edges.strength, counts))
    if strategy == "random":
        rng = np.random.default_rng(seed)
        return rng.permutation(np.argsort(ids, kind="stable"))
    raise InvalidInputError(f"unknown strategy {strategy!r}: use {', '.join(STRATEGIES)}")


@dataclass(frozen=True)
class PruneResult:
    pruned: np.ndarray  # edge positions, in pruning order
    quality_before: float
    quality_after: float
    evaluations: int


def greedy_prune(
    edges: EdgeList,
    order: np.ndarray,
    queries: Sequence[EvalQuery],
    *,
    epsilon: float,
    max_fraction: float = 0.9,
    batch_fraction: float = 0.05,
    mode: str = "gated",
    beta: float = DEFAULT_BETA,
    k: int = 3,
) -> PruneResult:
    """Prune along ``order`` while quality stays within ``epsilon`` of the full graph's."""
    m = len(edges)
    reference = reference_answers(edges, queries, mode=mode, beta=beta, k=k)
    base = quality(edges, queries, reference=reference, mode=mode, beta=beta, k=k)
    limit = min(len(order), int(math.floor(max_fraction * m)))
    keep = np.ones(m, dtype=bool)
    done = 0
    current = base
    evaluations = 1
    batch = max(1, int(math.ceil(batch_fraction * m)))
    while done < limit and batch >= 1:
        step = min(batch, limit - done)
        trial = keep.copy()
        trial[order[done : done + step]] = False
        q = quality(edges.subset(trial), queries, reference=reference, mode=mode, beta=beta, k=k)
        evaluations += 1
        if q >= base - epsilon - 1e-12:
            keep, done, current = trial, done + step, q
        elif step == 1:
            break
        else:
            batch = max(1, step // 2)
    return PruneResult(order[:done].copy(), base, current, evaluations)


# -- the library side -------------------------------------------------------------------------------
def record_query(lib: Context, query: str, seeds: dict[Node, float], target: Node | None = None) -> int:
    """Add a query to the log whose retrieval quality sparsification must preserve (write path)."""
    if not seeds:
        raise InvalidInputError("a recorded query needs at least one seed node")
    capped(query, "query", QUERY)
    payload = json.dumps([[n.kind, n.id, float(w)] for n, w in sorted(seeds.items())])
    with transaction(lib.conn):
        cur = lib.conn.execute(
            "INSERT INTO graph_queries (query, seeds, target_kind, target_id, created_at) VALUES (?, ?, ?, ?, ?)",
            (query, payload, target.kind if target else None, target.id if target else None, lib.now()),
        )
    return int(cur.lastrowid)


def recorded_queries(lib: Context, *, limit: int = 500) -> list[EvalQuery]:
    """The most recent ``limit`` recorded queries, oldest first."""
    rows = lib.conn.execute(
        "SELECT seeds, target_kind, target_id FROM (SELECT * FROM graph_queries ORDER BY created_at DESC, id DESC "
        "LIMIT ?) ORDER BY created_at, id",
        (limit,),
    ).fetchall()
    out = []
    for seeds, tk, tid in rows:
        parsed = {Node(kind, int(i)): float(w) for kind, i, w in json.loads(seeds)}
        out.append(EvalQuery(parsed, Node(tk, tid) if tk else None))
    return out


@dataclass(frozen=True)
class SparsifyReport:
    run: str | None
    strategy: str
    applied: bool
    edges_before: int
    candidates: int
    queries: int
    pruned_edge_ids: tuple[int, ...]
    quality_before: float | None
    quality_after: float | None
    epsilon: float
    notes: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        return {
            "run": self.run, "strategy": self.strategy, "applied": self.applied, "edges_before": self.edges_before,
            "candidates": self.candidates, "queries": self.queries, "pruned": len(self.pruned_edge_ids),
            "pruned_edge_ids": list(self.pruned_edge_ids), "quality_before": self.quality_before,
            "quality_after": self.quality_after, "epsilon": self.epsilon, "notes": list(self.notes),
        }


def weight_candidates(lib: Context, edges: EdgeList) -> np.ndarray:
    """Mask of edges that are weak ∧ dormant ∧ never activated (the classic GC rule)."""
    s = lib.settings
    cutoff = lib.now() - s.graph_prune_dormant_days * 86_400.0
    ok = {
        int(r[0])
        for r in lib.conn.execute(
            "SELECT id FROM edges WHERE pruned_at IS NULL AND strength <= ? AND activations = 0 "
            "AND coalesce(last_activated_at, last_verified_at, updated_at) < ?",
            (s.graph_prune_weak, cutoff),
        )
    }
    return np.array([int(e) in ok for e in edges.edge_id], dtype=bool)


def sparsify(
    lib: Context,
    *,
    strategy: str = "weight",
    epsilon: float | None = None,
    max_fraction: float = 0.5,
    apply: bool = False,
    seed: int = 0,
    mode: str = "gated",
    beta: float | None = None,
) -> SparsifyReport:
    """Choose edges to prune with ``strategy`` under the ε quality constraint; prune them if ``apply``."""
    if strategy not in STRATEGIES:
        raise InvalidInputError(f"unknown strategy {strategy!r}: use {', '.join(STRATEGIES)}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InvalidInputError(f"seed must be a whole number >= 0 (numpy refuses negative seeds), got {seed!r}")
    eps = lib.settings.graph_prune_epsilon if epsilon is None else epsilon
    if not 0.0 <= eps <= 1.0 or not 0.0 <= max_fraction <= 1.0:
        raise InvalidInputError("epsilon and max-fraction must be between 0 and 1")
    b = lib.settings.graph_beta if beta is None else beta
    if not 0.0 <= b < math.inf:
        raise InvalidInputError(f"beta must be finite and not negative, got {b}")
    edges = load_edge_list(lib.conn)
    queries = recorded_queries(lib)
    notes: list[str] = []
    if strategy == "weight":
        mask = weight_candidates(lib, edges)
    else:
        if not queries:
            raise InvalidInputError(f"strategy {strategy} needs recorded queries and there are none")
        mask = np.ones(len(edges), dtype=bool)
    order = prune_order(edges, strategy, queries=queries, seed=seed, mode=mode, beta=b)
    order = order[mask[order]]
    if not queries:
        notes.append("no recorded queries: only weak, dormant, never-activated edges are pruned, unchecked")
        limit = int(math.floor(max_fraction * len(edges)))
        chosen = order[:limit]
        q_before = q_after = None
    else:
        result = greedy_prune(edges, order, queries, epsilon=eps, max_fraction=max_fraction, mode=mode, beta=b)
        chosen, q_before, q_after = result.pruned, result.quality_before, result.quality_after
    ids = tuple(int(edges.edge_id[i]) for i in chosen)
    run = None
    if apply and ids:
        run = _apply(lib, ids, strategy, q_before, q_after)
    return SparsifyReport(run, strategy, apply, len(edges), int(len(order)), len(queries), ids, q_before, q_after,
                          eps, tuple(notes))


def _apply(lib: Context, ids: tuple[int, ...], strategy: str, q_before: float | None,
           q_after: float | None) -> str:
    now = lib.now()
    with transaction(lib.conn):
        n = lib.conn.execute("SELECT count(DISTINCT run) FROM edge_prunes").fetchone()[0]
        run = f"prune-{n + 1}"
        rows = []
        for edge_id in ids:
            row = lib.conn.execute("SELECT * FROM edges WHERE id = ? AND pruned_at IS NULL", (edge_id,)).fetchone()
            if row is None:
                continue
            snapshot = json.dumps(dict(zip(row.keys(), tuple(row), strict=True)), sort_keys=True)
            rows.append((run, edge_id, strategy, snapshot, q_before, q_after, now))
        lib.conn.executemany(
            "INSERT INTO edge_prunes (run, edge_id, strategy, snapshot, quality_before, quality_after, pruned_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        lib.conn.executemany("UPDATE edges SET pruned_at = ? WHERE id = ?", [(now, r[1]) for r in rows])
    return run


def pruned(lib: Context, *, run: str | None = None) -> list[dict[str, Any]]:
    """Open prune records (not restored, not purged), oldest first."""
    sql = ("SELECT p.id, p.run, p.edge_id, p.strategy, p.pruned_at, e.src_kind, e.src_id, e.relation, e.dst_kind, "
           "e.dst_id, e.strength FROM edge_prunes p JOIN edges e ON e.id = p.edge_id "
           "WHERE p.restored_at IS NULL AND p.purged_at IS NULL AND e.pruned_at IS NOT NULL")
    params: list[Any] = []
    if run is not None:
        sql += " AND p.run = ?"
        params.append(run)
    sql += " ORDER BY p.pruned_at, p.id"
    return [
        {"record": r[0], "run": r[1], "edge_id": r[2], "strategy": r[3], "pruned_at": r[4],
         "src": f"{r[5]}:{r[6]}", "relation": r[7], "dst": f"{r[8]}:{r[9]}", "strength": r[10]}
        for r in lib.conn.execute(sql, params)
    ]


def restore(lib: Context, *, run: str | None = None, edge_ids: Sequence[int] = ()) -> list[int]:
    """Bring pruned edges back (a whole run, or single edges). Returns the restored edge ids."""
    if run is None and not edge_ids:
        raise InvalidInputError("say what to restore: a run or edge ids")
    with transaction(lib.conn):
        sql = ("SELECT p.id, p.edge_id FROM edge_prunes p JOIN edges e ON e.id = p.edge_id "
               "WHERE p.restored_at IS NULL AND p.purged_at IS NULL AND e.pruned_at IS NOT NULL")
        params: list[Any] = []
        if run is not None:
            sql += " AND p.run = ?"
            params.append(run)
        if edge_ids:
            sql += f" AND p.edge_id IN ({','.join('?' * len(edge_ids))})"
            params += [int(e) for e in edge_ids]
        rows = lib.conn.execute(sql + " ORDER BY p.id", params).fetchall()
        if not rows:
            what = f"run {run}" if run is not None else "edge(s) " + ", ".join(map(str, edge_ids))
            raise NotFoundError(f"nothing pruned to restore for {what}")
        now = lib.now()
        lib.conn.executemany("UPDATE edge_prunes SET restored_at = ? WHERE id = ?", [(now, r[0]) for r in rows])
        lib.conn.executemany("UPDATE edges SET pruned_at = NULL WHERE id = ?", [(r[1],) for r in rows])
    return sorted({int(r[1]) for r in rows})


def purge(lib: Context, *, older_than_s: float) -> int:
    """Delete edges pruned more than ``older_than_s`` seconds ago; their prune records stay (snapshots)."""
    if not 0.0 <= older_than_s < math.inf:
        raise InvalidInputError(f"older-than must be a finite number of seconds, not negative, got {older_than_s}")
    cutoff = lib.now() - older_than_s
    with transaction(lib.conn):
        ids = [r[0] for r in lib.conn.execute(
            "SELECT id FROM edges WHERE pruned_at IS NOT NULL AND pruned_at <= ? ORDER BY id", (cutoff,))]
        now = lib.now()
        lib.conn.executemany(
            "UPDATE edge_prunes SET purged_at = ? WHERE edge_id = ? AND restored_at IS NULL AND purged_at IS NULL",
            [(now, i) for i in ids])
        lib.conn.executemany("DELETE FROM edges WHERE id = ?", [(i,) for i in ids])
    return len(ids)
