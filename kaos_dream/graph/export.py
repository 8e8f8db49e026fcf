"""The live graph (or the part around a node) as plain data, DOT, GraphML or JSON, read-only.

DOT and GraphML are written here rather than through networkx: networkx writes DOT only through
pydot or pygraphviz (two more dependencies, one of them a C build), and its GraphML writer would
pull networkx into the core install for what is ~40 lines of ElementTree. The tests parse both
outputs with the reference readers (`dot -Tsvg`, ``networkx.read_graphml``).
"""

from __future__ import annotations

import json
import re
import sqlite3
import xml.etree.ElementTree as ET
from collections import deque
from dataclasses import dataclass

from ..errors import InvalidInputError
from .nodes import Node, labels

FORMATS = ("dot", "graphml", "json")
MAX_DEPTH = 10
# XML 1.0 forbids most of these code points outright (even escaped); the rest (DEL, C1) are terminal
# controls. No label needs any of them, and an export printed to a terminal must not carry escapes.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")


@dataclass(frozen=True)
class GraphNode:
    node: Node
    label: str
    use: int  # skill outcomes, memory search hits or failure occurrences
    deprecated: bool = False

    def to_dict(self) -> dict[str, object]:
        return {"id": str(self.node), "kind": self.node.kind, "ref": self.node.id, "label": self.label,
                "use": self.use, "deprecated": self.deprecated}


@dataclass(frozen=True)
class GraphEdge:
    id: int
    src: Node
    relation: str
    dst: Node
    strength: float
    provenance: str

    def to_dict(self) -> dict[str, object]:
        return {"id": self.id, "src": str(self.src), "relation": self.relation, "dst": str(self.dst),
                "strength": self.strength, "provenance": self.provenance}


@dataclass(frozen=True)
class GraphData:
    nodes: list[GraphNode]
    edges: list[GraphEdge]

    def to_dict(self) -> dict[str, object]:
        return {"nodes": [n.to_dict() for n in self.nodes], "edges": [e.to_dict() for e in self.edges]}


def live_edges(conn: sqlite3.Connection) -> list[GraphEdge]:
    rows = conn.execute(
        "SELECT id, src_kind, src_id, relation, dst_kind, dst_id, strength, provenance FROM edges"
        " WHERE pruned_at IS NULL ORDER BY id"
    )
    return [GraphEdge(r[0], Node(r[1], r[2]), r[3], Node(r[4], r[5]), float(r[6]), r[7]) for r in rows]


def node_uses(conn: sqlite3.Connection) -> dict[Node, int]:
    """How much each node has been used: the size of its dot in a picture, its ``use`` in an export."""
    uses: dict[Node, int] = {}
    for sql, kind in (
        ("SELECT skill_id, uses FROM skill_stats", "skill"),
        ("SELECT memory_id, count(*) FROM memory_hits GROUP BY memory_id", "memory"),
        ("SELECT id, occurrences FROM failure_fingerprints", "failure"),
    ):
        for ref, n in conn.execute(sql):
            uses[Node(kind, int(ref))] = int(n or 0)
    return uses


def neighbourhood(edges: list[GraphEdge], seeds: list[Node], depth: int, limit: int | None = None) -> list[Node]:
    """Nodes within ``depth`` hops of the seeds (edges in either direction), nearest first; strongest
    edge first within a hop, ties by node. With ``limit``, stop once that many nodes are in."""
    adjacent: dict[Node, list[tuple[float, Node]]] = {}
    for e in edges:
        adjacent.setdefault(e.src, []).append((e.strength, e.dst))
        adjacent.setdefault(e.dst, []).append((e.strength, e.src))
    seen: dict[Node, int] = {}
    queue: deque[tuple[Node, int]] = deque()
    for seed in seeds:
        if seed not in seen and (limit is None or len(seen) < limit):
            seen[seed] = 0
            queue.append((seed, 0))
    while queue:
        node, hop = queue.popleft()
        if hop >= depth:
            continue
        for _strength, other in sorted(adjacent.get(node, []), key=lambda p: (-p[0], p[1])):
            if other in seen:
                continue
            if limit is not None and len(seen) >= limit:
                return list(seen)
            seen[other] = hop + 1
            queue.append((other, hop + 1))
    return list(seen)


def graph_data(conn: sqlite3.Connection, around: Node | None = None, depth: int = 2,
               limit: int | None = None) -> GraphData:
    """The whole live graph (every node that has an edge), or the nodes within ``depth`` of ``around``."""
    if not 0 <= depth <= MAX_DEPTH:
        raise InvalidInputError(f"--depth must be between 0 and {MAX_DEPTH}, got {depth}")
    edges = live_edges(conn)
    if around is None:
        keep: list[Node] = sorted({e.src for e in edges} | {e.dst for e in edges})
        if limit is not None:
            keep = keep[:limit]
    else:
        keep = sorted(neighbourhood(edges, [around], depth, limit))
    return assemble(conn, keep, edges)


def assemble(conn: sqlite3.Connection, keep: list[Node], edges: list[GraphEdge]) -> GraphData:
    """Label the chosen nodes and keep the edges between them."""
    chosen = set(keep)
    found = labels(conn, chosen)
    names = {n: v.label for n, v in found.items()} | failure_labels(conn, [n.id for n in keep if n.kind == "failure"])
    uses = node_uses(conn)
    nodes = [GraphNode(n, clean(names[n]), uses.get(n, 0), found[n].deprecated) for n in keep]
    return GraphData(nodes, [e for e in edges if e.src in chosen and e.dst in chosen])


