"""Issue 17, round-2 audit: numbers and paths a user can pass that used to fail in the wrong way."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tests.conftest import run_kaos


@pytest.fixture
def ready_db(tmp_path: Path) -> Path:
    db = tmp_path / "kaos.db"
    assert run_kaos("init", db=db).returncode == 0
    return db


@pytest.mark.parametrize(
    ("args", "option"),
    [(["graph", "neglect", "--days", "1e308"], "--days"),
     (["graph", "purge", "--older-than-days", "1e308"], "--older-than-days")],
)
def test_days_that_overflow_as_seconds_are_usage_errors(ready_db: Path, args: list[str], option: str) -> None:
    result = run_kaos(*args, db=ready_db)
    assert result.returncode == 2, result.stderr
    assert option in result.stderr and "too large" in result.stderr
    assert "inf" not in result.stderr


def test_a_huge_integer_setting_is_named(ready_db: Path) -> None:
    result = run_kaos("search", "anything", db=ready_db, env={"KAOS_RANK_POOL": "99999999999999999999"})
    assert result.returncode == 1
    assert "KAOS_RANK_POOL=99999999999999999999 is out of range" in result.stderr
    assert "usage error" not in result.stderr


@pytest.mark.parametrize("command", [["db", "info"], ["skill", "list"], ["db", "check"], ["init"]])
def test_a_fifo_as_database_is_refused_without_blocking(tmp_path: Path, command: list[str]) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    result = run_kaos(*command, db=fifo, timeout=20)
    assert result.returncode == 1
    assert "named pipe" in result.stderr and "not a regular file" in result.stderr
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe"]


def test_a_fifo_as_backup_target_is_refused(ready_db: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    result = run_kaos("db", "backup", str(fifo), "--force", db=ready_db, timeout=20)
    assert result.returncode == 1
    assert "named pipe" in result.stderr


@pytest.mark.skipif(not os.path.exists("/dev/null"), reason="needs /dev/null")
def test_dev_null_is_refused_once_and_leaves_no_journal() -> None:
    journal = Path("/dev/null-journal")
    existed = journal.exists()
    try:
        result = run_kaos("skill", "add", "x", "--description", "y", db=Path("/dev/null"))
        assert result.returncode == 1
        assert result.stderr.count("/dev/null") == 1, result.stderr
        assert "a device, not a regular file" in result.stderr
        assert existed or not journal.exists()
    finally:
        if not existed and journal.exists():  # left by a failing run of this test: ours to remove
            journal.unlink()
