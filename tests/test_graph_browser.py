"""`kaos graph export --format dot`, drawn by Graphviz and looked at in headless Chromium as a person
would: the demo's graph and a 200-node library. The SVG must load, hold one node per graph node (the
same ids as the JSON export), and no label may sit on another node's box.

Needs Debian's ``chromium`` and ``graphviz`` (``.ci/run`` installs both); skipped without them. Set
``KAOS_GRAPH_SCREENSHOTS=DIR`` to keep the screenshots (``demo.png``, ``library-200.png``).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from kaos_dream import Library, ManualClock, Settings
from kaos_dream.demo import build_demo_library
from kaos_dream.graph.nodes import Node

from .browser import Chromium, chromium_fixture, find_browser, open_report, problems
from .conftest import run_kaos

BROWSER = find_browser()
DOT = shutil.which("dot")
pytestmark = pytest.mark.skipif(BROWSER is None or DOT is None,
                                reason="chromium and graphviz's dot are needed (apt-get install chromium graphviz)")

# Every node's id (its <title>) and box, every text's owner and box, in page pixels.
LAYOUT = """
(function () {
  function box(el) { var r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; }
  var nodes = Array.from(document.querySelectorAll("svg g.node")).map(function (g) {
    var shape = g.querySelector("polygon, ellipse, path");
    return {id: g.querySelector("title").textContent, box: box(shape)};
  });
  var texts = Array.from(document.querySelectorAll("svg g.node text, svg g.edge text")).map(function (t) {
    var g = t.closest("g.node, g.edge");
    return {owner: g.classList.contains("node") ? g.querySelector("title").textContent : null,
            text: t.textContent, box: box(t)};
  });
  var page = document.querySelector("svg").getBoundingClientRect();
  return {nodes: nodes, texts: texts, width: page.width, height: page.height};
})()
"""


browser = chromium_fixture("chromium-graph-profile")


def library_200(path: Path) -> int:
    """150 skills, 40 memories and 10 failures joined by every relation the export draws; returns the
    number of nodes that have an edge (what the export shows)."""
    rng = random.Random(36)
    with Library(path, clock=ManualClock(1_700_000_000.0), settings=Settings(semantic=False)) as lib:
        skills = [Node("skill", lib.skills.add(f"skill-{i:03d}-{rng.choice(['deploy', 'csv', 'cache'])}",
                                               f"step {i}", "run", []).id) for i in range(150)]
        memories = [Node("memory", lib.memories.add(f"note {i} about the cluster", key=f"note-{i:02d}").id)
                    for i in range(40)]
        failures = [Node("failure", lib.failures.record(f"tool{i}", f"Error {i}: connection refused on port {5400 + i}",
                                                        agent=None).fingerprint_id) for i in range(10)]
        everything = skills + memories + failures
        for i, node in enumerate(everything):  # each node linked at least once: all 200 are drawn
            other = everything[(i + 1 + rng.randrange(len(everything) - 1)) % len(everything)]
            relation = rng.choice(["co_occurs_with", "co_occurs_with", "enabled", "caused", "fact"])
            lib.graph.link(node, relation, other, strength=round(rng.uniform(0.1, 1.0), 2))
    return len(everything)


def draw(db: Path, out: Path, browser: Chromium, shots: Path | None, name: str) -> tuple[dict, set[str]]:
    """Export the graph as DOT and JSON, render the SVG with Graphviz, open it in Chromium."""
    dot = run_kaos("graph", "export", "--format", "dot", db=db)
    assert dot.returncode == 0, dot.stderr
    graph = run_kaos("graph", "export", "--format", "json", db=db)
    ids = {n["id"] for n in json.loads(graph.stdout)["nodes"]}
    svg = subprocess.run([DOT, "-Tsvg"], input=dot.stdout, capture_output=True, text=True, check=True).stdout
    page_path = out / f"{name}.svg"
    page_path.write_text(svg, encoding="utf-8")
    page = open_report(browser, page_path, width=1400, height=1000)
    assert problems(page) == []
    layout = page.evaluate(LAYOUT)
    if shots is not None:
        shots.mkdir(parents=True, exist_ok=True)
        page.screenshot(shots / f"{name}.png", int(min(layout["width"], 4000)), int(min(layout["height"], 4000)))
    return layout, ids


def overlaps(a: list[float], b: list[float], margin: float = 1.0) -> bool:
    """Boxes [left, top, right, bottom] that share more than ``margin`` pixels each way."""
    return min(a[2], b[2]) - max(a[0], b[0]) > margin and min(a[3], b[3]) - max(a[1], b[1]) > margin


def label_collisions(layout: dict) -> list[str]:
    """Every text drawn on a node box other than its own."""
    found = []
    for text in layout["texts"]:
        for node in layout["nodes"]:
            if node["id"] != text["owner"] and overlaps(text["box"], node["box"]):
                found.append(f"{text['text']!r} ({text['owner'] or 'edge'}) on {node['id']}")
    return found


@pytest.mark.parametrize("name", ["demo", "library-200"])
def test_the_exported_graph_renders_with_every_node_and_no_label_on_a_node(
        name: str, browser: Chromium, tmp_path: Path) -> None:
    db = tmp_path / f"{name}.db"
    if name == "demo":
        build_demo_library(str(db))
        expected = None
    else:
        expected = library_200(db)
    shots = os.environ.get("KAOS_GRAPH_SCREENSHOTS")
    layout, ids = draw(db, tmp_path, browser, Path(shots) if shots else None, name)
    drawn = [n["id"] for n in layout["nodes"]]
    assert sorted(drawn) == sorted(ids) and len(drawn) == len(set(drawn))  # one box per graph node
    if expected is not None:
        assert len(drawn) == expected
    assert all(n["box"][2] - n["box"][0] > 5 and n["box"][3] - n["box"][1] > 5 for n in layout["nodes"])
    own = [t for t in layout["texts"] if t["owner"] is not None]
    assert len(own) >= len(drawn)  # every node carries its label
    assert label_collisions(layout) == []
    for node in layout["nodes"]:  # no two node boxes on top of each other
        assert not any(overlaps(node["box"], other["box"]) for other in layout["nodes"] if other is not node)
