"""`kaos hook`: harness hook events through a real `kaos hook` process (issue 32 item 5).

The Claude Code events are written from the shapes its hooks reference documents (common fields
session_id, transcript_path, cwd, hook_event_name; tool events with tool_name, tool_input,
tool_response or error, tool_use_id). The concurrency test runs real processes: harnesses firing
events while another process holds the write lock, and hooks killed with SIGKILL at seeded moments.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kaos_dream import Library, Settings

from .conftest import PROJECT_ROOT, SUITE_ENV, kaos_command, run_kaos

T = 1_767_225_600.0  # 2026-01-01T00:00:00Z: events that say when they happened


def cc(event: str, session: str = "sess-1", **fields: Any) -> str:
    """A Claude Code hook event with its common fields."""
    return json.dumps({"session_id": session, "transcript_path": fields.pop("transcript_path", "/nonexistent.jsonl"),
                       "cwd": "/work/project", "permission_mode": "default", "hook_event_name": event, **fields})


def hook(db: Path, payload: str, shape: str = "claude-code", *extra: str, env: dict[str, str] | None = None):
    return run_kaos("hook", shape, *extra, db=db, input=payload, env=env)


def library(db: Path) -> Library:
    return Library(db, settings=Settings(), readonly=True)


def uses(lib: Library, skill: str) -> tuple[int, int]:
    """(outcomes, successes) recorded for ``skill``."""
    row = lib.conn.execute("SELECT count(*), coalesce(sum(success), 0) FROM skill_uses WHERE skill_id = ?",
                           (lib.skills.get(skill).id,)).fetchone()
    return int(row[0]), int(row[1])


def write_transcript(path: Path) -> None:
    """A transcript as Claude Code appends it: assistant lines carry message.usage; one API message
    split over two content-block lines repeats its usage and must count once."""
    lines = [
        {"type": "user", "message": {"role": "user", "content": "convert the csv"}},
        {"type": "assistant", "message": {"id": "msg_1", "usage": {"input_tokens": 1000,
                                                                  "cache_read_input_tokens": 200,
                                                                  "output_tokens": 50}}},
        {"type": "assistant", "message": {"id": "msg_1", "usage": {"input_tokens": 1000,
                                                                  "cache_read_input_tokens": 200,
                                                                  "output_tokens": 50}}},
        {"type": "assistant", "message": {"id": "msg_2", "usage": {"input_tokens": 300, "output_tokens": 70}}},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def test_a_claude_code_session_becomes_an_episode_with_uses_failures_and_cost(tmp_path: Path) -> None:
    db = tmp_path / "kaos.db"
    with Library(db, settings=Settings()) as lib:
        lib.skills.add("csv-to-parquet", "Convert CSV files to parquet", "Convert {path}")
    transcript = tmp_path / "t.jsonl"
    write_transcript(transcript)
    calls = [
        cc("SessionStart", source="startup"),
        cc("PreToolUse", tool_name="Skill", tool_input={"skill": "csv-to-parquet"}, tool_use_id="toolu_1"),
        cc("PostToolUse", tool_name="Skill", tool_input={"skill": "csv-to-parquet"},
           tool_response={"success": True}, tool_use_id="toolu_1"),
        cc("PostToolUseFailure", tool_name="Bash", tool_input={"command": "curl https://api"},
           error="curl: (22) The requested URL returned error: 503", tool_use_id="toolu_2"),
        cc("PostToolUse", tool_name="Bash", tool_input={"command": "python convert.py"},
           tool_response={"stdout": "done", "stderr": ""}, tool_use_id="toolu_3"),
        cc("Stop", stop_hook_active=False, transcript_path=str(transcript)),
        cc("SessionEnd", reason="other", transcript_path=str(transcript)),
    ]
    for payload in calls:
        result = hook(db, payload)
        assert (result.returncode, result.stderr) == (0, ""), result.stderr
    # The same tool event delivered again (a harness retry) changes nothing.
    assert hook(db, calls[4]).returncode == 0
    with library(db) as lib:
        ep = lib.episodes.get("sess-1")
        assert ep.state == "completed"  # the last tool call worked
        assert (ep.tokens_in, ep.tokens_out, ep.tool_calls) == (1500, 120, 3)
        assert ep.duration_s is not None and ep.duration_s > 0
        assert uses(lib, "csv-to-parquet") == (1, 1)  # the invoked skill, judged by the session's end
        failures = lib.failures.list()
        assert [(f["tool"], f["occurrences"]) for f in failures] == [("Bash", 1)]
        assert lib.conn.execute("SELECT count(*) FROM hook_events WHERE kind LIKE 'tool%'").fetchone()[0] == 3


def test_a_session_whose_last_tool_failed_fails_and_its_skill_counts_as_a_failure(tmp_path: Path) -> None:
    db = tmp_path / "kaos.db"
    with Library(db, settings=Settings()) as lib:
        lib.skills.add("deploy-service", "Ship a service", "Deploy {name}")
    for payload in (
        cc("SessionStart", session="s-2"),
        cc("PostToolUse", session="s-2", tool_name="Skill", tool_input={"skill": "deploy-service"},
           tool_response={}, tool_use_id="u1"),
        # An MCP tool's result flagged as an error counts as a failed call.
        cc("PostToolUse", session="s-2", tool_name="mcp__deploy__rollout", tool_input={},
           tool_response={"isError": True, "content": [{"type": "text", "text": "rollout timed out after 300s"}]},
           tool_use_id="u2"),
        cc("SessionEnd", session="s-2", reason="prompt_input_exit"),
    ):
        assert hook(db, payload).returncode == 0
    with library(db) as lib:
        ep = lib.episodes.get("s-2")
        assert ep.state == "failed" and ep.tool_calls == 2 and ep.tokens_in is None  # no transcript: not reported
        assert uses(lib, "deploy-service") == (1, 0)
        assert [f["tool"] for f in lib.failures.list()] == ["mcp__deploy__rollout"]


def test_bad_events_exit_1_with_one_line_and_write_nothing(tmp_path: Path) -> None:
    db = tmp_path / "kaos.db"
    for payload, said in (
        ("not json", "not JSON"),
        (json.dumps({"hook_event_name": "SessionStart"}), "no session_id"),
        (json.dumps([1, 2]), "must be a JSON object"),
        (cc("PostToolUse", session="x" * 500, tool_name="Bash"), "longer than 200"),
        ("", "no hook event"),
    ):
        result = hook(db, payload)
        assert result.returncode == 1, payload
        assert result.stderr.count("\n") == 1 and said in result.stderr and "Traceback" not in result.stderr
    proc = subprocess.run([*kaos_command(), "--db", str(db), "hook", "claude-code"], input=b"\xff\xfe{}",
                          capture_output=True, env=_env())
    assert proc.returncode == 1 and b"not UTF-8" in proc.stderr
    assert not db.exists()  # nothing was created, let alone half-written
    bad_line = '{"type": "tool", "session": "r", "tool": "sh", "event_id": "a"}\n{"type": "tool", "session": "r"}\n'
    result = hook(db, bad_line, "jsonl")
    assert result.returncode == 1 and "line 2: the hook event has no tool" in result.stderr
    assert not db.exists()  # the good first line was not applied either


def test_the_neutral_shape_records_explicit_verdicts_usage_and_an_explicit_end(tmp_path: Path) -> None:
    db = tmp_path / "kaos.db"
    with Library(db, settings=Settings()) as lib:
        lib.skills.add("retry-with-backoff", "Retry a rate limited call", "Retry {call}")
    events = [
        {"type": "session_start", "session": "run-7", "event_id": "e1", "name": "nightly ETL", "at": T},
        {"type": "tool", "session": "run-7", "event_id": "e2", "tool": "http_get", "ok": False,
         "error": "HTTP 429 Too Many Requests", "at": T + 5},
        {"type": "skill", "session": "run-7", "event_id": "e3", "skill": "retry-with-backoff", "ok": True,
         "task": "fetch the orders", "at": T + 9},
        {"type": "usage", "session": "run-7", "event_id": "e4", "tokens_in": 900, "tokens_out": 80, "at": T + 10},
        {"type": "usage", "session": "run-7", "event_id": "e5", "tokens_in": 100, "tokens_out": 20, "at": T + 11},
        {"type": "session_end", "session": "run-7", "event_id": "e6", "outcome": "completed", "at": T + 42},
    ]
    text = "".join(json.dumps(e) + "\n" for e in events)
    assert hook(db, text, "jsonl").returncode == 0
    assert hook(db, text, "jsonl").returncode == 0  # every id seen: nothing doubles
    with library(db) as lib:
        ep = lib.episodes.get("run-7")
        assert (ep.name, ep.state, ep.tokens_in, ep.tokens_out, ep.tool_calls, ep.duration_s) == (
            "nightly ETL", "completed", 1000, 100, 1, 42.0)
        assert uses(lib, "retry-with-backoff") == (1, 1)
        assert lib.failures.list()[0]["occurrences"] == 1


def test_an_unreachable_library_spools_and_the_next_call_replays(tmp_path: Path) -> None:
    db = tmp_path / "kaos.db"
    spool = tmp_path / "spool"
    missing_dir_db = tmp_path / "no-such-dir" / "kaos.db"
    first = '{"type": "session_start", "session": "r1", "event_id": "a"}'
    result = hook(missing_dir_db, first, "jsonl", "--spool", str(spool))
    assert result.returncode == 0 and "spooled" in result.stderr and result.stderr.count("\n") == 1
    assert (tmp_path / "spool.jsonl").read_text().count("\n") == 1
    second = '{"type": "tool", "session": "r1", "event_id": "b", "tool": "sh", "ok": true}'
    result = hook(db, second, "jsonl", "--spool", str(spool))
    assert (result.returncode, result.stderr) == (0, "")
    assert not (tmp_path / "spool.jsonl").exists() and not (tmp_path / "spool.claimed").exists()
    with library(db) as lib:
        assert lib.episodes.get("r1").tool_calls == 1
        assert [r[0] for r in lib.conn.execute("SELECT event_id FROM hook_events ORDER BY received_at, event_id")] \
            == ["j:a", "j:b"]
    replayed = run_kaos("hook", "replay", "--spool", str(spool), "--json", db=db)
    assert replayed.returncode == 0 and json.loads(replayed.stdout)["applied"] == 0


def test_help_names_the_shapes() -> None:
    result = run_kaos("hook", "--help")
    assert result.returncode == 0 and "claude-code" in result.stdout and "jsonl" in result.stdout
    assert "Example:" in run_kaos("hook", "claude-code", "--help").stdout


# -- real processes: a writer holding the lock, hooks killed at random ---------------------------------

HARNESS = r'''
import json, os, random, signal, subprocess, sys, time
db, spool, harness, seed, sessions, events_each = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), \
    int(sys.argv[5]), int(sys.argv[6])
rng = random.Random(seed * 1000 + harness)
cmd = [sys.executable, "-m", "kaos_dream", "--db", db, "hook", "jsonl", "--spool", spool]
kills = calls = spooled = 0
for s in range(sessions):
    session = f"h{harness}-s{s}"
    events = [{"type": "session_start", "session": session, "event_id": f"{session}-start"}]
    for i in range(events_each):
        ok = i % 3 != 1
        event = {"type": "tool", "session": session, "event_id": f"{session}-t{i}", "tool": "http_get", "ok": ok}
        if not ok:
            event["error"] = f"HTTP 503 from shard {i}"
        events.append(event)
    events.append({"type": "skill", "session": session, "event_id": f"{session}-k", "skill": "fetch", "ok": True})
    events.append({"type": "session_end", "session": session, "event_id": f"{session}-end"})
    for event in events:
        while True:  # a harness delivers each event until a hook process exits (a SIGKILL is not an exit)
            calls += 1
            proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            proc.stdin.write(json.dumps(event).encode() + b"\n")
            proc.stdin.close()
            if rng.random() < 0.35:
                time.sleep(rng.uniform(0.0, 0.5))
                if proc.poll() is None:
                    proc.send_signal(signal.SIGKILL)
            proc.wait()
            spooled += b"spooled to" in proc.stderr.read()
            proc.stderr.close()
            if proc.returncode == -signal.SIGKILL:
                kills += 1
                continue
            assert proc.returncode == 0, (event, proc.returncode)
            break
print(json.dumps({"calls": calls, "kills": kills, "spooled": spooled}))
'''


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KAOS_") and k != "ANTHROPIC_API_KEY"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PROJECT_ROOT), env.get("PYTHONPATH")]))
    env.update(SUITE_ENV)
    return env


def test_four_harnesses_a_held_lock_and_killed_hooks_lose_and_double_nothing(tmp_path: Path) -> None:
    db = tmp_path / "kaos.db"
    spool = tmp_path / "spool"
    with Library(db, settings=Settings()) as lib:
        lib.skills.add("fetch", "Fetch a page", "GET {url}")
    harnesses, sessions, tools_each = 4, 2, 4
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sqlite3, sys, time\n"
        "c = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        "c.execute('BEGIN IMMEDIATE'); print('held', flush=True); time.sleep(5); c.execute('COMMIT')\n"), str(db)],
        stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    script = tmp_path / "harness.py"
    script.write_text(HARNESS)
    seed = os.environ.get("KAOS_TEST_HOOK_SEED", "7")
    procs = [subprocess.Popen([sys.executable, str(script), str(db), str(spool), str(h), seed, str(sessions),
                               str(tools_each)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env())
             for h in range(harnesses)]
    outs = [p.communicate(timeout=600) for p in procs]
    assert holder.wait(timeout=60) == 0
    for proc, (_out, err) in zip(procs, outs, strict=True):
        assert proc.returncode == 0, err
    stats = [json.loads(out) for out, _ in outs]
    print("hook stress:", stats)
    kills = sum(s["kills"] for s in stats)
    assert kills > 0  # the seeded killer did kill hooks mid-way
    assert sum(s["spooled"] for s in stats) > 0  # and the held lock sent events to the spool
    # What is still spooled is applied by the next call; here `kaos hook replay` (the dream does the same).
    replayed = run_kaos("hook", "replay", "--spool", str(spool), "--json", db=db)
    assert replayed.returncode == 0, replayed.stderr
    assert not (tmp_path / "spool.jsonl").exists() or (tmp_path / "spool.jsonl").stat().st_size == 0
    assert not (tmp_path / "spool.claimed").exists()
    with library(db) as lib:
        conn = lib.conn
        total_events = harnesses * sessions * (tools_each + 3)
        assert conn.execute("SELECT count(*) FROM hook_events WHERE kind NOT LIKE 'skill:%'").fetchone()[0] \
            == total_events
        failing = sum(1 for i in range(tools_each) if i % 3 == 1)
        for h in range(harnesses):
            for s in range(sessions):
                ep = lib.episodes.get(f"h{h}-s{s}")
                assert (ep.state, ep.tool_calls) == ("completed", tools_each), ep
                occurrences = conn.execute("SELECT count(*) FROM failure_occurrences WHERE agent_id = ?",
                                           (ep.id,)).fetchone()[0]
                assert occurrences == failing, (ep.id, occurrences)
        assert uses(lib, "fetch") == (harnesses * sessions, harnesses * sessions)
    rejected = tmp_path / "spool.rejected"
    assert not rejected.exists() or all("not a spooled event" in line for line in rejected.read_text().splitlines())


def test_a_writer_holding_the_lock_makes_hooks_spool_not_wait(tmp_path: Path) -> None:
    """While another process holds the write lock, a hook gives up after --wait-ms and spools."""
    db = tmp_path / "kaos.db"
    Library(db, settings=Settings()).close()
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    try:
        result = hook(db, '{"type": "session_start", "session": "w", "event_id": "1"}', "jsonl", "--wait-ms", "50")
        assert Path(f"{db}.hook-spool.jsonl").read_text().count("\n") == 1
        # The next call claims the spool, cannot apply it either, and spools its own event anew.
        second = hook(db, '{"type": "tool", "session": "w", "event_id": "2", "tool": "sh"}', "jsonl", "--wait-ms", "50")
    finally:
        conn.execute("COMMIT")
        conn.close()
    assert result.returncode == 0 and "spooled" in result.stderr and second.returncode == 0
    assert Path(f"{db}.hook-spool.claimed").exists() and Path(f"{db}.hook-spool.jsonl").exists()
    replayed = run_kaos("hook", "replay", "--json", db=db)
    assert replayed.returncode == 0 and json.loads(replayed.stdout)["applied"] == 2  # the claim, then the rest
    with library(db) as lib:
        assert (lib.episodes.get("w").state, lib.episodes.get("w").tool_calls) == ("running", 1)



def test_the_dream_applies_spooled_events_before_its_pass(tmp_path: Path) -> None:
    db = tmp_path / "kaos.db"
    Library(db, settings=Settings()).close()
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    try:
        events = ('{"type": "session_start", "session": "d1", "event_id": "1"}\n'
                  '{"type": "session_end", "session": "d1", "event_id": "2", "outcome": "completed"}\n')
        assert "spooled" in hook(db, events, "jsonl", "--wait-ms", "20").stderr
    finally:
        conn.execute("COMMIT")
        conn.close()
    result = run_kaos("dream", "run", "--quiet", db=db)
    assert result.returncode == 0, result.stderr
    assert not Path(f"{db}.hook-spool.jsonl").exists() and not Path(f"{db}.hook-spool.claimed").exists()
    with library(db) as lib:
        assert lib.episodes.get("d1").state == "completed"


@pytest.mark.both_engines
def test_events_apply_once_on_both_engines(library_target: str) -> None:
    """The same events, applied in process (the SQL of harness/apply.py), on SQLite and PostgreSQL."""
    from kaos_dream.harness.apply import apply_event
    from kaos_dream.harness.events import from_jsonl

    lines = [
        {"type": "session_start", "session": "pg-1", "event_id": "1", "name": "on a server", "at": T},
        {"type": "tool", "session": "pg-1", "event_id": "2", "tool": "Skill", "at": T + 1},
        {"type": "skill", "session": "pg-1", "event_id": "3", "skill": "csv-to-parquet", "at": T + 2},
        {"type": "tool", "session": "pg-1", "event_id": "4", "tool": "http_get", "ok": False, "error": "HTTP 503",
         "at": T + 3},
        {"type": "usage", "session": "pg-1", "event_id": "5", "tokens_in": 70, "tokens_out": 7, "at": T + 4},
        {"type": "session_end", "session": "pg-1", "event_id": "6", "at": T + 10},
    ]
    with Library(library_target, settings=Settings()) as lib:
        lib.skills.add("csv-to-parquet", "Convert CSV files to parquet", "Convert {path}")
        events = [from_jsonl(line, T + 20) for line in lines]
        assert [apply_event(lib, e) for e in events] == [True] * 6
        assert [apply_event(lib, e) for e in events] == [False] * 6
        ep = lib.episodes.get("pg-1")
        # The last tool call failed, so the session failed, and the invoked skill counts as a failure.
        assert (ep.name, ep.state, ep.tool_calls, ep.tokens_in, ep.tokens_out, ep.duration_s) == (
            "on a server", "failed", 2, 70, 7, 10.0)
        assert uses(lib, "csv-to-parquet") == (1, 0)
        assert [f["tool"] for f in lib.failures.list()] == ["http_get"]
