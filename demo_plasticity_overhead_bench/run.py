"""What plasticity costs on the hot path: per-op latency with KAOS_DREAM_AUTO on vs off.

Workload (``../shared/bench-data/kaos/plasticity_overhead_bench.json`` or ``--data``): a fresh file
library per measurement seeded with 100 skills and 50 memories; 200 timed ops each of

* ``record_outcome``: ``record_outcome(skill_ids[i % 100], success=(i % 2 == 0), agent=runner)``
* ``memory_search``: ``search(f"number {i % 50}", kind="memory", limit=5, record_hits=True, agent=runner)``
* ``agent_complete``: as the workload file specifies, 200 agents are pre-spawned untimed (started,
  nothing else), then ``complete(agent)`` is timed for each;
* ``agent_complete_session`` (ours, not in the workload file): each of the 200 agents first has a
  realistic session (3 outcomes and one memory search with hits, so ending it counts 28
  co-activation pairs, some of them planted ``co_occurs_with`` edges to strengthen), and the library
  keeps its default settings (an automatic dry-run pass every 100 completions lands in the tail).
  Reported beside the budgeted op, measured the same way, with the +300 µs line shown for reference;
  it is not one of the project's budgets and does not decide the exit status.

The three workload ops run with the workload file's environment (``env``: dream and systemic
thresholds of 1,000,000, so no automatic pass fires while timing).

Each round builds a fresh library per op and mode and times the op interleaved: call ``i`` with
plasticity on, then off (or off, then on, alternating), so both modes meet the same moment of a
shared machine whose speed swings from second to second. ``--repeats`` rounds; each statistic is the
median over rounds, with the spread of p50 reported; the delta is the median over rounds of
(on − off) within the round.

Also measured: absolute p50 of ``record_outcome`` and weighted search on a generated library of 10,000
skills (``--scale`` adds more sizes, e.g. ``--scale 100000``), each query matching ~45 % of the corpus.

Exit status is non-zero when a budget is missed: Δp50 ≤ +20 µs record_outcome,
≤ +50 µs search with hits, ≤ +300 µs agent complete; p99 < 20 ms; weighted search p50 ≤ 2 ms at 10k
(≤ 10 ms at 100k when measured).

``--seed N`` (default 42, the committed results) seeds the generated scale libraries, their queries and
telemetry, and (as N - 35, so 7 by default) the realistic sessions of ``agent_complete_session``.

    python demo_plasticity_overhead_bench/run.py [--quick] [--data PATH] [--scale 100000] [--seed N]
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from itertools import combinations
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # this checkout's kaos_dream, not whichever copy pip installed

from kaos_dream import Library, ManualClock, Settings, benchkit  # noqa: E402

T0 = 1_767_225_600.0
DELTA_P50_BUDGET_US = {"record_outcome": 20.0, "memory_search": 50.0, "agent_complete": 300.0}
# Reported beside the budgeted ops, never deciding the exit status: the op and the line it is read against.
REPORTED_OPS = {"agent_complete_session": 300.0}
P99_BUDGET_US = 20_000.0
SEARCH_P50_BUDGET_MS = {10_000: 2.0, 100_000: 10.0}
RECORD_P50_BUDGET_US_AT_SCALE = 1_000.0  # absolute record_outcome p50 at 10k skills: a sanity bound only
# Issue 19's hot-path goals, measured side by side in the same run (see hot_path()).
SINGLE_VS_FLOOR_MIN = 0.5  # record_outcome rate >= 0.5 x a raw INSERT + UPDATE transaction on the same file
BATCHED_VS_FLOOR_MIN = 0.8  # record_outcomes (100 a call) rate >= 0.8 x that floor
BYTES_PER_OUTCOME_MAX = 100.0  # file growth per outcome with a task context
GRAPH_AFTER_WRITE_MAX = 2.0  # expanded search right after an unrelated write <= 2 x the cached time
HOT_BLOCK = 400  # outcomes per timed block
# Rounds of the three blocks (--quick: 3). A round takes ~0.1 s at 100k skills; on this shared machine
# one block's rate swings up to 2x from the next, and 7 rounds let the median ratio move by +-0.08.
HOT_ROUNDS = 25
SEED = 42  # --seed: the scale libraries; the committed results use 42
SESSION_SEED_OFFSET = -35  # the sessions of agent_complete_session: seed 7 at the default --seed

VERBS = "load save transform validate sync export import index compress encrypt deploy monitor".split()
DOMAINS = "postgres redis sqs kafka s3 http grpc csv parquet json yaml docker kubernetes git".split()
WORDS = (VERBS + DOMAINS + "retry backoff schema cache batch stream token auth quota shard replica "
         "snapshot vacuum migrate rollback audit metric alert trace".split())


def default_data() -> Path:
    return HERE.parents[1] / "shared" / "bench-data" / "kaos"


def stats_us(samples_ns: list[int]) -> dict[str, float]:
    """p50 = median; p95/p99 = sorted[min(n-1, int(n*p))]; max (as the workload file specifies)."""
    us = sorted(s / 1000.0 for s in samples_ns)
    n = len(us)
    return {
        "p50_us": round(statistics.median(us), 2),
        "p95_us": round(us[min(n - 1, int(n * 0.95))], 2),
        "p99_us": round(us[min(n - 1, int(n * 0.99))], 2),
        "max_us": round(us[-1], 2),
    }


def workload_settings(data: dict[str, Any], auto: bool) -> Settings:
    """The workload file's environment (its ``env`` thresholds) with plasticity on or off."""
    env = data.get("env", {})
    return Settings(dream_auto=auto, dream_threshold=int(env.get("KAOS_DREAM_THRESHOLD", 100)),
                    systemic_threshold=int(env.get("KAOS_SYSTEMIC_THRESHOLD", 5)))


