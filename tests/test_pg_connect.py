"""Selecting PostgreSQL by URL, masking its password, and every connection fault as one masked line,
each against the real test server (tests/pg_server.py)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from kaos_dream.errors import StoreError
from kaos_dream.store.engine import INSTALL_LINE, mask, parse_db
from kaos_dream.store.postgres.connect import PostgresConnectError, connect
from tests.conftest import PROJECT_ROOT, run_kaos
from tests.pg_server import PgServer, free_port, needs_postgres

SECRET = "s3cr3t-Pa55"


@pytest.mark.parametrize(("value", "kind"), [
    ("kaos.db", "sqlite"), (":memory:", "sqlite"), ("file:x.db?mode=ro", "sqlite"), ("./postgresql.db", "sqlite"),
    ("postgresql://kaos@db.example:5432/kaos", "postgresql"), ("postgres://kaos@db/kaos", "postgresql"),
    ("POSTGRESQL://kaos@db/kaos", "postgresql"),
])
def test_the_db_value_selects_the_engine(value: str, kind: str) -> None:
    assert parse_db(value).kind == kind
    assert parse_db(value).target == value


@pytest.mark.parametrize(("url", "shown"), [
    (f"postgresql://kaos:{SECRET}@host:5432/db", "postgresql://kaos:***@host:5432/db"),
    (f"postgres://kaos:{SECRET}@host/db?sslmode=require", "postgres://kaos:***@host/db?sslmode=require"),
    ("postgresql://kaos:p@ss@host/db", "postgresql://kaos:***@host/db"),  # an unencoded '@' in the password
    ("postgresql://kaos@host:5432/db", "postgresql://kaos@host:5432/db"),  # no password: unchanged (port kept)
    ("postgresql://host:5432/db", "postgresql://host:5432/db"),
    (f"error: postgresql://u:{SECRET}@/db?host=/tmp and more", "error: postgresql://u:***@/db?host=/tmp and more"),
    (f"host=h password={SECRET} dbname=x", "host=h password=*** dbname=x"),
])
def test_mask_hides_every_password(url: str, shown: str) -> None:
    assert mask(url) == shown


@pytest.mark.parametrize(("url", "message"), [
    ("postgresql://kaos:pw@host:99999/db", "bad port"), ("postgresql://kaos:pw@host:5432/", "names no database"),
    ("postgresql://kaos:pw@host", "names no database"),
])
def test_a_malformed_url_is_one_masked_line(url: str, message: str) -> None:
    with pytest.raises(StoreError, match=message) as caught:
        parse_db(url)
    assert "pw" not in str(caught.value) and "\n" not in str(caught.value)


def _fails(url: str, reason: str, **options) -> str:
    with pytest.raises(PostgresConnectError) as caught:
        connect(url, **options)
    message = str(caught.value)
    assert caught.value.reason == reason, message
    assert "\n" not in message and SECRET not in message
    return message


@needs_postgres
def test_server_not_running_is_one_line() -> None:
    port = free_port()
    message = _fails(f"postgresql://kaos:{SECRET}@127.0.0.1:{port}/kaos", "unreachable")
    assert message == (f"postgresql://kaos:***@127.0.0.1:{port}/kaos: no PostgreSQL server is answering at "
                       f"127.0.0.1:{port} (is it running?)")


@needs_postgres
def test_wrong_password_over_scram(pg_server: PgServer) -> None:
    with pg_server.admin() as conn:
        assert conn.execute("SHOW password_encryption").fetchone()[0] == "scram-sha-256"
    message = _fails(pg_server.url(password=SECRET), "password")
    assert "password authentication failed for user 'kaos_admin'" in message
    assert ":***@127.0.0.1" in message


@needs_postgres
def test_no_password_at_all_says_where_to_put_one(pg_server: PgServer, monkeypatch: pytest.MonkeyPatch,
                                                  tmp_path) -> None:
    monkeypatch.delenv("PGPASSWORD", raising=False)
    monkeypatch.setenv("PGPASSFILE", str(tmp_path / "none"))
    message = _fails(pg_server.url(), "password")
    assert "PGPASSWORD or ~/.pgpass" in message


@needs_postgres
def test_password_from_pgpassword_and_from_pgpass(pg_server: PgServer, monkeypatch: pytest.MonkeyPatch,
                                                  tmp_path) -> None:
    url = pg_server.url()  # no password in the URL
    monkeypatch.setenv("PGPASSFILE", str(tmp_path / "none"))
    monkeypatch.setenv("PGPASSWORD", pg_server.admin_password)
    with connect(url) as conn:
        assert conn.execute("SELECT 1").fetchone()[0] == 1
    monkeypatch.delenv("PGPASSWORD")
    passfile = tmp_path / "pgpass"
    passfile.write_text(f"127.0.0.1:{pg_server.port}:*:kaos_admin:{pg_server.admin_password}\n")
    passfile.chmod(0o600)
    monkeypatch.setenv("PGPASSFILE", str(passfile))
    with connect(url) as conn:
        assert conn.execute("SELECT current_user").fetchone()[0] == "kaos_admin"


@needs_postgres
def test_missing_database(pg_server: PgServer) -> None:
    message = _fails(pg_server.url("no_such_db", password=pg_server.admin_password), "database")
    assert "database 'no_such_db' does not exist" in message


@needs_postgres
def test_unknown_role(pg_server: PgServer) -> None:
    message = _fails(pg_server.socket_url(user="nobody_here"), "role")
    assert "role 'nobody_here' does not exist" in message


@needs_postgres
def test_role_without_connect_privilege(pg_server: PgServer, pg_database: str) -> None:
    with pg_server.admin() as conn:
        conn.execute(f"CREATE ROLE locked_out LOGIN PASSWORD '{SECRET}'")
        conn.execute(f'REVOKE CONNECT ON DATABASE "{pg_database}" FROM PUBLIC')
    message = _fails(pg_server.url(pg_database, user="locked_out", password=SECRET), "privilege")
    assert f"user 'locked_out' may not connect to database '{pg_database}'" in message


@needs_postgres
def test_cli_names_the_url_masked_and_exits_1(pg_server: PgServer, pg_database: str) -> None:
    """A command that only reads or changes content refuses a database with no library in it (as a
    missing file): one line naming the URL with its password masked, and no schema created."""
    password = pg_server.admin_password
    url = pg_server.url(pg_database, password=password)
    result = run_kaos("--db", url, "skill", "list")
    assert result.returncode == 1
    assert password not in result.stderr and ":***@" in result.stderr
    assert "no library at" in result.stderr and "init" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not any(p.name.startswith("postgres") for p in PROJECT_ROOT.iterdir())  # no file named after the URL
    with pg_server.admin(pg_database) as conn:
        tables = conn.execute("SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'")
        assert tables.fetchone()[0] == 0
    created = run_kaos("--db", url, "init")
    assert created.returncode == 0 and password not in created.stdout + created.stderr
    assert run_kaos("--db", url, "skill", "list").returncode == 0


def test_without_the_driver_a_postgres_url_gives_the_install_line(tmp_path) -> None:
    # psycopg made unimportable the way Python itself marks a missing module (sys.modules[name] = None).
    code = ("import sys; sys.modules['psycopg'] = None; from kaos_dream.cli import run; "
            f"sys.exit(run(['--db', 'postgresql://kaos:{SECRET}@127.0.0.1/kaos', 'skill', 'list']))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                            env={**os.environ, "NO_COLOR": "1"}, timeout=60)
    assert result.returncode == 1
    assert INSTALL_LINE in result.stderr and SECRET not in result.stderr
    assert result.stderr.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


def test_kaos_db_variable_selects_postgres_and_names_a_dead_server(tmp_path) -> None:
    result = run_kaos("memory", "list", env={"KAOS_DB": f"postgres://kaos:{SECRET}@127.0.0.1:1/kaos"})
    assert result.returncode == 1
    assert result.stderr.strip() == ("kaos: error: postgres://kaos:***@127.0.0.1:1/kaos: no PostgreSQL server is "
                                     "answering at 127.0.0.1:1 (is it running?)")
