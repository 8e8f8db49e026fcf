"""`kaos graph export`: DOT and GraphML that the reference parsers read, JSON for scripts, read-only."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
from pathlib import Path

import networkx as nx
import pytest

from kaos_dream import Library, ManualClock, Settings
from kaos_dream.graph import Node
from kaos_dream.graph.export import GraphData, GraphEdge, GraphNode, neighbourhood, to_dot, to_graphml

from .conftest import T0, file_digest, run_kaos
from .report_libraries import HOSTILE, RTL_OVERRIDE, hostile_library

DOT = shutil.which("dot")
needs_dot = pytest.mark.skipif(DOT is None, reason="graphviz `dot` not installed (apt-get install graphviz)")


@pytest.fixture
def chain_db(tmp_path: Path) -> Path:
    """a -> b -> c -> d plus e -> a, and a pruned edge d -> e."""
    path = tmp_path / "chain.db"
    with Library(path, clock=ManualClock(T0), settings=Settings()) as lib:
        ids = {n: lib.skills.add(n, f"skill {n}").id for n in "abcde"}
        for src, dst, strength in (("a", "b", 0.9), ("b", "c", 0.5), ("c", "d", 0.3), ("e", "a", 0.7)):
            lib.graph.link(Node("skill", ids[src]), "enabled", Node("skill", ids[dst]), strength=strength)
        pruned = lib.graph.link(Node("skill", ids["d"]), "caused", Node("skill", ids["e"]))
        lib.conn.execute("UPDATE edges SET pruned_at = ? WHERE id = ?", (T0, pruned.id))
        lib.record_outcome("a", True)
    return path


def export(db: Path, *args: str) -> str:
    r = run_kaos("graph", "export", *args, db=db)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_json_whole_graph_and_around(chain_db: Path) -> None:
    before = file_digest(chain_db)
    data = json.loads(export(chain_db, "--format", "json"))
    assert [n["label"] for n in data["nodes"]] == list("abcde")
    assert [(e["src"], e["dst"]) for e in data["edges"]] == [("skill:1", "skill:2"), ("skill:2", "skill:3"),
                                                             ("skill:3", "skill:4"), ("skill:5", "skill:1")]
    assert data["nodes"][0]["use"] == 1 and data["edges"][0]["strength"] == 0.9
    near = json.loads(export(chain_db, "--format", "json", "--around", "skill:b", "--depth", "1"))
    assert [n["label"] for n in near["nodes"]] == ["a", "b", "c"]
    assert json.loads(export(chain_db, "--around", "skill:b", "--depth", "0"))["edges"] == []
    three = json.loads(export(chain_db, "--around", "skill:c", "--depth", "3"))
    assert [n["label"] for n in three["nodes"]] == list("abcde")  # c - b - a - e and c - d: either direction
    assert [n["label"] for n in json.loads(export(chain_db, "--around", "skill:e", "--depth", "3"))["nodes"]] \
        == list("abce")
    assert file_digest(chain_db) == before


def test_bad_input(chain_db: Path) -> None:
    for args, code, words in ((["--format", "gexf"], 2, "gexf"), (["--around", "skill:nope"], 1, "no skill"),
                              (["--around", "skill:a", "--depth", "99"], 2, "depth"),
                              (["--around", "bogus"], 1, "KIND:REF"), (["--format", "dot", "--json"], 2, "--json")):
        r = run_kaos("graph", "export", *args, db=chain_db)
        assert r.returncode == code and words in r.stderr and r.stdout == "" and "Traceback" not in r.stderr


@needs_dot
def test_dot_parses_with_graphviz(chain_db: Path, tmp_path: Path) -> None:
    text = export(chain_db, "--format", "dot")
    svg = subprocess.run([DOT, "-Tsvg"], input=text, capture_output=True, text=True, check=True).stdout
    assert svg.count('class="node"') == 5 and svg.count('class="edge"') == 4


@needs_dot
def test_hostile_names_survive_dot_and_graphml(tmp_path: Path) -> None:
    db = tmp_path / "hostile.db"
    names = hostile_library(db)
    dot_text = export(db, "--format", "dot")
    proc = subprocess.run([DOT, "-Tsvg"], input=dot_text, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    graph = nx.read_graphml(io.BytesIO(export(db, "--format", "graphml").encode()))
    labels = {d["label"] for _, d in graph.nodes(data=True)}
    assert set(names[:3]) <= labels and RTL_OVERRIDE in labels
    assert "bell\ufffd esc\ufffd[31m red" in labels  # control characters cannot go into XML or a terminal
    data = json.loads(export(db, "--format", "json"))
    assert {n["label"] for n in data["nodes"]} == labels
    assert HOSTILE[1] in labels


def test_graphml_round_trips_through_networkx(chain_db: Path) -> None:
    graph = nx.read_graphml(io.BytesIO(export(chain_db, "--format", "graphml").encode()))
    assert isinstance(graph, nx.DiGraph)
    assert sorted(graph.nodes) == [f"skill:{i}" for i in range(1, 6)]
    assert graph.nodes["skill:1"] == {"label": "a", "kind": "skill", "use": 1}
    assert graph.edges["skill:1", "skill:2"]["strength"] == 0.9
    assert graph.edges["skill:1", "skill:2"]["relation"] == "enabled"
    assert ("skill:4", "skill:5") not in graph.edges  # pruned


def test_writers_escape_quotes_backslashes_and_newlines() -> None:
    node = GraphNode(Node("skill", 1), 'a "b" \\ c\nd', 2)
    other = GraphNode(Node("memory", 2), "x", 0)
    data = GraphData([node, other], [GraphEdge(7, node.node, "fact", other.node, 0.25, "declared")])
    dot_text = to_dot(data)
    assert '[label="a \\"b\\" \\\\ c\\nd"' in dot_text
    graph = nx.read_graphml(io.BytesIO(to_graphml(data).encode()))
    assert graph.nodes["skill:1"]["label"] == 'a "b" \\ c\nd'


def test_neighbourhood_limit_keeps_the_nearest_and_strongest() -> None:
    hub, a, b, c = (Node("skill", i) for i in range(1, 5))
    edges = [GraphEdge(1, hub, "enabled", a, 0.2, "observed"), GraphEdge(2, hub, "enabled", b, 0.9, "observed"),
             GraphEdge(3, b, "enabled", c, 0.9, "observed")]
    assert neighbourhood(edges, [hub], depth=2) == [hub, b, a, c]
    assert neighbourhood(edges, [hub], depth=2, limit=2) == [hub, b]
    assert neighbourhood(edges, [hub], depth=1) == [hub, b, a]
