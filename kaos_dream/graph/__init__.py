"""The typed causal graph: edges, spreading activation, online learning, sparsification.

Library entry points (``lib.graph`` is a :class:`Graph`):

* edges: ``lib.graph.link / unlink / get / neighbours / preventers / add_evidence / record_activation``;
  ``lib.graph.arrays()`` is the live graph as CSR arrays, cached until the file changes
* activation: :func:`activate`, :func:`spread` (pure, on :class:`GraphArrays`), :func:`describe`
* search: :func:`expand`, :func:`search_expanded`
* learning: :func:`observe`, :func:`neglect`
* sparsification: :func:`sparsify`, :func:`restore`, :func:`purge`, :func:`pruned`, :func:`record_query`

Names are imported lazily so that opening a library (which needs only :class:`Graph`) does not pay
for importing numpy on every CLI call.
"""

from __future__ import annotations

from ..lazy import lazy_attributes

_EXPORTS: dict[str, str] = {
    "MODES": "activation",
    "Activation": "activation",
    "Step": "activation",
    "gate": "activation",
    "spread": "activation",
    "EdgeList": "arrays",
    "GraphArrays": "arrays",
    "edge_list": "arrays",
    "load_edge_list": "arrays",
    "EVIDENCE_SHAPES": "edges",
    "Edge": "edges",
    "Graph": "edges",
    "record_episode_evidence": "episode_evidence",
    "graph_phase": "dream_phase",
    "Observation": "learning",
    "Update": "learning",
    "neglect": "learning",
    "observe": "learning",
    "KINDS": "nodes",
    "Node": "nodes",
    "NodeLabel": "nodes",
    "labels": "nodes",
    "make_node": "nodes",
    "resolve_node": "nodes",
    "split_node": "nodes",
    "EvalQuery": "objective",
    "quality": "objective",
    "RELATIONS": "relations",
    "Activated": "retrieval",
    "ExpandedHit": "retrieval",
    "activate": "retrieval",
    "describe": "retrieval",
    "expand": "retrieval",
    "search_expanded": "retrieval",
    "seeds_from_hits": "retrieval",
    "seeds_from_query": "retrieval",
    "STRATEGIES": "pruning",
    "SparsifyReport": "pruning",
    "greedy_prune": "pruning",
    "prune_order": "pruning",
    "pruned": "pruning",
    "purge": "pruning",
    "record_query": "pruning",
    "recorded_queries": "pruning",
    "restore": "pruning",
    "sparsify": "pruning",
}

__all__ = sorted(_EXPORTS)


__getattr__ = lazy_attributes(__name__, _EXPORTS, globals())
