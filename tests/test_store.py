"""The store: pragmas, atomic migrations, refusing files that are not ours or too new."""

from __future__ import annotations

import multiprocessing
import sqlite3
from pathlib import Path

import pytest

from kaos_dream import Library, SchemaOutdatedError, SchemaTooNewError, Settings, StoreError
from kaos_dream.store import LATEST_VERSION, MIGRATIONS, apply_migrations, connect, schema_version
from kaos_dream.store.migrations import Migration, apply_one, split_statements

from .conftest import file_digest


def test_connection_pragmas(lib: Library) -> None:
    assert lib.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert lib.conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert lib.conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    assert lib.conn.execute("PRAGMA busy_timeout").fetchone()[0] == Settings().busy_timeout_ms


def test_synchronous_is_configurable(db_path: Path) -> None:
    with Library(db_path, settings=Settings(synchronous="FULL")) as lib:
        assert lib.conn.execute("PRAGMA synchronous").fetchone()[0] == 2


def test_migrations_recorded_and_rerun_is_noop(db_path: Path) -> None:
    with Library(db_path) as lib:
        versions = [r[0] for r in lib.conn.execute("SELECT version FROM schema_migrations ORDER BY version")]
        assert versions == list(range(1, LATEST_VERSION + 1))
        assert schema_version(lib.conn) == LATEST_VERSION
        assert apply_migrations(lib.conn, 0.0) == []
    before = file_digest(db_path)
    Library(db_path).close()
    assert file_digest(db_path) == before


def test_split_statements_keeps_triggers_whole() -> None:
    script = """
    -- comment
    CREATE TABLE a (x);
    CREATE TRIGGER t AFTER INSERT ON a BEGIN
        INSERT INTO a VALUES (1);
        INSERT INTO a VALUES (2);
    END;
    """
    statements = split_statements(script)
    assert len(statements) == 2
    assert statements[1].startswith("CREATE TRIGGER") and statements[1].endswith("END;")


def test_failed_migration_leaves_old_schema(db_path: Path) -> None:
    """A statement failing part-way through a migration rolls back the whole migration and its record."""
    conn = connect(str(db_path))
    apply_migrations(conn, 0.0)
    broken = Migration(
        LATEST_VERSION + 1,
        "broken",
        ("CREATE TABLE made_before_the_error (x)", "CREATE TABLE made_before_the_error (y)"),
    )
    with pytest.raises(sqlite3.OperationalError):
        apply_one(conn, broken, 0.0)
    assert schema_version(conn) == LATEST_VERSION
    assert conn.execute("SELECT max(version) FROM schema_migrations").fetchone()[0] == LATEST_VERSION
    assert conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'made_before_the_error'").fetchone() is None
    conn.close()


def test_newer_schema_refused_and_untouched(db_path: Path) -> None:
    Library(db_path).close()
    conn = sqlite3.connect(db_path)
    conn.execute(f"PRAGMA user_version = {LATEST_VERSION + 1}")
    conn.close()
    before = file_digest(db_path)
    with pytest.raises(SchemaTooNewError, match="newer"):
        Library(db_path)
    with pytest.raises(SchemaTooNewError):
        Library(db_path, readonly=True)
    assert file_digest(db_path) == before


