"""Back-to-back writers: the write-lock fairness scenario of issue 17.

Four writer processes each commit 25-operation transactions (one in eight a search that records
hits, the rest ``record_outcome`` calls, inside one ``lib.transaction()`` that holds the lock at
least 4 ms) back to back, with no pause between them, while the parent runs ``kaos dream run
--apply`` again and again.
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
from dataclasses import replace
from pathlib import Path
from typing import Any

import lock_holds
import workload

from kaos_dream import Library, Settings

OPS_PER_TRANSACTION = 25
# Each transaction holds the write lock at least this long (4 ms, as in the audit). The part not
# spent in the library is a sleep, not CPU work: on a busy 2-core machine CPU-bound writers are
# descheduled mid-loop, which opens gaps for the waiters and hides the unfairness an idle machine shows.
HOLD_S = 0.004
# The writers' lock budget (KAOS_BUSY_TIMEOUT_MS for them): 1 s, a tenth of the default, so that
# unfairness shows as errors within a short run; the dream passes keep the default 10 s.
BUSY_TIMEOUT_MS = 1000


Op = tuple[int, bool, "str | None"]  # (skill id, success, search query or None for an outcome)


def _batch(rng: random.Random, skill_ids: list[int]) -> list[Op]:
    """One transaction's operations: one in eight a search that records hits, the rest outcomes."""
    return [(rng.choice(skill_ids), rng.random() < 0.6, workload.query(rng) if rng.random() < 0.125 else None)
            for _ in range(OPS_PER_TRANSACTION)]


def writer(db: str, index: int, seed: int, seconds: float, busy_timeout_ms: int, ready: Any, go: Any,
           results: Any) -> None:
    """One process committing 25-outcome transactions back to back until the time is up."""
    rng = random.Random(seed * 7919 + index)
    lib = Library(db, settings=replace(Settings.from_env(), busy_timeout_ms=busy_timeout_ms))
    skill_ids = [r[0] for r in lib.conn.execute("SELECT id FROM skills ORDER BY id")]
    uses: Counter[tuple[int, int]] = Counter()
    commits = hits = 0
    took_ms: list[float] = []
    errors: list[str] = []
    ready.put(index)
    go.wait()
    deadline = time.monotonic() + seconds
    committed: list[tuple[list[Op], int]] = []
    batch = _batch(rng, skill_ids)
    while time.monotonic() < deadline:
        started = time.perf_counter()
        hit_rows, upcoming = 0, None
        try:
            with lib.transaction():
                locked_at = time.perf_counter()
                for sid, ok, query in batch:
                    if query is None:
                        lib.record_outcome(sid, ok, agent=f"writer-{index}")
                    else:
                        hit_rows += len(lib.search(query, limit=5, record_hits=True, agent=f"writer-{index}"))
                # The next batch is drawn while the lock is held and the counting waits for the end,
                # so the gap between one commit and the next BEGIN is as short as a tight agent loop's.
                upcoming = _batch(rng, skill_ids)
                left = HOLD_S - (time.perf_counter() - locked_at)
                if left > 0:
                    time.sleep(left)
        except Exception as exc:  # surfaced to the report, never retried here
            errors.append(f"{type(exc).__name__}: {exc}")
            batch = upcoming or _batch(rng, skill_ids)
            continue
        took_ms.append((time.perf_counter() - started) * 1000.0)
        committed.append((batch, hit_rows))
        batch = upcoming
    for done, hit_rows in committed:
        commits += 1
        hits += hit_rows
        for sid, ok, query in done:
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


def run(db: str, *, seed: int, seconds: float, writers: int, busy_timeout_ms: int = BUSY_TIMEOUT_MS,
        dream_loop: Callable[..., dict[str, Any]], trace_dir: Path | None = None) -> tuple[dict[str, Any], list[str]]:
    """Run the scenario on a fresh library at ``db``; returns (figures for results.json, problems).
    With ``trace_dir``, the writers' and the dream's write transactions are traced there
    (:mod:`lock_holds`) and their hold-time distribution is part of the figures."""
    seed_library(db, seed)
    ctx = mp.get_context("spawn")
    ready, results, go = ctx.Queue(), ctx.Queue(), ctx.Event()
    procs = [ctx.Process(target=writer, args=(db, i, seed, seconds, busy_timeout_ms, ready, go, results))
             for i in range(writers)]
    writer_trace = dream_trace = None
    if trace_dir is not None:
        writer_trace, dream_trace = trace_dir / "b2b-writers.trace", trace_dir / "b2b-dream.trace"
    lock_holds.set_for_children(writer_trace)
    for p in procs:
        p.start()
    lock_holds.set_for_children(None)
    for _ in procs:
        ready.get(timeout=120)
    print(f"back-to-back: {writers} writers x {OPS_PER_TRANSACTION}-operation transactions for {seconds:g} s "
          "with the dream beside them ...", flush=True)
    go.set()
    dream = dream_loop(db, time.monotonic() + seconds, dream_trace)
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
        "writer_busy_timeout_ms": busy_timeout_ms,
        "hold_ms": HOLD_S * 1000,
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
    if trace_dir is not None:
        figures["lock_holds"] = {"dream": lock_holds.summarise(dream_trace, "dream: open, other"),
                                 "writers": lock_holds.summarise(writer_trace, "writer")}
    return figures, problems


def no_dream(db: str, stop_at: float, trace: Path | None = None) -> dict[str, Any]:
    """The control: nothing beside the writers until they stop (``run.py --b2b-without-dream``)."""
    while time.monotonic() < stop_at:
        time.sleep(0.2)
    return {"invocations": 0, "completed": 0, "errors": [], "seconds": []}


def summary_lines(figures: dict[str, Any]) -> list[str]:
    """The results.md lines for this mode, from its figures."""
    t, d = figures["transaction_ms"], figures["dream"]
    return [
        f"* back-to-back writers: {figures['writers']} processes x {figures['ops_per_transaction']}-operation "
        f"transactions holding the lock >= {figures['hold_ms']:g} ms for {figures['seconds']:g} s, "
        f"busy timeout {figures['writer_busy_timeout_ms']} ms: commits per writer {figures['commits_per_writer']}, "
        f"starved writers {figures['starved_writers']}, errors {figures['writer_errors']} "
        f"(busy {figures['busy_errors']}); transaction incl. lock wait p50 / p99 / max {t['p50']} / {t['p99']} / "
        f"{t['max']} ms; dream {d['completed']} of {d['invocations']} `--apply` runs completed, "
        f"{d['errors']} failed (median {d['median_s']} s, max {d['max_s']} s)",
    ]
