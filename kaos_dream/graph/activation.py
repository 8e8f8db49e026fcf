"""Spreading activation over the typed graph in three modes (seed 003 layer 1).

For each node v the walk accumulates, over at most ``hops`` hops with decay ``d`` per hop:

* ``E(v)`` — excitation: the seed weight plus every excitatory arrival ``x(u) · coeff · w · d``;
* ``I(v)`` — inhibition: every ``prevented`` arrival ``x(u) · 0.3 · w · d``.

``additive`` (the reference): ``a(v) = E(v) − I(v)`` (``prevented`` is a −0.3 edge like any other).
``gated``: ``a(v) = E(v) · g(β · I(v))`` with ``g(x) = 2 · (1 − σ(x))``. That is the seed's
``1 − σ(β·I)`` scaled by 2 so that a node without inhibition keeps its full activation (the unscaled
gate halves every node, inhibited or not, and with a 0.1 threshold that cuts reach by a hop).
``adaptive``: as gated with ``β(v) = β₀ · log(deg⁺(v)+1) / log(mean deg⁺ + 1)``.

What a node passes on at the next hop is what arrived at this hop, gated (gated/adaptive) or net of
inhibition (additive), capped at 1; nodes below ``threshold`` do not spread. Each node remembers the
arc that first reached it (the strongest at that hop), so the path from a seed is always acyclic.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from dataclasses import dataclass

import numpy as np

from ..errors import InvalidInputError
from .arrays import GraphArrays
from .relations import RELATIONS

MODES = ("additive", "gated", "adaptive")
DEFAULT_HOPS = 5
DEFAULT_DECAY = 0.7
DEFAULT_THRESHOLD = 0.1
DEFAULT_BETA = 10.0
MAX_HOPS = 5


def gate(x: np.ndarray) -> np.ndarray:
    """``2 · (1 − σ(x))``: 1 at x = 0, falling towards 0 as inhibition grows."""
    return 2.0 / (1.0 + np.exp(np.minimum(x, 700.0)))


def node_beta(graph: GraphArrays, mode: str, beta0: float) -> np.ndarray:
    if mode == "adaptive":
        mean_deg = float(graph.in_degree.mean()) if graph.n else 0.0
        if mean_deg <= 0.0:
            return np.full(graph.n, beta0)
        return beta0 * np.log(graph.in_degree + 1.0) / np.log(mean_deg + 1.0)
    return np.full(graph.n, beta0)


@dataclass(frozen=True)
class Step:
    """One arc of a path: ``frm`` reached ``to`` through ``relation`` (``forward`` = along the edge)."""

    frm: Hashable
    relation: str
    to: Hashable
    forward: bool
    edge_id: int


@dataclass(frozen=True)
class Activation:
    graph: GraphArrays
    mode: str
    score: np.ndarray  # final activation a(v)
    excitation: np.ndarray
    inhibition: np.ndarray
    hop: np.ndarray  # hop at which a node was first reached (0 = seed, -1 = never)
    parent_arc: np.ndarray  # arc that first reached it (-1 for seeds and unreached nodes)
    extra: Mapping[Hashable, float]  # seeds that are not in the graph (no edges): score = seed weight

    def ranked(self, threshold: float = DEFAULT_THRESHOLD) -> list[tuple[Hashable, float]]:
        """Nodes with ``a(v) ≥ threshold``, best first; ties by node key (deterministic)."""
        idx = np.nonzero(self.score >= threshold)[0]
        items = [(self.graph.keys[i], float(self.score[i])) for i in idx]
        items += [(k, float(v)) for k, v in self.extra.items() if v >= threshold]
        items.sort(key=lambda kv: (-kv[1], _sort_key(kv[0])))
        return items

    def value(self, key: Hashable) -> float:
        if key in self.extra:
            return float(self.extra[key])
        i = _index(self.graph).get(key)
        return 0.0 if i is None else float(self.score[i])

    def path(self, key: Hashable) -> list[Step]:
        """Arcs from a seed to ``key`` (empty for a seed or an unreached node)."""
        index = _index(self.graph)
        i = index.get(key)
        steps: list[Step] = []
        edges = self.graph.edges
        while i is not None and self.parent_arc[i] >= 0 and len(steps) <= MAX_HOPS:
            arc = int(self.parent_arc[i])
            e = int(self.graph.arc_edge[arc])
            forward = bool(self.graph.arc_forward[arc]) and int(edges.dst[e]) == i
            frm = int(edges.src[e]) if int(edges.dst[e]) == i else int(edges.dst[e])
            steps.append(Step(self.graph.keys[frm], RELATIONS[int(edges.rel[e])], self.graph.keys[i], forward,
                              int(edges.edge_id[e])))
            i = frm
        steps.reverse()
        return steps

    def path_edge_ids(self, key: Hashable) -> list[int]:
        return [s.edge_id for s in self.path(key)]


def _index(graph: GraphArrays) -> dict[Hashable, int]:
    return graph.edges.index


def _sort_key(key: Hashable) -> tuple:
    return (type(key).__name__, tuple(key) if isinstance(key, tuple) else (key,))


def spread(
    graph: GraphArrays,
    seeds: Mapping[Hashable, float],
    *,
    mode: str = "gated",
    beta: float = DEFAULT_BETA,
    hops: int = DEFAULT_HOPS,
    decay: float = DEFAULT_DECAY,
    threshold: float = DEFAULT_THRESHOLD,
    paths: bool = True,
) -> Activation:
    """Spread activation from ``seeds`` (node key -> initial weight in (0, 1])."""
    if mode not in MODES:
        raise InvalidInputError(f"unknown activation mode {mode!r}: use {', '.join(MODES)}")
    if not 0 <= hops <= MAX_HOPS:
        raise InvalidInputError(f"hops must be between 0 and {MAX_HOPS}")
    if not 0.0 < decay <= 1.0 or not 0.0 <= threshold < math.inf or not 0.0 <= beta < math.inf:
        # nan and inf gates turn every score into nan, which silently drops nodes from the ranking.
        raise InvalidInputError(f"decay must be in (0, 1], threshold and beta finite and not negative "
                                f"(got decay={decay}, threshold={threshold}, beta={beta})")
    n = graph.n
    index = _index(graph)
    x = np.zeros(n)
    extra: dict[Hashable, float] = {}
    for key, weight in seeds.items():
        w = float(weight)
        if not w > 0.0:
            continue
        i = index.get(key)
        if i is None:
            extra[key] = max(extra.get(key, 0.0), min(w, 1.0))
        else:
            x[i] = max(x[i], min(w, 1.0))
    excitation = x.copy()
    inhibition = np.zeros(n)
    hop = np.where(x > 0.0, 0, -1)
    parent_arc = np.full(n, -1, dtype=np.int64)
    betas = node_beta(graph, mode, beta) if mode != "additive" else None
    for h in range(1, hops + 1):
        front = np.nonzero(x >= threshold)[0]
        if front.size == 0:
            break
        arcs, src = graph.frontier_arcs(front)
        if arcs.size == 0:
            break
        contrib = x[src] * graph.arc_val[arcs] * decay
        dst = graph.arc_dst[arcs]
        positive = contrib > 0.0
        e_in = np.bincount(dst[positive], weights=contrib[positive], minlength=n)
        i_in = np.bincount(dst[~positive], weights=-contrib[~positive], minlength=n)
        excitation += e_in
        inhibition += i_in
        arrived = e_in - i_in if betas is None else e_in * gate(betas * inhibition)
        if paths:
            _remember_parents(hop, parent_arc, arcs[positive], dst[positive], contrib[positive], h)
        x = np.clip(arrived, 0.0, 1.0)
    score = excitation - inhibition if betas is None else excitation * gate(betas * inhibition)
    return Activation(graph, mode, score, excitation, inhibition, hop, parent_arc, extra)


def _remember_parents(hop: np.ndarray, parent_arc: np.ndarray, arcs: np.ndarray, dst: np.ndarray,
                      contrib: np.ndarray, h: int) -> None:
    """For nodes reached for the first time at hop ``h``: the strongest arc that reached them."""
    new = hop[dst] < 0
    if not new.any():
        return
    arcs, dst, contrib = arcs[new], dst[new], contrib[new]
    order = np.lexsort((arcs, -contrib, dst))
    first = np.unique(dst[order], return_index=True)[1]
    chosen = order[first]
    parent_arc[dst[chosen]] = arcs[chosen]
    hop[dst[chosen]] = h
