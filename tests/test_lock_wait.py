"""The busy wait a library connection leaves off after a write transaction is back on for everything
outside one (issue 19's lazy restore), shown against a real second process holding the write lock."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from kaos_dream import Library, Settings
from kaos_dream.errors import StoreFaultError

HOLD_S = 0.6

_HOLDER = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)
conn.execute("BEGIN IMMEDIATE")
print("holding", flush=True)
time.sleep(float(sys.argv[2]))
conn.execute("COMMIT")
"""


@contextmanager
def write_lock_held(db: Path, seconds: float) -> Iterator[None]:
    """Another process takes the file's write lock and keeps it for ``seconds``."""
    proc = subprocess.Popen([sys.executable, "-c", _HOLDER, str(db), str(seconds)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "holding"
        yield
    finally:
        proc.wait(timeout=30)


def _scratch_library(db: Path, busy_ms: int = 10_000) -> tuple[Library, int]:
    lib = Library(db, settings=Settings(busy_timeout_ms=busy_ms, dream_auto=False))
    skill = lib.skills.add("s", "a skill").id
    lib.conn.execute("CREATE TABLE IF NOT EXISTS scratch (x INTEGER)")
    return lib, skill


WAYS: dict[str, Callable[[Library], object]] = {
    "execute": lambda lib: lib.conn.execute("INSERT INTO scratch VALUES (1)"),
    "executemany": lambda lib: lib.conn.executemany("INSERT INTO scratch VALUES (?)", [(1,), (2,)]),
    "executescript": lambda lib: lib.conn.executescript("INSERT INTO scratch VALUES (1);"),
    "cursor": lambda lib: lib.conn.cursor().execute("INSERT INTO scratch VALUES (1)"),
}


@pytest.mark.parametrize("way", sorted(WAYS))
def test_a_statement_outside_a_transaction_waits_out_the_lock_right_after_a_write(db_path: Path, way: str) -> None:
    lib, skill = _scratch_library(db_path)
    try:
        lib.record_outcome(skill, True, agent="a")  # the write leaves SQLite's own busy wait off
        lib.record_outcome(skill, False, agent="a")
        with write_lock_held(db_path, HOLD_S):
            started = time.monotonic()
            WAYS[way](lib)  # an autocommit write: it must wait for the other process, not fail at once
            waited = time.monotonic() - started
        assert waited >= HOLD_S / 2
        assert lib.conn.execute("SELECT count(*) FROM scratch").fetchone()[0] >= 1
        assert lib.conn.execute("PRAGMA busy_timeout").fetchone()[0] == 10_000
    finally:
        lib.close()


def test_the_wait_is_off_inside_a_write_transaction_and_back_after_it(db_path: Path) -> None:
    lib, skill = _scratch_library(db_path, busy_ms=4_321)
    try:
        with lib.transaction():
            assert lib.conn.execute("PRAGMA busy_timeout").fetchone()[0] == 0
            lib.record_outcome(skill, True)
        assert lib.conn.execute("PRAGMA busy_timeout").fetchone()[0] == 4_321
        lib.record_outcome(skill, True)
        assert lib.conn.execute("SELECT uses FROM skill_stats WHERE skill_id = ?", (skill,)).fetchone()[0] == 2
        assert lib.conn.execute("PRAGMA busy_timeout").fetchone()[0] == 4_321
    finally:
        lib.close()


def test_writes_back_to_back_wait_for_the_lock_by_the_retry_loop(db_path: Path) -> None:
    lib, skill = _scratch_library(db_path)
    try:
        lib.record_outcome(skill, True)
        with write_lock_held(db_path, HOLD_S):
            started = time.monotonic()
            lib.record_outcome(skill, False)  # the wait is still off: the jittered retries take the lock
            waited = time.monotonic() - started
        assert waited >= HOLD_S / 2
        stats = lib.conn.execute("SELECT uses, successes FROM skill_stats WHERE skill_id = ?", (skill,)).fetchone()
        assert tuple(stats) == (2, 1)
    finally:
        lib.close()


def test_a_lock_held_beyond_the_budget_fails_the_write_and_restores_the_wait(db_path: Path) -> None:
    lib, skill = _scratch_library(db_path, busy_ms=300)
    try:
        lib.record_outcome(skill, True)
        with write_lock_held(db_path, 1.5):
            with pytest.raises(StoreFaultError, match="locked"):
                lib.record_outcome(skill, False)
            assert lib.conn.execute("PRAGMA busy_timeout").fetchone()[0] == 300
        assert lib.conn.execute("SELECT uses FROM skill_stats WHERE skill_id = ?", (skill,)).fetchone()[0] == 1
    finally:
        lib.close()


def test_an_outcome_takes_the_query_of_a_search_another_process_recorded_for_its_agent(db_path: Path) -> None:
    """The one-statement outcome of an agent this connection never saw search still finds a hit
    another process recorded (the insert checks for one), and takes that search's query as its task."""
    from tests.conftest import run_kaos

    lib = Library(db_path, settings=Settings(dream_auto=False))
    try:
        parquet = lib.skills.add("csv-to-parquet", "convert csv files to parquet").id
        other = lib.skills.add("rotate-logs", "rotate and compress old log files").id
        first = lib.record_outcome(parquet, True, agent="worker")  # the agent is known on this connection
        assert first.task is None
        found = run_kaos("search", "convert csv to parquet", "--kind", "skill", "--agent", "worker", "--record-hits",
                         "--json",
                         db=db_path)
        assert found.returncode == 0, found.stderr
        assert "csv-to-parquet" in found.stdout
        again = lib.record_outcome(parquet, False, agent="worker")
        assert again.task == "convert csv to parquet" and again.task_hash is not None
        unrelated = lib.record_outcome(other, True, agent="worker")  # no hit on this skill: no task
        assert unrelated.task is None and unrelated.task_hash is None
        rows = lib.conn.execute(
            "SELECT u.skill_id, t.text FROM skill_uses AS u LEFT JOIN tasks AS t ON t.id = u.task_id ORDER BY u.id"
        ).fetchall()
        assert [tuple(r) for r in rows] == [(parquet, None), (parquet, "convert csv to parquet"), (other, None)]
        stats = lib.conn.execute("SELECT uses, successes FROM skill_task_stats WHERE skill_id = ?",
                                 (parquet,)).fetchall()
        assert [tuple(r) for r in stats] == [(1, 0)]
    finally:
        lib.close()
