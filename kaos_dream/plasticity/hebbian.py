"""Hebbian rules applied at episode end: co-activation pairs and long-term potentiation (LTP).

Nodes are ``(kind, id)``; a pair is stored once in canonical order (the smaller ``(kind, id)``
first), so ``co_occurs_with`` is undirected without duplicate rows. Emergent edges and decay (LTD)
are the dream's job, not this module's.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

Node = tuple[str, int]
Pair = tuple[Node, Node, float]  # (a, b, weight) with a < b

SAME_KIND_WEIGHT = 1.0
CROSS_MODAL_WEIGHT = 0.5


def ltp(strength: float, eta: float = 0.1) -> float:
    """Asymptotic strengthening ``s + eta * (1 - s)``: never exceeds 1, big steps when weak."""
    return strength + eta * (1.0 - strength)


def canonical(a: Node, b: Node) -> tuple[Node, Node]:
    return (a, b) if a <= b else (b, a)


def coactivation_pairs(skills: Sequence[int], memories: Sequence[int]) -> list[Pair]:
    """Every pair of distinct skills, of distinct memories (weight 1) and skill x memory (weight 0.5),
    in canonical order and sorted, so the batch written is deterministic."""
    nodes_s = sorted({("skill", int(i)) for i in skills})
    nodes_m = sorted({("memory", int(i)) for i in memories})
    pairs: list[Pair] = []
    for group in (nodes_s, nodes_m):
        pairs.extend((a, b, SAME_KIND_WEIGHT) for a, b in combinations(group, 2))
    for s in nodes_s:
        for m in nodes_m:
            a, b = canonical(s, m)
            pairs.append((a, b, CROSS_MODAL_WEIGHT))
    pairs.sort()
    return pairs
