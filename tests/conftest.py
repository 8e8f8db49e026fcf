"""Shared fixtures: real SQLite files, a manual clock, and a runner for the real `kaos` binary."""

from __future__ import annotations

import compileall
import contextlib
import hashlib
import io
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from kaos_dream import Library, ManualClock, Settings

T0 = 1_767_225_600.0  # 2026-01-01T00:00:00Z


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(T0)


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "kaos.db"


# Test modules whose library-level tests run on both engines (the `lib` fixture is parametrised by
# `engine`); a test elsewhere marked `@pytest.mark.both_engines` does too; KAOSTEST_ENGINES=sqlite,postgresql
# runs every module on both (or only on one).
BOTH_ENGINES = frozenset({
    "test_skills_memories", "test_episodes", "test_record_outcomes", "test_failures_store",
    "test_graph_store", "test_dream", "test_evidence_aging", "test_validation", "test_search",
    "test_coordination", "test_mcp_server", "test_mcp_gate", "test_mcp_trust",
    # CLI-level behaviour: their library fixtures take `library_target`, so `--db` is the file or the URL
    "test_cli", "test_cli_plasticity", "test_failures_cli", "test_dream_processes", "test_dream_features",
    "test_cli_edge_inputs",
})


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto`` starts one worker more than there are cores: much of the suite waits on the `kaos`
    subprocesses it starts and on its PostgreSQL servers, and a spare worker fills that idle time
    (.ci/run on 2 cores: 266 s with 3 workers against 284-291 s with 2)."""
    return (os.cpu_count() or 1) + 1


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "engine" not in metafunc.fixturenames:
        return
    chosen = os.environ.get("KAOSTEST_ENGINES")
    if chosen:
        engines = [e.strip() for e in chosen.split(",") if e.strip()]
    else:
        module = metafunc.module.__name__.rsplit(".", 1)[-1]
        both = module in BOTH_ENGINES or metafunc.definition.get_closest_marker("both_engines") is not None
        engines = ["sqlite", "postgresql"] if both else ["sqlite"]
    metafunc.parametrize("engine", engines, scope="function")


@pytest.fixture
def library_target(engine: str, db_path: Path, request: pytest.FixtureRequest) -> str:
    """Where the `lib` fixture's library lives: the file, or a fresh database on the test server."""
    if engine == "postgresql":
        return str(request.getfixturevalue("pg_library_url"))
    return str(db_path)


@pytest.fixture(scope="session")
def pg_library_template(pg_server: PgServer) -> str:  # noqa: F811 - the fixture, imported below
    """A database migrated once per test process, for fresh libraries to be cloned from: migrating
    each test's database anew cost ~0.4 s a test, over the ~300 tests that run on PostgreSQL."""
    name = pg_server.create_database("kaos_template")
    Library(pg_server.socket_url(name), settings=Settings()).close()
    return name


@pytest.fixture
def pg_library_url(pg_server: PgServer, pg_library_template: str) -> str:  # noqa: F811
    """A fresh, migrated, empty library on the test server (a clone of the template)."""
    import secrets

    name = f"t_{secrets.token_hex(6)}"
    with pg_server.admin() as conn:
        conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{pg_library_template}" STRATEGY FILE_COPY')
    return pg_server.socket_url(name)


@pytest.fixture
def lib(library_target: str, clock: ManualClock) -> Iterator[Library]:
    library = Library(library_target, clock=clock, settings=Settings())
    yield library
    library.close()


@pytest.fixture
def mem_lib(clock: ManualClock) -> Iterator[Library]:
    library = Library(":memory:", clock=clock, settings=Settings())
    yield library
    library.close()


