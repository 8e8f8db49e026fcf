"""What holds the write lock (issue 33 item 13), counted from the lock trace of real processes.

Writers beside the dream starved because transactions did work that needs no lock while holding it:
a fresh process's first ``lib.transaction()`` imported the episode and search stacks and loaded the
embedding models under the lock, the dream's graph and vectors phases imported their modules under
it, and the vector backfills stored thousands of rows in one transaction. These tests count, never
time: the modules imported while a transaction held the lock, and the rows one dream transaction
changed, from ``KAOS_LOCK_TRACE`` (:mod:`kaos_dream.store.lock_trace`) written by real processes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

from kaos_dream import Library, Settings
from kaos_dream.dream.feature_phases import BACKFILL_COMMIT_ROWS
from kaos_dream.dream.phases import MAX_ROWS_PER_TRANSACTION
from kaos_dream.store import lock_trace

ROOT = Path(__file__).resolve().parent.parent

WRITER = textwrap.dedent("""
    import sys
    from kaos_dream import Library, Settings
    lib = Library(sys.argv[1])
    sid = lib.conn.execute("SELECT min(id) FROM skills").fetchone()[0]
    warm = sys.argv[2] == "warm"
    with lib.transaction(warm=warm):
        lib.record_outcome(sid, True, agent="w1")
        lib.search("deploy the service", limit=5, record_hits=True, agent="w1")
        lib.failures.record("git", "fatal: could not read from remote 12", agent="w1")
    with lib.transaction(warm=warm):
        lib.search("rollback database", limit=5, record_hits=True, agent="w2")
    lib.episodes.start("e1")
    lib.record_outcome(sid, False, agent="e1")
    lib.episodes.complete("e1")
    lib.memories.add("restart the worker before a deploy")
