"""Storage faults through the real `kaos` binary: each gives one clear line on stderr, a non-zero exit,
and never a damaged (or further damaged) file; `kaos db check` reports what it can see.

Faults: database full (KAOS_MAX_PAGE_COUNT), read-only file, read-only folder, a file locked by
another process beyond the busy timeout, a truncated file, a file with overwritten pages, a file
from a newer schema.
"""

from __future__ import annotations

import ctypes
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from kaos_dream import Library, ManualClock, Settings
from kaos_dream.errors import StoreFaultError
from kaos_dream.store import LATEST_VERSION

from .conftest import PROJECT_ROOT, T0, Result, file_digest
from .library_content import fill_library

WRITES = [["skill", "add", "fault-probe", "-d", "x"], ["memory", "add", "a note from the probe"]]
READS = [["skill", "list"], ["search", "parquet"], ["db", "info"]]


def _drop_root_override() -> None:
    """Run as root without the capabilities that ignore file permissions (CAP_DAC_OVERRIDE,
    CAP_DAC_READ_SEARCH, CAP_FOWNER), so chmod means for this child what it means for a user."""
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (1, 2, 3):
        if libc.prctl(24, cap, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) failed")


def run(db: Path, *args: str, env: dict[str, str] | None = None, as_user: bool = False,
        input: str | None = None) -> Result:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("KAOS_") and k != "ANTHROPIC_API_KEY"}
    full_env["PYTHONPATH"] = str(PROJECT_ROOT)
    full_env.update(env or {})
    pre = _drop_root_override if (as_user and os.geteuid() == 0) else None
    proc = subprocess.run([sys.executable, "-m", "kaos_dream", "--db", str(db), *args], capture_output=True,
                          text=True, env=full_env, preexec_fn=pre, input=input, timeout=60)
    return Result(proc.returncode, proc.stdout, proc.stderr)


def assert_one_line_error(result: Result, *needles: str) -> None:
    assert result.returncode == 1, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr + result.stdout
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("kaos: error: "), result.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]


def make_library(path: Path) -> Path:
    with Library(path, clock=ManualClock(T0), settings=Settings()) as lib:
        fill_library(lib)
    return path


def rows(path: Path) -> dict[str, int]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("skills", "memories")}
    finally:
        conn.close()


@pytest.fixture
def open_dir(tmp_path: Path) -> Path:
    """A folder a capability-reduced root (or an ordinary user) can reach: tmp_path's parents are 0700."""
    folder = tmp_path / "open"
    folder.mkdir()
    for p in (folder, *list(folder.parents)[:3]):
        if str(p).startswith(str(tmp_path.parent.parent)):
            os.chmod(p, 0o755)
    return folder


def test_database_full_is_a_clear_error_and_rolls_back(tmp_path: Path) -> None:
    db = make_library(tmp_path / "full.db")
    pages = sqlite3.connect(db).execute("PRAGMA page_count").fetchone()[0]
    before = rows(db)
    big = "x" * 1_000_000
    result = run(db, "memory", "add", "-", env={"KAOS_MAX_PAGE_COUNT": str(pages)}, input=big)
    assert_one_line_error(result, "full", str(db))
    assert rows(db) == before
    assert run(db, "db", "check").returncode == 0
    assert run(db, "memory", "add", "-", input=big).returncode == 0  # without the cap it fits


def test_full_inside_a_library_transaction_rolls_back_everything(db_path: Path) -> None:
    lib = Library(db_path, settings=Settings())
    lib.skills.add("kept")
    lib.conn.execute(f"PRAGMA max_page_count = {lib.conn.execute('PRAGMA page_count').fetchone()[0]}")
    with pytest.raises(StoreFaultError) as info, lib.transaction():
        lib.skills.add("first-of-batch")
        lib.memories.add("y" * 500_000)
    assert info.value.kind == "full" and isinstance(info.value, sqlite3.OperationalError)
    assert [s.name for s in lib.skills.list()] == ["kept"]
    assert not lib.conn.in_transaction
    assert lib.check() == []
    lib.close()


def test_read_only_file(open_dir: Path) -> None:
    db = make_library(open_dir / "ro.db")
    Library(db).close()
    for side in ("-wal", "-shm"):
        Path(str(db) + side).unlink(missing_ok=True)
    os.chmod(db, 0o444)
    before = file_digest(db)
    for args in WRITES:
        assert_one_line_error(run(db, *args, as_user=True), "read-only", str(db))
    for args in READS:  # reads still work
        assert run(db, *args, as_user=True).returncode == 0
    check = run(db, "db", "check", as_user=True)
    assert check.returncode == 0, check.stdout + check.stderr
    assert file_digest(db) == before


