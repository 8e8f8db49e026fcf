"""Server connections reused across library opens in one long-lived process (psycopg's own pool).

A process that opens a library per request (a web service, a worker that handles many jobs) would
otherwise pay a TCP + authentication handshake and a backend start on the server each time; with
``KAOS_PG_POOL=N`` (N >= 1) the process keeps up to N idle connections per database URL in a
``psycopg_pool.ConnectionPool`` and a library's ``close()`` hands its connection back instead of
closing it. Off by default: a one-shot CLI command has nothing to reuse, and a pool's background
reconnects must not print into a command's stderr.

A connection taken from the pool is checked with a round trip first (a server restarted since is
noticed and the connection replaced); given back, it is rolled back and its session settings reset,
so the next library configures it as new. When the pool cannot give one within
:data:`WAIT_S` (the server is down), the open falls back to a direct connection, whose failure is the
usual one-line message.
"""

from __future__ import annotations

import logging
import os
import threading
from typing import TYPE_CHECKING, Any

from ...errors import StoreError

if TYPE_CHECKING:
    import psycopg

    from ..engine import Engine

ENV = "KAOS_PG_POOL"
WAIT_S = 2.0
_pools: dict[str, Any] = {}
_guard = threading.Lock()


def size() -> int:
    """The configured pool size (0: no pool)."""
    text = os.environ.get(ENV, "").strip()
    if not text:
        return 0
    try:
        value = int(text)
    except ValueError:
        raise StoreError(f"{ENV} must be a whole number of connections (0 turns the pool off), got {text!r}") from None
    if value < 0:
        raise StoreError(f"{ENV} must not be negative, got {value}")
    return value


def _reset(conn: psycopg.Connection) -> None:
    conn.execute("RESET ALL")


def _pool(engine: Engine, max_size: int) -> Any:
    from psycopg_pool import ConnectionPool

    from .connect import APPLICATION_NAME, CONNECT_TIMEOUT_S

    with _guard:
        found = _pools.get(engine.target)
        if found is None:
            logging.getLogger("psycopg.pool").addHandler(logging.NullHandler())
            logging.getLogger("psycopg.pool").propagate = False  # background reconnects stay off stderr
            found = ConnectionPool(engine.target, min_size=0, max_size=max_size, open=True, name="kaos-dream",
                                   kwargs={"autocommit": True, "connect_timeout": CONNECT_TIMEOUT_S,
                                           "application_name": APPLICATION_NAME},
                                   check=ConnectionPool.check_connection, reset=_reset)
            _pools[engine.target] = found
        return found


def acquire(engine: Engine) -> tuple[psycopg.Connection, Any]:
    """A connection for a library on ``engine``, and the pool to give it back to (None: close it)."""
    from .connect import connect

    wanted = size()
    if wanted:
        try:
            import psycopg_pool
        except ImportError:
            raise StoreError(f'{ENV} needs psycopg-pool, which is not installed: pip install "kaos-dream[postgres]"'
                             ) from None
        pool = _pool(engine, wanted)
        try:
            return pool.getconn(timeout=WAIT_S), pool
        except psycopg_pool.PoolTimeout:
            pass  # the server is down or every connection is in use: a direct one says which
    return connect(engine, autocommit=True), None


def release(raw: psycopg.Connection, pool: Any) -> None:
    """Give ``raw`` back to ``pool`` (rolled back and reset there; discarded when broken), or close it."""
    if pool is None:
        raw.close()
        return
    try:
        pool.putconn(raw)
    except Exception:  # the pool was closed, or the connection is not its own any more
        raw.close()


def close_all() -> None:
    """Close every pool of this process (tests; a service shutting down)."""
    with _guard:
        pools = list(_pools.values())
        _pools.clear()
    for pool in pools:
        pool.close()
