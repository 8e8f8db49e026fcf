"""Opening a PostgreSQL connection, with every connection fault as one line and the password masked.

libpq reads the password from the URL, ``PGPASSWORD`` or ``~/.pgpass`` (in that order), so a URL
without one still authenticates when the environment provides it. The faults a user can fix get
their own message: no server listening, wrong password, unknown role, missing database, no
permission to connect. Anything else is reported with libpq's first line, masked.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...errors import StoreError
from ..engine import Engine, mask, parse_db, require_driver

if TYPE_CHECKING:
    import psycopg

CONNECT_TIMEOUT_S = 10
APPLICATION_NAME = "kaos-dream"

# SQLSTATEs the server sends when it refuses a connection.
INVALID_PASSWORD = "28P01"
INVALID_AUTHORIZATION = "28000"  # no such role, no pg_hba.conf entry
INVALID_CATALOG = "3D000"  # no such database
INSUFFICIENT_PRIVILEGE = "42501"


class PostgresConnectError(StoreError):
    """The server could not be reached or refused the connection; ``reason`` says which."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


def _target(url: str) -> dict[str, str]:
    from psycopg.conninfo import conninfo_to_dict

    try:
        return {k: str(v) for k, v in conninfo_to_dict(url).items()}
    except Exception:  # a malformed URL: psycopg.connect reports it below
        return {}


def where(url: str) -> str:
    """``host:port`` (or the socket folder) the URL points at, for messages."""
    params = _target(url)
    host = params.get("host") or "localhost (unix socket)"
    return f"{host}:{params.get('port', '5432')}"


def describe(url: str, exc: Exception) -> PostgresConnectError:
    """The one-line error for a failed connection attempt."""
    shown = mask(url)
    params = _target(url)
    user = params.get("user") or "the current user"
    database = params.get("dbname") or user
    state = getattr(exc, "sqlstate", None)  # often None: libpq reports refusals at connect as text
    text = mask(str(exc))
    first = next((line.strip() for line in text.splitlines() if line.strip()), type(exc).__name__)
    if state == INVALID_PASSWORD or "password authentication failed" in text:
        return PostgresConnectError(
            f"{shown}: password authentication failed for user {user!r} "
            "(check the URL, PGPASSWORD or ~/.pgpass)", "password")
    if "no password supplied" in text:
        return PostgresConnectError(
            f"{shown}: the server wants a password for user {user!r} and none was given "
            "(put it in the URL, PGPASSWORD or ~/.pgpass)", "password")
    if state == INVALID_CATALOG or ("database" in text and "does not exist" in text):
        return PostgresConnectError(
            f"{shown}: database {database!r} does not exist (create it first, e.g. `createdb {database}`)",
            "database")
    if state == INVALID_AUTHORIZATION or ("role" in text and "does not exist" in text):
        return PostgresConnectError(f"{shown}: role {user!r} does not exist on the server", "role")
    if state == INSUFFICIENT_PRIVILEGE or "permission denied" in text:
        return PostgresConnectError(
            f"{shown}: user {user!r} may not connect to database {database!r} (permission denied; "
            f"GRANT CONNECT ON DATABASE {database} TO {user})", "privilege")
    if state is None and any(s in text for s in ("Connection refused", "No such file or directory",
                                                   "could not connect", "timeout expired")):
        return PostgresConnectError(
            f"{shown}: no PostgreSQL server is answering at {where(url)} (is it running?)", "unreachable")
    return PostgresConnectError(f"{shown}: cannot connect to PostgreSQL: {first}", "other")


def connect(db: str | Engine, *, autocommit: bool = False, **options: Any) -> psycopg.Connection:
    """A psycopg connection to the URL; faults become :class:`PostgresConnectError`."""
    engine = db if isinstance(db, Engine) else parse_db(db)
    if engine.kind != "postgresql":
        raise StoreError(f"{engine.shown} is not a PostgreSQL URL")
    require_driver(engine)
    import psycopg

    options.setdefault("connect_timeout", CONNECT_TIMEOUT_S)
    options.setdefault("application_name", APPLICATION_NAME)
    try:
        return psycopg.connect(engine.target, autocommit=autocommit, **options)
    except psycopg.Error as exc:
        raise describe(engine.target, exc) from None
