"""Faults on PostgreSQL, each against a real server: a restart mid-run, a connection killed during
`kaos dream run --apply`, a role that may read but not write, a role that may not create the schema.
(Connection refusals at start — no server, wrong password, missing database — are in test_pg_connect.)"""

from __future__ import annotations

import json
import secrets
import subprocess
from collections.abc import Iterator

import pytest

from kaos_dream import Library, ManualClock, Settings
from kaos_dream.errors import StoreFaultError
from kaos_dream.store import transaction
from tests.conftest import T0
from tests.conftest import run_kaos_in_process as run_kaos  # the CLI boundary, in this process
from tests.pg_server import BINDIR, PgServer, _command, needs_postgres, start_server, stop_server

from .test_dream_processes import build, snapshot_queries

pytestmark = needs_postgres
PASSWORD = "Fault-Pa55-word"


@pytest.fixture(scope="module")
def private_server() -> Iterator[PgServer]:
    """A server of this module's own: the tests here stop and restart it, which would break the
    connections of other tests sharing the worker's server."""
    if BINDIR is None:
        pytest.skip("no PostgreSQL binaries")
    server = start_server(BINDIR)
    try:
        yield server
    finally:
        stop_server(server, BINDIR)


def pg_ctl(server: PgServer, *args: str) -> None:
    assert BINDIR is not None
    subprocess.run(_command(server.user, [str(BINDIR / "pg_ctl"), "-D", str(server.root / "data"), "-l",
                                          str(server.root / "server.log"), "-w", "-t", "60", *args]),
                   check=True, capture_output=True, cwd=server.root, timeout=120)


def restart(server: PgServer) -> None:
    pg_ctl(server, "-m", "fast", "restart")


def count(server: PgServer, database: str, table: str) -> int:
    with server.admin(database) as conn:
        return int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])


@pytest.fixture
def restart_lib(private_server: PgServer) -> Iterator[tuple[Library, str]]:
    database = private_server.create_database()
    library = Library(private_server.url(database, password=private_server.admin_password),
                      clock=ManualClock(T0), settings=Settings())
    library.skills.add("csv-to-parquet", "convert csv files to parquet")
    yield library, database
    library.close()


def test_after_a_restart_the_next_read_and_write_reconnect(private_server: PgServer,
                                                            restart_lib: tuple[Library, str]) -> None:
    lib, database = restart_lib
    first = lib.conn.raw.info.backend_pid
    restart(private_server)
    assert [s.name for s in lib.skills.list()] == ["csv-to-parquet"]  # a read outside a transaction: reconnected
    assert lib.conn.raw.info.backend_pid != first
    restart(private_server)
    lib.skills.add("upload-s3", "upload a folder to a bucket")  # its BEGIN ran again on a new connection
    assert count(private_server, database, "skills") == 2
    assert [h.name for h in lib.search("bucket")][:1] == ["upload-s3"]  # indexed at that COMMIT


def test_a_restart_inside_a_transaction_is_one_error_and_writes_nothing(
        private_server: PgServer, restart_lib: tuple[Library, str]) -> None:
    lib, database = restart_lib
    with pytest.raises(StoreFaultError) as caught, transaction(lib.conn):
        lib.skills.add("half-a", "the first half of the transaction")
        restart(private_server)
        lib.skills.add("half-b", "the second half")
    message = str(caught.value)
    assert "lost the connection to the PostgreSQL server" in message and "nothing of it was written" in message
    assert PASSWORD not in message and private_server.admin_password not in message and ":***@" in message
    assert "\n" not in message
    assert count(private_server, database, "skills") == 1  # neither half
    assert count(private_server, database, "skills_fts") == 1
    lib.skills.add("after", "written on the new connection")
    assert count(private_server, database, "skills") == 2


def test_a_transaction_that_lost_its_connection_refuses_to_go_on(
        private_server: PgServer, restart_lib: tuple[Library, str]) -> None:
    """Code that swallows the fault inside its transaction must not reconnect and commit the rest alone."""
    lib, database = restart_lib
    conn = lib.conn
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("INSERT INTO agents (id, started_at) VALUES ('a1', 0)")
    restart(private_server)
    with pytest.raises(StoreFaultError):
        conn.execute("INSERT INTO agents (id, started_at) VALUES ('a2', 0)")
    assert conn.in_transaction
    with pytest.raises(StoreFaultError):  # still inside the lost transaction: no silent new connection
        conn.execute("INSERT INTO agents (id, started_at) VALUES ('a3', 0)")
    with pytest.raises(StoreFaultError):
        conn.execute("COMMIT")
    assert not conn.in_transaction
    assert count(private_server, database, "agents") == 0
    conn.execute("INSERT INTO agents (id, started_at) VALUES ('a4', 0)")
    assert count(private_server, database, "agents") == 1


