"""Fleets: N simulated hosts × M agents on one PostgreSQL server, and the same workload on one SQLite file.

Each host is a separate OS process with its own library connection, running M agents on the
reliability workload (episodes, searches that record hits, outcomes, failure reports, coordination-log
appends); beside them several racer threads run `kaos dream run --apply` as real subprocesses, back to
back, so passes from different processes compete for the dream lease. A third of the way in, agents on
every host report the same dead-database failure: one incident spread across hosts.

Every run gets a fresh library and is verified afterwards against what every process says it wrote
(verify.py): 0 lost and 0 doubled rows, gap-free coordination-log positions, exactly one systemic alert
for the incident, no two dream passes overlapping. Runs sweep 1, 2, 4, 8 host processes on each engine,
engines interleaved, repeated; the figures are operations/s (median and spread over the repeats) and
per-operation p50/p99 latency.

PostgreSQL: by default a throw-away server is started from the Debian binaries (tests/pg_server.py);
`--pg-url` uses an existing server instead (its role must be allowed to create databases). With
neither, the script says so on one line and runs the SQLite half.

    python demo_fleet_bench/run.py                 # both engines, 1/2/4/8 hosts, 3 repeats of 10 s
    python demo_fleet_bench/run.py --quick         # 1 and 2 hosts, one 2.5 s repeat (results.quick.*)
    python demo_fleet_bench/run.py --engines sqlite --pg-url postgresql://me@db:5432/postgres
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import platform
import statistics
import subprocess
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(HERE), str(ROOT / "demo_reliability_bench"), str(ROOT)]

import agreement  # noqa: E402
import targets  # noqa: E402
import workload  # noqa: E402 - demo_reliability_bench/workload.py
from host import OPS, run_host  # noqa: E402
from verify import verify  # noqa: E402

from kaos_dream import Library, Settings, benchkit  # noqa: E402
from kaos_dream.store.engine import mask  # noqa: E402

ENGINES = ("sqlite", "postgresql")
AGREEMENT_GOAL = 0.95  # share of queries whose top-5 / top-10 id sets are equal on both engines (issue 35)


# -- one run ------------------------------------------------------------------------------------

def seed_library(db: str, seed: int) -> None:
    """The reliability workload's 48 skills and 24 memories, in one transaction."""
    with Library(db) as lib, lib.transaction():
        for name, description, template in workload.skills(seed):
            lib.skills.add(name, description, template)
        for key, content in workload.memories(seed):
            lib.memories.add(content, key=key)


def incident_agents(hosts: int, threshold: int) -> list[int]:
    """How many distinct agents each host sends into the incident: threshold + 1 in all (at least one per
    host), dealt round-robin, so with several hosts no single host reaches the threshold alone."""
    total = max(threshold + 1, hosts)
    return [len(range(h, total, hosts)) for h in range(hosts)]


def dream_racer(db: str, stop: threading.Event, runs: list[dict[str, Any]]) -> None:
    """`kaos dream run --apply` back to back until ``stop``; a pass that finds the lease held reports busy."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KAOS_")}
    env["KAOS_DB"] = db  # in the environment, so a password in a URL is not on a command line
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    while not stop.is_set():
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "kaos_dream", "dream", "run", "--apply", "--json"],
                              capture_output=True, text=True, env=env, timeout=300)
        try:
            status = json.loads(proc.stdout).get("status") if proc.returncode == 0 else None
        except ValueError:
            status = "unparsable output"
        runs.append({"rc": proc.returncode, "status": status, "seconds": time.perf_counter() - t0,
                     "stderr": mask(proc.stderr.strip()[-300:])})


def wait_for_lease(target: targets.Target, db: str, seconds: float = 60.0) -> bool:
    """Wait until no dream pass holds the lease (an automatic pass may still be finishing in the background)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not target.rows(db, "SELECT holder FROM dream_lease"):
            return True
        time.sleep(0.2)
    return False


