"""Activation as a retrieval tool: seeding from a query or nodes, ``search --expand``, labelled paths.

These are read paths: nothing here writes (recording activations or queries is a separate, explicit
call: :meth:`Graph.record_activation`, :func:`record_query`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import InvalidInputError
from ..search import Hit
from ..store.context import Context
from .activation import DEFAULT_THRESHOLD, Activation, spread
from .arrays import GraphArrays
from .nodes import Node, labels
from .relations import DEFAULT_EXTRA, DEFAULT_SEEDS

if TYPE_CHECKING:
    from .edges import Graph


class RetrievalHost(Context, Protocol):
    """The part of the library graph retrieval uses (a Library satisfies it): its search seeds the
    activation, its graph spreads it."""

    @property
    def graph(self) -> Graph: ...

    def search(self, query: str, *, kind: str | None = None, limit: int = 10) -> list[Hit]: ...


def seeds_from_hits(hits: Sequence[Hit]) -> dict[Node, float]:
    """Lexical hits as seed weights in (0, 1]: BM25 relevance over the best hit's."""
    if not hits:
        return {}
    best = max(h.bm25 for h in hits)
    seeds: dict[Node, float] = {}
    for h in hits:
        w = h.bm25 / best if best > 0 else 1.0
        seeds[Node(h.kind, h.id)] = max(seeds.get(Node(h.kind, h.id), 0.0), max(w, 1e-6))
    return seeds


def seeds_from_query(lib: RetrievalHost, query: str, *, limit: int = DEFAULT_SEEDS) -> dict[Node, float]:
    return seeds_from_hits(lib.search(query, limit=limit))


def activate(
    lib: RetrievalHost,
    seeds: Mapping[Node, float],
    *,
    mode: str = "gated",
    beta: float | None = None,
    graph: GraphArrays | None = None,
) -> Activation:
    """Spread from ``seeds`` over the live graph (cached per library until the file changes)."""
    g = graph or lib.graph.arrays()
    b = lib.settings.graph_beta if beta is None else beta
    return spread(g, seeds, mode=mode, beta=b)


@dataclass(frozen=True)
class Activated:
    node: Node
    label: str
    score: float
    seed: bool
    hop: int
    path: tuple[dict[str, Any], ...]

    def to_dict(self) -> dict[str, Any]:
        return {"node": str(self.node), "label": self.label, "score": self.score, "seed": self.seed,
                "hop": self.hop, "path": list(self.path)}


def describe(lib: RetrievalHost, act: Activation, seeds: Mapping[Node, float], *, top: int = 10,
             threshold: float = DEFAULT_THRESHOLD) -> list[Activated]:
    """The ``top`` activated nodes with labels and the path that first reached each."""
    if top < 0:
        raise InvalidInputError("top must not be negative")
    ranked = act.ranked(threshold)[:top]
    paths = {key: act.path(key) for key, _ in ranked}
    names = labels(lib.conn, {k for k, _ in ranked} | {s.frm for p in paths.values() for s in p})
    out: list[Activated] = []
    index = act.graph.edges.index
    for key, score in ranked:
        steps = tuple(
            {"from": str(s.frm), "from_label": names[s.frm].label, "relation": s.relation,
             "direction": "forward" if s.forward else "backward", "edge_id": s.edge_id}
            for s in paths[key]
        )
        i = index.get(key)
        hop = int(act.hop[i]) if i is not None else 0
        out.append(Activated(key, names[key].label, score, key in seeds, hop, steps))
    return out


@dataclass(frozen=True)
class ExpandedHit:
    kind: str
    id: int
    name: str
    text: str
    score: float
    source: str  # "lexical" or "graph"
    activation: float
    path: tuple[dict[str, Any], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "id": self.id, "name": self.name, "text": self.text, "score": self.score,
                "source": self.source, "activation": self.activation, "path": list(self.path)}


def expand(
    lib: RetrievalHost,
    hits: Sequence[Hit],
    *,
    extra: int = DEFAULT_EXTRA,
    mode: str = "gated",
    beta: float | None = None,
    kinds: Sequence[str] = ("skill", "memory"),
    min_activation: float = DEFAULT_THRESHOLD,
) -> list[ExpandedHit]:
    """The lexical hits, unchanged and in order, followed by at most ``extra`` items that activation
    reaches from them (skills/memories only, deprecated skills never). A lexical hit is never evicted
    or reordered; an added item carries the path that reached it."""
    if extra < 0:
        raise InvalidInputError("extra must not be negative")
    seeds = seeds_from_hits(hits)
    if not seeds or extra == 0:
        return [ExpandedHit(h.kind, h.id, h.name, h.text, h.score, "lexical", 0.0) for h in hits]
    act = activate(lib, seeds, mode=mode, beta=beta)
    out = [ExpandedHit(h.kind, h.id, h.name, h.text, h.score, "lexical", act.value(Node(h.kind, h.id)))
           for h in hits]
    candidates = [(k, s) for k, s in act.ranked(min_activation) if k not in seeds and k.kind in kinds]
    if not candidates:
        return out
    names = labels(lib.conn, {k for k, _ in candidates})
    added = 0
    for key, score in candidates:
        label = names[key]
        if label.deprecated or label.label.startswith("(missing)"):
            continue
        steps = tuple({"from": str(s.frm), "relation": s.relation,
                       "direction": "forward" if s.forward else "backward", "edge_id": s.edge_id}
                      for s in act.path(key))
        out.append(ExpandedHit(key.kind, key.id, label.label, label.text[:160], score, "graph", score, steps))
        added += 1
        if added >= extra:
            break
    return out


def search_expanded(
    lib: RetrievalHost,
    query: str,
    *,
    kind: str | None = None,
    limit: int = 10,
    extra: int = DEFAULT_EXTRA,
    mode: str = "gated",
    beta: float | None = None,
) -> list[ExpandedHit]:
    """``lib.search`` then :func:`expand`: what ``kaos search --expand`` returns."""
    hits = lib.search(query, kind=kind, limit=limit)
    kinds = ("skill", "memory") if kind is None else (kind,)
    return expand(lib, hits, extra=extra, mode=mode, beta=beta, kinds=kinds)
