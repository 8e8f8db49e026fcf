"""Upgrade path: a library file from every schema version upgrades to the current one, data intact.

The files in tests/fixtures/ were written by tests/fixtures/make_schema_fixtures.py (run it to
regenerate; it explains how). Each test works on a copy.
"""

from __future__ import annotations

import shutil
import sqlite3
from collections import Counter
from pathlib import Path

import pytest

from kaos_dream import Library, SchemaOutdatedError, Settings
from kaos_dream.store import LATEST_VERSION, MIGRATIONS
from kaos_dream.validation.gate import stored_report

from .conftest import file_digest

# Running counters recomputed from skill_uses on upgrade (a file that went through the plasticity
# migration with older telemetry had them wrong); checked against a recount below instead.
DERIVED = {"skill_stats", "skill_task_stats"}
# Tables a later migration restructured; the test checks where their rows went instead.
RESTRUCTURED = {"validations", "episode_gates"}
FIXTURES = Path(__file__).resolve().parent / "fixtures"
VERSIONS = sorted(int(p.stem.removeprefix("schema_v")) for p in FIXTURES.glob("schema_v*.db"))


def snapshot(path: Path) -> dict[str, tuple[list[str], list[tuple]]]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
            "AND sql NOT LIKE 'CREATE VIRTUAL TABLE%' AND name NOT LIKE '%_fts_%' ORDER BY name")]
        out = {}
        for table in tables:
            cols = [r[1] for r in conn.execute(f'PRAGMA table_info("{table}")')]
            out[table] = (cols, conn.execute(f'SELECT * FROM "{table}"').fetchall())
        return out
    finally:
        conn.close()


# An outcome's agent id as it reads since schema 16 (a small key in agent_keys beside each row).
USE_AGENT = "(SELECT a.agent_id FROM agent_keys AS a WHERE a.id = u.agent_key)"


def project(path: Path, table: str, cols: list[str]) -> list[tuple]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        if table == "skill_uses":  # its agent through its key (schema 16)
            terms = ", ".join(USE_AGENT if c == "agent_id" else f'u."{c}"' for c in cols)
            return conn.execute(f"SELECT {terms} FROM skill_uses AS u").fetchall()
        return conn.execute(f'SELECT {", ".join(chr(34) + c + chr(34) for c in cols)} FROM "{table}"').fetchall()
    finally:
        conn.close()


def check_task_rows_moved(path: Path, rows: list[tuple]) -> None:
    """Every pre-14 use row is still there with its wording (its own, or its task's text), and rows
    that shared a digest share one task."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        now = conn.execute(f"SELECT u.id, u.skill_id, {USE_AGENT}, u.success, coalesce(u.task, t.text), u.task_id, "
                           "u.created_at FROM skill_uses AS u LEFT JOIN tasks AS t ON t.id = u.task_id").fetchall()
    finally:
        conn.close()
    by_id = {r[0]: r for r in now}
    keys: dict[object, object] = {}
    for uid, skill, agent, ok, task, digest, at in rows:
        assert by_id[uid][:5] + by_id[uid][6:] == (uid, skill, agent, ok, task, at)
        assert (by_id[uid][5] is None) == (digest is None)
        assert keys.setdefault(digest, by_id[uid][5]) == by_id[uid][5]


def test_there_is_a_fixture_for_every_schema_version() -> None:
    assert list(range(1, LATEST_VERSION + 1)) == VERSIONS, (
        "run `python tests/fixtures/make_schema_fixtures.py` to write the fixture of each new schema version"
    )


def check_task_keys_moved(path: Path, before: dict[str, tuple[list[str], list[tuple]]]) -> None:
    """A schema-14 file's tasks were keyed by their digest: since 15 each has a small key beside its
    digest (``hash``), and every use row refers to the same digest and wording as before."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        uses = conn.execute(f"SELECT u.id, u.skill_id, {USE_AGENT}, u.success, t.hash, u.task, u.created_at "
                            "FROM skill_uses AS u LEFT JOIN tasks AS t ON t.id = u.task_id").fetchall()
        tasks = conn.execute("SELECT hash, text FROM tasks").fetchall()
    finally:
        conn.close()
    assert not Counter(before["skill_uses"][1]) - Counter(uses)
    assert not Counter(before["tasks"][1]) - Counter(tasks)


