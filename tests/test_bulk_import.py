"""`kaos skill import-jsonl` (issue 35 item 4): a large file in batches, all checked first, re-runnable
after a kill. Real `kaos` processes on real SQLite files."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from kaos_dream import Library, Settings
from kaos_dream.agent_skills import bulk

from .conftest import PROJECT_ROOT, run_kaos

HASH_ENV = {"KAOS_EMBEDDING_MODEL": "hash-trigram", "KAOS_STRONG_EMBEDDING_MODEL": "none"}


def write_skills(path: Path, n: int, start: int = 0) -> None:
    with path.open("w") as f:
        for i in range(start, start + n):
            f.write(json.dumps({"name": f"skill-{i}", "description": f"rotate key {i} and deploy",
                                "template": "run {x}", "tags": ["t", f"g{i % 7}"]}) + "\n")


def rows(db: Path, sql: str) -> list[tuple]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def test_imports_in_file_order_with_vectors_and_reports_present_names(tmp_path: Path) -> None:
    src, db = tmp_path / "s.jsonl", tmp_path / "kaos.db"
    write_skills(src, 12_000)  # three batches of 5000
    r = run_kaos("skill", "import-jsonl", str(src), "--json", db=db, env=HASH_ENV)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert (out["rows"], out["added"], out["present"], out["vectors"]) == (12_000, 12_000, 0, 12_000)
    assert rows(db, "SELECT min(id), max(id) FROM skills") == [(1, 12_000)]
    assert rows(db, "SELECT name, tags, template FROM skills WHERE id = 8001") == [
        ("skill-8000", json.dumps(["t", "g6"]), "run {x}")]
    assert rows(db, "SELECT count(*) FROM embeddings WHERE kind = 'skill'") == [(12_000,)]
    again = run_kaos("skill", "import-jsonl", str(src), "--json", db=db, env=HASH_ENV)
    assert json.loads(again.stdout)["present"] == 12_000 and json.loads(again.stdout)["added"] == 0
    with Library(db, settings=Settings(embedding_model="hash-trigram", strong_embedding_model="none")) as lib:
        assert lib.search("skill-8000", kind="skill", limit=1)[0].name == "skill-8000"


def test_a_bad_line_writes_nothing_and_names_every_problem(tmp_path: Path) -> None:
    src, db = tmp_path / "s.jsonl", tmp_path / "kaos.db"
    write_skills(src, 10)
    with src.open("a") as f:
        f.write('{"name": "skill-3"}\n')  # a duplicate name
        f.write("not json\n")
        f.write('{"name": "x", "tags": "one"}\n')
        f.write('{"name": "y", "template": "{0}"}\n')
    r = run_kaos("skill", "import-jsonl", str(src), db=db, env=HASH_ENV)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert f"{src}:11: the name 'skill-3' appears earlier in the file" in r.stderr
    assert f"{src}:12: not JSON" in r.stderr
    assert f"{src}:13: tags must be a list of strings" in r.stderr
    assert f"{src}:14: template field {{0}}" in r.stderr
    assert r.stderr.strip().endswith("4 problem(s) in the file; nothing was imported")
    assert not db.exists()  # checked before the library is opened, so not even created
    missing = run_kaos("skill", "import-jsonl", str(tmp_path / "nope.jsonl"), db=db, env=HASH_ENV)
    assert missing.returncode == 1 and missing.stderr.count("\n") == 1 and "no such file" in missing.stderr


def test_stdin_works_and_a_killed_import_is_finished_by_running_it_again(tmp_path: Path) -> None:
    src, db = tmp_path / "s.jsonl", tmp_path / "kaos.db"
    write_skills(src, 15_000)
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("KAOS_")}, **HASH_ENV,
           "PYTHONPATH": str(PROJECT_ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "kaos_dream", "--db", str(db), "skill", "import-jsonl", str(src)],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # wait until some batches are committed, then kill -9 mid-import
        try:
            if db.exists() and rows(db, "SELECT count(*) FROM skills")[0][0] >= 5000:
                break
        except sqlite3.OperationalError:  # the schema is still being made
            pass
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done = rows(db, "SELECT count(*) FROM skills")[0][0]
    assert done % bulk.BATCH == 0  # whole batches only: rows and vectors commit together
    assert rows(db, "SELECT count(*) FROM embeddings")[0][0] == done
    with src.open("rb") as f:
        r = subprocess.run([sys.executable, "-m", "kaos_dream", "--db", str(db), "skill", "import-jsonl", "-",
                            "--json"], env=env, stdin=f, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert (out["added"], out["present"]) == (15_000 - done, done)
    assert rows(db, "SELECT count(*), min(id), max(id) FROM skills") == [(15_000, 1, 15_000)]
    assert rows(db, "SELECT count(*) FROM embeddings")[0][0] == 15_000
