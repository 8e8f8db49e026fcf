"""Time `kaos skill list` on a 10k-skill library: on a terminal, into a pipe, and with --json.

A terminal shows the first rows and a "N more; use --limit" line; a pipe and --json get every row,
so they must be fast too. Each mode runs ``--runs`` times in a rotating order (drift in machine load
hits all alike); CPU time (user + system of the child) and wall time are reported as medians with
their range, with the output's size. ``--baseline SRC`` also runs the same commands on another
checkout (e.g. the code before a change, from ``git archive``), side by side in the same run.
Writes scripts/skill_list.json and scripts/skill_list.md and exits 1 when a budget is missed:

    python scripts/measure_skill_list.py [--skills 10000] [--runs 5] [--baseline SRC [--baseline-name NAME]] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import pty
import resource
import select
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's kaos_dream

MODES = {
    "terminal": ["skill", "list"],
    "pipe": ["skill", "list"],
    "pipe --json": ["skill", "list", "--json"],
}
BUDGET_CPU_S = {"terminal": 1.0, "pipe": 1.0, "pipe --json": 1.0}  # per call, this checkout, 10k skills


def build_library(path: Path, skills: int) -> None:
    from kaos_dream import Library, ManualClock, Settings

    with Library(path, clock=ManualClock(1_767_225_600.0), settings=Settings(semantic=False)) as lib, \
            lib.transaction():
        for i in range(skills):
            lib.skills.add(f"skill-{i:05d}-{'abcdefgh'[i % 8]}", f"does task number {i} with care",
                           f"run step {i}", ["bench", f"group-{i % 20}"])


def _drain(fd: int, timeout: float = 120.0) -> int:
    """Read a pseudo-terminal until the child closes it; the number of bytes read."""
    total = 0
    while True:
        ready, _, _ = select.select([fd], [], [], timeout)
        if not ready:
            break
        try:
            data = os.read(fd, 1 << 16)
        except OSError:  # the child closed its end
            break
        if not data:
            break
        total += len(data)
    return total


def run_once(src: Path, db: Path, mode: str) -> dict[str, float]:
    argv = [sys.executable, "-m", "kaos_dream", "--db", str(db), *MODES[mode]]
    env = {k: v for k, v in os.environ.items() if not k.startswith("KAOS_")}
    env.update(PYTHONPATH=str(src), COLUMNS="120", LINES="40", TERM="xterm")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    if mode == "terminal":
        leader, follower = pty.openpty()
        proc = subprocess.Popen(argv, stdout=follower, stderr=subprocess.DEVNULL, env=env)
        os.close(follower)
        size = _drain(leader)
        proc.wait(timeout=120)
        os.close(leader)
        code = proc.returncode
    else:
        done = subprocess.run(argv, capture_output=True, env=env, timeout=120, check=False)
        size, code = len(done.stdout), done.returncode
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if code != 0:
        raise SystemExit(f"measure_skill_list: {' '.join(argv)} exited {code}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall": wall, "cpu": cpu, "bytes": size}


def summary(values: list[float]) -> dict[str, float]:
    return {"median_s": round(statistics.median(values), 3), "min_s": round(min(values), 3),
            "max_s": round(max(values), 3)}


def commit_of(src: Path) -> str:
    if not (src / ".git").exists():
        return "exported tree"
    proc = subprocess.run(["git", "-C", str(src), "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                          check=False)
    dirty = subprocess.run(["git", "-C", str(src), "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True, check=False).stdout.strip()
    return proc.stdout.strip() + (" + uncommitted changes" if dirty else "") if proc.returncode == 0 else "?"


def measure(sources: dict[str, Path], db: Path, runs: int) -> dict[str, dict[str, dict]]:
    jobs = [(label, mode) for label in sources for mode in MODES]
    for label, mode in jobs:  # warm the page cache and the .pyc files first
        run_once(sources[label], db, mode)
    samples: dict[tuple[str, str], list[dict[str, float]]] = {job: [] for job in jobs}
    for round_no in range(runs):
        shift = round_no % len(jobs)
        for job in jobs[shift:] + jobs[:shift]:
            samples[job].append(run_once(sources[job[0]], db, job[1]))
    out: dict[str, dict[str, dict]] = {}
    for (label, mode), got in samples.items():
        out.setdefault(label, {})[mode] = {
            "cpu": summary([g["cpu"] for g in got]), "wall": summary([g["wall"] for g in got]),
            "output_bytes": int(statistics.median(g["bytes"] for g in got)),
        }
    return out


def markdown(result: dict) -> str:
    lines = [
        f"# `kaos skill list` on {result['skills']} skills",
        "",
        f"Written by `scripts/measure_skill_list.py` ({result['runs']} runs per mode, Python {result['python']}, "
        f"{result['cpus']} CPUs, load average {result['load_average']} at the start). A terminal is a "
        "pseudo-terminal 120 columns wide (the first rows and a \"N more\" line); a pipe gets every row.",
        "",
        "| code | mode | CPU median (s) | CPU min-max (s) | wall median (s) | wall min-max (s) | output bytes "
        "| CPU budget (s) | met |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for label, modes in result["results"].items():
        for mode, r in modes.items():
            budget = BUDGET_CPU_S[mode] if label == "this checkout" else None
            met = "" if budget is None else ("yes" if r["cpu"]["median_s"] <= budget else "NO")
            lines.append(
                f"| {label} ({result['commits'][label]}) | `{mode}` | {r['cpu']['median_s']} | "
                f"{r['cpu']['min_s']}-{r['cpu']['max_s']} | {r['wall']['median_s']} | "
                f"{r['wall']['min_s']}-{r['wall']['max_s']} | {r['output_bytes']} | "
                f"{'' if budget is None else f'<= {budget}'} | {met} |"
            )
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--skills", type=int, default=10_000, help="Skills in the library (default 10000).")
    parser.add_argument("--runs", type=int, default=5, help="Runs per mode (default 5).")
    parser.add_argument("--baseline", type=Path, default=None, help="Another checkout to time side by side.")
    parser.add_argument("--baseline-name", default="baseline", help="What the baseline is (e.g. its commit).")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent, help="Folder for skill_list.json/.md.")
    args = parser.parse_args()
    if args.runs < 1 or args.skills < 1:
        parser.error("--runs and --skills must be at least 1")
    if args.baseline is not None and not (args.baseline / "kaos_dream" / "__init__.py").exists():
        parser.error(f"--baseline {args.baseline}: no kaos_dream package there")
    sources = {"this checkout": ROOT, **({args.baseline_name: args.baseline} if args.baseline else {})}
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "list.db"
        build_library(db, args.skills)
        load = os.getloadavg()[0]
        results = measure(sources, db, args.runs)
    result = {"skills": args.skills, "runs": args.runs, "python": platform.python_version(), "cpus": os.cpu_count(),
              "load_average": round(load, 2), "commits": {label: commit_of(src) for label, src in sources.items()},
              "budget_cpu_s": BUDGET_CPU_S, "results": results}
    mine = results["this checkout"]
    result["met"] = {mode: mine[mode]["cpu"]["median_s"] <= budget for mode, budget in BUDGET_CPU_S.items()}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "skill_list.json").write_text(json.dumps(result, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    (args.out / "skill_list.md").write_text(markdown(result), encoding="utf-8")
    sys.stdout.write(markdown(result))
    missed = [mode for mode, ok in result["met"].items() if not ok]
    if missed:
        sys.stderr.write(f"measure_skill_list: CPU budget missed for {', '.join(missed)}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
