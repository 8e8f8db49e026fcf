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


_KIND_CODE = "CASE {col} WHEN 'skill' THEN 0 WHEN 'memory' THEN 1 ELSE 2 END"
_NODE_KINDS = ("skill", "memory", "failure")


def load_edge_list(conn: sqlite3.Connection, *, include_pruned: bool = False) -> EdgeList:
    """Live edges of a library (pruned ones excluded), nodes in ``(kind, id)`` order.

    Kinds and relations are coded in SQL and nodes numbered with ``np.unique``, so loading costs
    one pass over the rows rather than a Python object per endpoint."""
    rel_case = "CASE relation " + " ".join(f"WHEN '{r}' THEN {i}" for i, r in enumerate(RELATIONS)) + " END"
    sql = (f"SELECT id, {_KIND_CODE.format(col='src_kind')}, src_id, {_KIND_CODE.format(col='dst_kind')}, dst_id, "
           f"{rel_case}, strength FROM edges")
    if not include_pruned:
        sql += " WHERE pruned_at IS NULL"
    sql += " ORDER BY id"
    cursor = conn.cursor()
    cursor.row_factory = None  # plain tuples: sqlite3.Row objects cost more than the query
    rows = cursor.execute(sql).fetchall()
    if not rows:
        empty = np.zeros(0, dtype=np.int64)
        return EdgeList((), empty, empty, np.zeros(0, dtype=np.int8), np.zeros(0), empty)
    table = np.array(rows, dtype=np.float64)
    ids = table[:, 0].astype(np.int64)
    shift = np.int64(1) << np.int64(40)  # node code = kind * 2^40 + id: sorts by (kind, id)
    src_code = table[:, 1].astype(np.int64) * shift + table[:, 2].astype(np.int64)
    dst_code = table[:, 3].astype(np.int64) * shift + table[:, 4].astype(np.int64)
    codes, inverse = np.unique(np.concatenate([src_code, dst_code]), return_inverse=True)
    m = len(rows)
    keys = tuple(Node(_NODE_KINDS[int(c >> 40)], int(c & (shift - 1))) for c in codes)
    return EdgeList(keys, inverse[:m].astype(np.int64), inverse[m:].astype(np.int64),
                    table[:, 5].astype(np.int8), table[:, 6].copy(), ids)


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
