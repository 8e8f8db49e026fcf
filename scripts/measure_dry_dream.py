"""Measure a dry `kaos dream run` in its own process against the same pass inside a running process.

The library is demo_consolidation_scale_bench's 10k-skill reference (``--data``, default the shared
bench data), seeded as that bench seeds it. Each sample runs on a fresh copy of the seeded file:

* in-process: ``lib.dream.run()`` in one interpreter that has already run a pass (modules imported,
  models loaded), CPU of the calling thread;
* own process: ``kaos --db COPY dream run --quiet``, CPU (user + system) of the whole child.

Rounds alternate the two so drift in machine load hits both alike. The goal (issue 36): the own
process at most 2x the in-process pass, by CPU medians. Writes scripts/dry_dream.json and .md and exits
1 when the goal is missed:

    python scripts/measure_dry_dream.py [--runs 7] [--data DIR] [--out DIR]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
BENCH = REPO / "demo_consolidation_scale_bench" / "run.py"
SKILLS = 10_000
BUDGET = 2.0
ENV = {"KAOS_DREAM_AUTO": "0"}  # the pass under test only: no automatic pass inside other commands

IN_PROCESS = """
import json, shutil, sys, time
from kaos_dream import Library, Settings
base, work, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
def fresh():
    shutil.copy(base, work)
    lib = Library(work, settings=Settings.from_env())
    return lib
lib = fresh(); lib.dream.run(); lib.close()  # warm: imports and models, as in a running process
for _ in range(runs):
    lib = fresh()
    c0 = time.thread_time(); lib.dream.run(); cpu = time.thread_time() - c0
    lib.close()
    print(json.dumps(cpu), flush=True)
"""


def seed(path: Path, data: Path) -> None:
    spec = importlib.util.spec_from_file_location("scale_bench", BENCH)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    library, _source, _ = bench.library_data(SKILLS, data)
    bench.seed(path, library)


def child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KAOS_") and k != "ANTHROPIC_API_KEY"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return {**env, **ENV}


def own_process(base: Path, work: Path) -> float:
    shutil.copy(base, work)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run([sys.executable, "-m", "kaos_dream", "--db", str(work), "dream", "run", "--quiet"],
                          env=child_env(), capture_output=True, text=True, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"measure_dry_dream: kaos dream run exited {proc.returncode}: {proc.stderr.strip()[:300]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def in_process(base: Path, work: Path) -> float:
    proc = subprocess.run([sys.executable, "-c", IN_PROCESS, str(base), str(work), "1"], env=child_env(),
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"measure_dry_dream: the in-process pass failed: {proc.stderr.strip()[-300:]}")
    return float(proc.stdout.strip().splitlines()[-1])


def summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {"median_s": round(statistics.median(ordered), 4), "min_s": round(ordered[0], 4),
            "max_s": round(ordered[-1], 4)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7, help="Rounds of both measurements (default 7).")
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "bench-data" / "kaos",
                        help="Folder with consolidation_scale_data_10000.json.")
    parser.add_argument("--out", type=Path, default=HERE, help="Folder for dry_dream.json/.md.")
    args = parser.parse_args()
    if args.runs < 3:
        parser.error("--runs must be at least 3")
    if not (args.data / f"consolidation_scale_data_{SKILLS}.json").exists():
        sys.stderr.write(f"measure_dry_dream: no consolidation_scale_data_{SKILLS}.json in {args.data} (pass --data)\n")
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        base, work = Path(tmp) / "seeded.db", Path(tmp) / "work.db"
        seed(base, args.data)
        load = round(os.getloadavg()[0], 2)
        own, inside = [], []
        for round_no in range(args.runs):
            pair = [("own", own_process), ("in", in_process)]
            for name, measure in pair if round_no % 2 == 0 else pair[::-1]:
                (own if name == "own" else inside).append(measure(base, work))
    ratio = statistics.median(own) / statistics.median(inside)
    result = {"skills": SKILLS, "runs": args.runs, "load_average": load, "python": platform.python_version(),
              "cpus": os.cpu_count(), "own_process": summary(own), "in_process": summary(inside),
              "ratio": round(ratio, 2), "budget": BUDGET, "met": ratio <= BUDGET}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "dry_dream.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    text = (f"# Dry `kaos dream run` at {SKILLS:,} skills: own process vs in-process\n\n"
            f"Written by `scripts/measure_dry_dream.py` ({args.runs} rounds, Python {result['python']}, "
            f"{result['cpus']} CPUs, load average {load} at the start). CPU seconds, median (min-max).\n\n"
            "| measurement | CPU median s (min-max) |\n|---|---|\n"
            f"| `lib.dream.run()` in a warm process (its thread) | {result['in_process']['median_s']} "
            f"({result['in_process']['min_s']}-{result['in_process']['max_s']}) |\n"
            f"| `kaos dream run --quiet` in its own process | {result['own_process']['median_s']} "
            f"({result['own_process']['min_s']}-{result['own_process']['max_s']}) |\n\n"
            f"Ratio {result['ratio']}x (goal <= {BUDGET}x): {'met' if result['met'] else 'NOT met'}.\n")
    (args.out / "dry_dream.md").write_text(text, encoding="utf-8")
    sys.stdout.write(text)
    return 0 if result["met"] else 1


if __name__ == "__main__":
    sys.exit(main())
