"""`kaos dream run --if-due` that finds nothing due answers before typer, the library or numpy load
(:mod:`kaos_dream.cli.dream_due`), and says exactly what the full command says; anything that could
make the answers differ goes to the full command."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from kaos_dream import Library, ManualClock, Settings
from kaos_dream.cli import run as click_run
from kaos_dream.cli.dream_due import DEFAULT_DB, DEFAULT_THRESHOLD, answer
from kaos_dream.harness.spool import Spool, default_base

from .conftest import PROJECT_ROOT, run_kaos_in_process

HEAVY = ("typer", "click", "rich", "numpy", "kaos_dream.library", "kaos_dream.dream", "kaos_dream.settings")

PROBE = """
import json, sys
heavy = json.loads(sys.argv[2])
sys.argv = ["kaos", *json.loads(sys.argv[1])]
from kaos_dream.entry import run
code = run()
loaded = sorted(h for h in heavy if h in sys.modules)
sys.stderr.write("\\nPROBE " + json.dumps({"code": code, "loaded": loaded}) + "\\n")
"""


def probe(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> dict:
    """A fresh interpreter runs ``kaos ARGS`` through the console script's entry; what it printed
    and which heavy modules it imported."""
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(args), json.dumps(HEAVY)],
        capture_output=True, text=True, cwd=cwd, timeout=120,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(PROJECT_ROOT), "HOME": str(cwd), **(env or {})},
    )
    line = [x for x in proc.stderr.splitlines() if x.startswith("PROBE ")]
    assert line, proc.stderr
    stderr = proc.stderr[: proc.stderr.rindex("\nPROBE ")]
    return {**json.loads(line[-1][len("PROBE "):]), "stdout": proc.stdout, "stderr": stderr}


def library(path: Path, completed: int) -> Path:
    """A library with ``completed`` finished episodes and one still running."""
    with Library(path, clock=ManualClock(1_700_000_000.0), settings=Settings()) as lib:
        lib.skills.add("csv-to-parquet", "convert csv files to parquet", "run it", ["csv"])
        for i in range(completed):
            lib.episodes.start(f"agent-{i}")
            lib.episodes.complete(f"agent-{i}")
        lib.episodes.start("still-running")
    return path


def full_command(args: list[str], env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """The same arguments through typer alone (no fast path)."""
    result = run_kaos_in_process(*args, env=env, runner=click_run)
    return result.returncode, result.stdout, result.stderr


@pytest.mark.parametrize("args", [
    ["dream", "run", "--if-due"],
    ["dream", "run", "--apply", "--if-due"],
    ["dream", "run", "--if-due", "--apply", "--json"],
    ["--json", "dream", "run", "--dry-run", "--if-due"],
    ["dream", "run", "--if-due", "--quiet"],
    ["dream", "run", "-q", "--apply", "--if-due"],
])
def test_not_due_is_answered_from_the_file_as_the_full_command_answers(tmp_path: Path, args: list[str]) -> None:
    db = library(tmp_path / "lib.db", completed=3)
    argv = ["--db", str(db), *args]
    fast = probe(argv, tmp_path)
    assert fast["loaded"] == [], fast  # no typer, rich, numpy, library or dream: the count alone
    assert fast["code"] == 0
    code, stdout, stderr = full_command(argv)
    assert (fast["code"], fast["stdout"], fast["stderr"]) == (code, stdout, stderr)
    if "--quiet" not in args and "-q" not in args:
        assert "3 completed episodes since the last" in stdout
    if "--json" in args:
        assert json.loads(stdout)["status"] == "not-due"


def test_db_after_the_command_and_a_threshold_from_the_environment(tmp_path: Path) -> None:
    db = library(tmp_path / "lib.db", completed=2)
    env = {"KAOS_DREAM_THRESHOLD": "5", "KAOS_DB": str(tmp_path / "other.db")}
    fast = probe(["dream", "run", "--if-due", "--db", str(db)], tmp_path, env)
    assert fast["loaded"] == []
    assert fast["stdout"] == "2 completed episodes since the last dream; a pass is due at 5 (KAOS_DREAM_THRESHOLD)\n"
    assert full_command(["dream", "run", "--if-due", "--db", str(db)], env)[1] == fast["stdout"]


def test_a_due_pass_runs_in_full(tmp_path: Path) -> None:
    db = library(tmp_path / "lib.db", completed=3)
    result = probe(["--db", str(db), "dream", "run", "--apply", "--if-due", "--json"], tmp_path,
                   {"KAOS_DREAM_THRESHOLD": "3"})
    assert result["code"] == 0, result
    assert json.loads(result["stdout"])["status"] == "completed"
    assert "kaos_dream.dream" in result["loaded"]
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM dream_runs WHERE mode = 'apply'").fetchone()[0] == 1
    again = probe(["--db", str(db), "dream", "run", "--apply", "--if-due"], tmp_path, {"KAOS_DREAM_THRESHOLD": "3"})
    assert again["loaded"] == [] and again["stdout"].startswith("0 completed episodes since the last applied dream")


@pytest.mark.parametrize("env", [
    {"KAOS_DREAM_TRESHOLD": "3"},  # a typo: the full command warns about it
    {"KAOS_DREAM_THRESHOLD": "zero"},  # the full command reports it
    {"KAOS_DREAM_THRESHOLD": "0"},
])
def test_settings_the_full_command_must_judge(tmp_path: Path, env: dict[str, str]) -> None:
    db = library(tmp_path / "lib.db", completed=1)
    argv = ["--db", str(db), "dream", "run", "--if-due"]
    result = probe(argv, tmp_path, env)
    assert "typer" in result["loaded"]
    assert (result["code"], result["stdout"], result["stderr"]) == full_command(argv, env)
    assert result["stderr"].startswith("kaos: ")


def test_another_known_setting_is_checked_by_settings_and_still_fast(tmp_path: Path) -> None:
    db = library(tmp_path / "lib.db", completed=1)
    result = probe(["--db", str(db), "dream", "run", "--if-due"], tmp_path, {"KAOS_STRONG_EMBEDDING_MODEL": "none"})
    assert result["loaded"] == ["kaos_dream.settings"]
    assert result["stdout"].startswith("1 completed episodes since the last dream")
    bad = probe(["--db", str(db), "dream", "run", "--if-due"], tmp_path, {"KAOS_DREAM_LEASE_S": "soon"})
    assert "typer" in bad["loaded"] and bad["code"] != 0 and "KAOS_DREAM_LEASE_S" in bad["stderr"]


def test_what_the_fast_path_leaves_to_the_full_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [n for n in __import__("os").environ if n.startswith("KAOS_")]:
        monkeypatch.delenv(name)
    db = library(tmp_path / "lib.db", completed=1)
    base = ["--db", str(db), "dream", "run"]
    assert answer([*base, "--if-due"]) == 0
    assert answer(base) is None  # not --if-due
    assert answer([*base, "--if-due", "--wait", "5"]) is None  # an option it does not parse
    assert answer([*base, "--if-due", "--apply", "--dry-run"]) is None  # a usage error
    assert answer([*base, "--if-due", "--help"]) is None
    assert answer(["--db", str(tmp_path / "missing.db"), "dream", "run", "--if-due"]) is None
    assert answer(["--db", "postgresql://u@h/db", "dream", "run", "--if-due"]) is None
    Spool(default_base(str(db))).append(['{"event": "spooled"}'])
    assert answer([*base, "--if-due"]) is None  # spooled hook events are replayed by the full command
    Path(default_base(str(db)) + ".jsonl").unlink()
    assert answer([*base, "--if-due"]) == 0
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA user_version = 3")  # an older schema: the full command migrates it
    assert answer([*base, "--if-due"]) is None


def test_defaults_are_the_settings_defaults() -> None:
    assert (Settings().db, Settings().dream_threshold) == (DEFAULT_DB, DEFAULT_THRESHOLD)