def test_server_down_mid_run_is_one_clear_error_then_work_resumes(
        private_server: PgServer, restart_lib: tuple[Library, str]) -> None:
    lib, database = restart_lib
    pg_ctl(private_server, "-m", "fast", "stop")
    try:
        with pytest.raises(StoreFaultError) as caught:
            lib.skills.add("while-down", "the server is stopped")
        message = str(caught.value)
        assert "could not reconnect" in message and "no PostgreSQL server is answering" in message
        assert private_server.admin_password not in message and "\n" not in message
        with pytest.raises(StoreFaultError):
            lib.skills.list()
    finally:
        pg_ctl(private_server, "start")
    assert [s.name for s in lib.skills.list()] == ["csv-to-parquet"]
    lib.skills.add("after-start", "the server is back")
    assert count(private_server, database, "skills") == 2


# -- a connection killed during `kaos dream run --apply` ---------------------------------------------------

def run_with_a_killer(url: str, admin_url: str, where: int, inside: bool):
    """`kaos dream run --apply` with one extra phase (order ``where``) that ends the run's own server
    session from an admin connection (pg_terminate_backend): inside the phase's transaction, or in its
    prepare step, between transactions. In this process: the point is the connection, not the process."""
    import psycopg

    from kaos_dream.dream import PhaseResult, register_phase, unregister_phase

    def kill(ctx) -> None:
        pid = ctx.lib.conn.raw.info.backend_pid
        with psycopg.connect(admin_url, autocommit=True) as conn:
            assert conn.execute("SELECT pg_terminate_backend(%s, 10000)", (pid,)).fetchone()[0]

    def phase(ctx, _):
        if inside:
            kill(ctx)  # inside the phase's transaction: the phase cannot be committed
        return PhaseResult({})

    register_phase("kill", phase, order=where, prepare=None if inside else kill)
    try:
        return run_kaos("--db", url, "dream", "run", "--apply", "--quiet")
    finally:
        unregister_phase("kill")


def pg_snapshot(server: PgServer, database: str) -> dict[str, list]:
    """The PostgreSQL reading of test_dream_processes' snapshot, plus whether the lease is held."""
    queries = {**snapshot_queries("strength::numeric"),
               "lease": "SELECT count(*) FROM dream_lease WHERE holder IS NOT NULL"}
    with server.admin(database) as conn:
        return {name: conn.execute(sql).fetchall() for name, sql in queries.items()}


@pytest.fixture(scope="module")
def dream_template(private_server: PgServer) -> str:
    """A database with dream work to do (test_dream_processes.build), to copy per test."""
    name = f"dream_base_{secrets.token_hex(4)}"
    with private_server.admin() as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    build(private_server.socket_url(name), skills=40)  # type: ignore[arg-type]
    return name


def copy_of(server: PgServer, template: str) -> str:
    name = f"t_{secrets.token_hex(6)}"
    with server.admin() as conn:
        conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
    return name