def seeded_library(path: Path, data: dict[str, Any], settings: Settings) -> tuple[Library, ManualClock, list[int]]:
    clock = ManualClock(T0)
    lib = Library(path, clock=clock, settings=settings)
    seed = data["seed_library"]
    with lib.transaction():
        ids = [lib.skills.add(s["name"], s["description"], s["template"], s["tags"]).id for s in seed["skills"]]
        for m in seed["memories"]:
            lib.memories.add(m["content"], key=m["key"], kind=m.get("type", "note"))
    return lib, clock, ids


Fixture = Callable[[Path, bool], tuple[Library, Callable[[int], object]]]


def interleaved(op_on: Callable[[int], object], op_off: Callable[[int], object], n: int) -> dict[str, list[int]]:
    """Time op ``i`` with plasticity on and off back to back (which goes first alternates), so both
    modes see the same moment of a machine whose speed swings from second to second."""
    samples: dict[str, list[int]] = {"on": [], "off": []}
    for i in range(n):
        order = (("on", op_on), ("off", op_off)) if i % 2 == 0 else (("off", op_off), ("on", op_on))
        for mode, op in order:
            t = time.perf_counter_ns()
            op(i)
            samples[mode].append(time.perf_counter_ns() - t)
    return samples


def time_ops(op: Callable[[int], object], n: int) -> list[int]:
    samples = []
    for i in range(n):
        t = time.perf_counter_ns()
        op(i)
        samples.append(time.perf_counter_ns() - t)
    return samples


def fixtures(data: dict[str, Any], seed: int = SEED) -> dict[str, Fixture]:
    """Per op: build a fresh library for one mode and return it with the op to time (``seed``: --seed)."""
    n = int(data["n_ops"])

    def record_outcome(path: Path, auto: bool) -> tuple[Library, Callable[[int], object]]:
        lib, _, ids = seeded_library(path, data, workload_settings(data, auto))
        lib.episodes.start("runner")
        return lib, lambda i: lib.record_outcome(ids[i % 100], i % 2 == 0, agent="runner")

    def memory_search(path: Path, auto: bool) -> tuple[Library, Callable[[int], object]]:
        lib, _, _ = seeded_library(path, data, workload_settings(data, auto))
        lib.episodes.start("runner")
        return lib, lambda i: lib.search(f"number {i % 50}", kind="memory", limit=5, record_hits=True, agent="runner")

    def agent_complete(path: Path, auto: bool) -> tuple[Library, Callable[[int], object]]:
        """As the workload file specifies: pre-spawned agents."""
        lib, _, _ = seeded_library(path, data, workload_settings(data, auto))
        with lib.transaction():
            agents = [lib.episodes.start(f"agent-{a:03d}").id for a in range(n)]
        return lib, lambda i: lib.episodes.complete(agents[i])

    def agent_complete_session(path: Path, auto: bool) -> tuple[Library, Callable[[int], object]]:
        """Ours: every agent has a session that gives its end 28 pairs to count; default settings."""
        lib, _, ids = seeded_library(path, data, Settings(dream_auto=auto))
        agents = agents_with_sessions(lib, ids, n, random.Random(seed + SESSION_SEED_OFFSET))
        return lib, lambda i: lib.episodes.complete(agents[i])

    return {"record_outcome": record_outcome, "memory_search": memory_search, "agent_complete": agent_complete,
            "agent_complete_session": agent_complete_session}


