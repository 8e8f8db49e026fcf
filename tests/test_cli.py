"""The real `kaos` binary: hostile input, exit codes, one-line errors, read commands that never write."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from kaos_dream import Library, Settings
from kaos_dream.store import LATEST_VERSION

from .conftest import file_digest, target_digest
from .conftest import run_kaos_in_process as run_kaos  # parsing and rendering: no new process needed


def populate(db: str) -> str:
    assert run_kaos("init", db=db).returncode == 0
    r = run_kaos("skill", "add", "csv-to-parquet", "-d", "Convert CSV files to Parquet", "-t", "Convert {path}",
                 "--tag", "data", db=db)
    assert r.returncode == 0, r.stderr
    assert run_kaos("skill", "add", "postgres-backup", "-d", "Backup postgres", db=db).returncode == 0
    assert run_kaos("memory", "add", "Staging postgres rejects TLS 1.0", "--key", "tls", "--meta", '{"a": 1}',
                    db=db).returncode == 0
    return db


@pytest.fixture
def populated(library_target: str) -> str:
    """A small library on each engine (conftest BOTH_ENGINES): a file, or a database on the test server."""
    return populate(library_target)


@pytest.fixture
def populated_file(tmp_path: Path) -> Path:
    """The same library in a SQLite file, for tests about the file itself (FTS5 shadow tables)."""
    return Path(populate(str(tmp_path / "cli.db")))


def assert_one_line_error(result, code: int = 1) -> None:
    assert result.returncode == code, (result.returncode, result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("kaos: ")
    assert "Traceback" not in result.stderr


def test_installed_console_script_runs() -> None:
    """The `kaos` entry point that pip installs starts and reports its version."""
    exe = shutil.which("kaos")
    if exe is None:
        pytest.skip("the kaos console script is not on PATH (package not installed)")
    proc = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.startswith("kaos-dream ")


def test_version_and_help() -> None:
    r = run_kaos("--version")
    assert r.returncode == 0 and "kaos-dream" in r.stdout
    for args in (["--help"], ["skill", "--help"], ["skill", "add", "--help"], ["memory", "list", "--help"],
                 ["search", "--help"], ["db", "check", "--help"], ["init", "--help"], ["demo", "--help"]):
        r = run_kaos(*args)
        assert r.returncode == 0 and "Usage" in r.stdout, args


def test_json_outputs(populated: str) -> None:
    skills = json.loads(run_kaos("skill", "list", "--json", db=populated).stdout)
    assert [s["name"] for s in skills] == ["csv-to-parquet", "postgres-backup"]
    shown = json.loads(run_kaos("--json", "skill", "show", "csv-to-parquet", db=populated).stdout)
    assert shown["tags"] == ["data"]
    hits = json.loads(run_kaos("search", "postgres", "--json", db=populated).stdout)
    assert {h["name"] for h in hits} == {"postgres-backup", "tls"}
    mem = json.loads(run_kaos("memory", "show", "tls", "--json", db=populated).stdout)
    assert mem["metadata"] == {"a": 1}
    info = json.loads(run_kaos("db", "info", "--json", db=populated).stdout)
    assert (info["skills"], info["memories"], info["schema_version"]) == (2, 1, LATEST_VERSION)
    rendered = json.loads(
        run_kaos("skill", "apply", "csv-to-parquet", "-p", "path=a.csv", "--json", db=populated).stdout
    )
    assert rendered["rendered"] == "Convert a.csv"


def test_db_option_after_subcommand_and_env(populated: str) -> None:
    r = run_kaos("skill", "list", "--db", str(populated), "--json")
    assert len(json.loads(r.stdout)) == 2
    r = run_kaos("skill", "list", "--json", env={"KAOS_DB": str(populated)})
    assert len(json.loads(r.stdout)) == 2


def test_read_commands_leave_the_file_byte_for_byte_unchanged(populated: str) -> None:
    before = target_digest(populated)
    for args in (
        ["search", "postgres"], ["search", '"AND (*'], ["search", "x", "--kind", "memory", "--json"],
        ["skill", "list"], ["skill", "list", "--all", "--json"], ["skill", "show", "csv-to-parquet"],
        ["skill", "apply", "csv-to-parquet", "-p", "path=x"], ["memory", "list"], ["memory", "show", "tls"],
        ["db", "info"], ["db", "check"], ["skill", "show", "missing"],
    ):
        run_kaos(*args, db=populated)
        assert target_digest(populated) == before, args


HOSTILE = [
    (["skill", "show", "no-such-skill"], "no skill"),
    (["skill", "show", "9999"], "no skill"),
    (["skill", "update", "no-such-skill", "-d", "x"], "no skill"),
    (["skill", "deprecate", "no-such-skill"], "no skill"),
    (["skill", "rm", "no-such-skill"], "no skill"),
    (["skill", "add", "csv-to-parquet"], "already exists"),
    (["skill", "add", ""], "must not be empty"),
    (["skill", "add", "   "], "must not be empty"),
    (["skill", "update", "postgres-backup", "--name", "csv-to-parquet"], "already exists"),
    (["skill", "apply", "csv-to-parquet"], "missing template parameter"),
    (["skill", "apply", "csv-to-parquet", "-p", "nonsense"], "NAME=VALUE"),
    (["memory", "add", "x", "--meta", "{bad json"], "not valid JSON"),
    (["memory", "add", "x", "--meta", "[1]"], "JSON object"),
    (["memory", "add", "dup", "--key", "tls"], "already exists"),
    (["memory", "show", "nope"], "no memory"),
    (["memory", "rm", "nope"], "no memory"),
]


@pytest.mark.parametrize("args, message", HOSTILE)
def test_hostile_input_one_line_error_file_unchanged(populated_file: Path, args: list[str], message: str) -> None:
    before = file_digest(populated_file)
    r = run_kaos(*args, db=populated_file)
    assert_one_line_error(r)
    assert message in r.stderr
    assert file_digest(populated_file) == before


def test_hostile_input_one_line_error_nothing_written_on_both_engines(populated: str) -> None:
    """The same refusals on each engine, all against one library (a database per case costs more than
    the case)."""
    before = target_digest(populated)
    for args, message in HOSTILE:
        r = run_kaos(*args, db=populated)
        assert_one_line_error(r)
        assert message in r.stderr, (args, r.stderr)
        assert target_digest(populated) == before, args


def test_usage_errors_exit_2(populated_file: Path) -> None:
    for args in (["skill", "add"], ["skill", "list", "--limit", "-1"], ["search"], ["skill", "bogus"],
                 ["search", "x", "--kind", "planet"]):
        assert_one_line_error(run_kaos(*args, db=populated_file), code=2)  # parsing: engine-free


def test_newer_schema_file_refused_untouched(populated: str, engine: str) -> None:
    if engine == "postgresql":
        with Library(populated, settings=Settings()) as lib:
            lib.conn.execute("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, 'future', 0)",
                             (LATEST_VERSION + 3,))
    else:
        conn = sqlite3.connect(populated)
        conn.execute(f"PRAGMA user_version = {LATEST_VERSION + 3}")
        conn.close()
    before = target_digest(populated)
    for args in (["skill", "list"], ["skill", "add", "new"], ["init"], ["db", "migrate"], ["search", "x"]):
        r = run_kaos(*args, db=populated)
        assert_one_line_error(r)
        assert "newer" in r.stderr
    assert target_digest(populated) == before


def test_non_sqlite_file_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "readme.txt"
    path.write_text("hello, I am not a database\n" * 100)
    before = file_digest(path)
    for args in (["skill", "list"], ["skill", "add", "x"], ["init"], ["db", "check"], ["search", "x"]):
        r = run_kaos(*args, db=path)
        assert_one_line_error(r)
        assert "not a SQLite database" in r.stderr
    assert file_digest(path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["readme.txt"]


def test_missing_file_for_read_is_an_error_and_not_created(tmp_path: Path) -> None:
    path = tmp_path / "absent.db"
    r = run_kaos("search", "x", db=path)
    assert_one_line_error(r)
    assert not path.exists()


def test_db_check_reports_corruption(populated_file: Path) -> None:
    conn = sqlite3.connect(populated_file)
    conn.execute("UPDATE skills_fts_data SET block = x'00' WHERE id > 1")
    conn.commit()
    conn.close()
    r = run_kaos("db", "check", db=populated_file)
    assert r.returncode == 1
    assert "skills_fts" in r.stdout
    assert "problem(s) found" in r.stderr


def test_update_then_search_through_cli(populated: str) -> None:
    lexical = {"KAOS_SEMANTIC": "0"}  # the full-text index's sync; semantic neighbours would add hits
    assert run_kaos("skill", "update", "postgres-backup", "-d", "Snapshot mysql", db=populated).returncode == 0
    assert json.loads(run_kaos("search", "backup", "--kind", "skill", "--json", db=populated,
                               env=lexical).stdout)[0]["name"] == "postgres-backup"  # the name still says backup
    assert json.loads(run_kaos("search", "mysql", "--json", db=populated, env=lexical).stdout)[0]["name"] == \
        "postgres-backup"
    assert run_kaos("skill", "deprecate", "postgres-backup", "--reason", "old", db=populated).returncode == 0
    assert json.loads(run_kaos("search", "mysql", "--json", db=populated, env=lexical).stdout) == []
    assert run_kaos("db", "check", db=populated).returncode == 0


def test_memory_content_from_stdin(populated: str) -> None:
    r = run_kaos("memory", "add", "-", "--key", "long", input="line one\nline two\n" * 1000, db=populated)
    assert r.returncode == 0, r.stderr
    shown = json.loads(run_kaos("memory", "show", "long", "--json", db=populated).stdout)
    assert shown["content"].count("line two") == 1000


def test_markup_in_user_text_is_printed_literally(populated: str) -> None:
    assert run_kaos("skill", "add", "[bold]shout[/bold]", "-d", "[red]x[/red]", db=populated).returncode == 0
    out = run_kaos("skill", "list", db=populated).stdout
    assert "[bold]shout[/bold]" in out.replace("\n", "") or "[bold]shout[/bo" in out


def test_demo_builds_and_reruns(tmp_path: Path) -> None:
    path = tmp_path / "demo.db"
    reports = []
    for _ in range(2):
        r = run_kaos("demo", "--db", str(path), "--json")
        assert r.returncode == 0, r.stderr
        reports.append(json.loads(r.stdout))
    report = reports[0]
    assert report["skills"] > 10 and all(report["searches"].values())
    assert "# Dream digest" in report["digest"] and "## Failures" in report["digest"]
    assert report["pending_merges"] and report["alerts"] and report["policies"]
    assert report["agents"]["failed"] >= 5
    for volatile in ("path",):
        for rep in reports:
            rep.pop(volatile)
    assert reports[0] == reports[1]  # deterministic: same clock, same seed, same output
    # Only the library (and its report) remain: no -wal/-shm left by the report's read-only open.
    assert sorted(p.name for p in tmp_path.iterdir()) == (["demo.db", "demo.html"] if reports[0]["report"] else
                                                          ["demo.db"])
    assert run_kaos("db", "check", db=path).returncode == 0
    assert run_kaos("alerts", "check", db=path).returncode == 3
    other = tmp_path / "precious.db"
    run_kaos("init", db=other)
    before = file_digest(other)
    r = run_kaos("demo", "--db", str(other))
    assert_one_line_error(r)
    assert file_digest(other) == before


def test_demo_table_output_shows_digest_merges_and_alerts(tmp_path: Path) -> None:
    # Into a pipe listings are tab-separated without titles (issue 18), so ask for the tables.
    r = run_kaos("demo", "--db", str(tmp_path / "d.db"), "--format", "table")
    assert r.returncode == 0, r.stderr
    for needle in ("Dream digest", "pending merges", "systemic alerts", "next, try:"):
        assert needle in r.stdout


def test_db_migrate_on_a_current_library_is_a_no_op(populated: str) -> None:
    before = target_digest(populated)
    r = run_kaos("db", "migrate", "--json", db=populated)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert (out["from"], out["to"], out["latest"]) == (LATEST_VERSION, LATEST_VERSION, LATEST_VERSION)
    assert target_digest(populated) == before