def file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def library_digest(lib: Library) -> str:
    """A digest of everything the library holds: the file's bytes on SQLite (after a checkpoint),
    every table's rows in a fixed order on PostgreSQL. Equal digests: nothing was written."""
    from kaos_dream.store.dialect import is_postgres, table_names

    if not is_postgres(lib.conn):
        lib.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return file_digest(Path(lib.path))
    h = hashlib.sha256()
    for table in table_names(lib.conn):
        width = len(lib.conn.execute(f"SELECT * FROM {table} LIMIT 0").description or ()) or 1
        order = ", ".join(str(i) for i in range(1, width + 1))
        rows = [tuple(r) for r in lib.conn.execute(f"SELECT * FROM {table} ORDER BY {order}")]
        h.update(repr((table, rows)).encode())
    return h.hexdigest()


def target_digest(target: str | Path) -> str:
    """"Nothing was written" for a CLI test's ``--db`` value on either engine: the file's bytes, or
    every row of the database (:func:`library_digest`, read through a read-only library)."""
    from kaos_dream.store.engine import is_postgres_url

    if not is_postgres_url(str(target)):
        return file_digest(Path(target))
    import psycopg  # directly, not through a library: a database kaos refuses to open has a digest too

    h = hashlib.sha256()
    with psycopg.connect(str(target), autocommit=True) as conn:
        tables = [r[0] for r in conn.execute("SELECT table_name FROM information_schema.tables WHERE "
                                             "table_schema = current_schema() ORDER BY table_name")]
        for table in tables:
            cursor = conn.execute(f"SELECT * FROM {table} LIMIT 0")
            order = ", ".join(str(i) for i in range(1, len(cursor.description or ()) + 1)) or "1"
            h.update(repr((table, conn.execute(f"SELECT * FROM {table} ORDER BY {order}").fetchall())).encode())
    return h.hexdigest()


def query(target: str | Path, sql: str, params: tuple = ()) -> list[tuple]:
    """Rows of one read-only query on a CLI test's library (either engine), as plain tuples."""
    with Library(str(target), settings=Settings(), readonly=True) as library:
        return [tuple(r) for r in library.conn.execute(sql, params).fetchall()]


PROJECT_ROOT = Path(__file__).resolve().parent.parent


def pytest_configure(config: pytest.Config) -> None:
    """Register the ``both_engines`` marker, and write kaos_dream's .pyc files once, as ``pip install``
    does for an installed package. With PYTHONDONTWRITEBYTECODE=1 (set on some machines) an editable
    checkout has none, and every `kaos` subprocess would recompile every module it imports (~0.1-0.2 s a call)."""
    config.addinivalue_line("markers", "both_engines: run this test on SQLite and on PostgreSQL (the engine fixture)")
    config.addinivalue_line("markers", "slow: starts servers, browsers, many processes or benchmarks (`-m 'not slow'` "
                                       "for the fast subset)")
    compileall.compile_dir(str(PROJECT_ROOT / "kaos_dream"), quiet=1)


def kaos_command() -> list[str]:
    """`python -m kaos_dream` runs the same ``main()`` as the `kaos` console script, and with
    PYTHONPATH set below it always runs *this* checkout, whichever copy pip installed."""
    return [sys.executable, "-m", "kaos_dream"]


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str


# The strong embedding tier (issue 22) is off in the suite unless a test turns it on: with it, every
# `dream run --apply` and `db reindex` would load the transformer and spend ~25 ms per row embedding
# what the test never searches. tests/test_semantic_tiers.py runs it on purpose. Tests that build
# Settings() themselves get the product default (on); their libraries are small.
SUITE_ENV = {"KAOS_STRONG_EMBEDDING_MODEL": "none"}
os.environ.update(SUITE_ENV)


