"""Where a run's library lives: a fresh SQLite file, or a fresh database on one PostgreSQL server.

Every run gets an empty library of its own, so runs never see each other's rows. For PostgreSQL the
server is either started here for the bench (``initdb`` + ``pg_ctl`` from the Debian packages, through
``tests/pg_server.py``, the fixture the test suite uses) and thrown away afterwards, or an existing
one named by ``--pg-url`` (its role needs CREATEDB: each run creates and drops its own database).

Verification reads the rows with the engine's own driver (``sqlite3`` read-only, ``psycopg``), not
through the library, so a bug in the library's connection layer cannot hide a lost row.
"""

from __future__ import annotations

import contextlib
import secrets
import shutil
import sqlite3
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit, urlunsplit

from kaos_dream.store.engine import mask


class Target(Protocol):
    name: str
    label: str  # what results show about the server or file (no password)

    def fresh(self) -> str: ...
    def rows(self, db: str, sql: str) -> list[tuple[Any, ...]]: ...
    def drop(self, db: str) -> None: ...
    def close(self) -> None: ...


class SqliteTarget:
    """One SQLite file per run in a temporary folder (WAL: the -wal and -shm files go with it)."""

    name = "sqlite"

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="kaos-fleet-"))
        self.label = f"SQLite {sqlite3.sqlite_version}, one file"
        self._count = 0

    def fresh(self) -> str:
        self._count += 1
        return str(self.folder / f"fleet-{self._count}.db")

    def rows(self, db: str, sql: str) -> list[tuple[Any, ...]]:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            return [tuple(r) for r in conn.execute(sql)]
        finally:
            conn.close()

    def drop(self, db: str) -> None:
        for suffix in ("", "-wal", "-shm"):
            Path(db + suffix).unlink(missing_ok=True)

    def close(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


class PostgresTarget:
    """A database per run on one server; ``admin_url`` names a role that may create databases."""

    name = "postgresql"

    def __init__(self, admin_url: str, label: str, *, url_of: Callable[[str], str] | None = None,
                 on_close: Callable[[], None] | None = None) -> None:
        import psycopg

        self._psycopg = psycopg
        self.admin_url = admin_url
        self._url_of = url_of or self._same_server
        self._on_close = on_close
        with psycopg.connect(admin_url, autocommit=True, connect_timeout=10) as conn:
            version = conn.execute("SHOW server_version").fetchone()[0]
        self.label = f"PostgreSQL {version}, {label}"

    def _same_server(self, database: str) -> str:
        """The admin URL with its database replaced: the hosts connect as the admin role."""
        parts = urlsplit(self.admin_url)
        return urlunsplit(parts._replace(path="/" + database))

    def fresh(self) -> str:
        name = f"kaos_fleet_{secrets.token_hex(5)}"
        with self._psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self._url_of(name)

    def rows(self, db: str, sql: str) -> list[tuple[Any, ...]]:
        with self._psycopg.connect(db) as conn:
            conn.read_only = True
            return [tuple(r) for r in conn.execute(sql)]

    def drop(self, db: str) -> None:
        name = urlsplit(db).path.lstrip("/")
        with self._psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def close(self) -> None:
        if self._on_close is not None:
            self._on_close()


def postgres_target(pg_url: str | None) -> tuple[PostgresTarget | None, str | None]:
    """The PostgreSQL target and None, or None and the one-line reason there is none.

    With ``pg_url`` that server is used (an error there is the caller's to report: it was asked for);
    without it a throw-away server is started when the Debian binaries are installed.
    """
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return None, 'PostgreSQL half skipped: the psycopg driver is not installed (pip install "kaos-dream[postgres]")'
    if pg_url is not None:
        return PostgresTarget(pg_url, f"the server at {mask(pg_url)}"), None
    try:
        from tests.pg_server import BINDIR, start_server, stop_server
    except ImportError as exc:  # tests/pg_server.py needs pytest (the test extra)
        return None, f"PostgreSQL half skipped: cannot load tests/pg_server.py ({exc}); pass --pg-url"
    if BINDIR is None:
        return None, ("PostgreSQL half skipped: no PostgreSQL server binaries (initdb, pg_ctl, postgres; "
                      "apt-get install postgresql) and no --pg-url")
    server = start_server(BINDIR)
    try:
        # The hosts connect over TCP with the password, as hosts on a network would; the admin work
        # (create / drop a database per run) goes through the trusted unix socket.
        target = PostgresTarget(server.socket_url(), f"a throw-away server started for this run ({BINDIR})",
                                url_of=lambda database: server.url(database, password=server.admin_password),
                                on_close=lambda: stop_server(server, BINDIR))
    except BaseException:
        stop_server(server, BINDIR)
        raise
    return target, None


@contextlib.contextmanager
def opened(target: Target) -> Iterator[Target]:
    try:
        yield target
    finally:
        target.close()
