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

from .conftest import file_digest

# Running counters recomputed from skill_uses on upgrade (a file that went through the plasticity
# migration with older telemetry had them wrong); checked against a recount below instead.
DERIVED = {"skill_stats", "skill_task_stats"}
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


def project(path: Path, table: str, cols: list[str]) -> list[tuple]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return conn.execute(f'SELECT {", ".join(chr(34) + c + chr(34) for c in cols)} FROM "{table}"').fetchall()
    finally:
        conn.close()


def test_there_is_a_fixture_for_every_schema_version() -> None:
    assert list(range(1, LATEST_VERSION + 1)) == VERSIONS, (
        "run `python tests/fixtures/make_schema_fixtures.py` to write the fixture of each new schema version"
    )


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
            if table in DERIVED:
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
            per_task = {tuple(r[:2]): r[2] for r in lib.conn.execute(
                "SELECT task_hash, skill_id, uses FROM skill_task_stats")}
            assert per_task[("h-convert", 1)] == 2
        if version >= 3:
            assert lib.log.get(1).action == "Deploy service API"
        if version >= 4:
            assert lib.failures.get(1)["tool"] == "pytest"
        lib.skills.add("written-after-upgrade")
    digest = file_digest(path)
    Library(path).close()  # a second open has nothing left to do
    assert file_digest(path) == digest
