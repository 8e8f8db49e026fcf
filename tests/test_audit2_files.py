"""Issue 17, round-2 audit: files kaos-dream refuses, writes or leaves behind."""

from __future__ import annotations

import subprocess
import sys
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
