"""kill -9 at seeded random moments: during a burst of writes and during `dream run --apply`.

Every trial uses a real process (forked from the test, so no interpreter start-up per trial) that is
killed with SIGKILL. Afterwards the next open must be clean, nothing may be duplicated or half
written, every write the child saw committed must be there, and a rerun of the dream must reach
exactly the state of an uninterrupted run.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import sqlite3
import time
from pathlib import Path

import pytest

from kaos_dream import Library, Settings

from .test_dream_processes import build, snapshot

SEED = 20261129
# The dream passes here also backfill the strong tier's vectors (the crash must leave that exact too); a
# small per-pass row cap keeps each pass short (600 rows of the transformer cost seconds per pass).
DREAM_SETTINGS = Settings(dream_auto=False, strong_backfill_rows=32)


def fork_child(body) -> tuple[int, int]:
    """Run ``body(write_fd)`` in a forked child; returns (pid, read_fd). The child never returns."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        os.close(read_fd)
        code = 0
        try:
            body(write_fd)
        except BaseException:
            code = 3
        finally:
            os._exit(code)
    os.close(write_fd)
    return pid, read_fd


def read_lines(fd: int, until: float) -> list[str]:
    """Everything the child wrote before it died (the pipe closes when it is killed)."""
    chunks = []
    while True:
        try:
            data = os.read(fd, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
        if time.monotonic() > until:
            break
    os.close(fd)
    return b"".join(chunks).decode().splitlines()


def burst(db: Path):
    def body(out: int) -> None:
        lib = Library(db, settings=DREAM_SETTINGS)
        skill_ids = [r[0] for r in lib.conn.execute("SELECT id FROM skills")]
        os.write(out, b"ready\n")
        n = 0
        while True:
            n += 1
            token = f"t{os.getpid()}-{n}"
            with lib.transaction():  # three writes that must land together or not at all
                lib.record_outcome(skill_ids[n % len(skill_ids)], n % 3 != 0, task=token)
                lib.memories.add(f"note {token}", key=token)
                lib.log.intent("crasher", f"apply {token}")
            os.write(out, f"{token}\n".encode())
    return body


def test_kill9_during_write_bursts(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    db = tmp_path / "burst.db"
    with Library(db) as lib:
        for i in range(12):
            lib.skills.add(f"skill-{i}", f"does thing {i}")
    committed_total = 0
    for trial in range(12):
        pid, fd = fork_child(burst(db))
        os.set_blocking(fd, True)
        first = os.read(fd, 6)
        assert first == b"ready\n"
        time.sleep(rng.uniform(0.0, 0.25))  # a seeded random point in the burst
        os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
        committed = [line for line in read_lines(fd, time.monotonic() + 5) if line.startswith("t")]
        committed_total += len(committed)
        with Library(db) as lib:  # the next open (a writer: recovers the WAL) is clean
            assert lib.check() == [], trial
            conn = lib.conn
            uses = dict(conn.execute("SELECT coalesce(u.task, t.text), count(*) FROM skill_uses AS u "
                                     "LEFT JOIN tasks AS t ON t.id = u.task_id GROUP BY 1").fetchall())
            mems = {r[0] for r in conn.execute("SELECT key FROM memories")}
            log = dict(conn.execute("SELECT action, count(*) FROM coordination_log GROUP BY action").fetchall())
            assert all(n == 1 for n in uses.values()), "duplicated outcome"
            assert all(n == 1 for n in log.values()), "duplicated log entry"
            for token in uses:  # all or nothing per transaction
                assert token in mems and log.get(f"apply {token}") == 1, token
            assert len(mems) == len(uses) and len(log) == len(uses)
            missing = [t for t in committed if t not in uses]
            assert not missing, f"committed writes lost: {missing[:3]}"
            stats = conn.execute(
                "SELECT coalesce(sum(uses), 0), coalesce(sum(successes), 0) FROM skill_stats"
            ).fetchone()
            recount = conn.execute("SELECT count(*), coalesce(sum(success), 0) FROM skill_uses").fetchone()
            assert tuple(stats) == tuple(recount)
    assert committed_total > 0


@pytest.fixture(scope="module")
def dream_base(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    folder = tmp_path_factory.mktemp("dream-crash")
    base = folder / "base.db"
    build(base, skills=600)
    clean = folder / "clean.db"
    shutil.copy(base, clean)
    with Library(clean, settings=DREAM_SETTINGS) as lib:
        started = time.perf_counter()
        assert lib.dream.run(apply=True).status == "completed"
        duration = time.perf_counter() - started
    return base, snapshot(clean), duration


def dream_child(db: Path):
    def body(out: int) -> None:
        lib = Library(db, settings=DREAM_SETTINGS)
        os.write(out, b"ready\n")
        lib.dream.run(apply=True)
        os.write(out, b"done\n")
    return body


def wait_until_running(db: Path, pid: int) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if "running" in run_status(db):
                return
        except sqlite3.Error:
            pass
        if os.waitpid(pid, os.WNOHANG) != (0, 0):
            return
        time.sleep(0.001)


def run_status(db: Path) -> list[str]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    try:
        return [r[0] for r in conn.execute("SELECT status FROM dream_runs ORDER BY id")]
    finally:
        conn.close()


def test_kill9_during_dream_apply_then_rerun_equals_uninterrupted(tmp_path: Path, dream_base) -> None:
    base, expected, duration = dream_base
    rng = random.Random(SEED + 1)
    killed_mid_run = 0
    for trial in range(12):
        db = tmp_path / f"d{trial}.db"
        shutil.copy(base, db)
        pid, fd = fork_child(dream_child(db))
        assert os.read(fd, 6) == b"ready\n"
        wait_until_running(db, pid)
        time.sleep(rng.uniform(0.0, duration))  # a seeded random point inside the pass
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        read_lines(fd, time.monotonic() + 5)
        statuses = run_status(db)
        with Library(db, settings=DREAM_SETTINGS) as lib:
            assert lib.check() == [], trial
            if "completed" not in statuses:
                killed_mid_run += "running" in statuses
                outcome = lib.dream.run(apply=True)
                assert outcome.status == "completed", (trial, outcome.status)
        assert snapshot(db) == expected, trial
        with Library(db, settings=DREAM_SETTINGS) as lib:
            dups = lib.conn.execute("SELECT kind, targets, status, count(*) FROM proposals "
                                    "GROUP BY kind, targets, status HAVING count(*) > 1").fetchall()
            assert not dups
    assert killed_mid_run >= 3, "too few kills landed inside a run; the random window is too wide"