def agents_with_sessions(lib: Library, skill_ids: list[int], n: int, rng: random.Random) -> list[str]:
    """``n`` running agents, each with a realistic session (3 successful outcomes on random skills and
    one memory search with hits: 28 co-activation pairs at its end), plus ``co_occurs_with`` edges
    planted among the first 40 skills (the dream would create these) so that ending a session also
    strengthens edges. Shared with scripts/episode_end_profile.py."""
    agents = []
    with lib.transaction():
        for a in range(n):
            agent = lib.episodes.start(f"agent-{a:03d}").id
            for s in rng.sample(skill_ids, 3):
                lib.record_outcome(s, True, agent=agent)
            lib.search(f"number {a % 50}", kind="memory", limit=5, record_hits=True, agent=agent)
            agents.append(agent)
        lib.conn.executemany(
            "INSERT OR IGNORE INTO edges (src_kind, src_id, dst_kind, dst_id, relation, strength, provenance, "
            "created_at, updated_at) VALUES ('skill', ?, 'skill', ?, 'co_occurs_with', 0.3, 'emergent', ?, ?)",
            [(a, b, T0, T0) for a, b in combinations(skill_ids[:40], 2)],
        )
    return agents


def measure_round(data: dict[str, Any], tmp: Path, tag: str, seed: int) -> dict[str, dict[str, list[int]]]:
    """One round: for each op, a fresh library per mode, then the op timed on and off interleaved."""
    n = int(data["n_ops"])
    out: dict[str, dict[str, list[int]]] = {}
    for op, build in fixtures(data, seed).items():
        lib_on, op_on = build(tmp / f"{op}-on-{tag}.db", True)
        lib_off, op_off = build(tmp / f"{op}-off-{tag}.db", False)
        with lib_on, lib_off:
            out[op] = interleaved(op_on, op_off, n)
    return out


def calibration_ms() -> float:
    """How long a fixed pure-Python loop takes right now: the machine is shared and its speed drifts
    (this loop has been seen to take 12 ms in one second and 19 ms in the next), so every result
    records it beside the latencies, to compare runs from different moments. It is no budget's input."""
    times = []
    for _ in range(3):
        t = time.perf_counter()
        total = 0
        for i in range(200_000):
            total += i * i
        times.append(time.perf_counter() - t)
    return round(statistics.median(times) * 1000, 2)


def overhead(data: dict[str, Any], repeats: int, seed: int) -> dict[str, Any]:
    rounds: dict[str, dict[str, list[dict[str, float]]]] = {"on": {}, "off": {}}
    calibration: list[float] = []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        for r in range(repeats):
            calibration.append(calibration_ms())
            for op, by_mode in measure_round(data, tmp, str(r), seed).items():
                for mode, samples in by_mode.items():
                    rounds[mode].setdefault(op, []).append(stats_us(samples))
    result: dict[str, Any] = {}
    for op in (*DELTA_P50_BUDGET_US, *REPORTED_OPS):
        entry: dict[str, Any] = {}
        for mode in ("on", "off"):
            per_round = rounds[mode][op]
            entry[f"auto_{mode}"] = {k: round(statistics.median(r[k] for r in per_round), 2) for k in per_round[0]}
            entry[f"auto_{mode}"]["p50_us_spread"] = [min(r["p50_us"] for r in per_round),
                                                     max(r["p50_us"] for r in per_round)]
        # Paired deltas: within a round on and off are timed op by op, interleaved, so the machine's
        # swings hit both alike; the delta is the median over rounds of (on - off).
        entry["delta"] = {
            k: round(statistics.median(on[k] - off[k] for on, off in zip(rounds["on"][op], rounds["off"][op],
                                                                           strict=True)), 2)
            for k in ("p50_us", "p95_us", "p99_us", "max_us")
        }
        entry["delta_p50_us_per_round"] = [
            round(on["p50_us"] - off["p50_us"], 2) for on, off in zip(rounds["on"][op], rounds["off"][op], strict=True)
        ]
        line = DELTA_P50_BUDGET_US.get(op, REPORTED_OPS.get(op))
        within = entry["delta"]["p50_us"] <= line and entry["auto_on"]["p99_us"] < P99_BUDGET_US
        if op in DELTA_P50_BUDGET_US:
            entry["budget"] = {"delta_p50_us_le": line, "p99_us_lt": P99_BUDGET_US}
            entry["within_budget"] = within
        else:
            entry["budget"] = None  # reported only
            entry["reference_line"] = {"delta_p50_us_le": line, "p99_us_lt": P99_BUDGET_US}
            entry["within_reference_line"] = within
        result[op] = entry
    result["calibration_loop_ms"] = {"median": round(statistics.median(calibration), 2), "min": min(calibration),
                                     "max": max(calibration), "per_block": calibration}
    return result