""")


def _seed(db: Path, skills: int = 12) -> None:
    with Library(db) as lib, lib.transaction():
        for i in range(skills):
            lib.skills.add(f"deploy-step-{i}", f"deploy the service, step {i}; roll back the database if it fails",
                           "deploy {what}")


def _run(args: list[str], trace: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KAOS_")}
    env.update(extra)
    env[lock_trace.ENV] = str(trace)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, timeout=300)


def test_a_fresh_process_imports_nothing_while_it_holds_the_write_lock(tmp_path: Path) -> None:
    db, trace = tmp_path / "kaos.db", tmp_path / "writer.trace"
    _seed(db)
    proc = _run(["-c", WRITER, str(db), "warm"], trace)
    assert proc.returncode == 0, proc.stderr
    lines = lock_trace.read(str(trace))
    assert len(lines) >= 6  # the two grouped transactions, start, outcome, complete, memory add
    assert [x["imports"] for x in lines] == [0] * len(lines)
    assert all(x["ok"] for x in lines)
    assert max(x["rows"] for x in lines) > 0


def test_without_the_warm_up_a_search_inside_a_transaction_imports_under_the_lock(tmp_path: Path) -> None:
    """The control: the trace does see code loaded under the lock, and the warm-up is what removes it."""
    db, trace = tmp_path / "kaos.db", tmp_path / "writer.trace"
    _seed(db)
    proc = _run(["-c", WRITER, str(db), "cold"], trace)
    assert proc.returncode == 0, proc.stderr
    first = lock_trace.read(str(trace))[0]
    assert first["imports"] > 0


def test_no_dream_transaction_imports_code_or_stores_more_than_the_bound(tmp_path: Path) -> None:
    """A pass with more rows to backfill than one chunk: the fast vectors of skills written with
    semantic search off. Every write transaction of the dream process imports nothing and changes at
    most BACKFILL_COMMIT_ROWS rows plus its phase record and lease; the phase's summary still counts
    every vector it stored."""
    db, trace = tmp_path / "kaos.db", tmp_path / "dream.trace"
    rows = 2 * BACKFILL_COMMIT_ROWS + 17
    with Library(db, settings=replace(Settings.from_env(), semantic=False)) as lib, lib.transaction():
        for i in range(rows):
            lib.skills.add(f"step-{i}", f"deploy the service, step {i}", "deploy {what}")
        lib.episodes.start("e1")
        lib.record_outcome(1, True, agent="e1")
        lib.episodes.complete("e1")
    proc = _run(["-m", "kaos_dream", "--db", str(db), "dream", "run", "--apply", "--json"], trace,
                KAOS_STRONG_EMBEDDING_MODEL="none")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)["summary"]
    assert summary["phases"]["vectors"]["embedded"] == rows
    lines = [x for x in lock_trace.read(str(trace)) if str(x["label"]).startswith("dream:")]
    assert {x["label"] for x in lines} >= {"dream:start", "dream:vectors", "dream:vectors:prepare", "dream:finish"}
    assert [x["imports"] for x in lines] == [0] * len(lines)
    chunks = [x for x in lines if x["label"] == "dream:vectors:prepare"]
    assert len(chunks) >= 3  # the backfill committed in chunks, the lease renewed between them
    assert max(x["rows"] for x in lines) <= MAX_ROWS_PER_TRANSACTION + 2
    # 273 near-identical skills: every pair is a merge proposal, written in yielded chunks
    merges = summary["phases"]["proposals"]["merge"]
    assert merges["created"] == rows * (rows - 1) // 2
    assert sum(x["label"] == "dream:proposals" for x in lines) > merges["created"] // MAX_ROWS_PER_TRANSACTION


def test_the_trace_is_off_unless_asked_for(tmp_path: Path) -> None:
    db = tmp_path / "kaos.db"
    _seed(db, skills=2)
    before = set(tmp_path.iterdir())
    env = {k: v for k, v in os.environ.items() if k != lock_trace.ENV}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    proc = subprocess.run([sys.executable, "-c", WRITER, str(db), "warm"], capture_output=True, text=True,
                          env=env, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert {p.name for p in set(tmp_path.iterdir()) - before} <= {"kaos.db-wal", "kaos.db-shm"}


@pytest.mark.parametrize("torn", ["", '{"pid": 1, "lab'])
def test_a_torn_last_line_is_skipped(tmp_path: Path, torn: str) -> None:
    trace = tmp_path / "t.trace"
    trace.write_text('{"pid": 1, "label": "", "hold_ms": 1.0}\n' + torn)
    assert [x["pid"] for x in lock_trace.read(str(trace))] == [1]


def test_a_hook_process_imports_nothing_while_it_holds_the_write_lock(tmp_path: Path) -> None:
    """`kaos hook jsonl` applies one event per process: it builds what the event writes through (the
    failure diagnosers, the episode-end gate and its validators) before the lock, and nothing else."""
    db, trace = tmp_path / "kaos.db", tmp_path / "hook.trace"
    _seed(db, skills=2)
    events = [
        {"type": "session_start", "session": "s1", "event_id": "e1", "name": "nightly"},
        {"type": "tool", "session": "s1", "event_id": "e2", "tool": "http_get", "ok": False, "error": "HTTP 503"},
        {"type": "skill", "session": "s1", "event_id": "e3", "skill": "deploy-step-0", "ok": True},
        {"type": "usage", "session": "s1", "event_id": "e4", "tokens_in": 10, "tokens_out": 2},
        {"type": "session_end", "session": "s1", "event_id": "e5", "outcome": "completed"},
    ]
    env = {k: v for k, v in os.environ.items() if not k.startswith("KAOS_")}
    env[lock_trace.ENV] = str(trace)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    for event in events:
        proc = subprocess.run([sys.executable, "-m", "kaos_dream", "--db", str(db), "hook", "jsonl"],
                              input=json.dumps(event) + "\n", capture_output=True, text=True, env=env, timeout=120)
        assert proc.returncode == 0, proc.stderr
    lines = lock_trace.read(str(trace))
    assert len(lines) == len(events)
    assert [x["imports"] for x in lines] == [0] * len(events)
    with Library(db, readonly=True) as lib:
        assert lib.conn.execute("SELECT state FROM agents WHERE id = 's1'").fetchone()[0] == "completed"
