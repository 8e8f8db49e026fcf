"""PostgreSQL migrations against the real server: the same steps and schema as SQLite, one
transaction each, safe when many processes start at once, refusing newer and foreign databases."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import psycopg
import pytest

from kaos_dream.errors import SchemaOutdatedError, SchemaTooNewError, StoreError
from kaos_dream.store.connect import connect as sqlite_connect
from kaos_dream.store.migrations import LATEST_VERSION as SQLITE_LATEST
from kaos_dream.store.migrations import MIGRATIONS as SQLITE_MIGRATIONS
from kaos_dream.store.migrations import apply_migrations as sqlite_apply
from kaos_dream.store.postgres.connect import connect
from kaos_dream.store.postgres.fulltext import POSTGRES_ONLY_TABLES
from kaos_dream.store.postgres.migrations import (
    LATEST_VERSION,
    MIGRATIONS,
    apply_migrations,
    require_current,
    schema_version,
)
from tests.conftest import PROJECT_ROOT
from tests.pg_server import PgServer, needs_postgres

pytestmark = needs_postgres
T0 = 1_767_225_600.0


def _tables_of(conn: psycopg.Connection) -> int:
    return conn.execute("SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()").fetchone()[0]


def test_the_same_numbered_steps_as_sqlite() -> None:
    assert [(m.version, m.name) for m in MIGRATIONS] == [(m.version, m.name) for m in SQLITE_MIGRATIONS]
    assert LATEST_VERSION == SQLITE_LATEST


def test_fresh_database_is_migrated_and_recorded(pg_url: str) -> None:
    with connect(pg_url) as conn:
        assert apply_migrations(conn, T0, pg_url) == list(range(1, LATEST_VERSION + 1))
        assert apply_migrations(conn, T0, pg_url) == []
        assert schema_version(conn) == LATEST_VERSION
        rows = conn.execute("SELECT version, name, applied_at FROM schema_migrations ORDER BY version").fetchall()
        conn.rollback()
    assert rows == [(m.version, m.name, T0) for m in MIGRATIONS]


_SQLITE_TYPES = {"INTEGER": "bigint", "REAL": "double precision", "TEXT": "text", "BLOB": "bytea"}


def _sqlite_schema(path) -> dict[str, list[tuple[str, str, bool]]]:
    conn = sqlite_connect(str(path))
    try:
        sqlite_apply(conn, T0)
        names = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
            "AND name NOT LIKE '%\\_fts%' ESCAPE '\\' ORDER BY name")]
        out = {}
        for name in names:
            cols = conn.execute(f"PRAGMA table_info({name})").fetchall()
            # A primary-key column counts as NOT NULL (PostgreSQL enforces it; on SQLite the rowid is never NULL).
            out[name] = [(c[1], _SQLITE_TYPES[c[2]], bool(c[3]) or bool(c[5])) for c in cols]
        return out
    finally:
        conn.close()


def test_both_dialects_define_the_same_tables_and_columns(pg_url: str, tmp_path) -> None:
    expected = _sqlite_schema(tmp_path / "fresh.db")
    with connect(pg_url) as conn:
        apply_migrations(conn, T0, pg_url)
        rows = conn.execute(
            "SELECT table_name, column_name, data_type, is_nullable = 'NO' FROM information_schema.columns "
            "WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position").fetchall()
        conn.rollback()
    found: dict[str, list[tuple[str, str, bool]]] = {}
    for table, column, data_type, not_null in rows:
        found.setdefault(table, []).append((column, data_type, not_null))
    full_text = {t: found.pop(t) for t in list(found) if t in POSTGRES_ONLY_TABLES}
    assert set(full_text) == set(POSTGRES_ONLY_TABLES)  # the FTS5 stand-ins, and nothing else PG-only
    assert found == expected


def test_sqlite_full_text_tables_are_the_ones_postgres_replaces(tmp_path) -> None:
    conn = sqlite_connect(str(tmp_path / "f.db"))
    sqlite_apply(conn, T0)
    virtual = {r[0]: r[1] for r in conn.execute("SELECT name, sql FROM sqlite_master WHERE sql LIKE 'CREATE VIRTUAL%'")}
    conn.close()
    assert set(virtual) == {"skills_fts", "memories_fts"}
    assert {"skills_fts", "memories_fts"} <= set(POSTGRES_ONLY_TABLES)


def test_newer_schema_is_refused_untouched(pg_url: str) -> None:
    with connect(pg_url) as conn:
        apply_migrations(conn, T0, pg_url)
        conn.execute("INSERT INTO schema_migrations VALUES (%s, 'from_the_future', 0)", (LATEST_VERSION + 1,))
        conn.commit()
        before = _tables_of(conn)
        conn.rollback()
        with pytest.raises(SchemaTooNewError) as caught:
            apply_migrations(conn, T0, pg_url)
        assert f"schema version {LATEST_VERSION + 1}, newer than this kaos-dream understands" in str(caught.value)
        with pytest.raises(SchemaTooNewError):
            require_current(conn, pg_url)
        assert _tables_of(conn) == before
        conn.rollback()


def test_outdated_schema_is_named_for_read_only_opens(pg_url: str) -> None:
    with connect(pg_url) as conn:
        apply_migrations(conn, T0, pg_url, upto=5)
        with pytest.raises(SchemaOutdatedError, match="schema version 5; run `kaos db migrate`"):
            require_current(conn, pg_url)
        conn.rollback()


def test_another_applications_database_is_refused(pg_url: str) -> None:
    with connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE invoices (id int)")
    with connect(pg_url) as conn:
        with pytest.raises(StoreError, match="tables of another application"):
            apply_migrations(conn, T0, pg_url)
        conn.rollback()
        assert _tables_of(conn) == 1


def test_a_failing_step_leaves_the_previous_schema(pg_url: str) -> None:
    # A table named like one migration 0004 creates makes that step fail: it must roll back whole.
    with connect(pg_url) as conn:
        apply_migrations(conn, T0, pg_url, upto=3)
        conn.execute("CREATE TABLE llm_cache (key text)")
        conn.commit()
        with pytest.raises(psycopg.errors.DuplicateTable):
            apply_migrations(conn, T0, pg_url)
        conn.rollback()
        assert schema_version(conn) == 3
        assert conn.execute("SELECT to_regclass('failure_fingerprints')").fetchone()[0] is None
        conn.rollback()


def test_a_user_without_create_privilege_gets_one_line(pg_server: PgServer, pg_database: str) -> None:
    with pg_server.admin(pg_database) as admin:
        admin.execute("CREATE ROLE reader LOGIN PASSWORD 'reader-pw'")
    url = pg_server.url(pg_database, user="reader", password="reader-pw")
    with connect(url) as conn:
        with pytest.raises(StoreError) as caught:
            apply_migrations(conn, T0, url)
        conn.rollback()
    message = str(caught.value)
    assert "may not create kaos-dream's schema" in message and "permission denied" in message
    assert "reader-pw" not in message and "\n" not in message


_RACER = """
import json, sys, time
from kaos_dream.store.postgres.connect import connect
from kaos_dream.store.postgres.migrations import apply_migrations
url, start = sys.argv[1], float(sys.argv[2])
conn = connect(url)
time.sleep(max(start - time.time(), 0))
print(json.dumps(apply_migrations(conn, 1.0, url)))
"""


def test_eight_processes_opening_one_fresh_database_apply_each_step_once(pg_url: str) -> None:
    start = time.time() + 3.0  # every process connected and waiting, then all migrate at once
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT)}
    procs = [subprocess.Popen([sys.executable, "-c", _RACER, pg_url, str(start)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env) for _ in range(8)]
    results = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0] * 8, [err for _, err in results]
    applied = [json.loads(out) for out, _ in results]
    assert sorted(v for steps in applied for v in steps) == list(range(1, LATEST_VERSION + 1))
    with connect(pg_url) as conn:
        assert conn.execute("SELECT count(*), count(DISTINCT version) FROM schema_migrations").fetchone() == (
            LATEST_VERSION, LATEST_VERSION)
        conn.rollback()


def _migrated(url: str) -> psycopg.Connection:
    conn = connect(url)
    apply_migrations(conn, T0, url)
    return conn


def test_outcome_counters_follow_inserts_moves_and_deletes(pg_url: str) -> None:
    from kaos_dream.store.postgres.fulltext import index_entry

    with _migrated(pg_url) as conn:
        for name in ("a", "b"):
            sid = conn.execute("INSERT INTO skills (name, created_at, updated_at) VALUES (%s, 0, 0) RETURNING id",
                               (name,)).fetchone()[0]
            index_entry(conn, "skill", sid, (name, "", "[]"))
        conn.execute("INSERT INTO tasks (id, hash, text) VALUES (7, -7, 't')")
        conn.cursor().executemany(
            "INSERT INTO skill_uses (skill_id, success, task_id, created_at) VALUES (%s, %s, %s, %s)",
            [(1, 1, 7, 10.0), (1, 0, 7, 20.0), (1, 1, None, 5.0)])
        stats = lambda: conn.execute("SELECT skill_id, uses, successes, last_used_at FROM skill_stats "  # noqa: E731
                                     "ORDER BY skill_id").fetchall()
        # Since schema 15 a task's counters keep no time of their own (the export derives it from the rows).
        task_stats = lambda: conn.execute("SELECT skill_id, task_id, uses, successes FROM skill_task_stats "  # noqa: E731
                                          "ORDER BY skill_id").fetchall()
        assert stats() == [(1, 3, 2, 20.0)]
        assert task_stats() == [(1, 7, 2, 1)]
        conn.execute("UPDATE skill_uses SET skill_id = 2 WHERE created_at = 20.0")
        assert stats() == [(1, 2, 2, 10.0), (2, 1, 0, 20.0)]
        assert task_stats() == [(1, 7, 1, 1), (2, 7, 1, 0)]
        conn.execute("DELETE FROM skill_uses WHERE created_at = 10.0")
        assert stats() == [(1, 1, 1, 5.0), (2, 1, 0, 20.0)]
        assert task_stats() == [(1, 7, 0, 0), (2, 7, 1, 0)]
        conn.rollback()


def test_json_checks_and_the_append_only_log(pg_url: str) -> None:
    with _migrated(pg_url) as conn:
        conn.commit()
        with pytest.raises(psycopg.errors.CheckViolation):
            conn.execute("INSERT INTO preferences (key, value, updated_at) VALUES (' ', 'x', 0)")
        conn.rollback()
        with pytest.raises(psycopg.errors.CheckViolation):
            conn.execute("INSERT INTO memories (key, content, metadata, created_at, updated_at) "
                         "VALUES ('k', 'c', '{not json', 0, 0)")
        conn.rollback()
        conn.execute("INSERT INTO coordination_log (kind, agent, action, action_key, created_at) "
                     "VALUES ('intent', 'a', 'x', 'x', 0)")
        with pytest.raises(psycopg.errors.IntegrityConstraintViolation, match="append-only"):
            conn.execute("DELETE FROM coordination_log")
        conn.rollback()


_APPENDER = """
import sys, time
from kaos_dream.store.postgres.connect import connect
url, start, n, agent = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
conn = connect(url)
time.sleep(max(start - time.time(), 0))
for i in range(n):
    conn.execute("INSERT INTO coordination_log (kind, agent, action, action_key, created_at) "
                 "VALUES ('intent', %s, 'x', 'x', 0)", (agent,))
    if i % 3 == 0:
        conn.rollback()  # an append given up: must not leave a hole
    else:
        conn.commit()