def build_scale(path: Path, n: int, rng: random.Random) -> list[int]:
    with Library(path, clock=ManualClock(T0), settings=Settings()) as lib, lib.transaction():
        ids = []
        for i in range(n):
            verb, domain = rng.choice(VERBS), rng.choice(DOMAINS)
            words = " ".join(rng.sample(WORDS, 6))
            ids.append(lib.skills.add(f"{verb}-{domain}-{i}", f"{words} {domain}", f"Run {verb} against {domain}",
                                      [domain]).id)
        return ids


def floor_connection(path: Path, skill_ids: list[int]) -> sqlite3.Connection:
    """A plain connection to the same file with the library's pragmas (WAL, synchronous NORMAL) and two
    scratch tables: the raw floor is ``BEGIN IMMEDIATE; INSERT; UPDATE; COMMIT`` on them."""
    conn = sqlite3.connect(str(path), isolation_level=None)
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA busy_timeout = 10000")
    conn.execute("CREATE TABLE IF NOT EXISTS bench_floor_uses (id INTEGER PRIMARY KEY, skill_id INTEGER NOT NULL, "
                 "agent_id TEXT, success INTEGER NOT NULL, created_at REAL NOT NULL)")
    conn.execute("CREATE TABLE IF NOT EXISTS bench_floor_stats (skill_id INTEGER PRIMARY KEY, uses INTEGER NOT NULL, "
                 "successes INTEGER NOT NULL)")
    conn.executemany("INSERT OR IGNORE INTO bench_floor_stats VALUES (?, 0, 0)", [(i,) for i in skill_ids])
    return conn


def floor_op(conn: sqlite3.Connection, skill_id: int, success: int) -> None:
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("INSERT INTO bench_floor_uses (skill_id, agent_id, success, created_at) VALUES (?, 'runner', ?, ?)",
                 (skill_id, success, T0))
    conn.execute("UPDATE bench_floor_stats SET uses = uses + 1, successes = successes + ? WHERE skill_id = ?",
                 (success, skill_id))
    conn.execute("COMMIT")


def run_block(mode: str, picks: list[tuple[int, bool]], lib: Library, floor_conn: sqlite3.Connection) -> None:
    """``picks`` (skill, success) written by one form: the raw floor, ``record_outcome`` one transaction
    each, or ``record_outcomes`` 100 a call."""
    if mode == "floor":
        for sid, ok in picks:
            floor_op(floor_conn, sid, int(ok))
    elif mode == "single":
        for sid, ok in picks:
            lib.record_outcome(sid, ok, agent="runner")
    else:
        for lo in range(0, len(picks), 100):
            lib.record_outcomes([{"skill": sid, "success": ok, "agent": "runner"} for sid, ok in picks[lo:lo + 100]])


def wal_frames_per_outcome(lib: Library, path: Path, floor_conn: sqlite3.Connection, ids: list[int],
                           k: int = 200) -> dict[str, float]:
    """Pages each form writes per outcome: the WAL frames ``k`` outcomes append (a frame is one page
    written at commit), with automatic checkpoints off while they are counted and restored after."""
    wal = Path(str(path) + "-wal")
    frame = int(lib.conn.execute("PRAGMA page_size").fetchone()[0]) + 24  # + the frame header
    conns = (lib.conn, floor_conn)
    for conn in conns:
        conn.execute("PRAGMA wal_autocheckpoint = 0")
    out: dict[str, float] = {}
    try:
        for mode in ("floor", "single", "batched"):
            lib.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            before = wal.stat().st_size if wal.exists() else 0
            run_block(mode, [(ids[i * 7919 % len(ids)], i % 3 != 0) for i in range(k)], lib, floor_conn)
            out[mode] = round((wal.stat().st_size - max(before, 32)) / frame / k, 2)
    finally:
        for conn in conns:
            conn.execute("PRAGMA wal_autocheckpoint = 1000")
    return out


