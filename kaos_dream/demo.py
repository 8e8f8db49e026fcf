"""The demo behind `kaos demo`: a small team of simulated agents using a fresh library, then a dream.

Agents search (recording hits), apply skills, report outcomes, cite what they relied on, fail with
real-looking errors (including a systemic wave of five agents hitting the same dead database) and
coordinate through the log; then one `dream run --apply` consolidates it all. Everything runs on the
demo's own clock and a seeded random generator, with LLM calls off, so every run prints the same.
The file is built under a temporary name and renamed into place, so an interrupted demo never
leaves a half-built library; an existing file is replaced only if an earlier demo made it.
"""

from __future__ import annotations

import contextlib
import os
import random
import sqlite3
from dataclasses import replace
from pathlib import Path
from typing import Any

from .clock import ManualClock
from .dream.merge import pending_merges
from .errors import ConflictError, KaosError
from .library import Library
from .settings import Settings

DEMO_MARKER_KEY = "kaos-demo-marker"
DEMO_START = 1_767_225_600.0  # 2026-01-01T00:00:00Z: the demo's own clock, so every run is identical
DEMO_SEED = 7

DEMO_SKILLS: list[tuple[str, str, str, list[str]]] = [
    ("csv-to-parquet", "Convert CSV files to Parquet with an explicit schema", "Convert {path}", ["data"]),
    ("csv-quick-convert", "Convert CSV files to Parquet, inferring the schema", "Convert {path}", ["data"]),
    ("parquet-from-csv", "Convert CSV files into Parquet with an explicit schema", "Convert {path}", ["data"]),
    ("postgres-backup", "Dump a Postgres database with pg_dump and upload it", "pg_dump {dsn} | upload", ["db"]),
    ("postgres-vacuum", "Vacuum and analyse bloated Postgres tables", "VACUUM ANALYZE {table}", ["db"]),
    ("redis-cache-warm", "Warm the Redis cache from the hottest keys", "warm {keys}", ["cache"]),
    ("http-retry-backoff", "Retry HTTP calls with exponential backoff on 429 and 5xx", "retry {url}", ["http"]),
    ("http-plain-retry", "Retry HTTP calls immediately on any error", "retry now {url}", ["http"]),
    ("s3-sync-bucket", "Sync a local folder to an S3 bucket", "aws s3 sync {src} {bucket}", ["cloud"]),
    ("k8s-rollout-restart", "Restart a Kubernetes deployment and wait for rollout", "rollout {dep}", ["ops"]),
    ("git-bisect-regression", "Find the commit that introduced a regression", "bisect {test}", ["code"]),
    ("pytest-flaky-rerun", "Rerun flaky pytest tests to separate flakes from failures", "pytest --lf", ["code"]),
    ("llm-summarise-logs", "Summarise long log files with an LLM", "summarise {file}", ["llm"]),
    ("tls-cert-renew", "Renew TLS certificates before they expire", "certbot renew", ["ops"]),
]

DEMO_MEMORIES: list[tuple[str, str, str]] = [
    ("staging-tls", "insight", "Staging Postgres rejects TLS 1.0 clients; use sslmode=require."),
    ("s3-throttle", "insight", "S3 sync throttles above 3500 PUT/s per prefix; shard by prefix."),
    ("parquet-schema", "result", "Explicit Parquet schemas avoided int/float drift when converting CSV files."),
    ("redis-evictions", "observation", "Redis evicts keys when maxmemory is hit during cache warming."),
    ("rate-limit-api", "insight", "The billing API rate limit is 100 requests per minute; retry with backoff."),
    ("k8s-probe", "observation", "Rollouts hang when the readiness probe path returns 404."),
]

# (task, the query the agent searches, how often each candidate skill really works for that task)
DEMO_TASKS: list[tuple[str, str, dict[str, float]]] = [
    ("convert the sales export", "convert csv files to parquet",
     {"csv-to-parquet": 0.95, "csv-quick-convert": 0.35, "parquet-from-csv": 0.9}),
    ("call the billing API", "retry http calls after rate limit 429",
     {"http-retry-backoff": 0.95, "http-plain-retry": 0.15}),
    ("back up the orders database", "backup postgres database", {"postgres-backup": 0.9, "postgres-vacuum": 0.2}),
    ("ship the web service", "restart kubernetes deployment rollout", {"k8s-rollout-restart": 0.8}),
]

FAILURES_BY_TOOL = {
    "http_post": "HTTP 429 Too Many Requests: rate limit exceeded, retry after {n}s",
    "pyarrow": "pyarrow.lib.ArrowInvalid: Could not convert '{n}.5kg' with type str: tried to convert to int64",
    "pg_dump": "pg_dump: error: connection to server at \"db-{n}.internal\" (10.0.3.{n}), port 5432 failed: "
               "FATAL: password authentication failed for user \"backup\"",
    "kubectl": "error: deployment \"web-{n}\" exceeded its progress deadline",
}
TOOL_FOR_TASK = {0: "pyarrow", 1: "http_post", 2: "pg_dump", 3: "kubectl"}
SYSTEMIC_ERROR = "psycopg.OperationalError: connection to server at \"10.20.0.7\", port 5432 failed: Connection refused"

DEMO_AGENTS = 48
EPSILON = 0.3


def demo_settings() -> Settings:
    """Environment settings with what the demo needs fixed: no LLM calls, no automatic dream."""
    return replace(Settings.from_env(), llm=False, dream_threshold=1_000_000, dream_auto=True)


def _is_previous_demo(path: str) -> bool:
    try:
        with Library(path, readonly=True, settings=demo_settings()) as lib:
            marker = lib.conn.execute("SELECT 1 FROM memories WHERE key = ?", (DEMO_MARKER_KEY,)).fetchone()
            return marker is not None
    except KaosError:
        return False