@pytest.mark.parametrize("version", VERSIONS)
def test_fixture_upgrades_with_data_intact(version: int, tmp_path: Path) -> None:
    path = tmp_path / f"v{version}.db"
    shutil.copyfile(FIXTURES / f"schema_v{version}.db", path)
    conn = sqlite3.connect(path)
    recorded = conn.execute("SELECT version, name FROM schema_migrations ORDER BY version").fetchall()
    conn.close()
    assert recorded == [(m.version, m.name) for m in MIGRATIONS[:version]], (
        "fixture is stale (migrations renumbered or renamed): regenerate with tests/fixtures/make_schema_fixtures.py"
    )
    before = snapshot(path)
    if version < LATEST_VERSION:  # a read-only open refuses to migrate and leaves the file alone
        digest = file_digest(path)
        with pytest.raises(SchemaOutdatedError):
            Library(path, readonly=True)
        assert file_digest(path) == digest

    with Library(path, settings=Settings()) as lib:
        assert lib.info()["schema_version"] == LATEST_VERSION
        assert lib.check() == []
        # Every row the old file had is still there with the same values in its old columns.
        for table, (cols, rows) in before.items():
            if table == "skill_uses" and "task_hash" in cols:  # schema 14 moved task texts into tasks
                check_task_rows_moved(path, rows)
                continue
            if table in ("skill_uses", "tasks") and "hash" not in before.get("tasks", ([], []))[0]:
                check_task_keys_moved(path, before)  # schema 15 gave each task a small key
                continue
            if table in DERIVED or table in RESTRUCTURED:
                continue
            missing = Counter(rows) - Counter(project(path, table, cols))
            assert not missing, (table, list(missing))
        # ... and the library reads it through the current API.
        assert [h.name for h in lib.search("parquet", kind="skill")] == ["csv-to-parquet"]
        assert lib.skills.get("old-way").deprecated
        assert lib.memories.get("staging-tls").metadata == {"score": 0.30000000000000004}
        if version >= 2:
            # Counters of outcomes recorded before the plasticity schema existed are backfilled.
            stats = {r[0]: (r[1], r[2]) for r in lib.conn.execute("SELECT skill_id, uses, successes FROM skill_stats")}
            uses = {r[0]: (r[1], r[2]) for r in lib.conn.execute(
                "SELECT skill_id, count(*), sum(success) FROM skill_uses GROUP BY skill_id")}
            assert stats == uses and stats[1] == (3, 2) and stats[2][0] == (2 if version >= 7 else 1)
            # The task context's key since schema 14 (the fixture's "h-convert" digest read as hex).
            per_task = {tuple(r[:2]): r[2] for r in lib.conn.execute(
                "SELECT t.text, s.skill_id, s.uses FROM skill_task_stats AS s JOIN tasks AS t ON t.id = s.task_id")}
            assert per_task[("convert a file", 1)] == 2
        if version >= 3:
            assert lib.log.get(1).action == "Deploy service API"
        if version >= 4:
            assert lib.failures.get(1)["tool"] == "pytest"
        if version >= 8:
            # The per-validator rows of schema 8-9 now live in their episode's gate row.
            report = stored_report(lib.conn, "agent-old")
            assert report is not None and report["passed"] and report["reason"] == "validated"
            assert report["validators"] == [{"validator": "logical", "kind": "quality", "enabled": True,
                                             "score": 0.9, "passed": True, "threshold": 0.5,
                                             "reason": "consistent"}]
        if version >= 2:
            # An episode's cost: reported in the fixture once the columns exist, "not reported" before.
            has_cost = any(m.name == "episode_cost_and_hook_events" for m in MIGRATIONS[:version])
            old = lib.episodes.get("agent-old")
            assert (old.tokens_in, old.tool_calls) == ((5200, 7) if has_cost else (None, None))
        lib.skills.add("written-after-upgrade")
    digest = file_digest(path)
    Library(path).close()  # a second open has nothing left to do
    assert file_digest(path) == digest