def file_bytes(conn: sqlite3.Connection) -> int:
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return int(conn.execute("PRAGMA page_count").fetchone()[0]) * int(conn.execute("PRAGMA page_size").fetchone()[0])


def hot_path(
    lib: Library, path: Path, ids: list[int], qs: list[str], rounds: int, rng: random.Random
) -> dict[str, Any]:
    """Issue 19's hot path, each against its floor in the same run, interleaved block by block:

    * outcomes/s of the raw floor, ``record_outcome`` (one transaction each) and ``record_outcomes``
      (100 a call), ``HOT_BLOCK`` outcomes per block, the three blocks in turn each round;
    * bytes the file grows per outcome (10,000 outcomes with a task context, one call per 100);
    * the graph cache: a first load of the edges, expanded search cached, and expanded search right after
      an unrelated ``record_outcome`` (the write untimed), with the number of edge loads it caused."""
    floor_conn = floor_connection(path, ids)
    n = len(ids)
    rates: dict[str, list[float]] = {"floor": [], "single": [], "batched": []}
    ratios: dict[str, list[float]] = {"single": [], "batched": []}
    k = 0
    try:
        for _ in range(rounds):
            block: dict[str, float] = {}
            for mode in ("floor", "single", "batched"):
                picks = [(ids[(k + i) * 7919 % n], (k + i) % 3 != 0) for i in range(HOT_BLOCK)]
                k += HOT_BLOCK
                t = time.perf_counter()
                run_block(mode, picks, lib, floor_conn)
                block[mode] = HOT_BLOCK / (time.perf_counter() - t)
                rates[mode].append(block[mode])
            for mode in ratios:
                ratios[mode].append(block[mode] / block["floor"])
        frames = wal_frames_per_outcome(lib, path, floor_conn, ids)
    finally:
        floor_conn.close()
    before = file_bytes(lib.conn)
    tasked = [{"skill": ids[rng.randrange(n)], "success": rng.random() < 0.6, "agent": f"sized-{i % 20}",
               "task": rng.choice(qs)} for i in range(10_000)]
    for lo in range(0, len(tasked), 100):
        lib.record_outcomes(tasked[lo:lo + 100])
    per_outcome = (file_bytes(lib.conn) - before) / len(tasked)

    from kaos_dream.graph import search_expanded

    with lib.transaction():  # a planted graph: one co_occurs_with edge per skill, to a random other skill
        lib.conn.executemany(
            "INSERT OR IGNORE INTO edges (src_kind, src_id, dst_kind, dst_id, relation, strength, provenance, "
            "created_at, updated_at) VALUES ('skill', ?, 'skill', ?, 'co_occurs_with', ?, 'emergent', ?, ?)",
            [(min(a, b), max(a, b), round(rng.uniform(0.2, 0.9), 3), T0, T0)
             for a, b in ((ids[i], ids[rng.randrange(n)]) for i in range(n)) if a != b])
    edges = lib.graph.count()
    loads0 = lib.graph.loads
    t = time.perf_counter()
    lib.graph.arrays()
    first_load_ms = (time.perf_counter() - t) * 1000
    cached: list[float] = []
    after_write: list[float] = []
    for i in range(min(len(qs), 100)):
        t = time.perf_counter()
        search_expanded(lib, qs[i], kind="skill", limit=10)
        cached.append((time.perf_counter() - t) * 1000)
        lib.record_outcome(ids[i * 31 % n], i % 2 == 0, agent="runner")  # touches no edge
        t = time.perf_counter()
        search_expanded(lib, qs[i], kind="skill", limit=10)
        after_write.append((time.perf_counter() - t) * 1000)
    cached_ms, after_ms = statistics.median(cached), statistics.median(after_write)
    single_ratio, batched_ratio = statistics.median(ratios["single"]), statistics.median(ratios["batched"])
    out = {
        "rounds": rounds, "block": HOT_BLOCK,
        "outcomes_per_s": {m: round(statistics.median(v)) for m, v in rates.items()},
        "outcomes_per_s_spread": {m: [round(min(v)), round(max(v))] for m, v in rates.items()},
        "single_vs_floor": round(single_ratio, 3), "batched_vs_floor": round(batched_ratio, 3),
        "bytes_per_outcome_with_task": round(per_outcome, 1),
        "wal_frames_per_outcome": frames,
        "graph": {"edges": edges, "first_load_ms": round(first_load_ms, 2),
                  "expanded_search_cached_p50_ms": round(cached_ms, 3),
                  "expanded_search_after_write_p50_ms": round(after_ms, 3),
                  "after_write_vs_cached": round(after_ms / cached_ms, 3),
                  "edge_loads_during_the_loop": lib.graph.loads - loads0 - 1},
        "budget": {"single_vs_floor_ge": SINGLE_VS_FLOOR_MIN, "batched_vs_floor_ge": BATCHED_VS_FLOOR_MIN,
                   "bytes_per_outcome_le": BYTES_PER_OUTCOME_MAX, "after_write_vs_cached_le": GRAPH_AFTER_WRITE_MAX},
    }
    out["within_budget"] = {
        "single_vs_floor": single_ratio >= SINGLE_VS_FLOOR_MIN,
        "batched_vs_floor": batched_ratio >= BATCHED_VS_FLOOR_MIN,
        "bytes_per_outcome": per_outcome <= BYTES_PER_OUTCOME_MAX,
        "graph_after_write": after_ms / cached_ms <= GRAPH_AFTER_WRITE_MAX,
    }
    return out