def one_run(target: targets.Target, hosts: int, repeat: int, args: argparse.Namespace,
            threshold: int) -> dict[str, Any]:
    """Seed a fresh library, run ``hosts`` host processes and the dream racers, verify, drop the library."""
    db = target.fresh()
    try:
        seed_library(db, args.seed)
        ctx = mp.get_context("spawn")
        ready, results, go = ctx.Queue(), ctx.Queue(), ctx.Event()
        shares = incident_agents(hosts, threshold)
        specs = [{"db": db, "host": h, "seed": args.seed + repeat, "seconds": args.seconds, "agents": args.agents,
                  "incident_agents": shares[h]} for h in range(hosts)]
        procs = [ctx.Process(target=run_host, args=(spec, ready, go, results)) for spec in specs]
        for p in procs:
            p.start()
        for _ in procs:
            ready.get(timeout=180)
        stop, runs = threading.Event(), []
        racers = [threading.Thread(target=dream_racer, args=(db, stop, runs)) for _ in range(args.dream_racers)]
        go.set()
        for r in racers:
            r.start()
        reports = sorted((results.get(timeout=600) for _ in procs), key=lambda r: r["host"])
        stop.set()
        for r in racers:
            r.join()
        for p in procs:
            p.join(timeout=60)
        lease_free = wait_for_lease(target, db)
        dream = {"invocations": len(runs), "completed": sum(r["status"] == "completed" for r in runs),
                 "busy": sum(r["status"] == "busy" for r in runs),
                 "errors": [r for r in runs if r["rc"] != 0 or r["status"] not in ("completed", "busy")],
                 "median_s": round(statistics.median([r["seconds"] for r in runs]), 3) if runs else None}
        checked = verify(target, db, reports, dream, threshold)
    finally:
        target.drop(db)
    problems = checked.pop("problems")
    errors = [e for r in reports for e in r["errors"]]
    problems += [f"host error: {e}" for e in errors[:10]]
    problems += [f"dream invocation failed: {d}" for d in dream["errors"][:3]]
    crashed = [p.exitcode for p in procs if p.exitcode != 0]
    if crashed:
        problems.append(f"host processes exited with {crashed}")
    if not lease_free:
        problems.append("the dream lease was still held 60 s after the run")
    return {"engine": target.name, "hosts": hosts, "repeat": repeat, **measure(reports),
            "dream": {k: v if k != "errors" else len(v) for k, v in dream.items()},
            "errors_surfaced": len(errors) + len(dream["errors"]), "verification": checked, "problems": problems,
            "latency_ns": {op: [v for r in reports for v in r["latency_ns"].get(op, [])] for op in OPS},
            "cpu_ns": {op: [v for r in reports for v in r.get("cpu_ns", {}).get(op, [])] for op in OPS},
            "locks": {k: sum(r.get("locks", {}).get(k, 0) for r in reports) for k in ("lock_free", "locked")}}


def measure(reports: list[dict[str, Any]]) -> dict[str, Any]:
    """Operations/s of the run (all hosts together, over the slowest host's time) and per host."""
    seconds = max(r["seconds"] for r in reports)
    per_host = [sum(len(v) for v in r["latency_ns"].values()) / r["seconds"] for r in reports]
    ops = sum(len(v) for r in reports for v in r["latency_ns"].values())
    return {"seconds": round(seconds, 3), "ops": ops, "ops_per_s": round(ops / seconds, 1),
            "per_host_ops_per_s": [round(v, 1) for v in per_host]}


# -- figures ------------------------------------------------------------------------------------

def spread(values: list[float]) -> dict[str, float]:
    return {"median": round(statistics.median(values), 1), "min": round(min(values), 1), "max": round(max(values), 1)}


