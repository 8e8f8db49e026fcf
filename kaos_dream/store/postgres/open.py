"""Opening a library on PostgreSQL: connect, migrate (or, read-only, require the current schema), wrap."""

from __future__ import annotations

from ...errors import StoreError
from ..engine import Engine
from .adapter import PgConnection


def open_postgres(engine: Engine, *, readonly: bool, busy_timeout_ms: int, now: float,
                  create: bool = True) -> PgConnection:
    """A :class:`PgConnection` on a migrated database; every fault is one :class:`StoreError` line.
    ``create=False`` refuses a database that holds no library yet (a mistyped URL must not become a
    new library, as a mistyped file name does not), instead of creating the schema."""
    from ..connect import missing_library_message
    from .connect import connect
    from .migrations import apply_migrations, require_current, schema_version
    from .pool import acquire, release

    raw, pool = acquire(engine)
    try:
        if (readonly or not create) and schema_version(raw) == 0:
            raise StoreError(missing_library_message(engine.shown))
        if readonly:
            require_current(raw, engine.shown)
        else:
            apply_migrations(raw, now, engine.shown)
        conn = PgConnection(raw, engine.shown, busy_timeout_ms, readonly=readonly,
                            reopen=lambda: connect(engine, autocommit=True))
        conn.give_back = pool
        return conn
    except StoreError:
        release(raw, pool)
        raise
    except Exception as exc:  # a psycopg error while migrating: one line, masked
        release(raw, pool)
        from ..engine import mask

        first = next((line for line in str(exc).splitlines() if line.strip()), type(exc).__name__)
        raise StoreError(f"{engine.shown}: {mask(first)}") from None
