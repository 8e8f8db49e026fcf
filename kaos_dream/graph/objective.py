"""Retrieval quality of a graph on a set of queries: the objective sparsification must preserve.

A query is a set of seed nodes and, when known, the node that was the right answer. Quality is the
mean over queries of: 1 if the target is in the top ``k`` activated nodes (queries with a target),
or the fraction of the full graph's top ``k`` still in the top ``k`` (queries without one, judged
against ``reference`` — the answers the unpruned graph gave).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

from .activation import DEFAULT_BETA, spread
from .arrays import EdgeList, GraphArrays


@dataclass(frozen=True)
class EvalQuery:
    seeds: Mapping[Hashable, float]
    target: Hashable | None = None


def top_keys(graph: GraphArrays, query: EvalQuery, *, mode: str, beta: float, k: int,
             exclude_seeds: bool = False) -> list[Hashable]:
    act = spread(graph, query.seeds, mode=mode, beta=beta, paths=False)
    ranked = act.ranked()
    if exclude_seeds:
        ranked = [kv for kv in ranked if kv[0] not in query.seeds]
    return [key for key, _ in ranked[:k]]


def reference_answers(edges: EdgeList, queries: Sequence[EvalQuery], *, mode: str = "gated",
                      beta: float = DEFAULT_BETA, k: int = 3) -> list[list[Hashable]]:
    graph = GraphArrays.build(edges)
    return [top_keys(graph, q, mode=mode, beta=beta, k=k) for q in queries]


def quality(
    edges: EdgeList,
    queries: Sequence[EvalQuery],
    *,
    reference: Sequence[Sequence[Hashable]] | None = None,
    mode: str = "gated",
    beta: float = DEFAULT_BETA,
    k: int = 3,
) -> float:
    """Mean hit@k (targets) / top-k agreement with ``reference`` (no target); 1.0 with no queries."""
    if not queries:
        return 1.0
    graph = GraphArrays.build(edges)
    total = 0.0
    for i, q in enumerate(queries):
        top = top_keys(graph, q, mode=mode, beta=beta, k=k)
        if q.target is not None:
            total += 1.0 if q.target in top else 0.0
        else:
            ref = list(reference[i]) if reference is not None else []
            total += (len(set(ref) & set(top)) / len(ref)) if ref else 1.0
    return total / len(queries)
