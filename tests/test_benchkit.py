"""The shared benchmark flags and the JUnit summary a CI system reads."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from kaos_dream import benchkit

from .conftest import PROJECT_ROOT


def parser_with(*flags: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    for flag in flags:
        parser.add_argument(flag, type=Path, default=Path("own"))
    return parser


def test_standard_flags_are_added_and_own_ones_kept(tmp_path: Path) -> None:
    parser = parser_with("--out")
    benchkit.add_standard_args(parser, here=tmp_path, data=tmp_path / "data", seed=7)
    args = parser.parse_args([])
    assert (args.quick, args.data, args.out, args.seed, args.junit) == (False, tmp_path / "data", Path("own"), 7,
                                                                        None)
    unseeded = argparse.ArgumentParser()
    benchkit.add_standard_args(unseeded, here=tmp_path)
    assert not hasattr(unseeded.parse_args([]), "seed") and not hasattr(unseeded.parse_args([]), "data")
    with pytest.raises(SystemExit):
        unseeded.parse_args(["--seed", "1"])


def test_a_seed_sweep_starts_at_the_seed_flag(tmp_path: Path) -> None:
    parser = argparse.ArgumentParser()
    benchkit.add_standard_args(parser, here=tmp_path, seed=1000)
    assert benchkit.seed_sweep(parser.parse_args([]), 3) == [1000, 1001, 1002]
    assert benchkit.seed_sweep(parser.parse_args(["--seed", "-2"]), 4) == [-2, -1, 0, 1]
    with pytest.raises(ValueError):
        benchkit.seed_sweep(parser.parse_args([]), 0)


def test_quick_results_never_replace_the_full_ones(tmp_path: Path) -> None:
    parser = argparse.ArgumentParser()
    benchkit.add_standard_args(parser, here=tmp_path)
    assert benchkit.results_stem(parser.parse_args(["--out", str(tmp_path / "ci")])) == tmp_path / "ci" / "results"
    assert (tmp_path / "ci").is_dir()
    assert benchkit.results_stem(parser.parse_args(["--quick"])).name == "results.quick"


def test_junit_names_every_budget_and_fails_the_missed_one(tmp_path: Path, capsys) -> None:
    parser = argparse.ArgumentParser()
    benchkit.add_standard_args(parser, here=tmp_path)
    junit = tmp_path / "reports" / "bench.xml"
    args = parser.parse_args(["--junit", str(junit)])
    checks = benchkit.Checks.from_mapping({"p50 <= 2 ms": True})
    checks.add("recall >= 0.9", False, "recall 0.85 < 0.9 <&>")
    assert benchkit.finish(args, "demo_x_bench", checks, 1.5) == 1
    assert "recall >= 0.9 (recall 0.85 < 0.9 <&>)" in capsys.readouterr().err
    suite = ET.parse(junit).getroot()
    assert (suite.tag, suite.get("name"), suite.get("tests"), suite.get("failures")) == ("testsuite", "demo_x_bench",
                                                                                        "2", "1")
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert list(cases) == ["p50 <= 2 ms", "recall >= 0.9"]
    assert cases["p50 <= 2 ms"].find("failure") is None
    assert cases["recall >= 0.9"].find("failure").get("message") == "recall 0.85 < 0.9 <&>"
    assert not list(junit.parent.glob("*.tmp"))


def test_all_met_exits_zero_without_a_junit_file(tmp_path: Path) -> None:
    parser = argparse.ArgumentParser()
    benchkit.add_standard_args(parser, here=tmp_path)
    assert benchkit.finish(parser.parse_args([]), "b", benchkit.Checks.from_mapping({"a": True})) == 0
    assert list(tmp_path.iterdir()) == []


BENCHES = sorted(p.parent.name for p in PROJECT_ROOT.glob("demo_*_bench/run.py"))
# The two benchmarks that draw no random numbers: the consolidation-scale bench times the reference
# data files, the MCP bench a fixed, hand-written workload.
UNSEEDED = {"demo_consolidation_scale_bench", "demo_hook_bench", "demo_mcp_bench"}  # no random choice to seed
READS_DATA = {"demo_causal_bench", "demo_consolidation_scale_bench", "demo_failure_intelligence_bench",
              "demo_neuroplasticity_bench", "demo_plasticity_overhead_bench"}


def bench_flags(name: str) -> set[str]:
    proc = subprocess.run([sys.executable, str(PROJECT_ROOT / name / "run.py"), "--help"], capture_output=True,
                          text=True, timeout=120, cwd=PROJECT_ROOT)
    assert proc.returncode == 0, proc.stderr
    return set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", proc.stdout))


def test_every_benchmark_is_known_here() -> None:
    assert len(BENCHES) >= 10 and set(BENCHES) >= UNSEEDED | READS_DATA


@pytest.mark.parametrize("name", BENCHES)
def test_every_benchmark_takes_the_shared_flags(name: str) -> None:
    """A CI job runs any benchmark the same way: --quick, --out DIR, --junit FILE everywhere; --data
    where it reads the reference data; --seed wherever it draws random numbers."""
    flags = bench_flags(name)
    assert {"--quick", "--out", "--junit"} <= flags, flags
    assert ("--data" in flags) == (name in READS_DATA), flags
    assert ("--seed" in flags) == (name not in UNSEEDED), flags


# Two benchmarks fast enough to run three times in --quick mode: the keys that hold wall-clock timings
# (which no seed fixes). The causal bench runs without its CausalEval data (an empty --data folder, the
# same on every machine): its seeded sweeps (stress set, trap world, latency graph) still run, and it
# exits 1 for the one reason it gives, that acceptance cannot be judged without the data.
TIMING_KEYS = {"demo_relevance_bench": {"seconds"}, "demo_causal_bench": {"elapsed_s", "latency"}}


def run_bench(name: str, out: Path, *flags: str) -> dict:
    extra = ["--data", str(out.parent / "no-data")] if name == "demo_causal_bench" else []
    proc = subprocess.run([sys.executable, str(PROJECT_ROOT / name / "run.py"), "--quick", "--out", str(out),
                           *extra, *flags], capture_output=True, text=True, timeout=600, cwd=PROJECT_ROOT)
    if name == "demo_causal_bench":
        assert proc.returncode == 1 and "missed: CausalEval data present" in proc.stderr, proc.stderr[-2000:]
    else:
        assert proc.returncode == 0, proc.stderr[-2000:]
    results = json.loads((out / "results.quick.json").read_text("utf-8"))
    assert (out / "results.quick.md").exists()
    return {k: v for k, v in results.items() if k not in TIMING_KEYS[name]}


def seeded_part(name: str, results: dict) -> tuple[list[int], list]:
    """The seeds a run used and the numbers they decide: per catalogue sample (relevance, top-1 per
    ranking) or the stress set's and the trap world's summaries over their seeds (causal)."""
    if name == "demo_relevance_bench":
        runs = [run for size in results["sizes"].values() for run in size["runs"]]
        return sorted({run["seed"] for run in runs}), [run["top1"] for run in runs]
    stress, trap = results["stress"], results["trap_world"]
    assert stress["seeds"] == trap["seeds"]
    return trap["seeds"], [stress["by_mode"], {k: v for k, v in trap.items() if k != "seeds"}]


@pytest.mark.parametrize("name", sorted(TIMING_KEYS))
def test_the_seed_flag_reproduces_and_moves_the_seeded_choices(name: str, tmp_path: Path) -> None:
    """--seed N: the same N gives the same results.json (timings aside), another N other seeded
    choices and other numbers from them; the results go under --out, so the committed files stay."""
    folder = PROJECT_ROOT / name
    committed = {p.name: p.stat().st_mtime_ns for p in folder.iterdir() if p.name.startswith("results")}
    first = run_bench(name, tmp_path / "a", "--seed", "3")
    again = run_bench(name, tmp_path / "b", "--seed", "3")
    other = run_bench(name, tmp_path / "c", "--seed", "4")
    assert first == again
    (seeds, numbers), (other_seeds, other_numbers) = seeded_part(name, first), seeded_part(name, other)
    assert seeds[0] == 3 and other_seeds[0] == 4 and len(seeds) == len(other_seeds) >= 2
    assert numbers != other_numbers  # not only the labels: the samples drawn from the seeds differ
    assert committed == {p.name: p.stat().st_mtime_ns for p in folder.iterdir() if p.name.startswith("results")}
