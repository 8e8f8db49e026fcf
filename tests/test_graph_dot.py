"""DOT export drawn for people: shapes per kind, symmetric relations undirected, labels where they help."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from kaos_dream.graph.export import GraphData, GraphEdge, GraphNode, to_dot
from kaos_dream.graph.nodes import Node

DOT = shutil.which("dot")

SKILL, OTHER, MEMORY, FAILURE = Node("skill", 1), Node("skill", 2), Node("memory", 3), Node("failure", 4)
DATA = GraphData(
    [GraphNode(SKILL, "deploy-friday", 5), GraphNode(OTHER, "warm-cache", 2), GraphNode(MEMORY, "tls-notes", 1),
     GraphNode(FAILURE, "failure 4", 3)],
    [GraphEdge(1, SKILL, "co_occurs_with", OTHER, 0.5, "emergent"),
     GraphEdge(2, SKILL, "caused", FAILURE, 0.9, "observed"),
     GraphEdge(3, MEMORY, "enabled", SKILL, 0.2, "declared")],
)


def edge_line(text: str, edge_id: int) -> str:
    return next(line for line in text.splitlines() if f'id="e{edge_id}"' in line)


def test_shapes_directions_widths_and_labels() -> None:
    text = to_dot(DATA)
    shapes = dict(re.findall(r'^  "(\w+):\d+" \[.*?shape="(\w+)"', text, re.M))
    assert shapes == {"skill": "box", "memory": "note", "failure": "octagon"}
    co_use, caused = edge_line(text, 1), edge_line(text, 2)
    assert 'dir="none"' in co_use and "label=" not in co_use  # symmetric, unlabelled
    assert 'dir="none"' not in caused and 'label="caused"' in caused
    assert 'penwidth="3.65"' in caused and 'penwidth="1.20"' in edge_line(text, 3)  # stronger edge, wider pen


@pytest.mark.skipif(DOT is None, reason="graphviz `dot` not installed (apt-get install graphviz)")
def test_graphviz_draws_it_that_way() -> None:
    svg = subprocess.run([DOT, "-Tsvg"], input=to_dot(DATA), capture_output=True, text=True, check=True).stdout
    parts = re.split(r'<g id="(e\d+)" class="edge">', svg)
    groups = {parts[i]: parts[i + 1].split('class="node"')[0] for i in range(1, len(parts), 2)}
    assert "<polygon" not in groups["e1"] and "<polygon" in groups["e2"]  # no arrowhead on co-use
    assert "<text" not in groups["e1"] and ">caused</text>" in groups["e2"]
    failure = re.search(r'<title>failure:4</title>\s*<polygon[^>]*points="([^"]+)"', svg)
    assert failure and len(failure.group(1).split()) == 9  # an octagon: 8 corners and the closing point
