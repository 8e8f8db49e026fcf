"""Issue 17, round-2 audit: files kaos-dream refuses, writes or leaves behind."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kaos_dream import Library, Settings
from tests.conftest import file_digest, run_kaos

_LEAVE_WAL = r"""
import os, sqlite3, sys
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("PRAGMA journal_mode=WAL")
c.execute("PRAGMA wal_autocheckpoint=0")
for sql in sys.argv[2:]:
    c.execute(sql)
os._exit(0)  # no close: the writes stay in the -wal, as after a crash or with another app still running
"""


def leave_pending_wal(path: Path, *sql: str) -> None:
    subprocess.run([sys.executable, "-c", _LEAVE_WAL, str(path), *sql], check=True)
    assert Path(str(path) + "-wal").stat().st_size > 0


def snapshot(path: Path) -> dict[str, str]:
    """The file and its -wal byte for byte, and which side files exist (the -shm is only SQLite's
    shared-memory index, which any reader, even a read-only one, may rebuild)."""
    return {p.name: "present" if p.name.endswith("-shm") else file_digest(p)
            for p in sorted(path.parent.iterdir()) if p.name.startswith(path.name)}


@pytest.mark.parametrize("command", [["skill", "add", "a", "--description", "b"], ["db", "migrate"], ["init"]])
def test_a_foreign_file_with_a_pending_wal_is_refused_unchanged(tmp_path: Path, command: list[str]) -> None:
    db = tmp_path / "other.db"
    leave_pending_wal(db, "CREATE TABLE t(x)", "INSERT INTO t VALUES (1)")
    before = snapshot(db)
    assert set(before) == {"other.db", "other.db-wal", "other.db-shm"}
    result = run_kaos(*command, db=db)
    assert result.returncode == 1
    assert "another application" in result.stderr
    assert snapshot(db) == before


def test_a_newer_schema_with_a_pending_wal_is_refused_unchanged(tmp_path: Path) -> None:
    db = tmp_path / "kaos.db"
    Library(db, settings=Settings()).close()
    leave_pending_wal(db, "PRAGMA user_version = 999", "INSERT INTO skills_fts(skills_fts) VALUES ('optimize')")
    before = snapshot(db)
    result = run_kaos("skill", "add", "a", "--description", "b", db=db)
    assert result.returncode == 1
    assert "newer than this kaos-dream" in result.stderr and "the file was not changed" in result.stderr
    assert snapshot(db) == before


def mode_of(path: Path) -> int:
    return path.stat().st_mode & 0o777


@pytest.fixture
def private_library(tmp_path: Path) -> Path:
    db = tmp_path / "private.db"
    assert run_kaos("skill", "add", "s", "--description", "a skill", db=db).returncode == 0
    db.chmod(0o600)
    return db


@pytest.fixture
def open_umask() -> Iterator[None]:
    """A umask that lets new files be read by others (022), as on most systems, so the test sees
    whether kaos-dream sets the mode itself; the child processes inherit it."""
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_backup_export_and_import_keep_the_library_private(
    private_library: Path, tmp_path: Path, open_umask: None
) -> None:
    backup = tmp_path / "copy.db"
    export = tmp_path / "lib.jsonl"
    restored = tmp_path / "restored.db"
    assert run_kaos("db", "backup", str(backup), db=private_library).returncode == 0
    assert run_kaos("db", "export", str(export), db=private_library).returncode == 0
    assert run_kaos("db", "import", str(export), db=restored).returncode == 0
    assert (mode_of(backup), mode_of(export), mode_of(restored)) == (0o600, 0o600, 0o600)
    # Replacing an existing library keeps the mode that file had.
    existing = tmp_path / "existing.db"
    assert run_kaos("init", db=existing).returncode == 0
    existing.chmod(0o640)
    assert run_kaos("db", "import", str(export), "--force", db=existing).returncode == 0
    assert mode_of(existing) == 0o640


def big_export(tmp_path: Path, memories: int = 40_000) -> Path:
    db = tmp_path / "big.db"
    # Semantic off while filling: the test is about the import's temp file, and embedding 40,000 texts
    # was most of its time; the import (default settings) still has 40,000 rows to write.
    with Library(db, settings=Settings(semantic=False)) as lib, lib.transaction():
        for i in range(memories):
            lib.memories.add(f"memory number {i} about parquet and csv files " * 3, key=f"note-{i}")
    export = tmp_path / "big.jsonl"
    assert run_kaos("db", "export", str(export), db=db).returncode == 0
    return export


def test_a_killed_import_leaves_temp_files_that_the_next_import_removes(tmp_path: Path) -> None:
    export = big_export(tmp_path)
    target = tmp_path / "restored.db"
    env = {k: v for k, v in os.environ.items() if not k.startswith("KAOS_")}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parent.parent)
    proc = subprocess.Popen([sys.executable, "-m", "kaos_dream", "--db", str(target), "db", "import", str(export)],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    temp = tmp_path / f".restored.db.import-{proc.pid}.tmp"
    deadline = time.monotonic() + 60
    while not (temp.exists() and temp.stat().st_size > 100_000) and time.monotonic() < deadline:
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    leftovers = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".restored.db."))
    assert leftovers and leftovers[0] == temp.name, leftovers
    # A temp file of an import that is still running (a live process id) must be left alone.
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        busy = tmp_path / f".restored.db.import-{alive.pid}.tmp"
        busy.write_bytes(b"")
        result = run_kaos("db", "import", str(export), db=target, timeout=120)
        assert result.returncode == 0, result.stderr
        assert not target.exists() or run_kaos("db", "check", db=target).returncode == 0
        remaining = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".restored.db."))
        assert remaining == [busy.name]
    finally:
        alive.kill()
        alive.wait()


@pytest.fixture
def used_library(tmp_path: Path) -> Path:
    db = tmp_path / "used.db"
    assert run_kaos("skill", "add", "s", "--description", "a skill", db=db).returncode == 0
    assert run_kaos("record-outcome", "s", "--success", db=db).returncode == 0
    return db


def export_of(db: Path) -> list[str]:
    out = db.parent / (db.stem + ".jsonl")
    assert run_kaos("db", "export", str(out), "--force", db=db).returncode == 0
    return out.read_text("utf-8").splitlines(keepends=True)


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(lines), "utf-8")
    return path


def test_deeply_nested_and_bad_base64_lines_are_one_line_errors(used_library: Path, tmp_path: Path) -> None:
    lines = export_of(used_library)
    cases = {
        "nested": [lines[0], "[" * 100_000 + "\n"],
        "bad-b64": [ln.replace('{"t":"skills","r":[1,', '{"t":"skills","r":[{"b64":"!!"},') for ln in lines],
        "b64-number": [ln.replace('{"t":"skills","r":[1,', '{"t":"skills","r":[{"b64":5},') for ln in lines],
    }
    expected = {"nested": "nested too deeply", "bad-b64": "not valid base64", "b64-number": "not valid base64"}
    for name, content in cases.items():
        assert content != lines
        target = tmp_path / f"{name}.db"
        result = run_kaos("db", "import", str(write_lines(tmp_path / f"{name}.jsonl", content)), db=target)
        assert result.returncode == 1, (name, result.stderr)
        assert expected[name] in result.stderr and "internal error" not in result.stderr, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1
        assert not target.exists()


def test_forged_counters_are_refused_on_import_and_found_by_check(used_library: Path, tmp_path: Path) -> None:
    lines = export_of(used_library)
    stats = [i for i, ln in enumerate(lines) if ln.startswith('{"t":"skill_stats","r":[1,1,1,')]
    assert len(stats) == 1
    forged = list(lines)
    forged[stats[0]] = forged[stats[0]].replace('"r":[1,1,1,', '"r":[1,1000,1,')
    target = tmp_path / "forged.db"
    result = run_kaos("db", "import", str(write_lines(tmp_path / "forged.jsonl", forged)), db=target)
    assert result.returncode == 1
    assert "derived counters disagree" in result.stderr and "uses=1000" in result.stderr
    assert not target.exists()
    # The same forgery written straight into a file: `db check` recounts and reports it.

    conn = sqlite3.connect(used_library)
    conn.execute("UPDATE skill_stats SET uses = 1000")
    conn.commit()
    conn.close()
    check = run_kaos("db", "check", "--json", db=used_library)
    assert check.returncode == 1
    assert "skill_stats (skill_id=1) stores uses=1000" in check.stdout


def test_a_counter_left_at_zero_by_a_deleted_use_is_not_a_forgery(used_library: Path, tmp_path: Path) -> None:

    conn = sqlite3.connect(used_library)
    conn.execute("DELETE FROM skill_uses")  # the trigger leaves skill_stats (1, 0, 0, NULL)
    conn.commit()
    assert conn.execute("SELECT uses, successes, last_used_at FROM skill_stats").fetchall() == [(0, 0, None)]
    conn.close()
    assert run_kaos("db", "check", db=used_library).returncode == 0
    source = write_lines(tmp_path / "zero.jsonl", export_of(used_library))
    target = tmp_path / "zero.db"
    result = run_kaos("db", "import", str(source), db=target)
    assert result.returncode == 0, result.stderr
    assert run_kaos("db", "check", db=target).returncode == 0


def peak_rss_mb(*args: str, db: Path) -> float:
    """Peak resident memory of one real `kaos` run, from the kernel's accounting of the child."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KAOS_")}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parent.parent)
    proc = subprocess.Popen([sys.executable, "-m", "kaos_dream", "--db", str(db), *args], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    return usage.ru_maxrss / 1024  # Linux reports kilobytes


def test_db_check_memory_does_not_grow_with_the_file(tmp_path: Path) -> None:


    small = tmp_path / "small.db"
    Library(small, settings=Settings(semantic=False)).close()
    big = tmp_path / "big.db"
    rng = random.Random(7)
    words = [f"w{i}" for i in range(5000)]
    # Semantic off while filling: embedding 20,000 texts took ~160 s of this test's ~400 s and adds no
    # page db check reads differently (it runs SQLite's integrity and foreign-key checks over every page).
    with Library(big, settings=Settings(semantic=False)) as lib, lib.transaction():
        for i in range(20_000):
            lib.memories.add(" ".join(rng.choices(words, k=200)), key=f"k{i}")
    size_mb = big.stat().st_size / 2**20
    assert size_mb > 40
    grown = peak_rss_mb("db", "check", db=big) - peak_rss_mb("db", "check", db=small)
    # Copying the file into memory grew the peak by about the file's size (53 MB for 49 MB).
    assert grown < 25, f"db check on a {size_mb:.0f} MB file used {grown:.0f} MB more memory"
