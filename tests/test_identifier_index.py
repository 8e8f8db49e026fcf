"""Identifier-aware full-text index (issue 31 item 3): camelCase, snake_case, kebab-case, dotted and
path-like names are found by their words, the exact name still ranks its skill first, an upgraded
library is reindexed by migration 0022, and `kaos db check` reports names indexed the old way.
SQLite files and the real PostgreSQL server alike; real `kaos` processes for the CLI."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from kaos_dream import Library
from kaos_dream.search.lexical import lexical_candidates
from kaos_dream.settings import Settings
from kaos_dream.store.name_words import name_word_problems, refresh_name_words
from kaos_dream.tokens import identifier_index_words
from tests.conftest import PROJECT_ROOT
from tests.pg_server import needs_postgres

FIXTURES = Path(__file__).resolve().parent / "fixtures"
NAMES = ("craftCraftingTable", "git_status", "read_text_file", "k8s.rollout.restart", "src/utils/io.py",
         "placeTorchBlock", "git-log-pretty", "status_report_writer")
# (query, the skill it must rank first): the exact name, and words of the name a user would type.
QUERIES = (
    ("craftCraftingTable", "craftCraftingTable"),
    ("crafting table", "craftCraftingTable"),
    ("git_status", "git_status"),
    ("read_text_file", "read_text_file"),
    ("read text file", "read_text_file"),
    ("k8s.rollout.restart", "k8s.rollout.restart"),
    ("rollout restart", "k8s.rollout.restart"),
    ("src/utils/io.py", "src/utils/io.py"),
    ("torch block", "placeTorchBlock"),
)


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KAOS_")}
    env.update(PYTHONPATH=str(PROJECT_ROOT), KAOS_SEMANTIC="off")
    return env


def kaos(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kaos_dream", *args], capture_output=True, text=True,
                          env=_env(), timeout=120, check=False)


def _settings() -> Settings:
    return Settings.from_env({"KAOS_SEMANTIC": "off"})


def _first(lib: Library, query: str) -> str:
    hits = lexical_candidates(lib.conn, query, "skill", 5)
    assert hits, query
    return hits[0].name


def _fill(lib: Library) -> None:
    for name in NAMES:
        lib.skills.add(name, description="a helper", tags=[])


def test_the_words_come_from_the_embedders_splitter() -> None:
    assert identifier_index_words("craftCraftingTable") == "craft crafting table"
    assert identifier_index_words("getHTTPResponse") == "get http response"
    assert identifier_index_words("crêpeMaker uploadFile") == "upload file"  # no fragments of non-ASCII words
    # Names FTS5's tokenizer already cuts at _ - . / gain nothing (their index is unchanged).
    for name in ("git_status", "read_text_file", "k8s.rollout.restart", "src/utils/io.py", "deploy-service"):
        assert identifier_index_words(name) == ""


def test_exact_names_and_their_words_rank_the_skill_first_sqlite(tmp_path: Path) -> None:
    with Library(tmp_path / "lib.db", settings=_settings()) as lib:
        _fill(lib)
        for query, expected in QUERIES:
            assert _first(lib, query) == expected, query
        # A name edit moves its words with it: the old words no longer match, the new ones do.
        lib.skills.update("placeTorchBlock", name="mineIronOre")
        assert all(h.name != "mineIronOre" for h in lexical_candidates(lib.conn, "torch", "skill", 5))
        assert _first(lib, "iron ore") == "mineIronOre"
        assert lib.check() == []


def test_cli_search_finds_a_camel_case_skill_by_its_words(tmp_path: Path) -> None:
    db = str(tmp_path / "cli.db")
    assert kaos("--db", db, "init").returncode == 0
    for name in ("craftCraftingTable", "smeltIronIngot"):
        assert kaos("--db", db, "skill", "add", name, "--description", "a bot skill").returncode == 0
    done = kaos("--db", db, "search", "crafting table", "--json", "--min-relevance", "0")
    assert done.returncode == 0, done.stderr
    assert [h["name"] for h in json.loads(done.stdout)][:1] == ["craftCraftingTable"]


def test_migration_from_schema_v21_indexes_the_words_of_existing_names(tmp_path: Path) -> None:
    path = tmp_path / "v21.db"
    shutil.copy(FIXTURES / "schema_v21.db", path)
    raw = sqlite3.connect(path)  # what an older kaos-dream wrote: the name alone
    raw.execute("INSERT INTO skills (id, name, description, created_at, updated_at) "
                "VALUES (50, 'craftCraftingTable', 'place a workbench', 0, 0)")
    raw.execute("INSERT INTO memories (id, key, content, created_at, updated_at) "
                "VALUES (50, 'buildNotesForRelease', 'ship on fridays', 0, 0)")
    raw.commit()
    assert raw.execute("SELECT count(*) FROM skills_fts WHERE skills_fts MATCH 'crafting'").fetchone() == (0,)
    raw.close()
    with Library(path, settings=_settings()) as lib:  # opening migrates
        assert lib.conn.execute("SELECT name_words FROM skills WHERE id = 50").fetchone()[0] == "craft crafting table"
        assert _first(lib, "crafting table") == "craftCraftingTable"
        assert _first(lib, "craftCraftingTable") == "craftCraftingTable"
        assert _first(lib, "csv parquet") == "csv-to-parquet"  # names indexed as before still match
        memories = lexical_candidates(lib.conn, "release notes", "memory", 5)
        assert memories[0].name == "buildNotesForRelease"
        assert lib.check() == []


def test_db_check_reports_an_old_form_index_and_reindex_fixes_it(tmp_path: Path) -> None:
    db = str(tmp_path / "old.db")
    assert kaos("--db", db, "init").returncode == 0
    raw = sqlite3.connect(db)  # plain SQL writes the name without its words: the pre-0022 form
    raw.execute("INSERT INTO skills (name, description, created_at, updated_at) VALUES ('pipeBlockPlacer', 'x', 0, 0)")
    raw.commit()
    raw.close()
    check = kaos("--db", db, "db", "check")
    assert check.returncode == 1
    assert "1 skill name(s) indexed without their identifier words" in check.stdout + check.stderr
    assert "kaos db reindex" in check.stdout + check.stderr
    fix = kaos("--db", db, "db", "reindex")  # semantic search is off here: the vectors part exits 1
    assert "indexed the identifier words of 1 skill name(s)" in fix.stdout + fix.stderr
    assert "Traceback" not in fix.stderr
    assert kaos("--db", db, "db", "check").returncode == 0
    with Library(db, settings=_settings()) as lib:
        assert _first(lib, "block placer") == "pipeBlockPlacer"


@needs_postgres
def test_postgres_indexes_the_same_words_and_reports_the_same_old_form(pg_url: str) -> None:
    with Library(pg_url, settings=_settings()) as lib:
        _fill(lib)
        for query, expected in QUERIES:
            assert _first(lib, query) == expected, query
        lib.skills.update("placeTorchBlock", name="mineIronOre")
        assert _first(lib, "iron ore") == "mineIronOre"
        assert lib.check() == []
        with lib.transaction():  # plain SQL that leaves the words out, as an older writer did
            lib.conn.execute("UPDATE skills SET name_words = '' WHERE name = 'craftCraftingTable'")
        assert [h.name for h in lexical_candidates(lib.conn, "crafting", "skill", 5)] == []
        assert any("1 skill name(s) indexed without" in p for p in name_word_problems(lib.conn))
        assert refresh_name_words(lib.conn) == {"skills": 1, "memories": 0}
        assert _first(lib, "crafting table") == "craftCraftingTable"
        assert lib.check() == []


@needs_postgres
def test_postgres_migration_22_splits_names_written_before_it(pg_url: str) -> None:
    from kaos_dream.store.postgres.connect import connect
    from kaos_dream.store.postgres.fulltext import index_entry
    from kaos_dream.store.postgres.migrations import apply_migrations

    with connect(pg_url) as conn:
        apply_migrations(conn, 0.0, pg_url, upto=21)
        for entry_id, name in ((1, "craftCraftingTable"), (2, "git_status")):
            conn.execute("INSERT INTO skills (id, name, created_at, updated_at) VALUES (%s, %s, 0, 0)",
                         (entry_id, name))
            index_entry(conn, "skill", entry_id, (name, "", "[]"))
        conn.commit()
        apply_migrations(conn, 0.0, pg_url)
        assert conn.execute("SELECT id, name_words FROM skills ORDER BY id").fetchall() == [
            (1, "craft crafting table"), (2, "")]
        conn.rollback()
    with Library(pg_url, settings=_settings()) as lib:
        assert _first(lib, "crafting table") == "craftCraftingTable"
        assert _first(lib, "git status") == "git_status"
        assert lib.check() == []


@pytest.mark.parametrize("name", ["", "___", "ÄßçÉ", "a" * 300, "x\u202ey"])
def test_odd_names_split_without_error(name: str) -> None:
    words = identifier_index_words(name)
    assert words == ""  # nothing here is an identifier with parts the tokenizer does not already cut


# tests/fixtures/export_v21.jsonl: `kaos db export --jsonl` of schema_v21.db plus one skill
# (id 60, pipeBlockPlacer) added with plain SQL, written by kaos-dream at schema 21 (commit 6982a11).
EXPORT_V21 = FIXTURES / "export_v21.jsonl"


def test_an_export_from_before_schema_22_imports_with_its_names_split_sqlite(tmp_path: Path) -> None:
    db = str(tmp_path / "imported.db")
    done = kaos("--db", db, "db", "import", str(EXPORT_V21))
    assert done.returncode == 0, done.stderr
    assert "schema version 21 in the export, upgraded to" in done.stdout + done.stderr
    with Library(db, settings=_settings()) as lib:
        assert _first(lib, "block placer") == "pipeBlockPlacer"
        assert lib.check() == []


@needs_postgres
def test_an_export_from_before_schema_22_imports_into_postgres(pg_url: str) -> None:
    # Loaded at 21 then upgraded in the same transaction: the loaded rows' deferred index checks must
    # not block 0022's ALTER TABLE ("pending trigger events"), and their names get their words.
    done = kaos("--db", pg_url, "db", "import", str(EXPORT_V21))
    assert done.returncode == 0, done.stderr
    with Library(pg_url, settings=_settings()) as lib:
        assert _first(lib, "block placer") == "pipeBlockPlacer"
        assert _first(lib, "csv parquet") == "csv-to-parquet"
        assert lib.check() == []