@pytest.mark.parametrize("where", [250, 550])
def test_connection_killed_inside_a_phase_then_next_pass_resumes(private_server: PgServer, dream_template: str,
                                                                 where: int) -> None:
    clean, killed = copy_of(private_server, dream_template), copy_of(private_server, dream_template)
    clean_url = private_server.url(clean, password=private_server.admin_password)
    killed_url = private_server.url(killed, password=private_server.admin_password)
    assert run_kaos("--db", clean_url, "dream", "run", "--apply", "--quiet").returncode == 0
    proc = run_with_a_killer(killed_url, private_server.socket_url(), where, inside=True)
    assert proc.returncode == 1, proc.stderr
    line = proc.stderr.strip()
    assert "\n" not in line and "Traceback" not in line and private_server.admin_password not in line
    assert "lost the connection to the PostgreSQL server" in line
    assert "the next `kaos dream run --apply` resumes it" in line and "the lease is released" in line
    runs = json.loads(run_kaos("--db", killed_url, "dream", "runs", "--json").stdout)
    assert runs[0]["status"] == "running"
    assert pg_snapshot(private_server, killed)["lease"] == [(0,)]  # released on a new connection
    r = run_kaos("--db", killed_url, "dream", "run", "--apply", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["status"] == "completed" and out["resumed"] is True
    assert pg_snapshot(private_server, killed) == pg_snapshot(private_server, clean)
    run_kaos("--db", clean_url, "dream", "run", "--apply", "--quiet")
    run_kaos("--db", killed_url, "dream", "run", "--apply", "--quiet")
    assert pg_snapshot(private_server, killed) == pg_snapshot(private_server, clean)


def test_connection_killed_between_phases_the_pass_reconnects_and_completes(private_server: PgServer,
                                                                            dream_template: str) -> None:
    clean, killed = copy_of(private_server, dream_template), copy_of(private_server, dream_template)
    clean_url = private_server.url(clean, password=private_server.admin_password)
    killed_url = private_server.url(killed, password=private_server.admin_password)
    assert run_kaos("--db", clean_url, "dream", "run", "--apply", "--quiet").returncode == 0
    proc = run_with_a_killer(killed_url, private_server.socket_url(), 450, inside=False)
    assert proc.returncode == 0, proc.stderr
    runs = json.loads(run_kaos("--db", killed_url, "dream", "runs", "--json").stdout)
    assert [r["status"] for r in runs] == ["completed"]
    snap = pg_snapshot(private_server, killed)
    assert snap == pg_snapshot(private_server, clean)


# -- privileges ------------------------------------------------------------------------------------------------

def _role(server: PgServer, database: str, grants: str) -> str:
    name = f"r_{secrets.token_hex(4)}"
    with server.admin(database) as conn:
        conn.execute(f"CREATE ROLE {name} LOGIN PASSWORD '{PASSWORD}'")
        for grant in filter(None, grants.format(role=name).split(";")):
            conn.execute(grant)
    return server.url(database, user=name, password=PASSWORD)


def one_line_error(result) -> str:
    assert result.returncode == 1, result.stdout + result.stderr
    line = result.stderr.strip()
    assert "\n" not in line and "Traceback" not in line and PASSWORD not in line and ":***@" in line
    return line


def test_a_role_that_may_read_but_not_write(pg_server: PgServer, pg_database: str) -> None:
    owner = pg_server.url(pg_database, password=pg_server.admin_password)
    assert run_kaos("--db", owner, "skill", "add", "csv-to-parquet", "-d", "convert csv files").returncode == 0
    reader = _role(pg_server, pg_database, "GRANT USAGE ON SCHEMA public TO {role};"
                                           "GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role}")
    listed = run_kaos("--db", reader, "skill", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert [s["name"] for s in json.loads(listed.stdout)] == ["csv-to-parquet"]
    assert run_kaos("--db", reader, "search", "csv").returncode == 0
    for args in (["skill", "add", "other", "-d", "x"], ["memory", "add", "a fact"], ["dream", "run", "--apply"],
                 ["record-outcome", "csv-to-parquet", "--success"]):
        line = one_line_error(run_kaos("--db", reader, *args))
        assert "permission denied" in line, line
    assert count(pg_server, pg_database, "skills") == 1 and count(pg_server, pg_database, "memories") == 0
    assert count(pg_server, pg_database, "dream_runs") == 0


def test_a_role_that_may_not_create_the_schema(pg_server: PgServer, pg_database: str) -> None:
    creator = _role(pg_server, pg_database, "REVOKE CREATE ON SCHEMA public FROM PUBLIC")
    line = one_line_error(run_kaos("--db", creator, "skill", "add", "x", "-d", "a thing"))
    assert "may not create kaos-dream's schema" in line and "permission denied for schema public" in line
    line = one_line_error(run_kaos("--db", creator, "init"))
    assert "may not create kaos-dream's schema" in line
    with pg_server.admin(pg_database) as conn:
        assert conn.execute("SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'"
                            ).fetchone()[0] == 0


def test_an_mcp_server_keeps_serving_across_a_server_restart(private_server: PgServer,
                                                             restart_lib: tuple[Library, str]) -> None:
    pytest.importorskip("mcp")
    import anyio

    from .test_mcp_server import call, session

    lib, database = restart_lib
    url = private_server.url(database, password=private_server.admin_password)

    async def main() -> None:
        with anyio.fail_after(90):
            async with session(url) as s:
                await call(s, "agent_start", {"agent": "a1"})
                restart(private_server)
                found = await call(s, "search", {"query": "csv parquet", "record_hits": True, "agent": "a1"})
                assert [r["name"] for r in found["results"]] == ["csv-to-parquet"]
                await call(s, "record_outcome", {"skill": "csv-to-parquet", "success": True, "agent": "a1"})

    anyio.run(main)
    assert count(private_server, database, "skill_uses") == 1 and count(private_server, database, "skill_hits") == 1


def test_the_automatic_dream_gets_the_url_out_of_its_command_line(pg_server: PgServer, pg_database: str) -> None:
    """Every user of a machine can read a process's arguments: the password travels in KAOS_DB."""
    from kaos_dream.dream.auto import spawn_detached

    with pg_server.admin() as conn:
        conn.execute(f"ALTER ROLE kaos_admin PASSWORD '{PASSWORD}'")
    try:
        url = pg_server.url(pg_database, password=PASSWORD)
        Library(url, settings=Settings()).close()
        proc = spawn_detached(url)
        assert PASSWORD not in " ".join(map(str, proc.args))
        assert proc.wait(timeout=120) == 0
        with Library(url, settings=Settings(), readonly=True) as lib:
            assert [(r["trigger"], r["status"]) for r in lib.dream.runs()] == [("auto", "completed")]
    finally:
        with pg_server.admin() as conn:
            conn.execute(f"ALTER ROLE kaos_admin PASSWORD '{pg_server.admin_password}'")
