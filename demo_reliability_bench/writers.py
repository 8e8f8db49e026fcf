"""Back-to-back writers: the write-lock fairness scenario of issue 17.

Four writer processes each commit 25-operation transactions (about a quarter searches that record
hits, the rest ``record_outcome`` calls, inside one ``lib.transaction()``: ~4 ms each) back to back,
with no pause between them, while the parent runs ``kaos dream run --apply`` again and again.
SQLite's busy handler is not fair: a process that just committed takes the lock again before a
sleeping waiter wakes up, so without the library's own retry around ``BEGIN IMMEDIATE`` most writers
and dream passes ran out of the busy timeout.

Every writer counts the transactions it committed and every error it saw (nothing is retried here:
any retry is the library's). The file must then hold exactly the outcomes and hits of the committed
transactions, and the integrity checks (derived counters included) must be clean.
"""

from __future__ import annotations

import multiprocessing as mp
import random
import sqlite3
import statistics
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import workload

from kaos_dream import Library

OPS_PER_TRANSACTION = 25


def writer(db: str, index: int, seed: int, seconds: float, ready: Any, go: Any, results: Any) -> None:
    """One process committing 25-outcome transactions back to back until the time is up."""
    rng = random.Random(seed * 7919 + index)
    lib = Library(db)
    skill_ids = [r[0] for r in lib.conn.execute("SELECT id FROM skills ORDER BY id")]
    uses: Counter[tuple[int, int]] = Counter()
    commits = hits = 0
    took_ms: list[float] = []
    errors: list[str] = []
    ready.put(index)
    go.wait()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        # A quarter searches that record hits, the rest outcomes: about 4 ms of work per transaction.
        batch = [(rng.choice(skill_ids), rng.random() < 0.6, workload.query(rng) if rng.random() < 0.25 else None)
                 for _ in range(OPS_PER_TRANSACTION)]
        started = time.perf_counter()
        hit_rows = 0
        try:
            with lib.transaction():
                for sid, ok, query in batch:
                    if query is None:
                        lib.record_outcome(sid, ok, agent=f"writer-{index}")
                    else:
                        hit_rows += len(lib.search(query, limit=5, record_hits=True, agent=f"writer-{index}"))
        except Exception as exc:  # surfaced to the report, never retried here
            errors.append(f"{type(exc).__name__}: {exc}")
            continue
        took_ms.append((time.perf_counter() - started) * 1000.0)
        commits += 1
        hits += hit_rows
        for sid, ok, query in batch:
            if query is None:
                uses[(sid, int(ok))] += 1
    lib.close()
    results.put({"index": index, "commits": commits, "hits": hits, "errors": errors, "ms": took_ms,
                 "uses": [[s, ok, n] for (s, ok), n in uses.items()]})


def seed_library(db: str, seed: int) -> None:
    with Library(db) as lib, lib.transaction():
        for name, description, template in workload.skills(seed):
            lib.skills.add(name, description, template)


def verify(db: str, reports: list[dict[str, Any]]) -> list[str]:
    expected: Counter[tuple[int, int]] = Counter()
    for r in reports:
        for sid, ok, n in r["uses"]:
            expected[(sid, ok)] += n
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        recount = {(r[0], r[1]): r[2] for r in conn.execute(
            "SELECT skill_id, success, count(*) FROM skill_uses GROUP BY 1, 2")}
        hits = conn.execute(
            "SELECT (SELECT count(*) FROM skill_hits) + (SELECT count(*) FROM memory_hits)").fetchone()[0]
        left_running = conn.execute("SELECT count(*) FROM dream_runs WHERE status = 'running'").fetchone()[0]
    finally:
        conn.close()
    problems = []
    if hits != sum(r["hits"] for r in reports):
        problems.append(f"back-to-back: the writers recorded {sum(r['hits'] for r in reports)} hits, "
                        f"the file has {hits}")
    if recount != dict(expected):
        problems.append("back-to-back: skill_uses per skill and outcome differ from what the writers committed")
    if left_running:
        problems.append(f"back-to-back: {left_running} dream runs left 'running'")
    with Library(db, readonly=True) as lib:
        problems.extend(f"back-to-back integrity: {p}" for p in lib.check())
    return problems


def run(db: str, *, seed: int, seconds: float, writers: int,
        dream_loop: Callable[[str, float], dict[str, Any]]) -> tuple[dict[str, Any], list[str]]:
    """Run the scenario on a fresh library at ``db``; returns (figures for results.json, problems)."""
    seed_library(db, seed)
    ctx = mp.get_context("spawn")
    ready, results, go = ctx.Queue(), ctx.Queue(), ctx.Event()
    procs = [ctx.Process(target=writer, args=(db, i, seed, seconds, ready, go, results)) for i in range(writers)]
    for p in procs:
        p.start()
    for _ in procs:
        ready.get(timeout=120)
    print(f"back-to-back: {writers} writers x {OPS_PER_TRANSACTION}-operation transactions for {seconds:g} s "
          "with the dream beside them ...", flush=True)
    go.set()
    dream = dream_loop(db, time.monotonic() + seconds)
    reports = sorted((results.get(timeout=300) for _ in procs), key=lambda r: r["index"])
    for p in procs:
        p.join(timeout=60)
    problems = verify(db, reports)
    errors = [e for r in reports for e in r["errors"]]
    problems += [f"back-to-back writer error: {e}" for e in errors[:10]]
    problems += [f"back-to-back dream invocation failed: {d}" for d in dream["errors"][:5]]
    crashed = [p.exitcode for p in procs if p.exitcode != 0]
    if crashed:
        problems.append(f"back-to-back writer processes exited with {crashed}")
    all_ms = sorted(ms for r in reports for ms in r["ms"])
    figures = {
        "writers": writers,
        "ops_per_transaction": OPS_PER_TRANSACTION,
        "seconds": seconds,
        "commits_per_writer": [r["commits"] for r in reports],
        "starved_writers": sum(r["commits"] == 0 or bool(r["errors"]) for r in reports),
        "writer_errors": len(errors),
        "busy_errors": sum("locked" in e or "busy" in e.lower() for e in errors),
        "transaction_ms": {
            "p50": round(statistics.median(all_ms), 3) if all_ms else None,
            "p99": round(all_ms[min(len(all_ms) - 1, round(0.99 * (len(all_ms) - 1)))], 3) if all_ms else None,
            "max": round(all_ms[-1], 1) if all_ms else None,
        },
        "dream": {"invocations": dream["invocations"], "completed": dream["completed"],
                  "errors": len(dream["errors"]),
                  "median_s": round(statistics.median(dream["seconds"]), 3) if dream["seconds"] else None,
                  "max_s": round(max(dream["seconds"]), 3) if dream["seconds"] else None},
        "ok": not problems,
    }
    return figures, problems


def summary_lines(figures: dict[str, Any]) -> list[str]:
    """The results.md lines for this mode, from its figures."""
    t, d = figures["transaction_ms"], figures["dream"]
    return [
        f"* back-to-back writers: {figures['writers']} processes x {figures['ops_per_transaction']}-operation "
        f"transactions for {figures['seconds']:g} s: commits per writer {figures['commits_per_writer']}, "
        f"starved writers {figures['starved_writers']}, errors {figures['writer_errors']} "
        f"(busy {figures['busy_errors']}); transaction incl. lock wait p50 / p99 / max {t['p50']} / {t['p99']} / "
        f"{t['max']} ms; dream {d['completed']} of {d['invocations']} `--apply` runs completed, "
        f"{d['errors']} failed (median {d['median_s']} s, max {d['max_s']} s)",
    ]
