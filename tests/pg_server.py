"""A real, throw-away PostgreSQL server for the tests: ``initdb`` + ``pg_ctl`` from the Debian packages.

Each pytest process (each xdist worker) starts its own server the first time a test asks for it, in
a fresh temporary folder, on a free TCP port on 127.0.0.1 with its unix socket in that folder, and
stops it when the session ends. ``initdb`` refuses to run as root, so under root (``.ci/run`` in a
container) the cluster is created and run by the unprivileged ``postgres`` user (created by the
Debian package) or ``nobody``, through ``runuser``.

Authentication: the unix socket trusts everyone (the fixture's own admin connections), TCP wants a
SCRAM password, so the wrong-password tests are real. Durability settings are off (fsync, full page
writes): the data is thrown away anyway.

Why not pytest-postgresql: it calls ``pg_ctl`` as the current user, so as root ``initdb`` fails, and
it cannot configure the password-on-TCP / trust-on-socket split the fault tests need; this file is
~150 lines with no dependency.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import pytest

ADMIN = "kaos_admin"
BINARIES = ("initdb", "pg_ctl", "postgres")


def find_bindir() -> Path | None:
    """The folder holding initdb/pg_ctl/postgres: on PATH, else Debian's /usr/lib/postgresql/N/bin."""
    for candidate in [shutil.which("pg_ctl"), *sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), reverse=True)]:
        if candidate:
            folder = Path(os.path.realpath(candidate)).parent
            if all((folder / name).exists() for name in BINARIES):
                return folder
    return None


BINDIR = find_bindir()
SKIP_REASON = "PostgreSQL server binaries (initdb, pg_ctl, postgres) not installed: apt-get install postgresql"
needs_postgres = pytest.mark.skipif(BINDIR is None, reason=SKIP_REASON)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _run_as() -> str | None:
    """The user to run the server as: None when we are not root, else an unprivileged account."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        with contextlib.suppress(KeyError):
            pwd.getpwnam(name)
            return name
    raise RuntimeError("running as root and neither a 'postgres' nor a 'nobody' user exists for initdb")


@dataclass
class PgServer:
    """A running server: where it listens, and its admin (superuser, socket-trusted) account."""

    root: Path
    port: int
    admin_password: str
    user: str | None

    @property
    def socket_dir(self) -> str:
        return str(self.root / "socket")

    def url(self, database: str = "postgres", user: str = ADMIN, password: str | None = None,
            host: str = "127.0.0.1") -> str:
        """A ``postgresql://`` URL over TCP (password auth) for ``user``."""
        auth = quote(user, safe="") + (f":{quote(password, safe='')}" if password is not None else "")
        return f"postgresql://{auth}@{host}:{self.port}/{quote(database, safe='')}"

    def socket_url(self, database: str = "postgres", user: str = ADMIN) -> str:
        """A URL over the unix socket (trusted: no password)."""
        query = f"host={quote(self.socket_dir)}&port={self.port}"
        return f"postgresql://{quote(user, safe='')}@/{quote(database, safe='')}?{query}"

    def admin(self, database: str = "postgres"):
        """An autocommit superuser connection over the socket."""
        import psycopg

        return psycopg.connect(self.socket_url(database), autocommit=True)

    def create_database(self, prefix: str = "t") -> str:
        """A fresh empty database; returns its name."""
        name = f"{prefix}_{secrets.token_hex(6)}"
        with self.admin() as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return name

    def log(self) -> str:
        path = self.root / "server.log"
        return path.read_text("utf-8", "replace") if path.exists() else ""


def _command(user: str | None, argv: list[str]) -> list[str]:
    return argv if user is None else ["runuser", "-u", user, "--", *argv]


def start_server(bindir: Path) -> PgServer:
    user = _run_as()
    root = Path(tempfile.mkdtemp(prefix="kaos-pg-"))
    (root / "socket").mkdir()
    password = secrets.token_urlsafe(12)
    (root / "pwfile").write_text(password + "\n")
    if user is not None:
        entry = pwd.getpwnam(user)
        for path in (root, root / "socket", root / "pwfile"):
            os.chown(path, entry.pw_uid, entry.pw_gid)
    data = root / "data"
    subprocess.run(
        _command(user, [str(bindir / "initdb"), "-D", str(data), "-U", ADMIN, f"--pwfile={root / 'pwfile'}",
                        "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--locale=C",
                        "--no-sync"]),
        check=True, capture_output=True, cwd=root,
    )
    port = free_port()
    settings = {
        "listen_addresses": "'127.0.0.1'", "port": str(port), "unix_socket_directories": f"'{root / 'socket'}'",
        "fsync": "off", "full_page_writes": "off", "synchronous_commit": "off", "max_connections": "60",
        "shared_buffers": "16MB", "password_encryption": "'scram-sha-256'",
    }
    with (data / "postgresql.conf").open("a") as conf:
        conf.write("".join(f"{k} = {v}\n" for k, v in settings.items()))
    subprocess.run(
        _command(user, [str(bindir / "pg_ctl"), "-D", str(data), "-l", str(root / "server.log"), "-w", "-t", "60",
                        "start"]),
        check=True, capture_output=True, cwd=root,
    )
    return PgServer(root, port, password, user)


def stop_server(server: PgServer, bindir: Path) -> None:
    """Stop at once (the data is thrown away, so no shutdown checkpoint) and delete the folder in a
    detached process: a session's ~200 cloned databases are ~2 GB of small files, whose removal held
    each test process 5 s at its end."""
    subprocess.run(
        _command(server.user, [str(bindir / "pg_ctl"), "-D", str(server.root / "data"), "-m", "immediate", "-w",
                               "stop"]),
        capture_output=True, cwd=server.root,
    )
    subprocess.Popen(["rm", "-rf", "--", str(server.root)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL, start_new_session=True)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    """One server per test process (xdist workers each get their own), started on first use."""
    if BINDIR is None:
        pytest.skip(SKIP_REASON)
    server = start_server(BINDIR)
    try:
        yield server
    finally:
        stop_server(server, BINDIR)


@pytest.fixture
def pg_database(pg_server: PgServer) -> str:
    """A fresh empty database on the session's server (its name)."""
    return pg_server.create_database()


@pytest.fixture
def pg_url(pg_server: PgServer, pg_database: str) -> str:
    """A socket URL of a fresh empty database, as the superuser."""
    return pg_server.socket_url(pg_database)