def test_read_only_folder(open_dir: Path) -> None:
    db = make_library(open_dir / "k.db")
    before = file_digest(db)
    os.chmod(open_dir, 0o555)
    try:
        for args in WRITES:
            assert_one_line_error(run(db, *args, as_user=True), "folder", "read-only")
        for args in READS:  # readable: nobody can write the file, so it is read as immutable
            result = run(db, *args, as_user=True)
            assert result.returncode == 0, result.stderr
        assert run(db, "db", "check", as_user=True).returncode == 0
        backup = run(db, "db", "backup", str(open_dir / "copy.db"), as_user=True)
        assert_one_line_error(backup, "read-only")
    finally:
        os.chmod(open_dir, 0o755)
    assert file_digest(db) == before
    assert sorted(p.name for p in open_dir.iterdir()) == ["k.db"]


def _hold_exclusive(db: Path) -> subprocess.Popen[str]:
    code = (
        "import sqlite3, sys, time\n"
        f"c = sqlite3.connect({str(db)!r}, isolation_level=None)\n"
        "c.execute('BEGIN EXCLUSIVE')\n"
        "c.execute(\"INSERT INTO skills (name, created_at, updated_at) VALUES ('held', 1, 1)\")\n"
        "print('held', flush=True)\n"
        "sys.stdin.read()\n"
    )
    holder = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    return holder


@pytest.mark.parametrize("journal", ["wal", "delete"])
def test_locked_beyond_busy_timeout(tmp_path: Path, journal: str) -> None:
    db = make_library(tmp_path / "locked.db")
    if journal == "delete":
        conn = sqlite3.connect(db)
        conn.execute("PRAGMA journal_mode = DELETE")
        conn.close()
    before = rows(db)
    holder = _hold_exclusive(db)
    env = {"KAOS_BUSY_TIMEOUT_MS": "300"}
    try:
        for args in WRITES:  # each run's own 60 s limit guards a hang; no stopwatch on a busy machine
            assert_one_line_error(run(db, *args, env=env), "locked", "KAOS_BUSY_TIMEOUT_MS")
        if journal == "wal":  # WAL readers never wait for the writer
            for args in READS:
                assert run(db, *args, env=env).returncode == 0
            assert run(db, "db", "check", env=env).returncode == 0
            assert run(db, "db", "backup", str(tmp_path / "during.db"), env=env).returncode == 0
        else:
            assert_one_line_error(run(db, "skill", "list", env=env), "locked")
    finally:
        holder.communicate("", timeout=10)  # the holder exits without committing
    assert rows(db) == before
    assert run(db, "skill", "add", "after-the-lock").returncode == 0


def _damage(db: Path, how: str) -> None:
    Library(db).close()  # fold the WAL back so the damage hits the only copy
    if how == "truncated":
        os.truncate(db, db.stat().st_size // 2)
    else:
        with db.open("r+b") as fh:
            fh.seek(4096 * 3)
            fh.write(bytes((i * 37 + 11) % 256 for i in range(4096 * 4)))


@pytest.mark.parametrize("how", ["truncated", "overwritten"])
def test_damaged_file(tmp_path: Path, how: str) -> None:
    db = make_library(tmp_path / "damaged.db")
    _damage(db, how)
    before = file_digest(db)
    for args in [*READS, ["db", "export"], ["db", "backup", str(tmp_path / "copy.db")], ["skill", "add", "z"]]:
        assert_one_line_error(run(db, *args), "damaged")
    check = run(db, "db", "check", "--json")
    assert check.returncode == 1
    report = json.loads(check.stdout)
    assert report["ok"] is False and report["problems"]
    assert any("malformed" in p or "integrity" in p for p in report["problems"])
    assert file_digest(db) == before
    assert not (tmp_path / "copy.db").exists()


def test_newer_schema(tmp_path: Path) -> None:
    db = make_library(tmp_path / "future.db")
    conn = sqlite3.connect(db)
    conn.execute(f"PRAGMA user_version = {LATEST_VERSION + 1}")
    conn.close()
    before = file_digest(db)
    for args in [*WRITES, *READS, ["db", "migrate"], ["db", "export"], ["db", "backup", str(tmp_path / "c.db")]]:
        assert_one_line_error(run(db, *args), "newer")
    check = run(db, "db", "check", "--json")
    assert check.returncode == 1
    assert any("newer" in p for p in json.loads(check.stdout)["problems"])
    assert file_digest(db) == before
