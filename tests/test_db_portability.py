"""`kaos db backup`, `kaos db export --jsonl` and `kaos db import`: exact, atomic, never half-written."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from kaos_dream import Library, ManualClock, Settings
from kaos_dream.errors import ConflictError, InvalidInputError, NotFoundError, StoreError
from kaos_dream.store import LATEST_VERSION
from kaos_dream.store.backup import backup_database
from kaos_dream.store.jsonl import export_database, export_version, import_database

from .conftest import T0, file_digest
from .library_content import fill_library


@pytest.fixture
def full_db(tmp_path: Path) -> Path:
    path = tmp_path / "source.db"
    with Library(path, clock=ManualClock(T0 + 0.123456789), settings=Settings()) as lib:
        fill_library(lib)
    return path


def table_rows(path: Path) -> dict[str, list[tuple]]:
    conn = sqlite3.connect(path)
    try:
        names = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' "
            "AND name NOT LIKE '%fts%' ORDER BY name")]
        return {n: sorted(conn.execute(f'SELECT * FROM "{n}"').fetchall(), key=repr) for n in names}
    finally:
        conn.close()


def test_export_import_export_is_identical(full_db: Path, tmp_path: Path, kaos) -> None:
    first, second = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    before = file_digest(full_db)
    assert kaos("db", "export", "--jsonl", str(first), db=full_db).returncode == 0
    assert file_digest(full_db) == before  # export is a read path
    restored = tmp_path / "restored.db"
    result = kaos("db", "import", str(first), db=restored)
    assert result.returncode == 0, result.stderr
    assert kaos("db", "export", str(second), db=restored).returncode == 0
    assert first.read_bytes() == second.read_bytes()
    assert table_rows(full_db) == table_rows(restored)
    assert kaos("db", "check", db=restored).returncode == 0
    with Library(restored, readonly=True) as lib:  # the rebuilt full-text index answers searches
        assert [h.name for h in lib.search("parquet", kind="skill")] == ["csv-to-parquet"]


def test_export_format_header_rows_and_end(full_db: Path, kaos) -> None:
    out = kaos("db", "export", db=full_db)  # default: standard output
    assert out.returncode == 0
    lines = out.stdout.splitlines()
    header = json.loads(lines[0])
    assert header["format"] == "kaos-dream-export" and header["format_version"] == 1
    # Written in the layout of the newest migration that changed what an export holds (14 did not).
    assert header["schema_version"] == export_version(LATEST_VERSION)
    assert json.loads(lines[-1]) == {"end": True, "rows": len(lines) - 2}
    assert sum(t["rows"] for t in header["tables"].values()) == len(lines) - 2
    assert not any(name.endswith("_fts") or "_fts_" in name for name in header["tables"])
    rows = [json.loads(line) for line in lines[1:-1]]
    assert [r["t"] for r in rows] == sorted(r["t"] for r in rows)  # tables in name order


def test_import_from_stdin(full_db: Path, tmp_path: Path, kaos) -> None:
    text = kaos("db", "export", db=full_db).stdout
    restored = tmp_path / "piped.db"
    assert kaos("db", "import", "-", db=restored, input=text).returncode == 0
    assert kaos("db", "export", db=restored).stdout == text


def test_import_refuses_library_with_data_unless_forced(full_db: Path, tmp_path: Path) -> None:
    export = tmp_path / "e.jsonl"
    export_database(str(full_db), export)
    target = tmp_path / "busy.db"
    with Library(target) as lib:
        lib.skills.add("already-here")
    before = file_digest(target)
    with pytest.raises(StoreError, match="--force"):
        import_database(export, target)
    assert file_digest(target) == before
    import_database(export, target, force=True)
    with Library(target, readonly=True) as lib:
        assert lib.skills.count() == 3
        with pytest.raises(NotFoundError):
            lib.skills.get("already-here")


def test_import_into_empty_library_needs_no_force(full_db: Path, tmp_path: Path) -> None:
    export = tmp_path / "e.jsonl"
    export_database(str(full_db), export)
    target = tmp_path / "empty.db"
    Library(target).close()
    assert import_database(export, target).rows > 0


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda lines: lines[:-1], "truncated"),
        (lambda lines: lines[:5], "truncated"),
        (lambda lines: [lines[0].replace('"kaos-dream-export"', '"other"'), *lines[1:]], "not a kaos-dream export"),
        (lambda lines: [lines[0].replace('"schema_version":', '"schema_version":9'), *lines[1:]], "newer"),
        (lambda lines: [*lines[:3], "{not json\n", *lines[3:]], "not valid JSON"),
        (lambda lines: [*lines[:3], lines[2], *lines[3:]], "UNIQUE|rows"),
        (lambda lines: [ln.replace('{"t":"skills","r":[1,', '{"t":"skills","r":[1.0,') for ln in lines], "exactly"),
        (lambda lines: [*lines, '{"t":"skills","r":[]}\n'], "after the end"),
        (lambda lines: [], "empty"),
    ],
)
def test_damaged_export_is_refused_and_writes_nothing(full_db: Path, tmp_path: Path, damage, message) -> None:
    export = tmp_path / "e.jsonl"
    export_database(str(full_db), export)
    lines = export.read_text("utf-8").splitlines(keepends=True)
    export.write_text("".join(damage(lines)), "utf-8")
    target = tmp_path / "target.db"
    with pytest.raises(InvalidInputError, match=message):
        import_database(export, target)
    assert not target.exists()
    assert not list(tmp_path.glob(".*.tmp"))


def test_import_of_older_schema_export_upgrades(tmp_path: Path) -> None:
    from kaos_dream.store import apply_migrations, connect

    old = tmp_path / "old.db"
    conn = connect(str(old))
    apply_migrations(conn, T0, upto=1)
    conn.execute("INSERT INTO skills (name, description, created_at, updated_at) VALUES ('legacy', 'x', 1, 1)")
    conn.close()
    export = tmp_path / "old.jsonl"
    export_database(str(old), export)
    assert json.loads(export.read_text().splitlines()[0])["schema_version"] == 1
    result = import_database(export, tmp_path / "new.db", now=T0)
    assert (result.schema_version, result.upgraded_to) == (1, LATEST_VERSION)
    with Library(tmp_path / "new.db", readonly=True) as lib:
        assert lib.skills.get("legacy").description == "x"


def test_backup_is_consistent_refuses_overwrite_and_never_half_written(full_db: Path, tmp_path: Path, kaos) -> None:
    target = tmp_path / "copy.db"
    result = kaos("db", "backup", str(target), db=full_db)
    assert result.returncode == 0, result.stderr
    assert table_rows(target) == table_rows(full_db)
    assert kaos("db", "check", db=target).returncode == 0
    before = file_digest(target)
    again = kaos("db", "backup", str(target), db=full_db)
    assert again.returncode == 1 and "--force" in again.stderr and again.stderr.count("\n") == 1
    assert file_digest(target) == before
    with Library(full_db) as lib:
        lib.skills.add("added-after-first-backup")
    assert kaos("db", "backup", str(target), "--force", db=full_db).returncode == 0
    with Library(target, readonly=True) as lib:
        assert lib.skills.get("added-after-first-backup")
    assert not list(tmp_path.glob(".*.tmp*"))


def test_backup_refuses_strangers_file_and_itself(full_db: Path, tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("precious")
    with pytest.raises(StoreError, match="not a SQLite database"):
        backup_database(str(full_db), notes, force=True)
    assert notes.read_text() == "precious"
    with pytest.raises(StoreError, match="the database itself"):
        backup_database(str(full_db), full_db, force=True)
    with pytest.raises(ConflictError):
        backup_database(str(full_db), notes)


def test_export_onto_the_database_itself_is_refused_plainly(full_db: Path, tmp_path: Path, kaos) -> None:
    """It used to wait out the busy timeout on its own lock and blame "another process"."""
    before = file_digest(full_db)
    link = tmp_path / "alias.db"
    link.symlink_to(full_db)
    for target in (full_db, link):
        with pytest.raises(StoreError, match="the database itself"):
            export_database(str(full_db), target, force=True)
        result = kaos("db", "export", str(target), "--force", db=full_db)
        assert result.returncode == 1 and "is the database itself" in result.stderr, result.stderr
        assert "locked" not in result.stderr
    assert file_digest(full_db) == before


def test_backup_while_writers_hold_the_lock(full_db: Path, tmp_path: Path) -> None:
    """The online backup reads a snapshot: a writer holding the write lock does not stop it, and the
    copy has the committed state only."""
    writer = sqlite3.connect(full_db, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("INSERT INTO skills (name, created_at, updated_at) VALUES ('uncommitted', 1, 1)")
    try:
        backup_database(str(full_db), tmp_path / "snap.db", busy_timeout_ms=200)
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    names = {r[0] for r in sqlite3.connect(tmp_path / "snap.db").execute("SELECT name FROM skills")}
    assert "uncommitted" not in names and "csv-to-parquet" in names


def test_consistent_hand_edit_is_accepted(full_db: Path, tmp_path: Path) -> None:
    export = tmp_path / "e.jsonl"
    export_database(str(full_db), export)
    export.write_text(export.read_text("utf-8").replace("csv-to-parquet", "csv-to-arrow"), "utf-8")
    import_database(export, tmp_path / "edited.db")
    with Library(tmp_path / "edited.db", readonly=True) as lib:
        assert [h.name for h in lib.search("arrow", kind="skill")] == ["csv-to-arrow"]


@pytest.mark.parametrize("command", [("db", "export", "-"), ("memory", "list", "--limit", "5000")])
def test_reader_closing_the_pipe_early_is_not_an_error(tmp_path: Path, command: tuple[str, ...]) -> None:
    """`kaos db export - | head -1`: the reader stops after a line, the export is cut short, and kaos
    exits 0 without a message (it used to exit 1, silently, because click answers EPIPE that way)."""
    import os
    import subprocess

    from .conftest import PROJECT_ROOT, kaos_command

    db = tmp_path / "big.db"
    with Library(db, clock=ManualClock(T0)) as lib, lib.transaction():
        for i in range(3000):  # far more than a pipe buffer holds
            lib.memories.add(f"memory number {i} " * 8, key=f"k{i}")
    env = {k: v for k, v in os.environ.items() if not k.startswith("KAOS_")}
    env["PYTHONPATH"] = str(PROJECT_ROOT)
    proc = subprocess.Popen([*kaos_command(), "--db", str(db), *command], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env)
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()  # what `head -1` does after its line
    stderr = proc.stderr.read()
    assert proc.wait(timeout=60) == 0, stderr
    assert first and stderr == b""


def test_the_task_table_migration_changes_no_export(tmp_path: Path) -> None:
    """Migration 14 folds each task's text into one ``tasks`` row: a schema-13 file holding real
    digests, a second wording of one task, a text without content words and a counter row whose
    use rows are gone exports the same bytes before and after it, and its counters stay exact."""
    from kaos_dream.plasticity.task import task_hash
    from kaos_dream.store import apply_migrations, connect
    from kaos_dream.store.counters import counter_mismatches

    path = tmp_path / "v13.db"
    conn = connect(str(path))
    apply_migrations(conn, T0, str(path), upto=13)
    conn.execute(f"INSERT INTO skills (id, name, created_at, updated_at) VALUES (1, 'a', {T0}, {T0}), "
                 f"(2, 'b', {T0}, {T0})")
    conn.execute(f"INSERT INTO agents (id, started_at) VALUES ('ag', {T0})")
    uses = [(1, "ag", 1, "Convert the CSV file"), (1, "ag", 0, "csv file convert"), (2, None, 1, "!!!"),
            (2, "ag", 1, "deploy web"), (1, None, 1, None), (2, "ag", 0, "convert the csv file")]
    conn.executemany("INSERT INTO skill_uses (skill_id, agent_id, success, task, task_hash, created_at) "
                     "VALUES (?, ?, ?, ?, ?, ?)",
                     [(s, a, ok, t, task_hash(t), T0 + i) for i, (s, a, ok, t) in enumerate(uses)])
    conn.execute("DELETE FROM skill_uses WHERE task = 'deploy web'")  # leaves a zero counter row
    assert task_hash(uses[0][3]) == task_hash(uses[1][3]) and task_hash("!!!") is None

    def export() -> bytes:
        conn.execute("BEGIN")
        try:
            return "".join(export_lines(conn)).encode()
        finally:
            conn.execute("ROLLBACK")

    from kaos_dream.store.jsonl import export_lines

    before = export()
    # Up to 16, the last storage-only step: 17 (one vector per model) is a layout change, so an export
    # past it is written in its own layout.
    apply_migrations(conn, T0 + 100, str(path), upto=16)
    # One row per task context with a wording: the deleted "deploy web" left only its zero counter row,
    # whose task keeps its key (since schema 15 a small id beside the digest) without a text.
    assert [tuple(r) for r in conn.execute("SELECT text FROM tasks ORDER BY id")] == [("Convert the CSV file",),
                                                                                      (None,)]
    assert [tuple(r) for r in conn.execute("SELECT task FROM skill_uses ORDER BY id")] == [
        (None,), ("csv file convert",), ("!!!",), (None,), ("convert the csv file",)]
    assert counter_mismatches(conn) == []
    assert export() == before
    conn.close()
