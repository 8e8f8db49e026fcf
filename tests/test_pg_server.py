"""The test PostgreSQL server itself: real, private, reachable over its socket and over TCP with a password."""

from __future__ import annotations

import os

import psycopg
import pytest

from tests.pg_server import ADMIN, PgServer, needs_postgres

pytestmark = needs_postgres


def test_server_answers_on_its_socket_and_over_tcp(pg_server: PgServer) -> None:
    with pg_server.admin() as conn:
        version = conn.execute("SHOW server_version_num").fetchone()[0]
        socket_dir = conn.execute("SHOW unix_socket_directories").fetchone()[0]
        fsync = conn.execute("SHOW fsync").fetchone()[0]
    assert int(version) >= 150000
    assert socket_dir == pg_server.socket_dir and socket_dir.startswith(str(pg_server.root))
    assert fsync == "off"
    with psycopg.connect(pg_server.url(password=pg_server.admin_password)) as conn:
        assert conn.execute("SELECT current_user").fetchone()[0] == ADMIN


def test_tcp_refuses_a_wrong_password(pg_server: PgServer) -> None:
    with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
        psycopg.connect(pg_server.url(password="not-" + pg_server.admin_password))


def test_server_runs_unprivileged_even_when_tests_run_as_root(pg_server: PgServer) -> None:
    pid = int((pg_server.root / "data" / "postmaster.pid").read_text().split()[0])
    owner = os.stat(f"/proc/{pid}").st_uid
    assert owner != 0
    assert (owner == os.geteuid()) == (os.geteuid() != 0)


def test_each_database_is_fresh(pg_server: PgServer) -> None:
    first, second = pg_server.create_database(), pg_server.create_database()
    assert first != second
    with pg_server.admin(first) as conn:
        conn.execute("CREATE TABLE only_here (x int)")
    with pg_server.admin(second) as conn:
        assert conn.execute("SELECT to_regclass('only_here')").fetchone()[0] is None