def raw_fts_ms(lib: Library, qs: list[str], repeats: int) -> float:
    """p50 of the FTS query alone (rank, cut to 10, no join): the floor of a bm25 search."""
    from kaos_dream.search.query import fts_query

    times = []
    for _ in range(repeats):
        for q in qs:
            match = fts_query(q)
            t = time.perf_counter()
            lib.conn.execute("SELECT rowid, bm25(skills_fts) AS b FROM skills_fts WHERE skills_fts MATCH ? "
                             "ORDER BY b, rowid LIMIT 10", (match,)).fetchall()
            times.append(time.perf_counter() - t)
    return statistics.median(times) * 1000


def at_scale(n: int, queries: int, repeats: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp_name:
        path = Path(tmp_name) / "scale.db"
        t = time.perf_counter()
        ids = build_scale(path, n, rng)
        build_s = time.perf_counter() - t
        qs = [" ".join(rng.sample(WORDS, rng.randint(2, 4))) for _ in range(queries)]
        clock = ManualClock(T0 + 3600)
        with Library(path, clock=clock, settings=Settings()) as lib:
            # Telemetry so the counters are real: 2,000 outcomes on random skills under the benchmark's queries.
            with lib.transaction():
                for i in range(2000):
                    lib.record_outcome(rng.choice(ids), rng.random() < 0.6, agent=f"warm-{i % 50}", task=rng.choice(qs))
            ro = time_ops(lambda i: lib.record_outcome(ids[(i * 7919) % n], i % 3 != 0, agent="runner"), 500)
            for q in qs[:20]:
                lib.search(q, kind="skill")
            p50s: dict[str, list[float]] = {"weighted": [], "bm25": []}
            samples: dict[str, list[int]] = {"weighted": [], "bm25": []}
            for _ in range(repeats):
                for rank in ("weighted", "bm25"):
                    run = time_ops(lambda i, rank=rank: lib.search(qs[i], kind="skill", limit=10, rank=rank), len(qs))
                    p50s[rank].append(statistics.median(run) / 1e6)
                    samples[rank].extend(run)
            bm25_floor_ms = raw_fts_ms(lib, qs, repeats)
            hot = hot_path(lib, path, ids, qs, 3 if queries <= 100 else HOT_ROUNDS, rng)
            matched = statistics.median(
                lib.conn.execute("SELECT count(*) FROM skills_fts WHERE skills_fts MATCH ?",
                                 (" OR ".join(f'"{w}"' for w in q.split()),)).fetchone()[0] / n for q in qs[:100]
            )
    out: dict[str, Any] = {"skills": n, "build_seconds": round(build_s, 2), "queries": len(qs), "repeats": repeats,
                           "median_fraction_of_corpus_matched_by_or": round(matched, 3),
                           "record_outcome": stats_us(ro), "bm25_raw_fts_p50_ms": round(bm25_floor_ms, 3),
                           "hot_path": hot}
    for rank in ("weighted", "bm25"):
        s = stats_us(samples[rank])
        out[f"search_{rank}"] = {
            "p50_ms": round(statistics.median(p50s[rank]), 3),
            "p50_ms_spread": [round(min(p50s[rank]), 3), round(max(p50s[rank]), 3)],
            "p95_ms": round(s["p95_us"] / 1000, 3),
            "p99_ms": round(s["p99_us"] / 1000, 3),
            "max_ms": round(s["max_us"] / 1000, 3),
        }
    budget = SEARCH_P50_BUDGET_MS.get(n)
    out["budget"] = {"weighted_p50_ms_le": budget, "record_outcome_p50_us_le": RECORD_P50_BUDGET_US_AT_SCALE}
    out["within_budget"] = (budget is None or out["search_weighted"]["p50_ms"] <= budget) and (
        out["record_outcome"]["p50_us"] <= RECORD_P50_BUDGET_US_AT_SCALE
    )
    out["hot_path_within_budget"] = all(hot["within_budget"].values())
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=default_data(), help="folder with the kaos bench JSON files")
    parser.add_argument("--quick", action="store_true", help="2 rounds, 100 queries, 10k skills only")
    parser.add_argument("--repeats", type=int, default=None, help="on/off rounds (default 10, quick 2)")
    parser.add_argument("--scale", type=int, action="append", default=[], help="extra library size to time")
    parser.add_argument("--out", type=Path, default=HERE)
    benchkit.add_standard_args(parser, here=HERE, data=default_data(), seed=SEED)  # --seed, --junit
    args = parser.parse_args()
    stem = benchkit.results_stem(args).name  # a quick run never overwrites the full results
    repeats = args.repeats or (2 if args.quick else 10)
    started = time.perf_counter()
    results: dict[str, Any] = {"quick": args.quick, "repeats": repeats, "seed": args.seed}
    workload = args.data / "plasticity_overhead_bench.json"
    if workload.exists():
        data = json.loads(workload.read_text())
        results["overhead"] = overhead(data, repeats, args.seed)
    else:
        print(f"bench data not found at {workload}: skipping the on/off overhead part", file=sys.stderr)
        results["overhead"] = None
    sizes = [10_000] + [s for s in args.scale if s != 10_000]
    results["scale"] = [at_scale(n, 100 if args.quick else 300, 2 if args.quick else 5, args.seed) for n in sizes]
    ok = [e["within_budget"] for op, e in (results["overhead"] or {}).items() if op in DELTA_P50_BUDGET_US]
    ok += [s["within_budget"] for s in results["scale"]]
    ok += [met for s in results["scale"] for met in s["hot_path"]["within_budget"].values()]
    results["passed"] = all(ok)
    results["seconds"] = round(time.perf_counter() - started, 1)
    (args.out / f"{stem}.json").write_text(json.dumps(results, indent=2) + "\n")
    (args.out / f"{stem}.md").write_text(render_markdown(results))
    print(render_markdown(results))
    budgets = {f"{op} delta p50 and p99": e["within_budget"] for op, e in (results["overhead"] or {}).items()
               if op in DELTA_P50_BUDGET_US}
    budgets |= {f"{s['skills']} skills: weighted search and record_outcome p50": s["within_budget"]
                for s in results["scale"]}
    budgets |= {f"{s['skills']} skills: hot path {name}": met
                for s in results["scale"] for name, met in s["hot_path"]["within_budget"].items()}
    return benchkit.finish(args, "demo_plasticity_overhead_bench", benchkit.Checks.from_mapping(budgets),
                           results["seconds"])