def run_kaos(*args: str, db: Path | str | None = None, input: str | None = None, env: dict[str, str] | None = None,
             timeout: float = 60) -> Result:
    """Run the installed `kaos` console script as a user would."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("KAOS_") and k != "ANTHROPIC_API_KEY"}
    full_env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PROJECT_ROOT), full_env.get("PYTHONPATH")]))
    full_env.update(SUITE_ENV)
    full_env.update(env or {})
    cmd = kaos_command() + (["--db", str(db)] if db is not None else []) + list(args)
    proc = subprocess.run(cmd, input=input, capture_output=True, text=True, env=full_env, timeout=timeout)
    return Result(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture
def kaos():
    return run_kaos


@contextlib.contextmanager
def _environment(env: dict[str, str]) -> Iterator[None]:
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _text_stream(data: str = "") -> io.TextIOWrapper:
    """A byte-backed text stream like a pipe's: not a TTY, has ``.buffer`` and ``reconfigure``."""
    return io.TextIOWrapper(io.BytesIO(data.encode("utf-8", "surrogateescape")), encoding="utf-8", newline=None)


def run_kaos_in_process(*args: str, db: Path | str | None = None, input: str | None = None,
                        env: dict[str, str] | None = None, timeout: float = 60,
                        runner: Callable[[list[str]], int] | None = None) -> Result:
    """`kaos` run through the same :func:`kaos_dream.entry.run` as the console script, in this process:
    for tests of parsing, rendering and library effects, where a new interpreter per call proves
    nothing more (~0.3 s each). The environment, stdin, stdout and stderr are the call's own, as in
    :func:`run_kaos`; tests about processes (concurrency, crashes, signals, cron) use :func:`run_kaos`.
    ``runner`` replaces :func:`kaos_dream.entry.run` (``kaos_dream.cli.run``: typer only, no fast path)."""
    from kaos_dream.entry import run as entry_run

    run = runner or entry_run

    full_env = {k: v for k, v in os.environ.items() if not k.startswith("KAOS_") and k != "ANTHROPIC_API_KEY"}
    full_env.update(SUITE_ENV)
    full_env.update(env or {})
    argv = (["--db", str(db)] if db is not None else []) + list(args)
    streams = (sys.stdin, sys.stdout, sys.stderr)
    stdout, stderr = _text_stream(), _text_stream()
    sys.stdin, sys.stdout, sys.stderr = _text_stream(input or ""), stdout, stderr
    try:
        with _environment(full_env):
            try:
                code = run(argv)
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        sys.stdin, sys.stdout, sys.stderr = streams
    return Result(code, _decoded(stdout), _decoded(stderr))


def _decoded(stream: io.TextIOWrapper) -> str:
    stream.flush()
    raw = stream.buffer.getvalue()  # type: ignore[attr-defined]
    return raw.decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")  # as text=True reads a pipe


@pytest.fixture
def kaos_in_process():
    return run_kaos_in_process



# A real PostgreSQL server per test process, for the tests of the PostgreSQL backend (tests/pg_server.py).
from tests.pg_server import PgServer, pg_database, pg_server, pg_url  # noqa: E402,F401

# Files whose tests start real PostgreSQL servers, headless browsers, MCP servers, many concurrent
# processes, crash and kill loops, model deadlines or benchmark runs: the suite's long tail (from
# `--durations`), and every test parametrized onto PostgreSQL. `pytest -m "not slow"` runs everything
# else: the parsing, rendering and library tests.
SLOW_FILES = frozenset({
    "test_pg_bm25.py", "test_pg_connect.py", "test_pg_faults.py", "test_pg_migrations.py",
    "test_pg_search_equivalence.py", "test_pg_server.py", "test_cli_engines.py", "test_report_browser.py",
    "test_bench_curves.py", "test_fleet_bench.py", "test_dream_processes.py", "test_crash_recovery.py",
    "test_audit2_concurrency.py", "test_coordination.py", "test_mcp_server.py", "test_mcp_trust.py",
    "test_mcp_gate.py", "test_llm_deadline.py", "test_storage_faults.py", "test_report.py", "test_progress.py",
    "test_readme_tour.py", "test_upgrade_path.py", "test_dream_scale_paths.py", "test_benchkit.py",
    "test_db_copy.py", "test_audit2_files.py", "test_bad_input_sweep.py", "test_live_judge_script.py",
})


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.name in SLOW_FILES or "[postgresql" in item.nodeid:  # and every test run on a real server
            item.add_marker(pytest.mark.slow)
