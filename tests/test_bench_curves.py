"""The benchmarks' learning curves: drawn from results.json by the report's chart code."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from kaos_dream.report.curves import Panel, write_curves

from .conftest import PROJECT_ROOT

SVG = "{http://www.w3.org/2000/svg}"


def bench_module(name: str):
    spec = importlib.util.spec_from_file_location(name, PROJECT_ROOT / name / "run.py")
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    folder = str(PROJECT_ROOT / name)
    sys.path.insert(0, folder)  # a benchmark imports its sibling modules (drift.py), as `python run.py` does
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(folder)
    return module


def drawn_lines(path: Path) -> int:
    root = ET.parse(path).getroot()
    assert root.tag == f"{SVG}svg"
    return sum(1 for el in root.iter(f"{SVG}path") if el.get("clip-path"))


def test_charts_only_redraws_from_committed_results(tmp_path: Path) -> None:
    for bench in ("demo_neuroplasticity_bench", "demo_causal_bench"):
        out = tmp_path / bench
        out.mkdir()
        shutil.copyfile(PROJECT_ROOT / bench / "results.json", out / "results.json")
        command = [sys.executable, str(PROJECT_ROOT / bench / "run.py"), "--charts-only", "--out", str(out)]
        proc = subprocess.run(command, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        chart = out / "results.curves.svg"
        assert f"learning curves drawn into {chart}" in proc.stdout
        assert drawn_lines(chart) >= 2
        assert chart.read_bytes() == (PROJECT_ROOT / bench / "results.curves.svg").read_bytes()  # deterministic


def test_any_workload_with_curves_gets_a_panel() -> None:
    neuro = bench_module("demo_neuroplasticity_bench")
    results = json.loads((PROJECT_ROOT / "demo_neuroplasticity_bench" / "results.json").read_text())
    results["drift"] = {"episodes": 40, "runs": {"greedy": {"curve": [0.2, 0.5, 0.7, 0.9]},
                                                 "explore": {"curve": [0.3, 0.6, 0.8, 0.9]}}}
    panels = neuro.curve_panels(results)
    assert [p.title for p in panels] == ["twin pairs: cumulative training top-1", "realistic: cumulative training "
                                         "top-1", "drift: cumulative training top-1"]
    assert panels[2].series["greedy"] == [(10, 0.2), (20, 0.5), (30, 0.7), (40, 0.9)]
    trap = bench_module("demo_causal_bench").curve_panels(
        json.loads((PROJECT_ROOT / "demo_causal_bench" / "results.json").read_text()))
    assert len(trap) == 1 and len(trap[0].series["true edges"]) == 40


def test_nothing_to_draw_writes_nothing(tmp_path: Path) -> None:
    target = tmp_path / "c.svg"
    assert "no learning curve" in write_curves([Panel("empty", "x", "y")], target)
    assert not target.exists()