def render_markdown(r: dict[str, Any]) -> str:
    lines = ["# demo_plasticity_overhead_bench results", "", "Generated by run.py; do not edit.", ""]
    if r["overhead"]:
        lines += [f"## Overhead, plasticity on vs off (median of {r['repeats']} rounds, µs)", "",
                  "| op | mode | p50 | p95 | p99 | max | p50 spread over rounds |", "|---|---|---|---|---|---|---|"]
        for op in (*DELTA_P50_BUDGET_US, *REPORTED_OPS):
            e = r["overhead"][op]
            for mode in ("on", "off"):
                s = e[f"auto_{mode}"]
                lines.append(f"| {op} | {mode} | {s['p50_us']} | {s['p95_us']} | {s['p99_us']} | {s['max_us']} | "
                             f"{s['p50_us_spread'][0]}–{s['p50_us_spread'][1]} |")
            d = e["delta"]
            if e["budget"] is not None:
                verdict = (f"budget Δp50 ≤ +{e['budget']['delta_p50_us_le']}, p99 < 20 ms: "
                           f"{'pass' if e['within_budget'] else 'FAIL'}")
            else:
                verdict = (f"reported only; against the +{e['reference_line']['delta_p50_us_le']} µs line: "
                           f"{'below' if e['within_reference_line'] else 'above'}")
            lines.append(f"| {op} | **on − off** | **{d['p50_us']:+}** | {d['p95_us']:+} | {d['p99_us']:+} | "
                         f"{d['max_us']:+} | {verdict} |")
        cal = r["overhead"].get("calibration_loop_ms")
        if cal:
            lines += ["", "Machine speed while these rounds ran: a fixed pure-Python loop took a median "
                      f"{cal['median']} ms (min {cal['min']}, max {cal['max']}) before each round. It is "
                      "recorded to compare runs made at different moments on this shared machine, and enters no "
                      "budget."]
        lines.append("")
    for s in r["scale"]:
        lines += [f"## {s['skills']:,} skills ({s['queries']} queries × {s['repeats']} repeats; each OR query "
                  f"matches a median {100 * s['median_fraction_of_corpus_matched_by_or']:.0f} % of the corpus)", "",
                  "| what | p50 | p95 | p99 | max | p50 spread |", "|---|---|---|---|---|---|"]
        ro = s["record_outcome"]
        lines.append(f"| record_outcome (µs) | {ro['p50_us']} | {ro['p95_us']} | {ro['p99_us']} | {ro['max_us']} | - |")
        for rank in ("weighted", "bm25"):
            q = s[f"search_{rank}"]
            lines.append(f"| search --rank {rank} (ms) | {q['p50_ms']} | {q['p95_ms']} | {q['p99_ms']} | "
                         f"{q['max_ms']} | {q['p50_ms_spread'][0]}–{q['p50_ms_spread'][1]} |")
        lines.append(f"| FTS query alone, the bm25 floor (ms) | {s['bm25_raw_fts_p50_ms']} | | | | - |")
        lines += ["", f"Budget weighted p50 ≤ {s['budget']['weighted_p50_ms_le']} ms: "
                      f"{'pass' if s['within_budget'] else 'FAIL'}", ""]
        lines += render_hot_path(s["hot_path"])
    lines += [f"Overall: {'PASS' if r['passed'] else 'FAIL'} ({r['seconds']} s)", ""]
    return "\n".join(lines)