def _remove_db_files(path: str) -> None:
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.remove(path + suffix)


def populate(lib: Library) -> None:
    with lib.transaction():
        for name, description, template, tags in DEMO_SKILLS:
            lib.skills.add(name, description, template, tags)
        for key, kind, content in DEMO_MEMORIES:
            lib.memories.add(content, kind=kind, key=key)
        lib.memories.add("Made by `kaos demo`; safe to delete.", kind="demo-marker", key=DEMO_MARKER_KEY)


def _one_agent(lib: Library, clock: ManualClock, rng: random.Random, index: int) -> str:
    """One agent session: search, pick (mostly the best-ranked) skill, report, end. Returns its state."""
    task_index = index % len(DEMO_TASKS)
    task, query, works = DEMO_TASKS[task_index]
    agent = f"agent-{index:02d}"
    lib.episodes.start(agent, name=task)
    hits = lib.search(query, limit=5, record_hits=True, agent=agent)
    skills = [h for h in hits if h.kind == "skill" and h.name in works]
    memories = [h for h in hits if h.kind == "memory"]
    if not skills:
        lib.episodes.complete(agent, conclusion=f"nothing to apply for {task}")
        return "completed"
    picked = rng.choice(skills) if rng.random() < EPSILON else skills[0]
    success = rng.random() < works[picked.name]
    lib.record_outcome(picked.name, success, agent=agent, task=task)
    clock.advance(rng.randint(20, 90))
    citations = [("skill", picked.name)] + [("memory", m.name) for m in memories[:1]]
    if success:
        lib.episodes.complete(agent, conclusion=f"{task}: done with {picked.name}", citations=citations)
        return "completed"
    tool = TOOL_FOR_TASK[task_index]
    error = FAILURES_BY_TOOL[tool].format(n=rng.randint(2, 99))
    lib.episodes.fail(agent, conclusion=f"{task}: {picked.name} did not work", citations=citations,
                      tool=tool, error=error)
    return "failed"


def _coordinate(lib: Library) -> None:
    """Three people approve the same routine action: the dream turns it into a policy."""
    for i in range(3):
        intent = lib.log.intent(f"agent-{i:02d}", "rotate staging API keys").position
        lib.log.vote("alice", intent, True, reason="routine")
        lib.log.vote("bob", intent, True)
        lib.log.decide(intent)


def simulate(lib: Library, clock: ManualClock) -> dict[str, int]:
    rng = random.Random(DEMO_SEED)
    states = {"completed": 0, "failed": 0}
    for index in range(DEMO_AGENTS):
        states[_one_agent(lib, clock, rng, index)] += 1
        clock.advance(rng.randint(60, 300))
    # A systemic wave: five agents hit the same dead database within a minute.
    for i in range(5):
        agent = f"reporter-{i}"
        lib.episodes.start(agent, name="nightly revenue report")
        lib.episodes.fail(agent, conclusion="database unreachable", tool="postgres", error=SYSTEMIC_ERROR)
        states["failed"] += 1
        clock.advance(12)
    _coordinate(lib)
    clock.advance(600)
    return states


def settle_files(path: str) -> None:
    """Leave the demo as one file: a read-only open (the report, the check for an earlier demo) cannot
    remove the ``-wal``/``-shm`` files it made, but the last writable connection to close does, once
    its checkpoint has moved every page into the main file."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()


def build_demo_library(path: str) -> dict[str, Any]:
    """(Re)create the demo library at ``path``, run the simulation and a dream, and report."""
    target = Path(path)
    if target.exists() and not _is_previous_demo(path):
        raise ConflictError(f"{path} exists and was not made by `kaos demo`; choose another --db")
    tmp = str(target.with_name(target.name + ".building"))
    _remove_db_files(tmp)
    clock = ManualClock(DEMO_START)
    try:
        with Library(tmp, clock=clock, settings=demo_settings()) as lib:
            populate(lib)
            states = simulate(lib, clock)
            outcome = lib.dream.run(apply=True, trigger="manual")
            merges = pending_merges(lib.conn)
            alerts = lib.failures.active_alerts()
            policies = [p.to_dict() for p in lib.policies.list()]
            top = {q: [h.to_dict() for h in lib.search(q, limit=3)] for _, q, _ in DEMO_TASKS[:2]}
            counts = {"skills": lib.skills.count(), "memories": lib.memories.count(),
                      "deprecated_skills": lib.skills.count(deprecated=True)}
            lib.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        _remove_db_files(path)
        os.replace(tmp, path)
    finally:
        _remove_db_files(tmp)
    db = f"--db {path} "
    next_steps = [f"kaos {db}dream merges"]
    if merges:
        next_steps.append(f"kaos {db}dream merges --accept {merges[0]['id']}")
    if alerts:
        next_steps += [f"kaos {db}alerts check", f"kaos {db}dream systemic --ack {alerts[0]['id']} --by you"]
    next_steps += [f"kaos {db}dream failures", f"kaos {db}search 'retry http calls after rate limit'",
                   f"kaos {db}dream validations --failed", f"kaos {db}policy list", f"kaos {db}dream show "
                   f"{outcome.run_id}"]
    return {
        "path": str(target.resolve()),
        **counts,
        "agents": states,
        "dream_run": outcome.run_id,
        "digest": outcome.digest,
        "pending_merges": merges,
        "alerts": alerts,
        "policies": policies,
        "searches": top,
        "llm": "off in the demo (deterministic); set ANTHROPIC_API_KEY in your own use for LLM diagnosis and "
               "validators",
        "next": next_steps,
    }
