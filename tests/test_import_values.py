"""`kaos db import` validates every value as the write path does, on both engines alike, and `db check`
finds what an older import let in (issue 33 item 3).

Each hostile export is a real export with one value edited; the import must exit 1 with one line
naming the export line, write nothing, and the same export must be refused by PostgreSQL too.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from .conftest import run_kaos
from .pg_server import needs_postgres

# (what, column of the skills row, the value written into the export line, words of the message)
HOSTILE = [
    ("an infinite timestamp", "created_at", "Infinity", "not a finite number"),
    ("a timestamp before year 1", "updated_at", "-1e300", "not a time kaos can show"),
    ("bytes where the template's text belongs", "template", {"b64": "AAEC"}, "binary data where text belongs"),
    ("a NUL in the name", "name", "deploy\u0000app", "NUL"),
    ("an ESC in the name", "name", "deploy\u001b[31mapp", "skill add"),
    ("a right-to-left override in the name", "name", "deploy\u202eppa", "skill add"),
    ("an id past 64 bits", "id", 2**70, "out of range"),
]


def _export(tmp_path: Path) -> tuple[list[str], list[str]]:
    db = tmp_path / "src.db"
    assert run_kaos("init", db=db).returncode == 0
    assert run_kaos("skill", "add", "deploy-app", "--description", "deploy the app", "--template", "run {x}",
                    db=db).returncode == 0
    out = run_kaos("db", "export", db=db)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    columns = json.loads(lines[0])["tables"]["skills"]["columns"]
    return lines, columns


def _forged(lines: list[str], columns: list[str], column: str, value: object) -> str:
    out = []
    for line in lines:
        doc = json.loads(line)
        if isinstance(doc, dict) and doc.get("t") == "skills":
            row = doc["r"]
            row[columns.index(column)] = value
            line = json.dumps({"t": "skills", "r": row}, separators=(",", ":"))
            if value == "Infinity" or value == "-1e300":  # a JSON number, not a string
                line = line.replace(f'"{value}"', value)
        out.append(line)
    return "\n".join(out) + "\n"


def _assert_refused(result, what: str, words: str) -> None:
    assert result.returncode == 1, (what, result.returncode, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, (what, result.stderr)
    assert "export line" in lines[0] and words in lines[0], (what, lines[0])


def test_import_refuses_what_the_write_path_refuses_on_sqlite(tmp_path: Path) -> None:
    lines, columns = _export(tmp_path)
    for n, (what, column, value, words) in enumerate(HOSTILE):
        dump = tmp_path / f"hostile{n}.jsonl"
        dump.write_text(_forged(lines, columns, column, value), encoding="utf-8")
        target = tmp_path / f"dst{n}.db"
        _assert_refused(run_kaos("db", "import", str(dump), db=target), what, words)
        assert not target.exists(), what  # nothing written, not even an empty file


@needs_postgres
def test_import_refuses_the_same_values_on_postgresql(tmp_path: Path, pg_url: str) -> None:
    lines, columns = _export(tmp_path)
    for n, (what, column, value, words) in enumerate(HOSTILE):
        dump = tmp_path / f"hostile{n}.jsonl"
        dump.write_text(_forged(lines, columns, column, value), encoding="utf-8")
        _assert_refused(run_kaos("db", "import", str(dump), db=pg_url), what, words)
        listed = run_kaos("skill", "list", "--json", db=pg_url)
        assert listed.returncode != 0 or json.loads(listed.stdout) == [], what  # nothing written


def test_db_check_finds_values_an_older_import_let_in(tmp_path: Path) -> None:
    db = tmp_path / "lib.db"
    assert run_kaos("init", db=db).returncode == 0
    for name in ("deploy-app", "rotate-logs", "prune-branches"):
        assert run_kaos("skill", "add", name, "--description", "something", db=db).returncode == 0
    assert run_kaos("db", "check", db=db).returncode == 0
    with sqlite3.connect(db) as conn:  # as an import before this check would have stored them
        conn.execute("UPDATE skills SET created_at = 1e300 WHERE name = 'deploy-app'")
        conn.execute("UPDATE skills SET template = X'0001' WHERE name = 'rotate-logs'")
        conn.execute("UPDATE skills SET name = 'prune' || char(8238) || 'branches' WHERE name = 'prune-branches'")
    result = run_kaos("db", "check", "--json", db=db)
    assert result.returncode == 1
    problems = json.loads(result.stdout)["problems"]
    assert any("skills.created_at" in p and "not a time" in p for p in problems), problems
    assert any("skills.template holds binary data" in p for p in problems), problems
    assert any("skill name" in p and "U+202E" in p for p in problems), problems


def test_a_clean_export_still_round_trips(tmp_path: Path) -> None:
    """The checks refuse only what they must: the unedited export loads and checks clean."""
    lines, _ = _export(tmp_path)
    dump = tmp_path / "clean.jsonl"
    dump.write_text("\n".join(lines) + "\n", encoding="utf-8")
    target = tmp_path / "dst.db"
    assert run_kaos("db", "import", str(dump), db=target).returncode == 0
    assert run_kaos("db", "check", db=target).returncode == 0
