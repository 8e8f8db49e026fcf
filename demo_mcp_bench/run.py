"""What the MCP server costs an agent, and why it keeps one connection.

Measures, from scratch on every run, on a generated library (skills and memories written by this
script; no external data):

1. Connection strategy (in-process): one library operation on a connection kept open, against the
   same operation with the library opened and closed around it (what "open per tool call" would
   cost). Median and p90 over repeats, for a search, a failure lookup and a memory write.
2. Round trip over stdio: a real `kaos mcp serve` subprocess driven by the MCP SDK's stdio client;
   per tool, the latency of a call (median, p90, p99) beside the same operation called directly in
   process, so the protocol's share is visible.
3. Many agent hosts: several server processes writing one file at once; every write must land
   (failure occurrences, memories and outcomes counted afterwards), with the wall time and writes per
   second.

Writes results.json and results.md beside this file (``--quick``: results.quick.*, not committed).
There is no latency budget for the MCP server in the issues, so latency is reported,
not judged; the script exits 1 when a write is lost or a call fails. ``--quick`` runs fewer repeats
(well under a minute).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import anyio  # noqa: E402
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

from kaos_dream import Library, Settings, benchkit  # noqa: E402
from kaos_dream import agent_tools as tools  # noqa: E402

HERE = Path(__file__).resolve().parent
TOPICS = ("csv", "parquet", "postgres", "backup", "deploy", "canary", "retry", "http", "s3", "kafka", "tls", "dns",
          "docker", "pytest", "terraform", "redis", "cache", "queue", "schema", "index")


def build_library(path: Path, skills: int) -> None:
    """Deterministic skills and memories: each names three topics drawn in a fixed rotation."""
    with Library(path, settings=Settings()) as lib, lib.transaction():
        for i in range(skills):
            a, b, c = (TOPICS[(i * k) % len(TOPICS)] for k in (1, 3, 7))
            lib.skills.add(f"skill-{i:05d}", f"Handle {a} {b} with {c} (variant {i})", f"Do {{target}} with {a}")
            if i % 4 == 0:
                lib.memories.add(f"Observed {a} and {c} together in run {i}", kind="note", key=f"mem-{i:05d}")


def stats_ms(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)

    def pct(p: float) -> float:
        return ordered[min(len(ordered) - 1, int(round(p * (len(ordered) - 1))))] * 1000

    return {"n": len(ordered), "median_ms": statistics.median(ordered) * 1000, "p90_ms": pct(0.9),
            "p99_ms": pct(0.99), "min_ms": ordered[0] * 1000, "max_ms": ordered[-1] * 1000}


# -- 1. connection strategy -------------------------------------------------------------------------
def connection_strategy(path: Path, repeats: int) -> dict[str, Any]:
    ops: dict[str, Callable[[Library, int], Any]] = {
        "search": lambda lib, i: tools.search(lib, f"{TOPICS[i % 20]} {TOPICS[(i * 3) % 20]}", limit=10),
        "failure_lookup": lambda lib, i: tools.failure_lookup(lib, "http_get", "HTTP 429 Too Many Requests"),
        "memory_add": lambda lib, i: tools.memory_add(lib, f"bench note {i} {time.time_ns()}"),
    }
    out: dict[str, Any] = {}
    kept = Library(path, settings=Settings())
    try:
        for name, op in ops.items():
            per_call, warm = [], []
            for i in range(repeats):
                t0 = time.perf_counter()
                with Library(path, settings=Settings()) as lib:
                    op(lib, i)
                per_call.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                op(kept, i)
                warm.append(time.perf_counter() - t0)
            out[name] = {"kept_connection": stats_ms(warm), "open_per_call": stats_ms(per_call)}
    finally:
        kept.close()
    return out


# -- 2. stdio round trips -----------------------------------------------------------------------------
def server_params(path: Path) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "kaos_dream", "--db", str(path), "mcp", "serve"],
                                 env={"PYTHONPATH": str(ROOT)})


CALLS: dict[str, Callable[[int], dict[str, Any]]] = {
    "agent_start": lambda i: {"agent": f"rt-agent-{i}"},
    "search": lambda i: {"query": f"{TOPICS[i % 20]} {TOPICS[(i * 3) % 20]}", "limit": 10},
    "search_record_hits": lambda i: {"query": f"{TOPICS[i % 20]} {TOPICS[(i * 3) % 20]}", "limit": 10,
                                     "record_hits": True, "agent": f"rt-agent-{i}"},
    "record_outcome": lambda i: {"skill": f"skill-{i % 100:05d}", "success": i % 3 != 0, "agent": f"rt-agent-{i}"},
    "search_expand": lambda i: {"query": f"{TOPICS[i % 20]} {TOPICS[(i * 7) % 20]}", "limit": 10, "expand": 3},
    "skill_apply": lambda i: {"skill": f"skill-{i % 100:05d}", "params": {"target": f"t{i}"}},
    "failure_lookup": lambda i: {"tool": "http_get", "message": "HTTP 429 Too Many Requests"},
    # the episode agent_start began in this session: a server acts only on its own episodes
    "failure_record": lambda i: {"tool": "http_get", "message": f"HTTP 503 from shard {i}", "agent": f"rt-agent-{i}"},
    "memory_add": lambda i: {"content": f"round trip note {i}", "key": f"rt-{i}"},
    "dream_status": lambda i: {},
    "agent_end": lambda i: {"agent": f"rt-agent-{i}", "state": "completed",
                            "citations": [f"skill:skill-{i % 100:05d}"]},
}
TOOL_OF = {"search_expand": "search", "search_record_hits": "search"}  # measurement name -> tool name
DIRECT: dict[str, Callable[[Library, dict[str, Any]], Any]] = {
    "agent_start": lambda lib, a: tools.agent_start(lib, a["agent"] + "-direct"),
    "search_record_hits": lambda lib, a: tools.search(lib, a["query"], limit=a["limit"], record_hits=True,
                                                      agent=a["agent"] + "-direct"),
    "record_outcome": lambda lib, a: tools.record_outcome(lib, a["skill"], a["success"], agent=a["agent"] + "-direct"),
    "agent_end": lambda lib, a: tools.agent_end(lib, a["agent"] + "-direct", a["state"], citations=a["citations"]),
    "search": lambda lib, a: tools.search(lib, a["query"], limit=a["limit"]),
    "search_expand": lambda lib, a: tools.search(lib, a["query"], limit=a["limit"], expand=a["expand"]),
    "skill_apply": lambda lib, a: tools.skill_apply(lib, a["skill"], a["params"]),
    "failure_lookup": lambda lib, a: tools.failure_lookup(lib, a["tool"], a["message"]),
    "failure_record": lambda lib, a: tools.failure_record(lib, a["tool"], a["message"] + " direct",
                                                          a["agent"] + "-direct"),
    "memory_add": lambda lib, a: tools.memory_add(lib, a["content"], key=a["key"] + "-direct"),
    "dream_status": lambda lib, a: tools.dream_status(lib),
}


async def round_trips(path: Path, repeats: int) -> tuple[dict[str, Any], int]:
    errors = 0
    out: dict[str, Any] = {}
    with open(os.devnull, "w") as errlog:
        t0 = time.perf_counter()
        async with stdio_client(server_params(path), errlog=errlog) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            start_s = time.perf_counter() - t0
            for name, make in CALLS.items():
                samples = []
                for i in range(repeats):
                    args = make(i)
                    t = time.perf_counter()
                    result = await s.call_tool(TOOL_OF.get(name, name), args)
                    samples.append(time.perf_counter() - t)
                    errors += int(bool(result.is_error))
                out[name] = {"stdio": stats_ms(samples)}
    with Library(path, settings=Settings()) as lib:
        for name, make in CALLS.items():
            samples = []
            for i in range(repeats):
                args = make(i)
                t = time.perf_counter()
                DIRECT[name](lib, args)
                samples.append(time.perf_counter() - t)
            out[name]["direct"] = stats_ms(samples)
            stdio_ms, direct_ms = out[name]["stdio"]["median_ms"], out[name]["direct"]["median_ms"]
            out[name]["protocol_overhead_median_ms"] = stdio_ms - direct_ms
    out["_server_start_s"] = start_s
    return out, errors


# -- 3. many hosts --------------------------------------------------------------------------------------
async def many_hosts(path: Path, hosts: int, writes: int) -> dict[str, Any]:
    """Every host starts its server and initialises first; the clock runs from when all are ready."""
    failures = started = 0
    ready = anyio.Event()

    async def host(n: int) -> None:
        nonlocal failures, started
        with open(os.devnull, "w") as errlog:
            async with (
                stdio_client(server_params(path), errlog=errlog) as (read, write),
                ClientSession(read, write) as s,
            ):
                await s.initialize()
                for i in range(writes):  # untimed: a server records only for episodes it started
                    await s.call_tool("agent_start", {"agent": f"h{n}-{i}"})
                started += 1
                await ready.wait()
                for i in range(writes):
                    r1 = await s.call_tool("failure_record", {"tool": "hosts", "message": "ECONNRESET from upstream",
                                                              "agent": f"h{n}-{i}"})
                    r2 = await s.call_tool("memory_add", {"content": f"host {n} write {i}", "key": f"host-{n}-{i}"})
                    r3 = await s.call_tool("record_outcome", {"skill": "skill-00001", "success": True,
                                                              "agent": f"h{n}-{i}"})
                    failures += sum(int(bool(r.is_error)) for r in (r1, r2, r3))

    async with anyio.create_task_group() as tg:
        for n in range(hosts):
            tg.start_soon(host, n)
        while started < hosts:
            await anyio.sleep(0.05)
        t0 = time.perf_counter()
        ready.set()
    wall = time.perf_counter() - t0
    with Library(path, settings=Settings(), readonly=True) as lib:
        occurrences = lib.conn.execute(
            "SELECT count(*) FROM failure_occurrences o JOIN failure_fingerprints f ON f.id = o.fingerprint_id"
            " WHERE f.tool = 'hosts'").fetchone()[0]
        memories = lib.conn.execute("SELECT count(*) FROM memories WHERE key LIKE 'host-%'").fetchone()[0]
        outcomes = lib.conn.execute("SELECT count(*) FROM skill_uses AS u JOIN agent_keys AS a ON a.id = u.agent_key "
                                    "WHERE a.agent_id LIKE 'h%-%'").fetchone()[0]
        problems = lib.check()
    expected = hosts * writes
    return {"hosts": hosts, "writes_per_host": writes, "calls": 3 * expected, "failed_calls": failures,
            "occurrences": occurrences, "memories": memories, "outcomes": outcomes, "expected_each": expected,
            "lost": 3 * expected - occurrences - memories - outcomes, "integrity_problems": problems,
            "wall_s": wall, "writes_per_s": 3 * expected / wall if wall > 0 else None}


def summarise(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    """Across rounds: the median of each round's median, the range of those medians (the spread
    between runs) and the median of each round's p99."""
    def over(get: Callable[[dict[str, Any]], dict[str, float]]) -> dict[str, float]:
        medians = [get(r)["median_ms"] for r in rounds]
        return {"median_ms": statistics.median(medians), "min_median_ms": min(medians),
                "max_median_ms": max(medians), "p99_ms": statistics.median(get(r)["p99_ms"] for r in rounds)}

    out: dict[str, Any] = {"connection_strategy": {}, "round_trips": {}}
    for name in rounds[0]["connection_strategy"]:
        out["connection_strategy"][name] = {
            how: over(lambda r, n=name, h=how: r["connection_strategy"][n][h])
            for how in ("kept_connection", "open_per_call")
        }
    for name in CALLS:
        stdio = over(lambda r, n=name: r["round_trips"][n]["stdio"])
        direct = over(lambda r, n=name: r["round_trips"][n]["direct"])
        out["round_trips"][name] = {"stdio": stdio, "direct": direct,
                                    "protocol_overhead_median_ms": stdio["median_ms"] - direct["median_ms"]}
    out["server_start_s"] = statistics.median(r["round_trips"]["_server_start_s"] for r in rounds)
    return out


