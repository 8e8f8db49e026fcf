"""Measure how long the `kaos` command takes to start, as ratios to `python -c "import sqlite3"`.

A shell loop or a cron job pays the start-up on every call, so the goal is relative to the cheapest
Python process that can touch SQLite, measured side by side in one run (the ratio, unlike the
absolute time, survives a loaded or a faster machine):

* ``kaos --version``                      at most 3x the baseline;
* ``kaos search QUERY`` on a 1k-skill file at most 3x the baseline (a lexical search imports no numpy);
* ``kaos dream run --apply --if-due`` when no pass is due (a cron job's usual call) at most 1.5x.

Each round runs the commands once, in a rotating order, so drift in machine load hits all
three alike. The ratios compare medians of CPU time (user + system of the child, from the kernel's
accounting): on a shared machine wall time also counts the time the process waited for a core.
Wall-clock medians and ratios are reported too. Writes scripts/startup.json and scripts/startup.md
and exits 1 when a ratio is missed:

    python scripts/measure_startup.py [--runs 21] [--quick] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BUDGETS = {"version": 3.0, "search": 3.0, "dream_if_due": 1.5}
QUERY = "deploy postgres retry"
VERBS = "load save transform validate sync export import index compress encrypt deploy monitor".split()
DOMAINS = "postgres redis sqs kafka s3 http grpc csv parquet json yaml docker kubernetes git".split()
WORDS = VERBS + DOMAINS + "retry backoff schema cache batch stream token auth quota shard replica".split()


def kaos_argv() -> list[str]:
    """The console script installed next to this interpreter, as a user runs it; else ``-m``."""
    script = Path(sys.executable).with_name("kaos")
    if script.exists():
        return [str(script)]
    found = shutil.which("kaos")
    return [found] if found else [sys.executable, "-m", "kaos_dream"]


def build_library(path: Path, skills: int, seed: int) -> None:
    from kaos_dream import Library, ManualClock, Settings

    rng = random.Random(seed)
    with Library(path, clock=ManualClock(), settings=Settings()) as lib, lib.transaction():
        for i in range(skills):
            verb, domain = rng.choice(VERBS), rng.choice(DOMAINS)
            words = " ".join(rng.sample(WORDS, 6))
            lib.skills.add(f"{verb}-{domain}-{i}", f"{words} {domain}", f"Run {verb} against {domain}", [domain])


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one child process; fails loudly if the command fails."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"measure_startup: {' '.join(argv)} exited {proc.returncode}: {proc.stderr.strip()[:300]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "median_ms": round(statistics.median(ordered) * 1000, 1),
        "min_ms": round(ordered[0] * 1000, 1),
        "max_ms": round(ordered[-1] * 1000, 1),
        "iqr_ms": round((ordered[(3 * len(ordered)) // 4] - ordered[len(ordered) // 4]) * 1000, 1),
    }


def compile_package() -> None:
    """Write kaos_dream's .pyc files, as ``pip install`` does for an installed package: an editable
    checkout run with PYTHONDONTWRITEBYTECODE=1 would otherwise recompile every module on every call."""
    import compileall

    import kaos_dream

    compileall.compile_dir(str(Path(kaos_dream.__file__).parent), quiet=1)


def measure(runs: int, db: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KAOS_") and k != "ANTHROPIC_API_KEY"}
    kaos = kaos_argv()
    commands = {
        "baseline": [sys.executable, "-c", "import sqlite3"],
        "version": kaos + ["--version"],
        "search": kaos + ["--db", str(db), "search", QUERY],
        "dream_if_due": kaos + ["--db", str(db), "dream", "run", "--apply", "--if-due"],
    }
    for argv in commands.values():  # warm the page cache and .pyc files before counting
        timed(argv, env)
    wall: dict[str, list[float]] = {name: [] for name in commands}
    cpu: dict[str, list[float]] = {name: [] for name in commands}
    names = list(commands)
    for round_no in range(runs):
        shift = round_no % len(names)
        for name in names[shift:] + names[:shift]:
            w, c = timed(commands[name], env)
            wall[name].append(w)
            cpu[name].append(c)
    shown = {name: shlex.join(["kaos", *argv[len(kaos):]] if name != "baseline" else ["python", *argv[1:]])
             .replace(shlex.quote(str(db)), "LIBRARY.db") for name, argv in commands.items()}
    result: dict = {"commands": shown, "runs": runs}
    result["cpu"] = {name: summary(values) for name, values in cpu.items()}
    result["wall"] = {name: summary(values) for name, values in wall.items()}
    base_cpu = statistics.median(cpu["baseline"])
    base_wall = statistics.median(wall["baseline"])
    result["ratios"] = {
        name: {
            "cpu": round(statistics.median(cpu[name]) / base_cpu, 2),
            "wall": round(statistics.median(wall[name]) / base_wall, 2),
            "budget": budget,
            "met": statistics.median(cpu[name]) / base_cpu <= budget,
        }
        for name, budget in BUDGETS.items()
    }
    return result


def markdown(result: dict) -> str:
    lines = [
        "# `kaos` start-up, relative to `python -c \"import sqlite3\"`",
        "",
        f"Written by `scripts/measure_startup.py` ({result['runs']} rounds, {result['skills']} skills, "
        f"Python {result['python']}, {result['cpus']} CPUs, load average {result['load_average']} at the start). "
        "Ratios compare medians of CPU time (user + system); wall time is shown for reference. "
        "LIBRARY.db holds the generated skills.",
        "",
        "| command | CPU median (ms) | CPU IQR (ms) | wall median (ms) | wall min-max (ms) "
        "| CPU ratio | wall ratio | budget | met |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name in ("baseline", *BUDGETS):
        c, w = result["cpu"][name], result["wall"][name]
        ratio = result["ratios"].get(name)
        lines.append(
            f"| `{result['commands'][name]}` | {c['median_ms']} | "
            f"{c['iqr_ms']} | {w['median_ms']} | {w['min_ms']}-{w['max_ms']} | "
            + (f"{ratio['cpu']}x | {ratio['wall']}x | <= {ratio['budget']}x | {'yes' if ratio['met'] else 'NO'} |"
               if ratio else "1x | 1x | | |")
        )
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=21, help="Rounds of the commands (default 21).")
    parser.add_argument("--quick", action="store_true", help="7 rounds: a smoke run, not for the results.")
    parser.add_argument("--skills", type=int, default=1000, help="Skills in the searched library (default 1000).")
    parser.add_argument("--seed", type=int, default=42, help="Seed of the generated library.")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent, help="Folder for startup.json/.md.")
    args = parser.parse_args()
    runs = 7 if args.quick else args.runs
    if runs < 3 or args.skills < 1:
        parser.error("--runs must be at least 3 and --skills at least 1")
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "startup.db"
        build_library(db, args.skills, args.seed)
        compile_package()
        load = os.getloadavg()[0]
        result = measure(runs, db)
    result.update(skills=args.skills, seed=args.seed, python=platform.python_version(), cpus=os.cpu_count(),
                  load_average=round(load, 2), query=QUERY)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "startup.json").write_text(json.dumps(result, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    (args.out / "startup.md").write_text(markdown(result), encoding="utf-8")
    sys.stdout.write(markdown(result))
    missed = [name for name, ratio in result["ratios"].items() if not ratio["met"]]
    if missed:
        sys.stderr.write(f"measure_startup: budget missed for {', '.join(missed)}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