"""


def test_coordination_positions_stay_gap_free_under_concurrent_appends(pg_url: str) -> None:
    _migrated(pg_url).close()
    start = time.time() + 2.0
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT)}
    procs = [subprocess.Popen([sys.executable, "-c", _APPENDER, pg_url, str(start), "30", f"agent{i}"],
                              stderr=subprocess.PIPE, text=True, env=env) for i in range(4)]
    errors = [p.communicate(timeout=120)[1] for p in procs]
    assert [p.returncode for p in procs] == [0] * 4, errors
    with connect(pg_url) as conn:
        positions = [r[0] for r in conn.execute("SELECT position FROM coordination_log ORDER BY position")]
        conn.rollback()
    assert positions == list(range(1, 4 * 20 + 1))


def test_validations_move_into_the_gate_row_as_on_sqlite(pg_url: str, tmp_path) -> None:
    rows = [("ag", "trust", "quality", 1, 2 / 3, 1, 0.5, "ok"), ("ag", "novelty", "report", 0, None, None, None, "off")]
    gate = ("ag", 1, 0.7, None, "passed", 3.0)
    with connect(pg_url) as conn:
        apply_migrations(conn, T0, pg_url, upto=9)
        conn.execute("INSERT INTO agents (id, started_at) VALUES ('ag', 0)")
        conn.cursor().executemany("INSERT INTO validations VALUES (%s, %s, %s, %s, %s, %s, %s, %s, 1.0)", rows)
        conn.execute("INSERT INTO episode_gates VALUES (%s, %s, %s, %s, %s, %s)", gate)
        conn.commit()
        apply_migrations(conn, T0, pg_url)
        pg = conn.execute("SELECT a.gate_id, g.verdicts FROM agents a JOIN episode_gates g ON g.id = a.gate_id"
                          ).fetchone()
        conn.rollback()
    lite = sqlite_connect(str(tmp_path / "v.db"))
    sqlite_apply(lite, T0, upto=9)
    lite.execute("INSERT INTO agents (id, started_at) VALUES ('ag', 0)")
    lite.executemany("INSERT INTO validations VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1.0)", rows)
    lite.execute("INSERT INTO episode_gates VALUES (?, ?, ?, ?, ?, ?)", gate)
    lite.commit()
    sqlite_apply(lite, T0)
    expected = lite.execute("SELECT a.gate_id, g.verdicts FROM agents a JOIN episode_gates g ON g.id = a.gate_id"
                            ).fetchone()
    lite.close()
    assert pg[0] == expected[0] == 1
    assert json.loads(pg[1]) == json.loads(expected[1])


def test_task_keys_move_as_on_sqlite(pg_url: str, tmp_path) -> None:
    """Migration 15 gives each task a small key numbered by first use (a task known only from a
    counter row last, textless) and moves the use rows and counters onto it, on both dialects."""
    setup = [
        "INSERT INTO skills (id, name, created_at, updated_at) VALUES (1, 'a', 0, 0), (2, 'b', 0, 0)",
        "INSERT INTO tasks (id, text) VALUES (-5, 'second task'), (9, 'first task')",
        "INSERT INTO skill_uses (id, skill_id, success, task_id, task, created_at) VALUES "
        "(1, 1, 1, 9, NULL, 1.0), (2, 2, 0, -5, NULL, 2.0), (3, 1, 0, 9, 'First task!', 3.0), "
        "(4, 2, 1, NULL, NULL, 4.0)",
        # The triggers count the rows above; a zero counter row outlives its task's deleted rows.
        "INSERT INTO skill_task_stats (skill_id, task_id, uses, successes, last_used_at) VALUES (2, 77, 0, 0, NULL)",
    ]
    reads = ["SELECT id, hash, text FROM tasks ORDER BY id",
             "SELECT id, task_id, task FROM skill_uses ORDER BY id",
             "SELECT skill_id, task_id, uses, successes FROM skill_task_stats ORDER BY skill_id, task_id"]
    from kaos_dream.store.postgres.fulltext import index_entry

    with connect(pg_url) as conn:
        apply_migrations(conn, T0, pg_url, upto=14)
        for n, sql in enumerate(setup):
            conn.execute(sql)
            if n == 0:
                for sid, name in ((1, "a"), (2, "b")):
                    index_entry(conn, "skill", sid, (name, "", "[]"))
        conn.commit()
        apply_migrations(conn, T0, pg_url)
        pg = [conn.execute(sql).fetchall() for sql in reads]
        # The keys go on after the moved ones.
        assert conn.execute("INSERT INTO tasks (hash, text) VALUES (1, 'new') RETURNING id").fetchone() == (4,)
        conn.rollback()
    lite = sqlite_connect(str(tmp_path / "v.db"))
    sqlite_apply(lite, T0, upto=14)
    for sql in setup:
        lite.execute(sql)
    sqlite_apply(lite, T0)
    expected = [[tuple(r) for r in lite.execute(sql)] for sql in reads]
    lite.close()
    assert expected == [
        [(1, 9, "first task"), (2, -5, "second task"), (3, 77, None)],
        [(1, 1, None), (2, 2, None), (3, 1, "First task!"), (4, None, None)],
        [(1, 1, 2, 1), (2, 2, 1, 0), (2, 3, 0, 0)],
    ]
    assert [[tuple(r) for r in rows] for rows in pg] == expected