def render_hot_path(h: dict[str, Any]) -> list[str]:
    rate, spread, ok, g = h["outcomes_per_s"], h["outcomes_per_s_spread"], h["within_budget"], h["graph"]
    verdict = {k: "pass" if v else "FAIL" for k, v in ok.items()}
    frames = h.get("wal_frames_per_outcome") or {}
    frames_text = " / ".join(str(frames.get(m, "-")) for m in ("floor", "single", "batched"))
    return [
        f"Hot path (issue 19), {h['rounds']} rounds of {h['block']} outcomes per mode, interleaved:", "",
        "| what | value | spread | goal |", "|---|---|---|---|",
        f"| raw INSERT + UPDATE transaction, same file (outcomes/s) | {rate['floor']} | "
        f"{spread['floor'][0]}–{spread['floor'][1]} | the floor |",
        f"| record_outcome (outcomes/s) | {rate['single']} | {spread['single'][0]}–{spread['single'][1]} | "
        f"{h['single_vs_floor']}× floor, ≥ {h['budget']['single_vs_floor_ge']}×: {verdict['single_vs_floor']} |",
        f"| record_outcomes, 100 a call (outcomes/s) | {rate['batched']} | "
        f"{spread['batched'][0]}–{spread['batched'][1]} | {h['batched_vs_floor']}× floor, "
        f"≥ {h['budget']['batched_vs_floor_ge']}×: {verdict['batched_vs_floor']} |",
        f"| pages written per outcome (WAL frames: floor / single / batched) | {frames_text} | - | - |",
        f"| file growth per outcome with a task (bytes) | {h['bytes_per_outcome_with_task']} | - | "
        f"≤ {h['budget']['bytes_per_outcome_le']}: {verdict['bytes_per_outcome']} |",
        f"| graph: first load of {g['edges']:,} edges (ms) | {g['first_load_ms']} | - | - |",
        f"| expanded search, cached (ms, p50) | {g['expanded_search_cached_p50_ms']} | - | - |",
        f"| expanded search right after a record_outcome (ms, p50) | {g['expanded_search_after_write_p50_ms']} | "
        f"{g['edge_loads_during_the_loop']} edge loads | {g['after_write_vs_cached']}× cached, "
        f"≤ {h['budget']['after_write_vs_cached_le']}×: {verdict['graph_after_write']} |",
        "",
    ]


if __name__ == "__main__":
    sys.exit(main())