def write_results(results: dict[str, Any], stem: str, out: Path = HERE) -> Path:
    (out / f"{stem}.json").write_text(json.dumps(results, indent=2) + "\n")
    summary = results["summary"]
    n = len(results["rounds"])
    lines = ["# MCP server benchmark", "", f"Mode: {results['mode']}, {n} rounds, {results['repeats']} calls per "
             f"measurement per round, {results['skills']} skills. Generated by `run.py`; do not edit by hand. "
             "Each cell is the median over rounds of the round's median; [min–max] is the range of those "
             "medians (the spread between runs).", "",
             "## 1. Connection strategy (in-process, ms)", "",
             "| operation | kept connection | open per call | added by opening per call |", "|---|---|---|---|"]
    for name, r in summary["connection_strategy"].items():
        k, o = r["kept_connection"], r["open_per_call"]
        lines.append(f"| {name} | {k['median_ms']:.3f} [{k['min_median_ms']:.3f}–{k['max_median_ms']:.3f}] | "
                     f"{o['median_ms']:.3f} [{o['min_median_ms']:.3f}–{o['max_median_ms']:.3f}] | "
                     f"{o['median_ms'] - k['median_ms']:.3f} |")
    lines += ["", f"## 2. Round trip over stdio (ms; server start {summary['server_start_s']:.2f} s, median)", "",
              "| tool | stdio median [range] | stdio p99 | direct median | protocol overhead |",
              "|---|---|---|---|---|"]
    for name, r in summary["round_trips"].items():
        st, d = r["stdio"], r["direct"]
        lines.append(f"| {name} | {st['median_ms']:.2f} [{st['min_median_ms']:.2f}–{st['max_median_ms']:.2f}] | "
                     f"{st['p99_ms']:.2f} | {d['median_ms']:.3f} | {r['protocol_overhead_median_ms']:.2f} |")
    m = results["many_hosts"]
    lines += ["", "## 3. Many agent hosts writing one file", "",
              f"{m['hosts']} server processes x {m['writes_per_host']} (failure_record + memory_add + record_outcome): "
              f"{m['calls']} calls, {m['failed_calls']} failed, {m['lost']} writes lost, "
              f"integrity problems: {len(m['integrity_problems'])}; {m['wall_s']:.2f} s wall, "
              f"{m['writes_per_s']:.0f} writes/s.", "",
              f"Machine load (1-minute average) at the start of each round: {results['load_averages']}. The "
              "machine is shared by several engineers' test suites; the ranges and p99 show the noise.", ""]
    (out / f"{stem}.md").write_text("\n".join(lines))
    return out / f"{stem}.md"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one round, fewer repeats (CI)")
    parser.add_argument("--rounds", type=int, default=None, help="rounds of sections 1 and 2 (default 3; quick 1)")
    benchkit.add_standard_args(parser, here=HERE)  # --out, --junit
    args = parser.parse_args()
    repeats, skills, hosts, writes = (30, 300, 3, 10) if args.quick else (200, 2000, 4, 40)
    rounds = args.rounds or (1 if args.quick else 3)
    if rounds < 1:
        parser.error("--rounds must be at least 1")
    results: dict[str, Any] = {"mode": "quick" if args.quick else "full", "skills": skills, "repeats": repeats,
                               "load_averages": [], "rounds": []}
    call_errors = 0
    for _ in range(rounds):
        results["load_averages"].append(round(os.getloadavg()[0], 2))
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "bench.db"
            build_library(path, skills)
            one: dict[str, Any] = {"connection_strategy": connection_strategy(path, repeats)}
            one["round_trips"], errors = anyio.run(round_trips, path, repeats)
            call_errors += errors
            results["rounds"].append(one)
    results["round_trip_errors"] = call_errors
    results["summary"] = summarise(results["rounds"])
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.db"
        build_library(path, skills)
        results["many_hosts"] = anyio.run(many_hosts, path, hosts, writes)
    stem = benchkit.results_stem(args)
    report = write_results(results, stem.name, stem.parent)
    m = results["many_hosts"]
    ok = call_errors == 0 and m["failed_calls"] == 0 and m["lost"] == 0 and not m["integrity_problems"]
    print(report.read_text())
    if not ok:
        print("FAILED: a call failed or a write was lost", file=sys.stderr)
    checks = benchkit.Checks()  # no latency budget is set for MCP (see the docstring): correctness only
    checks.add("no failed round-trip call", call_errors == 0, f"{call_errors} round-trip calls failed")
    checks.add("no failed call with many hosts", m["failed_calls"] == 0, f"{m['failed_calls']} calls failed")
    checks.add("no lost write with many hosts", m["lost"] == 0, f"{m['lost']} writes lost")
    checks.add("integrity clean after many hosts", not m["integrity_problems"],
               "; ".join(map(str, m["integrity_problems"])))
    return benchkit.finish(args, "demo_mcp_bench", checks)


if __name__ == "__main__":
    sys.exit(main())
