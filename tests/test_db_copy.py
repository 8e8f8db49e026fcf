"""`kaos db copy` and `db export` / `db import` on PostgreSQL, against a real server (tests/pg_server.py).

The acceptance item: the export of a SQLite library and of its PostgreSQL copy are byte-identical,
and a copy back to SQLite exports the same bytes again. Every kind of row is in the source.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kaos_dream import Library, ManualClock, Settings
from kaos_dream.errors import InvalidInputError, StoreError
from kaos_dream.store.copy import copy_library
from kaos_dream.store.jsonl import export_database, import_database

from .conftest import T0, file_digest, run_kaos_in_process
from .library_content import build_rich_library
from .pg_server import PgServer, needs_postgres

pytestmark = needs_postgres

_RICH: dict[str, object] = {}


@pytest.fixture(scope="session")
def rich_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The rich library, built once per test process (the demo takes a second or two)."""
    path = tmp_path_factory.mktemp("rich") / "rich.db"
    _RICH["counts"] = build_rich_library(str(path))
    return path


@pytest.fixture
def rich_db(rich_template: Path, tmp_path: Path) -> Path:
    path = tmp_path / "source.db"
    path.write_bytes(rich_template.read_bytes())
    return path


def schema_tables(server: PgServer, database: str) -> list[str]:
    with server.admin(database) as conn:
        return [r[0] for r in conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1")]


def export_text(kaos, db: str) -> bytes:
    """The export as `kaos db export` prints it (in this process: the bytes, not the process, are the point)."""
    result = run_kaos_in_process("db", "export", db=db)
    assert result.returncode == 0, result.stderr
    return result.stdout.encode("utf-8")


def test_round_trip_sqlite_postgres_sqlite_exports_are_byte_identical(rich_db: Path, pg_url: str, tmp_path: Path,
                                                                       kaos) -> None:
    counts = _RICH["counts"]
    assert isinstance(counts, dict)
    for table in ("skills", "memories", "skill_uses", "skill_task_stats", "agents", "episode_gates", "edges",
                  "coactivations", "failure_fingerprints", "failure_occurrences", "systemic_alerts", "proposals",
                  "coordination_log", "policies", "preferences", "embeddings", "failure_fixes", "llm_cache"):
        assert counts.get(table), f"the rich library has no {table} rows"
    before = file_digest(rich_db)
    source_export = export_text(kaos, str(rich_db))
    copied = kaos("db", "copy", str(rich_db), pg_url)
    assert copied.returncode == 0, copied.stderr
    assert "copied" in copied.stdout and "(postgresql;" in copied.stdout
    assert file_digest(rich_db) == before  # the source is only read
    assert export_text(kaos, pg_url) == source_export
    # the full-text index and the counters were built on the server
    assert run_kaos_in_process("db", "check", db=pg_url).returncode == 0
    back = tmp_path / "back.db"
    result = kaos("--json", "db", "copy", pg_url, str(back))
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert (report["source_engine"], report["target_engine"]) == ("postgresql", "sqlite")
    assert report["rows"] == sum(counts.values())
    assert export_text(kaos, str(back)) == source_export
    assert run_kaos_in_process("db", "check", db=str(back)).returncode == 0
    vectors = "SELECT kind, entry_id, dim, vector FROM embeddings ORDER BY seq"
    with Library(rich_db, readonly=True) as a, Library(pg_url, readonly=True) as b, \
            Library(back, readonly=True) as c:
        mine = [tuple(r) for r in a.conn.execute(vectors)]
        assert mine and all(isinstance(r[3], bytes) and len(r[3]) == 4 * r[2] for r in mine)
        assert [tuple(r) for r in b.conn.execute(vectors)] == mine == [tuple(r) for r in c.conn.execute(vectors)]


def test_export_and_import_on_postgres(rich_db: Path, pg_url: str, pg_server: PgServer, tmp_path: Path,
                                       kaos) -> None:
    dump = tmp_path / "lib.jsonl"
    assert kaos("db", "export", str(dump), db=str(rich_db)).returncode == 0
    result = kaos("db", "import", str(dump), db=pg_url)
    assert result.returncode == 0, result.stderr
    assert export_text(kaos, pg_url).decode("utf-8") == dump.read_text("utf-8")
    again = kaos("db", "import", str(dump), db=pg_url)
    assert again.returncode == 1 and "already holds a library with data" in again.stderr
    assert len(again.stderr.strip().splitlines()) == 1


def test_copy_to_postgres_continues_ids_and_searches_alike(rich_db: Path, pg_url: str) -> None:
    copy_library(str(rich_db), pg_url, now=T0)
    queries = ["parquet csv", "postgres backup", "rotate keys", "deploy", "tls staging", "database unreachable"]
    with Library(rich_db, readonly=True, settings=Settings()) as a, \
            Library(pg_url, readonly=True, settings=Settings()) as b:
        for query in queries:
            mine = [(h.kind, h.name, round(h.score, 9)) for h in a.search(query, limit=5)]
            theirs = [(h.kind, h.name, round(h.score, 9)) for h in b.search(query, limit=5)]
            assert mine and mine == theirs, query
        top_skill = int(a.conn.execute("SELECT max(id) FROM skills").fetchone()[0])
        top_memory = int(a.conn.execute("SELECT max(id) FROM memories").fetchone()[0])
        top_use = int(a.conn.execute("SELECT max(id) FROM skill_uses").fetchone()[0])
    with Library(pg_url, clock=ManualClock(T0), settings=Settings()) as lib:
        skill = lib.skills.add("after-the-copy", "a new skill on the server")
        memory = lib.memories.add("a new memory on the server", key="after-copy")
        lib.record_outcome(skill.id, True)
        assert (skill.id, memory.id) == (top_skill + 1, top_memory + 1)
        assert int(lib.conn.execute("SELECT max(id) FROM skill_uses").fetchone()[0]) == top_use + 1
        assert [h.name for h in lib.search("server skill", kind="skill")][:1] == ["after-the-copy"]
        assert lib.check() == []


def test_copy_refuses_a_target_with_data(rich_db: Path, pg_url: str, tmp_path: Path, kaos) -> None:
    with Library(pg_url) as lib:
        lib.skills.add("already-here")
    before = kaos("db", "export", db=pg_url).stdout
    result = kaos("db", "copy", str(rich_db), pg_url)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [result.stderr.strip()]
    assert "already holds a library with data; pass --force" in result.stderr
    assert kaos("db", "export", db=pg_url).stdout == before
    file_target = tmp_path / "busy.db"
    with Library(file_target) as lib:
        lib.skills.add("already-here")
    digest = file_digest(file_target)
    assert kaos("db", "copy", str(rich_db), str(file_target)).returncode == 1
    assert file_digest(file_target) == digest
    forced = kaos("db", "copy", "--force", str(rich_db), pg_url)
    assert forced.returncode == 0, forced.stderr
    assert export_text(kaos, pg_url) == export_text(kaos, str(rich_db))
    assert run_kaos_in_process("db", "check", db=pg_url).returncode == 0


def test_copy_into_an_empty_library_needs_no_force(rich_db: Path, pg_url: str, kaos) -> None:
    assert kaos("init", db=pg_url).returncode == 0
    assert kaos("db", "copy", str(rich_db), pg_url).returncode == 0
    assert export_text(kaos, pg_url) == export_text(kaos, str(rich_db))


def test_bad_source_is_one_line_and_writes_nothing(pg_url: str, pg_server: PgServer, pg_database: str,
                                                   tmp_path: Path, kaos) -> None:
    missing = kaos("db", "copy", str(tmp_path / "nothere.db"), pg_url)
    assert missing.returncode == 1 and len(missing.stderr.strip().splitlines()) == 1
    assert "no library at" in missing.stderr
    assert schema_tables(pg_server, pg_database) == []
    dead = f"postgresql://kaos:hunter2@127.0.0.1:{pg_server.port + 1}/kaos"
    target = tmp_path / "out.db"
    unreachable = kaos("db", "copy", dead, str(target))
    assert unreachable.returncode == 1 and len(unreachable.stderr.strip().splitlines()) == 1
    assert "no PostgreSQL server is answering" in unreachable.stderr
    assert "hunter2" not in unreachable.stderr and "kaos:***@" in unreachable.stderr
    assert not target.exists() and not list(tmp_path.glob(".*.tmp"))
    wrong = kaos("db", "copy", pg_server.url(pg_database, password="not-the-password"), str(target))
    assert wrong.returncode == 1 and "password authentication failed" in wrong.stderr
    assert "not-the-password" not in wrong.stderr and not target.exists()
    no_library = kaos("db", "copy", pg_url, str(target))
    assert no_library.returncode == 1 and "not a kaos-dream library" in no_library.stderr
    assert not target.exists()


def test_failed_load_leaves_a_postgres_database_without_a_library(rich_db: Path, pg_url: str, pg_server: PgServer,
                                                                   pg_database: str, tmp_path: Path) -> None:
    """A broken reference is found by the server at the insert; the rollback takes the schema with it."""
    dump = tmp_path / "e.jsonl"
    export_database(str(rich_db), dump)
    lines = dump.read_text("utf-8").splitlines(keepends=True)
    use = next(n for n, line in enumerate(lines) if line.startswith('{"t":"skill_uses"'))
    row = json.loads(lines[use])
    row["r"][1] = 99_999  # skill_id of a skill that does not exist
    lines[use] = json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n"
    dump.write_text("".join(lines), "utf-8")
    with pytest.raises(InvalidInputError, match="skill_uses"):
        import_database(dump, pg_url)
    assert schema_tables(pg_server, pg_database) == []


def test_copy_postgres_to_postgres_and_file_to_file(rich_db: Path, pg_server: PgServer, tmp_path: Path,
                                                    kaos) -> None:
    first, second = (pg_server.socket_url(pg_server.create_database()) for _ in range(2))
    copy_library(str(rich_db), first)
    assert kaos("db", "copy", first, second).returncode == 0
    same = kaos("db", "copy", "--force", first, first)
    assert same.returncode == 1 and "is the source database itself" in same.stderr
    twin = tmp_path / "twin.db"
    assert kaos("db", "copy", str(rich_db), str(twin)).returncode == 0
    itself = kaos("db", "copy", "--force", str(twin), str(twin))
    assert itself.returncode == 1 and "the database itself" in itself.stderr
    expected = export_text(kaos, str(rich_db))
    assert export_text(kaos, second) == expected
    assert export_text(kaos, str(twin)) == expected


def test_postgres_export_is_one_snapshot_while_a_writer_commits(rich_db: Path, pg_url: str) -> None:
    """The export reads in REPEATABLE READ: rows committed after it began are not in it."""
    import io

    from kaos_dream.store.catalogue import read_snapshot
    from kaos_dream.store.jsonl import export_lines, open_export_source

    copy_library(str(rich_db), pg_url)
    reader = open_export_source(pg_url, None, verb="export", busy_timeout_ms=2000)
    try:
        with read_snapshot(reader):
            lines = export_lines(reader)
            out = io.StringIO()
            out.write(next(lines))
            with Library(pg_url) as writer:
                writer.skills.add("written-during-the-export")
            out.writelines(lines)
    finally:
        reader.close()
    assert "written-during-the-export" not in out.getvalue()
    header = json.loads(out.getvalue().splitlines()[0])
    assert header["tables"]["skills"]["rows"] == sum(
        1 for line in out.getvalue().splitlines() if line.startswith('{"t":"skills"'))


def linguistic_database(server: PgServer) -> str:
    """A database whose default collation sorts text linguistically (ICU en-US), unlike the C locale
    the test server was initialised with; skipped on a server built without ICU."""
    import secrets

    import psycopg

    name = f"icu_{secrets.token_hex(6)}"
    try:
        with server.admin() as conn:
            conn.execute(f'CREATE DATABASE "{name}" LOCALE_PROVIDER icu ICU_LOCALE \'en-US\' LOCALE \'C\' '
                         "TEMPLATE template0")
    except psycopg.Error as exc:
        pytest.skip(f"this PostgreSQL server cannot make an ICU database: {exc}")
    return server.socket_url(name)


def test_text_keys_sort_in_byte_order_on_a_linguistic_database(pg_server: PgServer, tmp_path: Path) -> None:
    """Text keys whose byte order differs from en-US order ('B' < 'a' < 'b' in bytes, a < b < B in
    en-US): the PostgreSQL export sorts them with COLLATE "C", as SQLite's BINARY does."""
    url = linguistic_database(pg_server)
    import psycopg

    with psycopg.connect(url) as conn:  # the premise: this database's own order is not byte order
        assert [r[0] for r in conn.execute("SELECT x FROM unnest(ARRAY['b', 'B', 'a']) AS x ORDER BY x")] == \
            ["a", "b", "B"]
    path = tmp_path / "keys.db"
    with Library(path, settings=Settings()) as lib:
        for key in ("b", "B", "_x", "a", "é", "Z", "a b", "ab"):
            lib.preferences.set(key, key)
    copy_library(str(path), url)
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    export_database(str(path), a)
    export_database(url, b)
    assert a.read_bytes() == b.read_bytes()
    keys = [json.loads(line)["r"][0] for line in a.read_text("utf-8").splitlines()
            if line.startswith('{"t":"preferences"')]
    assert keys == sorted(keys, key=lambda k: k.encode("utf-8")) and len(keys) == 8


def test_store_errors_mask_the_password(rich_db: Path, pg_server: PgServer) -> None:
    url = pg_server.url("no_such_database", password=pg_server.admin_password)
    with pytest.raises(StoreError) as caught:
        copy_library(str(rich_db), url)
    assert pg_server.admin_password not in str(caught.value) and "does not exist" in str(caught.value)


def test_two_copies_into_one_empty_database_at_once(rich_db: Path, pg_url: str, kaos) -> None:
    """Real processes race for the same empty database: the write lock makes one copy win whole and
    the other find a library with data (nothing doubled, nothing mixed)."""
    import os
    import subprocess

    from .conftest import PROJECT_ROOT, kaos_command

    env = {k: v for k, v in os.environ.items() if not k.startswith("KAOS_")}
    env.update(PYTHONPATH=str(PROJECT_ROOT), KAOS_BUSY_TIMEOUT_MS="60000")
    procs = [subprocess.Popen([*kaos_command(), "db", "copy", str(rich_db), pg_url], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env) for _ in range(2)]
    results = [(p.wait(timeout=180), p.stderr.read() if p.stderr else "") for p in procs]
    assert sorted(code for code, _ in results) == [0, 1], results
    loser = next(err for code, err in results if code == 1)
    assert "already holds a library with data" in loser and len(loser.strip().splitlines()) == 1
    assert export_text(kaos, pg_url) == export_text(kaos, str(rich_db))
    assert run_kaos_in_process("db", "check", db=pg_url).returncode == 0


def test_backup_of_a_postgres_library_is_a_sqlite_file(rich_db: Path, pg_url: str, tmp_path: Path, kaos) -> None:
    copy_library(str(rich_db), pg_url)
    target = tmp_path / "backup.db"
    result = kaos("--json", "db", "backup", str(target), db=pg_url)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["size_bytes"] == target.stat().st_size
    assert export_text(kaos, str(target)) == export_text(kaos, str(rich_db))
    digest = file_digest(target)
    again = kaos("db", "backup", str(target), db=pg_url)
    assert again.returncode == 1 and "already exists; pass --force" in again.stderr
    assert file_digest(target) == digest


def test_copy_onto_its_own_database_spelled_differently_is_refused_at_once(pg_server: PgServer, pg_database: str,
                                                                          tmp_path: Path, kaos) -> None:
    """Issue 33 item 7: `localhost` for `127.0.0.1`, the unix socket for TCP, or a hard link to the source
    file is the same database; the copy waited on its own lock and then blamed "another writer"."""
    source = pg_server.url(pg_database, password=pg_server.admin_password)
    assert kaos("init", db=source).returncode == 0
    with Library(source) as lib:
        lib.skills.add("deploy-app", "deploy the app")
    before = export_text(kaos, source)
    for other in (pg_server.url(pg_database, password=pg_server.admin_password, host="localhost"),
                  pg_server.socket_url(pg_database)):
        result = run_kaos_in_process("db", "copy", "--force", source, other)
        assert result.returncode == 1, result.stderr
        assert "is the source database itself" in result.stderr and "locked" not in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1
    assert export_text(kaos, source) == before
    src = tmp_path / "a.db"
    assert kaos("init", db=src).returncode == 0
    link = tmp_path / "link.db"
    link.hardlink_to(src)
    digest = file_digest(src)
    result = run_kaos_in_process("db", "copy", "--force", str(src), str(link))
    assert result.returncode == 1 and "is the database itself" in result.stderr and "inode" in result.stderr
    assert file_digest(src) == digest
