"""Edge inputs of the command line: bytes that are not UTF-8 (in an argument, a --db path or on
stdin), an empty --db, another application's SQLite file, a closed stdout — each one clear error
(or a quiet success) that writes nothing, never an "internal error"; the demo honours the global
--db, and prefs set/rm answer --json."""

from __future__ import annotations

import json
import os
import shlex
import sqlite3
import subprocess
from pathlib import Path

import pytest

from .conftest import PROJECT_ROOT, file_digest, kaos_command, run_kaos


def run_bytes(*args: str | bytes, stdin: bytes = b"", cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KAOS_") and k != "ANTHROPIC_API_KEY"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PROJECT_ROOT), env.get("PYTHONPATH")]))
    cmd: list[str | bytes] = [*kaos_command(), *args]
    return subprocess.run(cmd, input=stdin, capture_output=True, env=env, timeout=60, cwd=cwd)


@pytest.fixture
def library(tmp_path: Path) -> Path:
    db = tmp_path / "lib.db"
    assert run_kaos("skill", "add", "csv-to-parquet", "-d", "convert csv", db=db).returncode == 0
    return db


def one_line_error(proc: subprocess.CompletedProcess[bytes], code: int) -> str:
    err = proc.stderr.decode()
    assert proc.returncode == code, err
    assert err.startswith("kaos: ") and err.count("\n") == 1, err
    assert "internal error" not in err and "Traceback" not in err
    return err


@pytest.mark.parametrize("argv", [
    ("skill", "add", b"x\xffy"),
    ("memory", "add", b"caf\xe9"),
    ("search", b"\xff\xfe"),
    ("prefs", "set", "k", b"v\x80"),
])
def test_an_argument_that_is_not_utf8_is_a_usage_error(library: Path, argv: tuple[str | bytes, ...]) -> None:
    before = file_digest(library)
    err = one_line_error(run_bytes("--db", str(library), *argv), 2)
    assert "not valid UTF-8" in err
    assert file_digest(library) == before


@pytest.mark.parametrize("argv", [
    ("memory", "add", "-"),
    ("failure", "record", "--tool", "http_get", "-"),
])
def test_stdin_that_is_not_utf8_is_refused_and_nothing_is_written(library: Path, argv: tuple[str, ...]) -> None:
    before = file_digest(library)
    err = one_line_error(run_bytes("--db", str(library), *argv, stdin=b"\xff\xfe timeout talking to db"), 1)
    assert "not valid UTF-8" in err
    assert file_digest(library) == before
    # valid UTF-8 on stdin still works, accents included
    assert run_bytes("--db", str(library), *argv, stdin="café: timeout".encode()).returncode == 0


def test_a_db_path_that_is_not_utf8_creates_nothing(tmp_path: Path) -> None:
    bad = os.fsencode(tmp_path) + b"/\xffbad.db"
    one_line_error(run_bytes("--db", bad, "init"), 2)
    assert list(tmp_path.iterdir()) == []


def test_demo_writes_where_the_global_db_option_says(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere" / "demo.db"
    target.parent.mkdir()
    proc = run_bytes("--db", str(target), "--json", "demo", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr.decode()
    assert json.loads(proc.stdout)["path"] == str(target.resolve())
    assert target.exists() and not (tmp_path / "kaos-demo.db").exists()


def test_prefs_set_and_rm_answer_in_json(library_target: str) -> None:
    db = library_target  # both engines (conftest BOTH_ENGINES)
    set_ = run_kaos("--json", "prefs", "set", " deploys ", "never on Fridays", db=db)
    assert set_.returncode == 0, set_.stderr
    assert json.loads(set_.stdout) == {"key": "deploys", "value": "never on Fridays", "set": True}
    removed = run_kaos("prefs", "rm", "deploys", "--json", db=db)
    assert removed.returncode == 0, removed.stderr
    assert json.loads(removed.stdout) == {"key": "deploys", "removed": True}


@pytest.mark.parametrize(
    "argv", [("--db", "", "init"), ("init", "--db", " "), ("--db", "", "demo"), ("demo", "--db", "")]
)
def test_an_empty_db_option_is_an_error_not_the_default_file(tmp_path: Path, argv: tuple[str, ...]) -> None:
    err = one_line_error(run_bytes(*argv, cwd=tmp_path), 1)
    assert "--db must name a file" in err
    assert list(tmp_path.iterdir()) == []


def test_reading_another_applications_database_says_so(tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY)")
    before = file_digest(other)
    for argv in (("skill", "list"), ("search", "x"), ("db", "info")):
        err = one_line_error(run_bytes("--db", str(other), *argv), 1)
        assert "another application" in err and "migrate" not in err
    assert file_digest(other) == before


def test_a_closed_stdout_is_no_internal_error(library: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KAOS_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PROJECT_ROOT), env.get("PYTHONPATH")]))
    command = shlex.join([*kaos_command(), "--db", str(library), "--json", "search", "csv"])
    proc = subprocess.run(["sh", "-c", command + " >&-"], capture_output=True, env=env, timeout=60)
    assert proc.returncode == 0 and proc.stderr == b"", proc.stderr