def latency_table(runs: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per operation: count, p50, p99, max in ms, pooled over ``runs``."""
    table = {}
    for op in OPS:
        values = np.array([v for r in runs for v in r["latency_ns"][op]], dtype=float) / 1e6
        if values.size:
            p50, p99 = np.percentile(values, [50, 99], method="nearest")
            p90 = np.percentile(values, 90, method="nearest")
            cpu = np.array([v for r in runs for v in r.get("cpu_ns", {}).get(op, [])], dtype=float) / 1e3
            table[op] = {"count": int(values.size), "p50_ms": round(float(p50), 3), "p90_ms": round(float(p90), 3),
                         "p99_ms": round(float(p99), 3), "max_ms": round(float(values.max()), 1),
                         "client_cpu_us": round(float(np.median(cpu)), 1) if cpu.size else None,
                         "client_cpu_mean_us": round(float(cpu.mean()), 1) if cpu.size else None}
    return table


def summarise(engine_runs: list[dict[str, Any]], processes: list[int]) -> dict[str, Any]:
    by_n: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for r in engine_runs:
        by_n[r["hosts"]].append(r)
    base = statistics.median(r["ops_per_s"] for r in by_n[processes[0]])
    scaling = {}
    for n in processes:
        rates = [r["ops_per_s"] for r in by_n[n]]
        scaling[str(n)] = {"ops_per_s": spread(rates), "speedup_vs_1": round(statistics.median(rates) / base, 2),
                           "per_host_ops_per_s": spread([v for r in by_n[n] for v in r["per_host_ops_per_s"]])}
    v = [r["verification"] for r in engine_runs]
    locks = {k: sum(r.get("locks", {}).get(k, 0) for r in engine_runs) for k in ("lock_free", "locked")}
    writes = locks["lock_free"] + locks["locked"]
    return {
        "scaling": scaling,
        "latency_at_max_hosts": latency_table(by_n[processes[-1]]),
        "latency_at_min_hosts": latency_table(by_n[processes[0]]),
        "write_transactions": locks,
        "locked_share": round(locks["locked"] / writes, 4) if writes else None,
        "runs": len(engine_runs),
        "lost": sum(x["lost"] for x in v), "doubled": sum(x["doubled"] for x in v),
        "incident_alerts_per_run": [x["incident"]["alerts"] for x in v],
        "incident_hosts_per_run": [x["incident"]["hosts"] for x in v],
        "doubled_alerts": sum(x["incident"]["doubled_alerts"] for x in v),
        "lease_overlaps": sum(x["lease"]["overlaps"] for x in v),
        "dream_passes_applied": sum(x["lease"]["applied"] for x in v),
        "dream_busy": sum(r["dream"]["busy"] for r in engine_runs),
        "errors_surfaced": sum(r["errors_surfaced"] for r in engine_runs),
        "problems": [f"{r['hosts']} hosts, repeat {r['repeat']}: {p}" for r in engine_runs for p in r["problems"]],
    }


# -- results ------------------------------------------------------------------------------------

def markdown(result: dict[str, Any]) -> str:
    c = result["config"]
    lines = ["# Fleets: one PostgreSQL server and one SQLite file under many hosts — measured", "",
             f"{c['agents']} agents per host process, {c['seconds']:g} s per run, {c['repeats']} "
             f"repeat{'s' if c['repeats'] != 1 else ''} of "
             f"{', '.join(map(str, c['processes']))} host processes per engine (engines interleaved), "
             f"{c['dream_racers']} `dream run --apply` racers beside them, seed {c['seed']}; "
             f"systemic threshold {c['systemic_threshold']} agents in {c['systemic_window_s']:g} s; "
             f"{result['machine']}.", "",
             f"**Verdict: {'PASS' if result['ok'] else 'FAIL'}**", ""]
    for name, e in result["engines"].items():
        if "skipped" in e:
            lines += [f"* {name}: {e['skipped']}"]
            continue
        lines += [f"* {name} ({e['label']}): {e['runs']} runs, lost rows **{e['lost']}**, doubled rows "
                  f"**{e['doubled']}**, incident alerts per run {e['incident_alerts_per_run']} (hosts in the "
                  f"incident {e['incident_hosts_per_run']}), fingerprints with two open alerts "
                  f"{e['doubled_alerts']}, overlapping dream passes {e['lease_overlaps']}; "
                  f"`--apply` passes completed {e['dream_passes_applied']} (busy: {e['dream_busy']}); "
                  f"errors surfaced {e['errors_surfaced']}"]
    ran = {k: e for k, e in result["engines"].items() if "scaling" in e}
    if ran:
        lines += ["", "## Throughput by host processes (operations/s, median [min–max] over repeats)", "",
                  "| hosts | " + " | ".join(f"{k} ops/s | {k} × 1 host" for k in ran) + " |",
                  "|---:|" + "---:|---:|" * len(ran)]
        for n in map(str, result["config"]["processes"]):
            cells = []
            for e in ran.values():
                s = e["scaling"][n]
                cells += [f"{s['ops_per_s']['median']} [{s['ops_per_s']['min']}–{s['ops_per_s']['max']}]",
                          f"{s['speedup_vs_1']}"]
            lines.append(f"| {n} | " + " | ".join(cells) + " |")
        top = result["config"]["processes"][-1]
        lines += ["", f"## Latency per operation at {top} hosts (ms, pooled over repeats) and client CPU per "
                  "operation (µs, the host process's own CPU over the call, median)", "",
                  "| operation | " + " | ".join(f"{k} n | {k} p50 | {k} p90 | {k} p99 | {k} CPU µs" for k in ran)
                  + " |", "|---|" + "---:|---:|---:|---:|---:|" * len(ran)]
        for op in OPS:
            cells = []
            for e in ran.values():
                s = e["latency_at_max_hosts"].get(op)
                cells += ([str(s["count"]), str(s["p50_ms"]), str(s["p90_ms"]), str(s["p99_ms"]),
                           str(s["client_cpu_us"])] if s else ["0", "–", "–", "–", "–"])
            lines.append(f"| {op} | " + " | ".join(cells) + " |")
        locked = {k: e for k, e in ran.items() if e.get("locked_share") is not None}
        if locked:
            lines += ["", "## Write transactions that took the database-wide write lock", ""]
            lines += [f"* {k}: {e['write_transactions']['locked']} of "
                      f"{e['write_transactions']['locked'] + e['write_transactions']['lock_free']} "
                      f"({100 * e['locked_share']:.1f} %); the others ran on row locks and MVCC alone"
                      for k, e in locked.items()]
        if "postgresql" in ran and "sqlite" in ran:
            pg, lite = ran["postgresql"], ran["sqlite"]
            first, last = str(result["config"]["processes"][0]), str(top)
            pg_top = pg["scaling"][last]["ops_per_s"]["median"]
            outcome = pg["latency_at_max_hosts"].get("outcome", {})
            lite_search = lite["latency_at_max_hosts"].get("search", {}).get("p50_ms")
            pg_search = pg["latency_at_max_hosts"].get("search", {}).get("p50_ms")
            lines += ["", "## The fleet engine's goals (issue 35; reported, not budgets)", "",
                      f"* PostgreSQL at {last} hosts / at {first}: "
                      f"{pg_top / pg['scaling'][first]['ops_per_s']['median']:.2f}x (goal ≥ 2x)",
                      f"* PostgreSQL / SQLite at {last} hosts: "
                      f"{pg_top / lite['scaling'][last]['ops_per_s']['median']:.2f}x (goal ≥ 0.6x)",
                      f"* outcome p50 at {last} hosts: {outcome.get('p50_ms')} ms (goal ≤ 3 ms); client CPU per "
                      f"record_outcome: {outcome.get('client_cpu_us')} µs (goal ≤ 300 µs)",
                      f"* search p50 at {last} hosts: {pg_search} ms vs SQLite {lite_search} ms (goal ≤ 2x)"]
    if result.get("agreement"):
        lines += agreement_markdown(result["agreement"])
    if result["problems"]:
        lines += ["", "## Problems", "", *[f"* {p}" for p in result["problems"][:40]]]
    return "\n".join(lines) + "\n"


def agreement_markdown(a: dict[str, Any]) -> list[str]:
    rel, neuro = a["relevance"], a["neuroplasticity"]
    lines = ["", "## Ranking agreement between the engines (agreement.py)", "",
             "The same library built on both engines in lockstep, the same queries; a query agrees at k when "
             "both return the same set of ids in their top k.", "",
             "| workload | queries | same top-5 set | same top-10 set |", "|---|---:|---:|---:|"]
    for rank in ("bm25", "weighted"):
        r = rel[rank]
        lines.append(f"| relevance, sizes {', '.join(map(str, rel['sizes']))}, rank {rank} | {r['queries']} | "
                     f"{r['top5_same_set']:.1%} | {r['top10_same_set']:.1%} |")
    lines.append(f"| neuroplasticity (drift workload, {neuro['rounds']} rounds replayed, seed {neuro['seed']}) | "
                 f"{neuro['queries']} | {neuro['top5_same_set']:.1%} | {neuro['top10_same_set']:.1%} |")
    lines += ["", f"Client CPU per search (µs, `time.process_time()` over every query of the workload, median of "
              f"{agreement.CPU_REPEATS} passes; 1-minute load {a['load_average']}):", "",
              "| library | searches per pass | SQLite | PostgreSQL |", "|---|---:|---:|---:|"]
    for name, c in a["client_cpu_us_per_search"].items():
        lines.append(f"| {name} | {c['searches_per_pass']} | {c['sqlite']} | {c['postgresql']} |")
    return lines


def write_results(result: dict[str, Any], stem: Path) -> None:
    for suffix, text in ((".json", json.dumps(result, indent=2) + "\n"), (".md", markdown(result))):
        path = stem.with_name(stem.name + suffix)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(text)
        tmp.replace(path)


# -- main ---------------------------------------------------------------------------------------

def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--engines", default=",".join(ENGINES),
                        help="comma-separated: sqlite, postgresql (default both)")
    parser.add_argument("--pg-url", default=None, metavar="URL",
                        help="use this PostgreSQL server instead of starting one (its role needs CREATEDB)")
    parser.add_argument("--processes", default=None, help="host process counts to sweep (default 1,2,4,8; quick 1,2)")
    parser.add_argument("--agents", type=int, default=4, help="agents per host process (default 4)")
    parser.add_argument("--seconds", type=float, default=None, help="seconds per run (default 10; quick 2.5)")
    parser.add_argument("--repeats", type=int, default=None, help="repeats of the sweep (default 3; quick 1)")
    parser.add_argument("--dream-racers", type=int, default=2,
                        help="processes running `dream run --apply` back to back beside the hosts (default 2)")
    parser.add_argument("--no-agreement", action="store_true",
                        help="skip the ranking agreement and client-CPU-per-search measurement (agreement.py)")
    benchkit.add_standard_args(parser, here=HERE, seed=7)
    args = parser.parse_args()
    try:
        args.engines = [e.strip() for e in args.engines.split(",") if e.strip()]
        args.processes = [int(n) for n in (args.processes or ("1,2" if args.quick else "1,2,4,8")).split(",")]
    except ValueError:
        parser.error("--processes takes whole numbers separated by commas, such as 1,2,4,8")
    if not args.engines or set(args.engines) - set(ENGINES):
        parser.error(f"--engines takes {' and/or '.join(ENGINES)}, comma-separated")
    if min(args.processes) < 1 or args.agents < 1 or args.dream_racers < 1:
        parser.error("--processes, --agents and --dream-racers must be at least 1")
    args.seconds = args.seconds or (2.5 if args.quick else 10.0)
    args.repeats = args.repeats or (1 if args.quick else 3)
    if args.seconds <= 0 or args.repeats < 1:
        parser.error("--seconds must be positive and --repeats at least 1")
    return args


def open_targets(args: argparse.Namespace) -> tuple[list[targets.Target], dict[str, str]]:
    """The engines to run and, for any that cannot run, the one-line reason."""
    chosen: list[targets.Target] = []
    skipped: dict[str, str] = {}
    if "sqlite" in args.engines:
        chosen.append(targets.SqliteTarget())
    if "postgresql" in args.engines:
        pg, reason = targets.postgres_target(args.pg_url)
        if pg is None:
            skipped["postgresql"] = reason or "skipped"
            print(reason, flush=True)
        else:
            chosen.append(pg)
    return chosen, skipped


def main() -> int:
    args = parse_args()
    started, load_before = time.perf_counter(), os.getloadavg()
    settings = Settings.from_env()
    try:
        chosen, skipped = open_targets(args)
    except Exception as exc:  # a server that was asked for (--pg-url) and cannot be used
        print(f"demo_fleet_bench: PostgreSQL: {mask(str(exc)).strip().splitlines()[0]}", file=sys.stderr)
        return 1
    runs: list[dict[str, Any]] = []
    ranking: dict[str, Any] | None = None
    try:
        for repeat in range(args.repeats):
            for hosts in args.processes:
                for target in chosen:
                    run = one_run(target, hosts, repeat, args, settings.systemic_threshold)
                    runs.append(run)
                    v = run["verification"]
                    print(f"{target.name:10} {hosts} hosts, repeat {repeat}: {run['ops_per_s']:8.1f} ops/s; lost "
                          f"{v['lost']} doubled {v['doubled']}; incident alerts {v['incident']['alerts']} "
                          f"({v['incident']['agents']} agents on {v['incident']['hosts']} hosts); dream "
                          f"{run['dream']['completed']} applied, {run['dream']['busy']} busy; "
                          f"problems {len(run['problems'])}", flush=True)
        pg_target = next((t for t in chosen if t.name == "postgresql"), None)
        if pg_target is not None and "sqlite" in args.engines and not args.no_agreement:
            print("ranking agreement and client CPU per search (agreement.py) ...", flush=True)
            ranking = agreement.measure(pg_target, args.quick)  # type: ignore[arg-type]
    finally:
        labels = {t.name: t.label for t in chosen}
        for target in chosen:
            target.close()
    engines: dict[str, Any] = {}
    for name in args.engines:
        if name in skipped:
            engines[name] = {"skipped": skipped[name]}
        else:
            engines[name] = {"label": labels[name],
                             **summarise([r for r in runs if r["engine"] == name], args.processes)}
    checks = benchkit.Checks()
    for name, e in engines.items():
        if "skipped" in e:
            continue
        checks.add(f"{name}: 0 lost rows", e["lost"] == 0, f"{e['lost']} lost")
        checks.add(f"{name}: 0 doubled rows", e["doubled"] == 0, f"{e['doubled']} doubled")
        checks.add(f"{name}: exactly one systemic alert for the incident in every run",
                   all(n == 1 for n in e["incident_alerts_per_run"]), f"alerts per run {e['incident_alerts_per_run']}")
        checks.add(f"{name}: every other check of every run (positions, counters, lease, errors)",
                   not e["problems"], "; ".join(e["problems"][:3]))
    if ranking is not None:
        for workload, label in (("relevance", "relevance (bm25 and weighted)"), ("neuroplasticity", "neuroplasticity")):
            shares = ([ranking[workload][r][f"top{k}_same_set"] for r in ("bm25", "weighted") for k in agreement.KS]
                      if workload == "relevance" else
                      [ranking[workload][f"top{k}_same_set"] for k in agreement.KS])
            checks.add(f"same top-5 and top-10 sets on both engines for >= {AGREEMENT_GOAL:.0%} of the {label} queries",
                       min(shares) >= AGREEMENT_GOAL, f"lowest share {min(shares)}")
    problems = [f"{name}: {p}" for name, e in engines.items() for p in e.get("problems", [])]
    for r in runs:
        r["per_op"] = latency_table([r])
        r.pop("latency_ns")
        r.pop("cpu_ns", None)
    result = {
        "ok": not checks.missed,
        "config": {"processes": args.processes, "agents": args.agents, "seconds": args.seconds,
                   "repeats": args.repeats, "dream_racers": args.dream_racers, "seed": args.seed, "quick": args.quick,
                   "systemic_threshold": settings.systemic_threshold, "systemic_window_s": settings.systemic_window_s},
        "machine": f"{platform.machine()}, {os.cpu_count()} cores (shared), Python {platform.python_version()}, "
                   f"1-minute load average {load_before[0]:.1f} at the start and {os.getloadavg()[0]:.1f} at the end",
        "engines": engines,
        "agreement": ranking,
        "checks": [{"name": c.name, "passed": c.passed, "detail": c.detail} for c in checks],
        "problems": problems,
        "runs": runs,
    }
    write_results(result, benchkit.results_stem(args))
    for p in problems[:20]:
        print(f"PROBLEM: {p}")
    print("PASS" if result["ok"] else "FAIL")
    return benchkit.finish(args, "demo_fleet_bench", checks, time.perf_counter() - started)


if __name__ == "__main__":
    sys.exit(main())