def test_non_sqlite_file_refused_and_untouched(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("just some text, definitely not a database\n" * 10)
    before = file_digest(path)
    with pytest.raises(StoreError, match="not a SQLite database"):
        Library(path)
    assert file_digest(path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_other_applications_sqlite_file_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY)")
    conn.commit()
    conn.close()
    before = file_digest(path)
    with pytest.raises(StoreError, match="another application"):
        Library(path)
    assert file_digest(path) == before


def test_readonly_open_refuses_outdated_schema(db_path: Path) -> None:
    conn = connect(str(db_path))
    apply_migrations(conn, 0.0, upto=LATEST_VERSION - 1) if LATEST_VERSION > 1 else None
    conn.close()
    if LATEST_VERSION > 1:
        with pytest.raises(SchemaOutdatedError, match="kaos db migrate"):
            Library(db_path, readonly=True)
    else:
        with pytest.raises(StoreError, match="empty"):
            Library(db_path, readonly=True)


def test_readonly_open_of_missing_file_does_not_create_it(tmp_path: Path) -> None:
    path = tmp_path / "missing.db"
    with pytest.raises(StoreError, match="no library at .*kaos --db .* init"):
        Library(path, readonly=True)
    assert not path.exists()


def test_upgrade_from_migration_one_keeps_data(db_path: Path) -> None:
    """A file created at migration 1 upgrades to the latest schema with its rows intact."""
    conn = connect(str(db_path))
    apply_migrations(conn, 0.0, upto=1)
    assert schema_version(conn) == 1
    conn.execute(
        "INSERT INTO skills (name, description, template, tags, created_at, updated_at) "
        "VALUES ('old-skill', 'written by schema one', 'do {x}', '[\"legacy\"]', 1.0, 1.0)"
    )
    conn.execute(
        "INSERT INTO memories (kind, key, content, metadata, created_at, updated_at) "
        "VALUES ('note', 'old-mem', 'remembered from schema one', '{\"a\": 1}', 1.0, 1.0)"
    )
    conn.close()
    with Library(db_path) as lib:
        assert schema_version(lib.conn) == LATEST_VERSION
        skill = lib.skills.get("old-skill")
        assert (skill.description, skill.template, skill.tags) == ("written by schema one", "do {x}", ("legacy",))
        assert lib.memories.get("old-mem").metadata == {"a": 1}
        assert [h.name for h in lib.search("schema one", kind="skill")] == ["old-skill"]
        assert lib.check() == []


def _open_and_add(path: str, index: int, queue: multiprocessing.Queue) -> None:
    try:
        with Library(path) as lib:
            lib.skills.add(f"skill-from-process-{index}", "made concurrently")
        queue.put(("ok", index))
    except Exception as exc:  # reported to the parent, which fails the test
        queue.put(("error", f"{type(exc).__name__}: {exc}"))


@pytest.mark.both_engines
def test_eight_processes_open_a_new_file_at_once(library_target: str) -> None:
    path = library_target  # a file that does not exist yet, or an empty database
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    procs = [ctx.Process(target=_open_and_add, args=(path, i, queue)) for i in range(8)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
    results = [queue.get(timeout=5) for _ in procs]
    assert [r for r in results if r[0] != "ok"] == []
    with Library(path) as lib:
        assert lib.conn.execute("SELECT count(*) FROM schema_migrations").fetchone()[0] == LATEST_VERSION
        assert lib.skills.count() == 8
        assert lib.check() == []


def test_every_migration_file_has_statements() -> None:
    assert MIGRATIONS, "no migrations found"
    for migration in MIGRATIONS:
        assert migration.statements, migration.name


FLOAT_SETTINGS = [f.name for f in __import__("dataclasses").fields(Settings) if isinstance(f.default, float)]


@pytest.mark.parametrize("name", FLOAT_SETTINGS)
@pytest.mark.parametrize("raw", ["nan", "inf", "-inf", "1e400", "NaN"])
def test_every_float_setting_refuses_non_finite_values(name: str, raw: str) -> None:
    from kaos_dream.errors import InvalidInputError

    key = "KAOS_" + name.upper()
    with pytest.raises(InvalidInputError, match=key):
        Settings.from_env({key: raw})


def test_float_settings_are_all_covered() -> None:
    assert len(FLOAT_SETTINGS) >= 25 and {"rank_alpha", "rank_floor", "graph_beta"} <= set(FLOAT_SETTINGS)


@pytest.mark.parametrize("env", [{"KAOS_RANK_ALPHA": "nan"}, {"KAOS_RANK_FLOOR": "nan"},
                                 {"KAOS_RANK_HALF_LIFE_DAYS": "inf"}])
def test_cli_refuses_a_non_finite_setting_in_one_line(tmp_path: Path, env: dict[str, str]) -> None:
    from .conftest import run_kaos

    db = tmp_path / "s.db"
    assert run_kaos("skill", "add", "retry-http", "--description", "retry an http call", db=db).returncode == 0
    before = file_digest(db)
    r = run_kaos("--json", "search", "retry", db=db, env=env)
    assert r.returncode == 1 and r.stdout == "", (r.returncode, r.stdout, r.stderr)
    assert r.stderr.strip().splitlines() == [f"kaos: error: {next(iter(env))}={float(env[next(iter(env))])} "
                                             "must be a finite number"]
    assert file_digest(db) == before
