"""What a `kaos hook` call costs the agent it runs beside, per event (issue 32 item 5).

A harness starts one `kaos hook claude-code` process per hook event, so the cost that matters is the
CPU time of that whole process (interpreter start-up included): measured here from the child's own
resource usage (``os.wait4``: user + system seconds), never from wall time, which a loaded machine
inflates. Measured, on a library of generated skills written by this script:

1. direct: sessions of Claude Code events (SessionStart, PostToolUse, PostToolUseFailure, the Skill
   tool, Stop, SessionEnd) applied to the library;
2. spooled: the same events while another process holds the write lock (each hook waits --wait-ms,
   then appends to the spool), then the replay that applies them;
3. the floor: ``python -c pass`` and ``kaos --version`` (the interpreter and the package's start-up).

Checks: every event lands exactly once (tool calls, failures, outcomes counted afterwards), and the
median CPU per direct and per spooled event is within the budget (``--budget-ms``, default 250 ms).
Writes results.json and results.md (``--quick``: results.quick.*, fewer sessions).
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kaos_dream import Library, Settings, benchkit  # noqa: E402

HERE = Path(__file__).resolve().parent
ENV = {**{k: v for k, v in os.environ.items() if not k.startswith("KAOS_") and k != "ANTHROPIC_API_KEY"},
       "PYTHONPATH": str(ROOT), "KAOS_STRONG_EMBEDDING_MODEL": "none"}


def child_cpu(cmd: list[str], stdin: bytes) -> tuple[float, int]:
    """CPU seconds (user + system) of one child process and its exit code."""
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=ENV)
    assert proc.stdin is not None
    proc.stdin.write(stdin)
    proc.stdin.close()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_utime + usage.ru_stime, proc.returncode


def session_events(session: str, tools: int) -> list[dict[str, Any]]:
    common = {"session_id": session, "transcript_path": "/nonexistent", "cwd": "/work", "permission_mode": "default"}
    events: list[dict[str, Any]] = [{**common, "hook_event_name": "SessionStart", "source": "startup"},
                                    {**common, "hook_event_name": "PostToolUse", "tool_name": "Skill",
                                     "tool_input": {"skill": "skill-00003"}, "tool_response": {},
                                     "tool_use_id": f"{session}-skill"}]
    for i in range(tools):
        if i % 5 == 2:
            events.append({**common, "hook_event_name": "PostToolUseFailure", "tool_name": "Bash",
                           "tool_input": {"command": "curl api"}, "error": f"curl: (22) HTTP 503 (attempt {i})",
                           "tool_use_id": f"{session}-t{i}"})
        else:
            events.append({**common, "hook_event_name": "PostToolUse", "tool_name": "Read",
                           "tool_input": {"file_path": f"/work/f{i}.py"}, "tool_response": {"content": "x" * 200},
                           "tool_use_id": f"{session}-t{i}"})
    events.append({**common, "hook_event_name": "Stop", "stop_hook_active": False})
    events.append({**common, "hook_event_name": "SessionEnd", "reason": "other"})
    return events


def stats(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    q = statistics.quantiles(ordered, n=10) if len(ordered) >= 2 else [ordered[0]] * 9
    return {"n": len(ordered), "median_ms": round(statistics.median(ordered) * 1000, 1),
            "p10_ms": round(q[0] * 1000, 1), "p90_ms": round(q[-1] * 1000, 1),
            "min_ms": round(ordered[0] * 1000, 1), "max_ms": round(ordered[-1] * 1000, 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=6, help="sessions per phase (default 6)")
    parser.add_argument("--tools", type=int, default=10, help="tool calls per session (default 10)")
    parser.add_argument("--skills", type=int, default=1000, help="skills in the generated library")
    parser.add_argument("--budget-ms", type=float, default=250.0, help="median CPU per event, ms")
    benchkit.add_standard_args(parser, here=HERE)
    args = parser.parse_args()
    if args.quick:
        args.sessions, args.tools, args.skills = 2, 5, 200
    started = time.monotonic()
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "kaos.db"
        with Library(db, settings=Settings()) as lib, lib.transaction():
            for i in range(args.skills):
                lib.skills.add(f"skill-{i:05d}", f"Generated skill {i} for topic {i % 37}", f"Do {{x}} {i}")
        hook = [sys.executable, "-m", "kaos_dream", "--db", str(db), "hook", "claude-code"]
        floor = {"python -c pass": [], "kaos --version": []}
        for _ in range(max(5, args.sessions)):
            floor["python -c pass"].append(child_cpu([sys.executable, "-c", "pass"], b"")[0])
            floor["kaos --version"].append(child_cpu([sys.executable, "-m", "kaos_dream", "--version"], b"")[0])
        direct: list[float] = []
        failures = 0
        for s in range(args.sessions):
            for event in session_events(f"direct-{s}", args.tools):
                cpu, code = child_cpu(hook, json.dumps(event).encode())
                direct.append(cpu)
                failures += code != 0
        # Spooled: another process holds the write lock while the same kind of sessions run.
        holder = sqlite3.connect(db, isolation_level=None, timeout=30)
        holder.execute("BEGIN IMMEDIATE")
        spooled: list[float] = []
        try:
            for s in range(args.sessions):
                for event in session_events(f"spooled-{s}", args.tools):
                    cpu, code = child_cpu([*hook, "--wait-ms", "50"], json.dumps(event).encode())
                    spooled.append(cpu)
                    failures += code != 0
        finally:
            holder.execute("COMMIT")
            holder.close()
        spool_lines = sum(Path(f"{db}.hook-spool.{end}").read_text().count("\n")
                          for end in ("jsonl", "claimed") if Path(f"{db}.hook-spool.{end}").exists())
        replay_cpu, code = child_cpu([sys.executable, "-m", "kaos_dream", "--db", str(db), "hook", "replay"], b"")
        failures += code != 0
        with Library(db, settings=Settings(), readonly=True) as lib:
            conn = lib.conn
            expect_tools = args.tools + 1  # the Skill call counts as a tool call
            expect_failures = sum(1 for i in range(args.tools) if i % 5 == 2)
            exact = True
            for prefix in ("direct", "spooled"):
                for s in range(args.sessions):
                    ep = lib.episodes.get(f"{prefix}-{s}")
                    occurrences = conn.execute("SELECT count(*) FROM failure_occurrences WHERE agent_id = ?",
                                               (ep.id,)).fetchone()[0]
                    exact &= ep.state != "running" and ep.tool_calls == expect_tools and occurrences == expect_failures
            outcomes = conn.execute("SELECT count(*) FROM skill_uses").fetchone()[0]
            exact &= outcomes == 2 * args.sessions
    load_after = os.getloadavg()
    result = {
        "sessions_per_phase": args.sessions, "tools_per_session": args.tools, "skills": args.skills,
        "events_per_phase": len(direct),
        "cpu_per_event": {"direct": stats(direct), "spooled": stats(spooled),
                          **{k: stats(v) for k, v in floor.items()}},
        "spooled_lines": spool_lines, "replay_cpu_ms": round(replay_cpu * 1000, 1),
        "replay_cpu_per_event_ms": round(replay_cpu * 1000 / max(1, spool_lines), 2),
        "every_event_applied_once": bool(exact), "hook_exit_failures": failures,
        "budget_ms": args.budget_ms, "loadavg_before": [round(x, 2) for x in load_before],
        "loadavg_after": [round(x, 2) for x in load_after], "seconds": round(time.monotonic() - started, 1),
        "python": sys.version.split()[0],
    }
    checks = benchkit.Checks()
    checks.add("every event applied exactly once", exact)
    checks.add("every hook call exited 0", failures == 0, f"{failures} non-zero exits")
    for phase in ("direct", "spooled"):
        median = result["cpu_per_event"][phase]["median_ms"]
        checks.add(f"median CPU per {phase} event <= {args.budget_ms:g} ms", median <= args.budget_ms,
                   f"{median} ms")
    result["checks"] = {c.name: c.passed for c in checks}
    stem = benchkit.results_stem(args)
    stem.with_suffix(".json").write_text(json.dumps(result, indent=2) + "\n")
    rows = [f"| {name} | {s['n']} | {s['median_ms']} | {s['p10_ms']} | {s['p90_ms']} | {s['min_ms']} | {s['max_ms']} |"
            for name, s in result["cpu_per_event"].items()]
    stem.with_suffix(".md").write_text("\n".join([
        "# demo_hook_bench: CPU per `kaos hook` event",
        "",
        f"{args.sessions} sessions of {len(direct) // max(1, args.sessions)} Claude Code events per phase, "
        f"{args.skills} skills; CPU = user + system seconds of the whole hook process (os.wait4). "
        f"Load average before/after: {result['loadavg_before']} / {result['loadavg_after']}.",
        "",
        "| process | events | median ms | p10 ms | p90 ms | min ms | max ms |",
        "|---|---|---|---|---|---|---|",
        *rows,
        "",
        f"- spooled while the write lock was held: {spool_lines} events; `kaos hook replay` applied them in "
        f"{result['replay_cpu_ms']} ms CPU ({result['replay_cpu_per_event_ms']} ms per event)",
        f"- every event applied exactly once: {exact}; non-zero hook exits: {failures}",
        *[f"- {c.name}: {'met' if c.passed else 'MISSED'} {('(' + c.detail + ')') if c.detail else ''}"
          for c in checks],
        "",
    ]))
    print(stem.with_suffix(".md").read_text())
    return benchkit.finish(args, "demo_hook_bench", checks, time.monotonic() - started)


if __name__ == "__main__":
    sys.exit(main())