def failure_labels(conn: sqlite3.Connection, ids: list[int]) -> dict[Node, str]:
    """``failure 3: postgres (infra)``: a bare id says nothing in a picture or in Gephi."""
    out: dict[Node, str] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        for fp_id, tool, category in conn.execute(
            f"SELECT id, tool, category FROM failure_fingerprints WHERE id IN ({marks})", chunk
        ):
            out[Node("failure", fp_id)] = f"failure {fp_id}: {tool} ({category})"
    return out


def clean(text: str) -> str:
    """Text with the code points XML cannot carry replaced (U+FFFD), so every writer stays parseable."""
    return _NOT_XML.sub("\ufffd", text)


def _dot_quote(text: str) -> str:
    escaped = clean(text).replace("\\", "\\\\").replace('"', '\\"').replace("\r", "").replace("\n", "\\n")
    return f'"{escaped}"'


# How each kind of node and relation is drawn: a reader tells skills, memories and failures apart by
# shape, strong edges by pen width, and only the causal relations carry a label (co-use is the bulk of
# most graphs and says nothing more in words than its dashed grey line).
_DOT_NODE = {
    "skill": {"shape": "box", "style": "rounded,filled", "fillcolor": "#e8f0fe"},
    "memory": {"shape": "note", "style": "filled", "fillcolor": "#fff8e1"},
    "failure": {"shape": "octagon", "style": "filled", "fillcolor": "#fde8e8"},
}
_DOT_EDGE = {
    "co_occurs_with": {"style": "dashed", "color": "#888888"},
    "caused": {"color": "#c62828", "label": "caused"},
    "prevented": {"color": "#2e7d32", "label": "prevented"},
    "enabled": {"color": "#1565c0", "label": "enabled"},
    "fact": {"style": "dotted", "color": "#555555"},
    "meta": {"style": "dotted", "color": "#555555"},
}


def to_dot(data: GraphData) -> str:
    """Graphviz DOT: one quoted id per node (``skill:12``), label and attributes quoted and escaped;
    a shape per kind, symmetric relations undirected (``dir=none``), pen width by strength, labels on
    the causal relations only (every edge keeps its ``relation`` attribute and a tooltip)."""
    from .relations import UNDIRECTED

    lines = ["digraph kaos {", "  graph [rankdir=LR, overlap=false, splines=true, fontname=Helvetica];",
             "  node [fontname=Helvetica, fontsize=10];", "  edge [fontname=Helvetica, fontsize=8, arrowsize=0.7];"]
    for n in data.nodes:
        attrs = {"label": n.label, "kind": n.node.kind, "use": str(n.use), **_DOT_NODE.get(n.node.kind, {})}
        lines.append(f"  {_dot_quote(str(n.node))} [" + ", ".join(f"{k}={_dot_quote(v)}" for k, v in attrs.items())
                     + "];")
    for e in data.edges:
        attrs = {"relation": e.relation, "weight": f"{e.strength:.4f}", "penwidth": f"{0.5 + 3.5 * e.strength:.2f}",
                 "provenance": e.provenance, "id": f"e{e.id}", "tooltip": f"{e.relation} {e.strength:.2f}",
                 **_DOT_EDGE.get(e.relation, {})}
        if e.relation in UNDIRECTED:
            attrs["dir"] = "none"
        lines.append(f"  {_dot_quote(str(e.src))} -> {_dot_quote(str(e.dst))} ["
                     + ", ".join(f"{k}={_dot_quote(v)}" for k, v in attrs.items()) + "];")
    lines.append("}")
    return "\n".join(lines) + "\n"


_GRAPHML_KEYS = (
    ("label", "node", "string"), ("kind", "node", "string"), ("use", "node", "int"),
    ("relation", "edge", "string"), ("strength", "edge", "double"), ("provenance", "edge", "string"),
)


def to_graphml(data: GraphData) -> str:
    """GraphML 1.0 (what Gephi, yEd and networkx read): typed keys, one ``<data>`` per attribute."""
    root = ET.Element("graphml", {"xmlns": "http://graphml.graphdrawing.org/xmlns"})
    for name, domain, kind in _GRAPHML_KEYS:
        ET.SubElement(root, "key", {"id": name, "for": domain, "attr.name": name, "attr.type": kind})
    graph = ET.SubElement(root, "graph", {"id": "kaos", "edgedefault": "directed"})
    for n in data.nodes:
        el = ET.SubElement(graph, "node", {"id": str(n.node)})
        for key, value in (("label", n.label), ("kind", n.node.kind), ("use", str(n.use))):
            ET.SubElement(el, "data", {"key": key}).text = value
    for e in data.edges:
        el = ET.SubElement(graph, "edge", {"id": f"e{e.id}", "source": str(e.src), "target": str(e.dst)})
        for key, value in (("relation", e.relation), ("strength", repr(e.strength)), ("provenance", e.provenance)):
            ET.SubElement(el, "data", {"key": key}).text = value
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def to_json(data: GraphData) -> str:
    return json.dumps(data.to_dict(), ensure_ascii=False, indent=2) + "\n"


def render(data: GraphData, fmt: str) -> str:
    writers = {"dot": to_dot, "graphml": to_graphml, "json": to_json}
    if fmt not in writers:
        raise InvalidInputError(f"unknown format {fmt!r}: use {', '.join(FORMATS)}")
    return writers[fmt](data)
