"""The graph as numpy CSR arrays, ready for spreading activation.

Every stored edge becomes two arcs: forward (src -> dst) with the relation's coefficient, and
backward (dst -> src) with the backward coefficient times the reverse factor (undirected
``co_occurs_with`` edges get full strength both ways). Arcs are sorted by source so one hop is a
gather over the frontier's CSR rows plus one ``bincount``: no Python loop over edges.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .nodes import Node
from .relations import BACKWARD_COEFF, FORWARD_COEFF, RELATIONS, REVERSE_FACTOR, UNDIRECTED

REL_CODE = {r: i for i, r in enumerate(RELATIONS)}
_FWD = np.array([FORWARD_COEFF[r] for r in RELATIONS])
_BWD = np.array([BACKWARD_COEFF[r] * (1.0 if r in UNDIRECTED else REVERSE_FACTOR) for r in RELATIONS])


@dataclass(frozen=True)
class EdgeList:
    """Edges as parallel arrays over node indices (the input of :func:`build`, and what
    sparsification subsets)."""

    keys: tuple[Hashable, ...]  # node key per index (Node for a library graph)
    src: np.ndarray  # int64 node index
    dst: np.ndarray  # int64 node index
    rel: np.ndarray  # int8 relation code (index into RELATIONS)
    strength: np.ndarray  # float64
    edge_id: np.ndarray  # int64 (row id in the edges table, or position)

    def __len__(self) -> int:
        return int(self.src.shape[0])

    @cached_property
    def index(self) -> dict[Hashable, int]:
        return {k: i for i, k in enumerate(self.keys)}

    def subset(self, keep: np.ndarray) -> EdgeList:
        return EdgeList(self.keys, self.src[keep], self.dst[keep], self.rel[keep], self.strength[keep],
                        self.edge_id[keep])

    def with_strength(self, strength: np.ndarray) -> EdgeList:
        return EdgeList(self.keys, self.src, self.dst, self.rel, np.asarray(strength, dtype=np.float64),
                        self.edge_id)


def edge_list(
    keys: Sequence[Hashable],
    edges: Sequence[tuple[Hashable, str, Hashable, float]],
    edge_ids: Sequence[int] | None = None,
) -> EdgeList:
    """Build an :class:`EdgeList` from ``(src_key, relation, dst_key, strength)`` tuples."""
    index = {k: i for i, k in enumerate(keys)}
    src = np.fromiter((index[e[0]] for e in edges), dtype=np.int64, count=len(edges))
    dst = np.fromiter((index[e[2]] for e in edges), dtype=np.int64, count=len(edges))
    rel = np.fromiter((REL_CODE[e[1]] for e in edges), dtype=np.int8, count=len(edges))
    strength = np.fromiter((e[3] for e in edges), dtype=np.float64, count=len(edges))
    ids = np.arange(len(edges), dtype=np.int64) if edge_ids is None else np.asarray(edge_ids, dtype=np.int64)
    return EdgeList(tuple(keys), src, dst, rel, strength, ids)


def load_edge_list(conn: sqlite3.Connection, *, include_pruned: bool = False) -> EdgeList:
    """Live edges of a library (pruned ones excluded), nodes in ``(kind, id)`` order."""
    sql = "SELECT id, src_kind, src_id, dst_kind, dst_id, relation, strength FROM edges"
    if not include_pruned:
        sql += " WHERE pruned_at IS NULL"
    sql += " ORDER BY id"
    rows = conn.execute(sql).fetchall()
    keys = sorted({Node(r[1], r[2]) for r in rows} | {Node(r[3], r[4]) for r in rows})
    return edge_list(keys, [(Node(r[1], r[2]), r[5], Node(r[3], r[4]), r[6]) for r in rows], [r[0] for r in rows])


@dataclass(frozen=True)
class GraphArrays:
    """CSR form of an :class:`EdgeList`."""

    edges: EdgeList
    indptr: np.ndarray  # int64, n + 1
    arc_dst: np.ndarray  # int64
    arc_val: np.ndarray  # float64: coefficient x strength (negative = inhibitory)
    arc_edge: np.ndarray  # int64 position in `edges`
    arc_forward: np.ndarray  # bool
    in_degree: np.ndarray  # float64: stored edges pointing into each node (undirected count both ends)

    @property
    def keys(self) -> tuple[Hashable, ...]:
        return self.edges.keys

    @property
    def n(self) -> int:
        return len(self.edges.keys)

    @classmethod
    def build(cls, edges: EdgeList) -> GraphArrays:
        n = len(edges.keys)
        m = len(edges)
        pos = np.arange(m, dtype=np.int64)
        undirected = np.isin(edges.rel, [REL_CODE[r] for r in UNDIRECTED])
        src = np.concatenate([edges.src, edges.dst])
        dst = np.concatenate([edges.dst, edges.src])
        val = np.concatenate([_FWD[edges.rel] * edges.strength, _BWD[edges.rel] * edges.strength])
        arc_edge = np.concatenate([pos, pos])
        forward = np.concatenate([np.ones(m, dtype=bool), undirected])
        order = np.argsort(src, kind="stable")
        counts = np.bincount(src, minlength=n) if n else np.zeros(0, dtype=np.int64)
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(counts, out=indptr[1:])
        in_degree = np.bincount(dst[forward], minlength=n).astype(np.float64) if n else np.zeros(0)
        return cls(edges, indptr, dst[order], val[order], arc_edge[order], forward[order], in_degree)

    def frontier_arcs(self, front: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Arc positions leaving the ``front`` nodes, and the source node of each (vectorised)."""
        starts = self.indptr[front]
        lengths = self.indptr[front + 1] - starts
        total = int(lengths.sum())
        if total == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        offsets = np.cumsum(lengths) - lengths
        arcs = np.repeat(starts - offsets, lengths) + np.arange(total, dtype=np.int64)
        return arcs, np.repeat(front, lengths)
