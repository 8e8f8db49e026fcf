"""The demo library behind `kaos demo`: realistic skills and memories, built in a fresh file.

The file is written under a temporary name and renamed into place, so an interrupted demo never
leaves a half-built library; an existing file is replaced only if an earlier demo made it.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

from .clock import ManualClock
from .errors import ConflictError, KaosError
from .library import Library

DEMO_MARKER_KEY = "kaos-demo-marker"
DEMO_START = 1_767_225_600.0  # 2026-01-01T00:00:00Z: the demo's own clock, so every run is identical

DEMO_SKILLS: list[tuple[str, str, str, list[str]]] = [
    ("csv-to-parquet", "Convert CSV files to Parquet with an explicit schema", "Convert {path}", ["data"]),
    ("csv-quick-convert", "Convert CSV files to Parquet, inferring the schema", "Convert {path}", ["data"]),
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
    ("docker-prune-images", "Free disk space by pruning unused Docker images", "docker image prune", ["ops"]),
    ("tls-cert-renew", "Renew TLS certificates before they expire", "certbot renew", ["ops"]),
]

DEMO_MEMORIES: list[tuple[str, str, str]] = [
    ("staging-tls", "insight", "Staging Postgres rejects TLS 1.0 clients; use sslmode=require."),
    ("s3-throttle", "insight", "S3 sync throttles above 3500 PUT/s per prefix; shard by prefix."),
    ("parquet-schema", "result", "Explicit Parquet schemas avoided int/float drift in 12 of 12 runs."),
    ("redis-evictions", "observation", "Redis evicts keys when maxmemory is hit during cache warming."),
    ("rate-limit-api", "insight", "The billing API rate limit is 100 requests per minute per key."),
    ("k8s-probe", "observation", "Rollouts hang when the readiness probe path returns 404."),
]

DEMO_QUERIES = ["convert csv to parquet", "postgres tls connection", "retry after rate limit"]


def _is_previous_demo(path: str) -> bool:
    try:
        with Library(path, readonly=True) as lib:
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


def build_demo_library(path: str) -> dict[str, Any]:
    """(Re)create the demo library at ``path`` and return what it did, for rendering."""
    target = Path(path)
    if target.exists() and not _is_previous_demo(path):
        raise ConflictError(f"{path} exists and was not made by `kaos demo`; choose another --db")
    tmp = str(target.with_name(target.name + ".building"))
    _remove_db_files(tmp)
    clock = ManualClock(DEMO_START)
    try:
        with Library(tmp, clock=clock) as lib:
            populate(lib)
            lib.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            searches = {q: [h.to_dict() for h in lib.search(q, limit=3)] for q in DEMO_QUERIES}
            counts = {"skills": lib.skills.count(), "memories": lib.memories.count()}
        _remove_db_files(path)
        os.replace(tmp, path)
    finally:
        _remove_db_files(tmp)
    return {
        "path": str(target.resolve()),
        **counts,
        "searches": searches,
        "next": [
            f"kaos --db {path} skill list",
            f"kaos --db {path} search 'postgres backup'",
            f"kaos --db {path} skill apply csv-to-parquet --param path=in.csv",
        ],
    }
