"""The typed causal graph: edges, spreading activation, online learning, sparsification.

Library entry points (``lib.graph`` is a :class:`Graph`):

* edges: ``lib.graph.link / unlink / get / neighbours / preventers / add_evidence / record_activation``
* activation: :func:`activate`, :func:`spread` (pure, on :class:`GraphArrays`), :func:`describe`
* search: :func:`expand`, :func:`search_expanded`
* learning: :func:`observe`, :func:`neglect`
* sparsification: :func:`sparsify`, :func:`restore`, :func:`purge`, :func:`pruned`, :func:`record_query`
"""

from .activation import MODES, Activation, Step, gate, spread
from .arrays import EdgeList, GraphArrays, edge_list, load_edge_list
from .edges import EVIDENCE_SHAPES, Edge, Graph
from .learning import Observation, Update, neglect, observe
from .nodes import KINDS, Node, NodeLabel, labels, make_node, resolve_node, split_node
from .quality import EvalQuery, quality
from .relations import RELATIONS
from .retrieval import (
    Activated,
    ExpandedHit,
    activate,
    describe,
    expand,
    search_expanded,
    seeds_from_hits,
    seeds_from_query,
)
from .sparsify import (
    STRATEGIES,
    SparsifyReport,
    greedy_prune,
    prune_order,
    pruned,
    purge,
    record_query,
    recorded_queries,
    restore,
    sparsify,
)

__all__ = [
    "MODES", "Activation", "Step", "gate", "spread",
    "EdgeList", "GraphArrays", "edge_list", "load_edge_list",
    "EVIDENCE_SHAPES", "Edge", "Graph",
    "Observation", "Update", "neglect", "observe",
    "KINDS", "Node", "NodeLabel", "labels", "make_node", "resolve_node", "split_node",
    "EvalQuery", "quality", "RELATIONS",
    "Activated", "ExpandedHit", "activate", "describe", "expand", "search_expanded", "seeds_from_hits",
    "seeds_from_query",
    "STRATEGIES", "SparsifyReport", "greedy_prune", "prune_order", "pruned", "purge", "record_query",
    "recorded_queries", "restore", "sparsify",
]