def test_validation_rows_fold_into_one_gate_row_per_episode(tmp_path: Path) -> None:
    """Schema 10 moved the per-validator rows of schema 8-9 into their episode's gate row: every
    verdict survives with its values (enabled/passed as booleans, NULLs kept), listed by kind then
    validator, and the episode points at its row."""
    from kaos_dream.store import apply_migrations, connect

    path = tmp_path / "v9.db"
    t = 1_767_225_600.0
    conn = connect(str(path))
    apply_migrations(conn, t, str(path), upto=9)
    conn.execute("INSERT INTO agents (id, state, started_at, ended_at, processed_at) VALUES "
                 f"('a1', 'completed', {t}, {t + 1}, {t + 1}), ('a2', 'failed', {t}, {t + 2}, {t + 2}), "
                 f"('a3', 'running', {t}, NULL, NULL), ('a5', 'completed', {t}, {t + 3}, {t + 3}), "
                 f"('a4', 'completed', {t}, {t + 3}, {t + 3})")
    conn.execute(
        "INSERT INTO validations (agent_id, validator, kind, enabled, score, passed, threshold, reason, created_at) "
        f"VALUES ('a1', 'outcome', 'quality', 1, 1.0, 1, NULL, 'episode completed', {t + 1}), "
        f"('a1', 'novelty', 'report', 1, 2.0 / 3.0, NULL, NULL, '2/3 new', {t + 1}), "
        f"('a1', 'logical', 'quality', 0, NULL, NULL, 0.7, 'off: no key', {t + 1}), "
        f"('a2', 'outcome', 'quality', 1, 0.0, 0, NULL, 'episode failed', {t + 2})")
    conn.execute("INSERT INTO episode_gates (agent_id, passed, trust, novelty, reason, created_at) VALUES "
                 f"('a1', 1, 1.0, 0.25, 'every enabled validator passed', {t + 1}), "
                 f"('a2', 0, 0.0, NULL, 'outcome: episode failed', {t + 2}), "
                 f"('a5', 1, NULL, NULL, 'tie', {t + 3}), ('a4', 1, NULL, NULL, 'tie', {t + 3})")
    conn.close()

    with Library(path, settings=Settings()) as lib:
        assert lib.conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'validations'").fetchone()[0] == 0
        a1 = stored_report(lib.conn, "a1")
        assert a1 is not None and a1["passed"] is True and a1["trust"] == 1.0 and a1["novelty"] == 0.25
        # Every REAL comes back exactly (json_object alone would print 2/3 with 15 digits).
        assert a1["created_at"] == t + 1
        assert a1["validators"] == [
            {"validator": "logical", "kind": "quality", "enabled": False, "score": None, "passed": None,
             "threshold": 0.7, "reason": "off: no key"},
            {"validator": "outcome", "kind": "quality", "enabled": True, "score": 1.0, "passed": True,
             "threshold": None, "reason": "episode completed"},
            {"validator": "novelty", "kind": "report", "enabled": True, "score": 2 / 3, "passed": None,
             "threshold": None, "reason": "2/3 new"},
        ]
        a2 = stored_report(lib.conn, "a2")
        assert a2 is not None and a2["passed"] is False and a2["reason"] == "outcome: episode failed"
        assert [v["passed"] for v in a2["validators"]] == [False]
        assert stored_report(lib.conn, "a3") is None
        # Newest first, ties by agent id, as before the move.
        from kaos_dream.validation.gate import list_reports

        assert [r["agent_id"] for r in list_reports(lib.conn)] == ["a4", "a5", "a2", "a1"]
        assert [r["agent_id"] for r in list_reports(lib.conn, failed_only=True)] == ["a2"]
