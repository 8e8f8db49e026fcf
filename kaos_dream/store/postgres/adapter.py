"""A PostgreSQL connection with the surface the stores use of ``sqlite3.Connection``.

The stores are written once, against the DB-API surface of ``sqlite3`` (``execute`` with ``?``
parameters, ``lastrowid``, rows read by index or column name, ``in_transaction``, ``BEGIN
IMMEDIATE`` … ``COMMIT`` from :func:`..connect.transaction`). :class:`PgConnection` gives them that
surface over psycopg 3, so the SQL both engines share stays in one place and the differences live
here and in :mod:`.translate`:

* **Writers serialise as on SQLite, except on the hot paths.** ``BEGIN IMMEDIATE`` opens a transaction
  that takes one advisory lock per database (``pg_advisory_xact_lock``), waited for at most the busy
  timeout, so every read-modify-write the stores do inside it sees the same single-writer world as on
  SQLite (counters, lease, merge review). A transaction whose first statement is a hot one
  (:mod:`.hot`: hand-written, reviewed for READ COMMITTED) runs without that lock until a statement
  that is not hot takes it. A write statement outside a transaction is wrapped in one. Reads take no lock.
* **Statements go straight through libpq.** Parameters are bound client-side and the text is sent with
  ``PQexec``; the last result is read with the connection's loaders (``_simple``, ``_take_result``).
* **Values as SQLite returns them.** Parameters are bound client-side (``ClientCursor``), so a
  Python value becomes a literal PostgreSQL types from its context, as SQLite's dynamic typing does;
  ``bool`` is sent as 0/1, ``float`` as ``float8``. ``numeric`` results (``sum`` of integers) come back
  as ``int`` when integral else ``float``, ``boolean`` results as 0/1.
* **Errors as sqlite3's.** Constraint violations raise a subclass of ``sqlite3.IntegrityError``, other
  SQL errors of ``sqlite3.OperationalError``; a lost connection, a lock wait past the budget, a read-only
  session or a server shutdown raise :class:`~kaos_dream.errors.StoreFaultError` with one line that names
  the server (password masked). The transaction is then rolled back: nothing half-written.
* **A lost connection is reopened only between transactions.** When the server restarted (or an admin
  ended the session), the next statement that starts a transaction or reads outside one reconnects
  once and runs again: nothing of it can have happened on the old connection. A connection lost
  *inside* a transaction is never replaced silently: every later statement of that transaction fails
  with the same fault until the caller rolls it back, so its first half cannot be committed alone.
* **Full text.** Writers never see the index: at ``COMMIT`` the connection (re)indexes every skill and
  memory the transaction inserted or edited (:func:`.fulltext.index_entry`), in the same transaction.
  A search's FTS5 subquery is ranked by the server (:func:`.fulltext.ranking_sql`, :mod:`.translate`).
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from ...errors import StoreFaultError
from . import fulltext, hot
from .translate import Catalog, Translation, translate

if TYPE_CHECKING:
    import psycopg

# The advisory lock every writer of one database takes (the schema lock of .migrations is another).
WRITE_LOCK_KEY = int.from_bytes(hashlib.sha256(b"kaos-dream writer").digest()[:8], "big", signed=True)

_WRITES = ("INSERT", "UPDATE", "DELETE", "REPLACE")
_FTS_TABLES = {"skills": "skill", "memories": "memory"}
_CATALOG_SQL = """
SELECT c.table_name, c.column_name, c.is_identity, c.data_type
FROM information_schema.columns AS c
WHERE c.table_schema = current_schema()
ORDER BY c.table_name, c.ordinal_position
"""
_PK_SQL = """
SELECT t.relname, a.attname
FROM pg_index AS i
JOIN pg_class AS t ON t.oid = i.indrelid
JOIN pg_namespace AS n ON n.oid = t.relnamespace
JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k (attnum, position) ON true
JOIN pg_attribute AS a ON a.attrelid = t.oid AND a.attnum = k.attnum
WHERE i.indisprimary AND n.nspname = current_schema()
ORDER BY t.relname, k.position
"""

# SQLSTATE classes and codes, and what each means for a caller.
_LOCK_TIMEOUT = "55P03"
_READ_ONLY = "25006"
_DEADLOCK = "40P01"
_SERIALIZATION = "40001"
_CANCELED = "57014"
_DISK_FULL = "53100"


class PgIntegrityError(sqlite3.IntegrityError):
    """A constraint PostgreSQL enforced (unique, foreign key, check, not null)."""

    sqlstate: str | None = None


class PgOperationalError(sqlite3.OperationalError):
    """Any other error of a statement (SQL, data); the message is the server's first line."""

    sqlstate: str | None = None


def _load_catalog(raw: psycopg.Connection) -> Catalog:
    """Tables, columns, primary keys, and each table's rowid column: its identity column, else a
    single-column integer primary key (numbered by a trigger, as the coordination log's positions)
    — what SQLite's ``lastrowid`` reports."""
    columns: dict[str, list[str]] = {}
    identity: dict[str, str] = {}
    integer: set[tuple[str, str]] = set()
    for table, column, is_identity, data_type in raw.execute(_CATALOG_SQL).fetchall():
        columns.setdefault(table, []).append(column)
        if is_identity == "YES":
            identity[table] = column
        if data_type in ("smallint", "integer", "bigint"):
            integer.add((table, column))
    keys: dict[str, list[str]] = {}
    for table, column in raw.execute(_PK_SQL).fetchall():
        keys.setdefault(table, []).append(column)
    rowid = {t: k[0] for t, k in keys.items() if len(k) == 1 and t not in identity and (t, k[0]) in integer}
    return Catalog({t: tuple(c) for t, c in columns.items()}, {t: tuple(c) for t, c in keys.items()}, identity,
                   rowid)


def _identity_tables(raw: psycopg.Connection) -> frozenset[str]:
    """Tables whose rowid column is an identity column (backed by a sequence to move after imports)."""
    return frozenset(r[0] for r in raw.execute(
        "SELECT table_name FROM information_schema.columns WHERE table_schema = current_schema() "
        "AND is_identity = 'YES'").fetchall())


def _register_types(raw: psycopg.Connection) -> None:
    """numeric → int or float, boolean → 0/1, float parameters as float8, bool parameters as 0/1."""
    from decimal import Decimal

    from psycopg.adapt import Dumper, Loader

    class NumericLoader(Loader):
        def load(self, data: Any) -> int | float:
            value = Decimal(bytes(data).decode("ascii"))
            return int(value) if value == value.to_integral_value() and value.is_finite() else float(value)

    class BoolLoader(Loader):
        def load(self, data: Any) -> int:
            return 1 if bytes(data) == b"t" else 0

    class IntBoolDumper(Dumper):
        oid = 20  # int8

        def dump(self, obj: bool) -> bytes:
            return b"1" if obj else b"0"

        def quote(self, obj: bool) -> bytes:
            return self.dump(obj)

    class Float8Dumper(Dumper):
        oid = 701  # float8

        def dump(self, obj: float) -> bytes:
            return repr(float(obj)).encode("ascii")

        def quote(self, obj: float) -> bytes:
            text = repr(float(obj))
            if text in ("nan", "inf", "-inf"):
                return {"nan": b"'NaN'::float8", "inf": b"'Infinity'::float8", "-inf": b"'-Infinity'::float8"}[text]
            return f"({text}::float8)".encode("ascii")

    raw.adapters.register_loader("numeric", NumericLoader)
    raw.adapters.register_loader("bool", BoolLoader)
    raw.adapters.register_dumper(bool, IntBoolDumper)
    raw.adapters.register_dumper(float, Float8Dumper)


class Row(tuple):  # noqa: SLOT001 - the column names live on the class made per result shape
    """A result row read like ``sqlite3.Row``: by position, or by column name (any case)."""

    _names: tuple[str, ...] = ()
    _index: dict[str, int] = {}  # noqa: RUF012 - replaced per result shape

    def __getitem__(self, key: Any) -> Any:  # type: ignore[override]
        if isinstance(key, str):
            try:
                return tuple.__getitem__(self, self._index[key.lower()])
            except KeyError:
                raise IndexError(f"No item with that key: {key!r}") from None
        return tuple.__getitem__(self, key)

    def keys(self) -> list[str]:
        return list(self._names)


_ROW_CLASSES: dict[tuple[str, ...], type[Row]] = {}


def _row_class(names: tuple[str, ...]) -> type[Row]:
    cls = _ROW_CLASSES.get(names)
    if cls is None:
        index: dict[str, int] = {}
        for n, name in enumerate(names):
            index.setdefault(name.lower(), n)
        cls = _ROW_CLASSES[names] = type("Row", (Row,), {"_names": names, "_index": index})
    return cls


class PgCursor:
    """The part of ``sqlite3.Cursor`` the stores use; rows are fetched from psycopg on demand."""

    def __init__(self, connection: PgConnection) -> None:
        self.connection = connection
        self.row_factory: Any = connection.row_factory
        self.lastrowid: int | None = None
        self.rowcount = -1
        self.description: Any = None
        self.inserted_ids: list[int] | None = None
        self._rows: Iterator[tuple[Any, ...]] = iter(())
        self._shape: type[Row] | None = None

    def _take(self, cursor: Any, returning: str | None) -> None:
        self.rowcount = cursor.rowcount
        if returning is not None:
            row = cursor.fetchone() if cursor.description else None
            self.lastrowid = int(row[0]) if row is not None else None
            self.description = None
            self._rows = iter(())
            return
        self.description = cursor.description
        if cursor.description:
            self._shape = _row_class(tuple(d.name for d in cursor.description))
            self._rows = iter(cursor.fetchall())
        else:
            self._rows = iter(())

    def _wrap(self, row: tuple[Any, ...]) -> Any:
        if self.row_factory is None or self._shape is None:
            return row
        return self._shape(row)

    def execute(self, sql: str, params: Any = ()) -> PgCursor:
        self.connection._execute(self, sql, params)
        return self

    def executemany(self, sql: str, seq: Iterable[Any]) -> PgCursor:
        self.connection._executemany(self, sql, seq)
        return self

    def fetchone(self) -> Any:
        row = next(self._rows, None)
        return None if row is None else self._wrap(row)

    def fetchall(self) -> list[Any]:
        return [self._wrap(r) for r in self._rows]

    def fetchmany(self, size: int = 1) -> list[Any]:
        out = []
        for _ in range(size):
            row = next(self._rows, None)
            if row is None:
                break
            out.append(self._wrap(row))
        return out

    def __iter__(self) -> Iterator[Any]:
        for row in self._rows:
            yield self._wrap(row)

    def close(self) -> None:
        self._rows = iter(())


_PLACEHOLDER = re.compile(r"%\((\w+)\)s")
_TEMPLATES: dict[str, list[str] | None] = {}


def _template(text: str) -> list[str] | None:
    """``text`` split at its ``%(name)s`` placeholders: [text, name, text, name, …, text]; None when it
    holds any other ``%`` (left to psycopg)."""
    found = _TEMPLATES.get(text, ...)
    if found is ...:
        parts = _PLACEHOLDER.split(text)
        found = None if any("%" in part for part in parts[::2]) else parts
        if len(_TEMPLATES) > 1024:
            _TEMPLATES.clear()
        _TEMPLATES[text] = found
    return found


def _literal(value: Any) -> str:
    """A SQL literal for the types the hot statements bind, as psycopg's client-side binding (with this
    module's dumpers) would write it; TypeError for any other type."""
    kind = type(value)
    if value is None:
        return "NULL"
    if kind is str:
        if "\x00" in value:
            raise TypeError("NUL in a string: psycopg reports it")
        return "'" + value.replace("'", "''") + "'"
    if kind is bool:
        return "1" if value else "0"
    if kind is int:
        return str(value) if value >= 0 else f"({value})"
    if kind is float:
        text = repr(value)
        if text in ("nan", "inf", "-inf"):
            return {"nan": "'NaN'::float8", "inf": "'Infinity'::float8", "-inf": "'-Infinity'::float8"}[text]
        return f"({text}::float8)"
    raise TypeError(kind.__name__)


def _as_text(data: bytes) -> str:
    return bytes(data).decode("utf-8")


def _positional(params: Any) -> dict[str, Any]:
    """Parameters as the hand-written statements name them: ``p1, p2, …`` (or the caller's names)."""
    if params is None:
        return {}
    if isinstance(params, Mapping):
        return dict(params)
    return {f"p{n}": v for n, v in enumerate(params, start=1)}


class PgConnection:
    """A psycopg connection (autocommit; transactions are explicit) behind the sqlite3 surface."""

    engine = "postgresql"

    def __init__(self, raw: psycopg.Connection, shown: str, busy_timeout_ms: int, readonly: bool = False,
                 reopen: Callable[[], psycopg.Connection] | None = None) -> None:
        self.raw = raw
        self.kaos_path = shown  # the URL with its password masked: every message uses this
        self.kaos_busy_timeout_ms: int | None = None  # SQLite's retry loop does not apply here
        self.busy_timeout_ms = int(busy_timeout_ms)
        self.readonly = readonly
        self.row_factory: Any = Row
        self.total_changes = 0
        self._translations: dict[tuple[str, bool], Translation] = {}
        self._dirty: dict[str, set[int] | None] = {}  # kind -> edited ids (None: look at every entry)
        self._explicit: set[str] = set()  # tables given explicit identity values in this transaction
        self._in_tx = False
        self._begun = False  # BEGIN has reached the server
        self._write_tx = False  # the open transaction began as a write (BEGIN IMMEDIATE)
        self._locked = False  # ... and holds (or has asked for) the database-wide write lock
        self._decided = False  # ... and its first statement decided whether it needs that lock
        # Write transactions that ran without the database-wide lock / took it (at BEGIN or lazily).
        self.lock_stats = {"lock_free": 0, "locked": 0}
        self._prefix: list[str] = []
        self._lost: StoreFaultError | None = None  # the fault that ended the open transaction's connection
        self._reopen = reopen
        self._closed = False
        self._mogrifier: Any = None  # a ClientCursor that binds the fast lane's parameters
        self.give_back: Any = None  # the pool ``raw`` came from (set by open_postgres), if any
        self._pooled = raw  # a reconnected ``raw`` is this connection's own: closed, not given back
        self._loaders: dict[int, Callable[[bytes], Any]] = {}
        self._configure(raw)
        self.catalog = _load_catalog(raw)
        self._sequences = _identity_tables(raw)

    def _configure(self, raw: psycopg.Connection) -> None:
        """The session settings every connection of this library has (set again after a reconnect)."""
        # No server-side prepared statements: a generic plan for a full-text match (a tsquery parameter)
        # cannot use the GIN index's selectivity and was ~100x slower than the planned-per-query one.
        raw.prepare_threshold = None
        _register_types(raw)
        raw.execute("SET lock_timeout = %s" % int(self.busy_timeout_ms))  # noqa: UP031 - an int
        if self.readonly:
            raw.execute("SET default_transaction_read_only = on")

    # -- the sqlite3 surface ------------------------------------------------------------------------
    @property
    def in_transaction(self) -> bool:
        return self._in_tx

    def cursor(self) -> PgCursor:
        return PgCursor(self)

    def execute(self, sql: str, params: Any = ()) -> PgCursor:
        return self.cursor().execute(sql, params)

    def executemany(self, sql: str, seq: Iterable[Any]) -> PgCursor:
        return self.cursor().executemany(sql, seq)

    def commit(self) -> None:
        if self._in_tx:
            self._commit()

    def rollback(self) -> None:
        if self._in_tx:
            self._rollback()

    def close(self) -> None:
        """Close the connection, or hand it back to the process's pool (:mod:`.pool`) it came from."""
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(Exception):
            if self._in_tx:
                self._rollback()
            from .pool import release

            release(self.raw, self.give_back if self.raw is self._pooled else None)

    def create_function(self, name: str, *args: Any, **kwargs: Any) -> None:
        """SQLite user functions are Python; PostgreSQL already has the ones the stores ask for."""
        if name.lower() not in ("pow", "power", "sqrt", "exp", "ln", "log"):
            raise PgOperationalError(f"no PostgreSQL function {name!r}")

    def native(self, sql: str | bytes, params: Any = None) -> Any:
        """A statement in PostgreSQL's own dialect (catalogue reads, ``COLLATE "C"``), not translated;
        errors as every other statement's. Returns the psycopg cursor, in the current transaction."""
        self._need_lock(None)
        if self._prefix and params is None:  # a waiting BEGIN (and lock) travels with it, first
            text = sql.decode("utf-8") if isinstance(sql, bytes) else sql
            cursor = self._call(self.raw.execute, self._take_prefix(text).encode("utf-8"))
            while cursor.nextset():
                pass
            return cursor
        self._send_prefix()
        return self._call(self.raw.execute, sql, params)

    def refresh_catalog(self) -> None:
        """Re-read tables and keys (after a migration ran on this connection)."""
        self.catalog = _load_catalog(self.raw)
        self._sequences = _identity_tables(self.raw)
        self._translations.clear()

    # -- transactions -------------------------------------------------------------------------------
    # Control statements without parameters (BEGIN, the write lock, SAVEPOINT, RELEASE) are not sent
    # on their own: they wait in ``_prefix`` and travel with the next statement in one round trip
    # (client-side binding sends several statements at once), so a one-statement write transaction
    # costs two round trips (BEGIN + lock + statement, then COMMIT) instead of four.
    def _begin(self, write: bool) -> None:
        self._revive()
        self._in_tx = True
        self._begun = False
        self._write_tx = write
        self._locked = self._decided = False
        self._prefix = ["BEGIN"]  # the write lock, when needed, is added by _need_lock before a statement

    def _need_lock(self, fast: hot.Hot | None) -> None:
        """Before a statement of a write transaction: take the database-wide write lock unless the
        transaction is one of the hot, MVCC-safe kinds (:mod:`.hot`). The first statement decides: a
        hot statement that ``opens`` starts a lock-free transaction; anything else takes the lock at
        once, in the same round trip as BEGIN. In a lock-free transaction the first statement that is
        not hot takes the lock before it runs (every later statement then sees every earlier writer)."""
        if not self._write_tx or self._locked or not self._in_tx:
            return
        if not self._decided:
            self._decided = True
            if fast is not None and fast.opens:
                self.lock_stats["lock_free"] += 1
                return
        elif fast is not None:
            return
        else:
            self.lock_stats["lock_free"] -= 1
        self.lock_stats["locked"] += 1
        self._locked = True
        # Before a savepoint still waiting to be sent: a lock taken inside one is released with it.
        at = next((n for n, s in enumerate(self._prefix) if s.startswith("SAVEPOINT")), len(self._prefix))
        self._prefix.insert(at, f"SELECT pg_advisory_xact_lock({WRITE_LOCK_KEY})")

    def _take_prefix(self, sql: str) -> str:
        if not self._prefix:
            return sql
        joined = "; ".join([*self._prefix, sql])
        if self._prefix[0] == "BEGIN":
            self._begun = True
        self._prefix = []
        return joined

    def sync(self) -> None:
        """Send the waiting BEGIN (and lock, savepoint) now: before code uses :attr:`raw` directly
        inside this connection's transaction, so its statements run in that transaction."""
        self._need_lock(None)
        self._send_prefix()

    def _send_prefix(self) -> None:
        """Send what waits in the prefix now (before a statement that cannot carry it)."""
        if self._prefix:
            self._simple(self._take_prefix("SELECT 1"))

    def _commit(self) -> None:
        try:
            if self._lost is not None:
                raise self._lost
            if self._dirty or self._explicit:  # statements were sent, so BEGIN was too
                self._need_lock(None)
                self._send_prefix()
                self._flush_fulltext()
                self._advance_identities()
            if self._begun:
                try:
                    self._simple(self._take_prefix("COMMIT"))
                except StoreFaultError as fault:
                    if getattr(fault, "lost_connection", False):  # the server may have committed before the reply
                        fault = self._fault(f"{self.kaos_path}: lost the connection to the PostgreSQL server while "
                                            "committing; the transaction may or may not have been committed", "io")
                    raise fault from None
        except BaseException:
            self._rollback()
            raise
        finally:
            self._in_tx = self._write_tx = False
            self._prefix = []
            self._dirty.clear()
            self._explicit.clear()

    def _rollback(self) -> None:
        begun = self._begun
        self._in_tx = self._begun = self._write_tx = False
        self._prefix = []
        self._lost = None
        self._dirty.clear()
        self._explicit.clear()
        if begun:
            with contextlib.suppress(Exception):
                self.raw.execute("ROLLBACK")

    @contextlib.contextmanager
    def savepoint(self) -> Iterator[None]:
        """A statement that may fail without ending the transaction (SQLite rolls back only the
        statement; PostgreSQL aborts the whole transaction unless it sits in a savepoint)."""
        if not self._in_tx:
            yield
            return
        self._prefix.append("SAVEPOINT kaos_statement")
        locked_before = self._locked
        try:
            yield
        except StoreFaultError:
            raise  # the connection or the lock failed: the transaction is over, not just the statement
        except sqlite3.Error:
            if "SAVEPOINT kaos_statement" in self._prefix:  # the statement never reached the server
                self._prefix.remove("SAVEPOINT kaos_statement")
            elif self._lost is not None:  # the connection is gone: there is no savepoint to return to
                raise
            else:
                self._call(self.raw.execute, "ROLLBACK TO SAVEPOINT kaos_statement")
                if self._locked and not locked_before:  # the lock went with the savepoint's subtransaction
                    self._locked = False
            raise
        if self._prefix and self._prefix[-1] == "SAVEPOINT kaos_statement":
            self._prefix.pop()  # nothing was sent inside it
        else:
            self._prefix.append("RELEASE SAVEPOINT kaos_statement")

    # -- statements ---------------------------------------------------------------------------------
    def _control(self, sql: str) -> bool:
        """Handle BEGIN / COMMIT / ROLLBACK; True when ``sql`` was one."""
        head = sql.strip().rstrip(";").upper()
        if head in ("BEGIN IMMEDIATE", "BEGIN EXCLUSIVE"):
            self._begin(write=True)
        elif head in ("BEGIN", "BEGIN DEFERRED", "BEGIN TRANSACTION"):
            self._begin(write=False)
        elif head in ("COMMIT", "END", "COMMIT TRANSACTION"):
            self._commit()
        elif head in ("ROLLBACK", "ROLLBACK TRANSACTION"):
            self._rollback()
        else:
            return False
        return True

    def _translated(self, sql: str, many: bool) -> Translation:
        key = (sql, many)
        found = self._translations.get(key)
        if found is None:
            try:
                found = translate(sql, self.catalog, many=many)
            except ValueError as exc:
                raise PgOperationalError(f"{exc} (statement: {sql.strip()[:200]})") from None
            if len(self._translations) > 4096:
                self._translations.clear()
            self._translations[key] = found
        return found

    def _bind(self, t: Translation, params: Any) -> dict[str, Any]:
        if params is None or (not isinstance(params, Mapping) and len(params) == 0):
            bound: dict[str, Any] = {}
        elif isinstance(params, Mapping):
            bound = dict(params)
        else:
            bound = {f"p{n}": v for n, v in enumerate(params, start=1)}
        for name in t.limits:
            value = bound.get(name)
            if isinstance(value, int) and value < 0:
                bound[name] = None  # LIMIT NULL: no limit, as SQLite's LIMIT -1
        for match in t.fulltext:
            bound.update(fulltext.ranking_params(str(bound[match.match]), match.slot))
        return bound

    def _pragma(self, cursor: PgCursor, sql: str) -> bool:
        """The PRAGMAs the shared code issues, in PostgreSQL's terms; True when ``sql`` was one.

        ``user_version`` is the applied migration; ``data_version`` only matters inside a write
        transaction, where no other writer can commit (the write lock), so it is constant; foreign
        keys are always enforced at write, so ``foreign_key_check`` finds nothing; the file-level
        ones (journal, checkpoint, sync, cache, busy timeout) have no meaning on a server."""
        head = " ".join(sql.strip().rstrip(";").split()).lower()
        if not head.startswith("pragma "):
            return False
        name = head[len("pragma "):].split("=")[0].split("(")[0].strip()
        rows: list[tuple[Any, ...]]
        if name == "user_version" and "=" not in head:
            rows = [(int(self._call(self.raw.execute, "SELECT coalesce(max(version), 0) FROM schema_migrations")
                         .fetchone()[0]),)]
            names: tuple[str, ...] = ("user_version",)
        elif name == "data_version":
            rows, names = [(1,)], ("data_version",)
        elif name in ("foreign_key_check", "wal_checkpoint", "journal_mode", "synchronous", "cache_size",
                      "busy_timeout", "foreign_keys", "optimize"):
            rows, names = [], (name,)
        else:
            raise PgOperationalError(f"PRAGMA {name} has no PostgreSQL meaning")
        cursor._shape = _row_class(names)
        cursor._rows = iter(rows)
        cursor.description = None
        return True

    def _execute(self, cursor: PgCursor, sql: str, params: Any) -> None:
        if self._control(sql):
            return
        self._check_open_transaction()
        if self._in_tx or self._writes(sql):  # a write outside a transaction retries only its BEGIN
            self._statement(cursor, sql, params)
            return
        self._revive()
        try:
            self._statement(cursor, sql, params)
        except StoreFaultError as fault:  # a read outside a transaction: running it again changes nothing
            if not self._reconnect_after(fault):
                raise
            self._statement(cursor, sql, params)

    def _writes(self, sql: str) -> bool:
        fast = hot.lookup(sql)
        if fast is not None:
            return fast.verb in _WRITES
        if sql.lstrip()[:6].lower() == "pragma":
            return False
        return self._translated(sql, many=False).verb in _WRITES

    def _statement(self, cursor: PgCursor, sql: str, params: Any) -> None:
        fast = hot.lookup(sql)
        if fast is not None:
            self._hot_statement(cursor, fast, params)
            return
        if self._pragma(cursor, sql):
            return
        t = self._translated(sql, many=False)
        with self._own_transaction(t):
            self._need_lock(None)
            bound = self._bind(t, params)
            if t.explicit_identity:
                self._explicit.add(t.table or "")
            sql_out = t.sql
            track = t.table in _FTS_TABLES and t.verb in ("INSERT", "UPDATE")
            edit = track and t.verb == "UPDATE" and "RETURNING" not in sql_out.upper()
            if edit:
                sql_out += " RETURNING id"  # which entries lost their index row (see _flush_fulltext)
            starts = bool(self._prefix) and self._prefix[0] == "BEGIN"
            text = self._take_prefix(sql_out)
            result = self._simple(self._mogrify(text, bound) if bound else text.replace("%%", "%"), starts=starts)
            changed = result.command_tuples or 0
            if edit:
                self._mark(_FTS_TABLES[t.table or ""], {int(result.get_value(r, 0)) for r in range(result.ntuples)})
                cursor.rowcount = changed
            else:
                self._take_result(cursor, result, t.returning)
                if track:
                    rowid = cursor.lastrowid
                    self._mark(_FTS_TABLES[t.table or ""], {rowid} if rowid is not None and t.returning else None)
            if t.verb in _WRITES and changed > 0:
                self.total_changes += changed

    def _hot_statement(self, cursor: PgCursor, fast: hot.Hot, params: Any) -> None:
        """A hot statement in its hand-written form: no translation, no full-text bookkeeping (none of
        them writes skills or memories), the guard first when inside a write transaction."""
        own = fast.verb in _WRITES and not self._in_tx
        if own:
            self._begin(write=True)
        try:
            self._need_lock(fast)
            bound = _positional(params)
            text = fast.sql
            if fast.guard is not None and self._write_tx:
                text = f"{fast.guard}; {text}"
            if fast.returning is not None:
                text += f" RETURNING {fast.returning}"
            starts = bool(self._prefix) and self._prefix[0] == "BEGIN"
            text = self._take_prefix(text)
            if bound:
                text = self._mogrify(text, bound)
            result = self._simple(text, starts=starts)
            self._take_result(cursor, result, fast.returning)
            if fast.verb in _WRITES and cursor.rowcount > 0:
                self.total_changes += cursor.rowcount
        except BaseException:
            if own:
                self._rollback()
            raise
        if own:
            self._commit()

    # -- the fast lane: hot statements and transaction control straight through libpq ----------------
    # psycopg's cursor machinery costs ~50 us of client CPU per round trip; the statement text bound
    # client-side (as every statement here is) and sent with libpq's PQexec costs ~10 us. The last
    # result of the text is read back with the connection's own loaders (so types are as elsewhere).
    def _mogrify(self, text: str, bound: dict[str, Any]) -> str:
        """``text`` with its ``%(name)s`` parameters as literals: the common types by :func:`_literal`
        (strings need ``standard_conforming_strings``, on since PostgreSQL 9.1 and checked per
        connection), anything else by psycopg's own client-side binding."""
        if self._plain_strings():
            parts = _template(text)
            if parts is not None:
                out = [parts[0]]
                try:
                    for n in range(1, len(parts), 2):
                        out.append(_literal(bound[parts[n]]))
                        out.append(parts[n + 1])
                    return "".join(out)
                except (KeyError, TypeError):
                    pass  # a type _literal leaves to psycopg, or a missing name psycopg reports
        if self._mogrifier is None or self._mogrifier.connection is not self.raw:
            from psycopg import ClientCursor

            self._mogrifier = ClientCursor(self.raw)
        return self._call(self._mogrifier.mogrify, text.encode("utf-8"), bound)

    def _simple(self, text: str, *, starts: bool = False) -> Any:
        """Send ``text`` (perhaps several statements); the last result, or the error as elsewhere. When
        it carries its transaction's BEGIN (``starts``), a connection found lost is replaced and the
        text sent once more (nothing of the transaction can have reached the old one)."""
        try:
            return self._call(self._exec, text.encode("utf-8"))
        except StoreFaultError as fault:
            if not (starts and getattr(fault, "lost_connection", False) and self._reopen is not None
                    and not self._closed):
                raise
            self._lost = None
            self._reconnect(fault)
            return self._call(self._exec, text.encode("utf-8"))

    def _plain_strings(self) -> bool:
        pgconn = self.raw.pgconn
        return (pgconn.parameter_status(b"standard_conforming_strings") == b"on"
                and pgconn.parameter_status(b"client_encoding") == b"UTF8")

    def _exec(self, command: bytes) -> Any:
        import psycopg
        from psycopg import pq

        result = self.raw.pgconn.exec_(command)
        if result.status == pq.ExecStatus.FATAL_ERROR:
            if self.raw.pgconn.status == pq.ConnStatus.BAD:
                message = (result.error_message or b"").decode("utf-8", "replace") or "server closed the connection"
                raise psycopg.OperationalError(message)
            raise psycopg.errors.error_from_result(result, encoding="utf-8")
        return result

    def _take_result(self, cursor: PgCursor, result: Any, returning: str | None) -> None:
        from psycopg import pq

        tuples = result.command_tuples
        cursor.rowcount = tuples if tuples is not None else -1
        cursor.description = None
        if result.status != pq.ExecStatus.TUPLES_OK:
            cursor._rows = iter(())
            return
        width, height = result.nfields, result.ntuples
        names = tuple((result.fname(c) or b"").decode("utf-8") for c in range(width))
        cursor.description = tuple((name, None, None, None, None, None, None) for name in names)  # as sqlite3's
        loaders = [self._loader(result.ftype(c)) for c in range(width)] if height else []
        rows = []
        for r in range(height):
            row = []
            for c in range(width):
                value = result.get_value(r, c)
                row.append(None if value is None else loaders[c](value))
            rows.append(tuple(row))
        if returning is not None:
            cursor.lastrowid = int(rows[0][0]) if rows else None
            cursor.description = None
            cursor._rows = iter(())
            return
        cursor._shape = _row_class(names)
        cursor._rows = iter(rows)

    def _loader(self, oid: int) -> Callable[[bytes], Any]:
        found = self._loaders.get(oid)
        if found is None:
            from psycopg import pq

            loader = self.raw.adapters.get_loader(oid, pq.Format.TEXT)
            found = loader(oid, self.raw).load if loader is not None else _as_text  # a type psycopg does not know
            self._loaders[oid] = found
        return found

    def _run(self, sql: str, bound: dict[str, Any], *, starts: bool = False) -> Any:
        """Send ``sql`` (perhaps several statements) and leave the cursor on its last result. When it
        carries its transaction's BEGIN (``starts``), nothing of the transaction had reached the server
        yet, so a connection found lost is replaced and the whole text sent once more."""
        try:
            raw_cursor = self._call(self._client_cursor().execute, sql.encode("utf-8"), bound)
        except StoreFaultError as fault:
            if not (starts and getattr(fault, "lost_connection", False) and self._reopen is not None
                    and not self._closed):
                raise
            self._lost = None
            self._reconnect(fault)
            raw_cursor = self._call(self._client_cursor().execute, sql.encode("utf-8"), bound)
        while raw_cursor.nextset():
            pass
        return raw_cursor

    def _mark(self, kind: str, ids: set[int] | None) -> None:
        if kind in self._dirty and self._dirty[kind] is None:
            return
        if ids is None:
            self._dirty[kind] = None
        else:
            self._dirty.setdefault(kind, set()).update(ids)  # type: ignore[union-attr]

    def _executemany(self, cursor: PgCursor, sql: str, seq: Iterable[Any]) -> None:
        self._check_open_transaction()
        fast = hot.lookup(sql)
        if fast is not None and fast.guard is None:
            self._hot_many(cursor, fast, seq)
            return
        t = self._translated(sql, many=True)
        rows = list(seq)
        if not rows:
            cursor.rowcount = 0
            return
        with self._own_transaction(t):
            self._need_lock(None)
            bound = [self._bind(t, r) for r in rows]
            if t.explicit_identity:
                self._explicit.add(t.table or "")
            sql_out = t.sql
            want_ids = (t.verb == "INSERT" and t.table in self.catalog.identity and not t.explicit_identity
                        and "RETURNING" not in sql_out.upper())
            if want_ids:
                sql_out += f" RETURNING {self.catalog.identity[t.table or '']}"
            self._send_prefix()
            raw_cursor = self._client_cursor()
            self._call(raw_cursor.executemany, sql_out.encode("utf-8"), bound, returning=want_ids)
            ids: list[int] = []
            if want_ids:
                while True:
                    row = raw_cursor.fetchone() if raw_cursor.description else None
                    if row is not None:
                        ids.append(int(row[0]))
                    if not raw_cursor.nextset():
                        break
                cursor.inserted_ids = ids
                cursor.lastrowid = ids[-1] if ids else None
            cursor.rowcount = len(rows)
            if t.table in _FTS_TABLES and t.verb in ("INSERT", "UPDATE"):
                self._mark(_FTS_TABLES[t.table or ""], set(ids) if want_ids and t.verb == "INSERT" else None)
            if t.verb in _WRITES:
                self.total_changes += len(rows)

    def _hot_many(self, cursor: PgCursor, fast: hot.Hot, seq: Iterable[Any]) -> None:
        """A hot statement for many rows (search hits): one pipelined ``executemany``, no ids returned."""
        rows = [_positional(r) for r in seq]
        cursor.rowcount = len(rows)
        if not rows:
            return
        own = fast.verb in _WRITES and not self._in_tx
        if own:
            self._begin(write=True)
        try:
            self._need_lock(fast)
            self._send_prefix()
            self._call(self._client_cursor().executemany, fast.sql.encode("utf-8"), rows)
            if fast.verb in _WRITES:
                self.total_changes += len(rows)
        except BaseException:
            if own:
                self._rollback()
            raise
        if own:
            self._commit()

    @contextlib.contextmanager
    def _own_transaction(self, t: Translation) -> Iterator[None]:
        """A write outside a transaction gets one of its own (as SQLite's autocommit takes the write
        lock): begun before it, committed after it, rolled back when it fails."""
        if t.verb not in _WRITES or self._in_tx:
            yield
            return
        self._begin(write=True)
        try:
            yield
        except BaseException:
            self._rollback()
            raise
        self._commit()

    def _client_cursor(self) -> Any:
        from psycopg import ClientCursor

        return ClientCursor(self.raw)

    def _advance_identities(self) -> None:
        """After rows were inserted with explicit ids (imports, copies), move each identity sequence past
        the largest id, so the next row without one gets max + 1 as SQLite gives it, not a duplicate."""
        for table in sorted(self._explicit):
            column = self.catalog.identity[table]
            if table not in self._sequences:
                continue
            self._call(self.raw.execute,
                       f"SELECT setval(pg_get_serial_sequence(%s, %s), coalesce(max({column}), 0) + 1, false) "
                       f"FROM {table}",
                       (table, column))

    def flush_fulltext(self) -> None:
        """Index now, in the open transaction, what it wrote so far (a migration inside an import
        needs it: see :func:`.transfer.migrate_inside`)."""
        self._flush_fulltext()

    def _flush_fulltext(self) -> None:
        """Index, in the committing transaction, every skill or memory written without an index row."""
        for kind, ids in sorted(self._dirty.items(), key=lambda item: item[0]):
            table = fulltext.KINDS[kind][3]
            fts = fulltext.KINDS[kind][0]
            cols = ", ".join(fulltext.sources(kind, self.catalog.columns.get(table, ())))
            sql = (f"SELECT e.id, {cols} FROM {table} AS e WHERE NOT EXISTS "
                   f"(SELECT 1 FROM {fts} AS f WHERE f.id = e.id)")
            params: tuple[Any, ...] = ()
            if ids is not None:
                if not ids:
                    continue
                sql += " AND e.id = ANY(%s)"
                params = (sorted(ids),)
            sql += " ORDER BY e.id"
            for row in self._call(self.raw.execute, sql, params).fetchall():
                self._call(fulltext.index_entry, self.raw, kind, int(row[0]), list(row[1:]))

    # -- lost connections ---------------------------------------------------------------------------
    def _check_open_transaction(self) -> None:
        """Inside a transaction whose connection was lost, every statement fails until the rollback."""
        if self._in_tx and self._lost is not None:
            raise self._lost

    def _revive(self) -> None:
        """Between transactions, replace a connection already known to be broken."""
        if not self._in_tx and self.raw.broken and self._reopen is not None and not self._closed:
            self._reconnect(None)

    def _reconnect_after(self, fault: StoreFaultError) -> bool:
        """After ``fault`` outside a transaction: True when it was a lost connection, now reopened."""
        if self._in_tx or not getattr(fault, "lost_connection", False) or self._reopen is None or self._closed:
            return False
        self._reconnect(fault)
        return True

    def _reconnect(self, fault: StoreFaultError | None) -> None:
        from ..engine import mask

        with contextlib.suppress(Exception):
            self.raw.close()
        assert self._reopen is not None
        try:
            raw = self._reopen()
            self._configure(raw)
        except Exception as exc:  # the server is still down, or refuses us now: one line, masked
            first = next((line.strip() for line in str(exc).splitlines() if line.strip()), type(exc).__name__)
            raise self._fault(f"{self.kaos_path}: lost the connection to the PostgreSQL server and could not "
                              f"reconnect ({mask(first)}); nothing was written", "io", lost=True) from None
        self.raw = raw
        self._loaders.clear()

    # -- errors -------------------------------------------------------------------------------------
    def _call(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        import psycopg

        try:
            return fn(*args, **kwargs)
        except psycopg.Error as exc:
            raise self._describe(exc) from None

    @staticmethod
    def _fault(message: str, kind: str, lost: bool = False) -> StoreFaultError:
        fault = StoreFaultError(message)
        fault.kind = kind
        fault.lost_connection = lost  # type: ignore[attr-defined]
        return fault

    def _describe(self, exc: Exception) -> Exception:
        import psycopg

        state = getattr(exc, "sqlstate", None) or ""
        first = next((line.strip() for line in str(exc).splitlines() if line.strip()), type(exc).__name__)
        lost = isinstance(exc, psycopg.OperationalError) and (self.raw.closed or self.raw.broken)
        if lost or state.startswith("08") or state in ("57P01", "57P02", "57P03"):
            fault = self._fault(f"{self.kaos_path}: lost the connection to the PostgreSQL server ({first}); "
                                "the operation's transaction was rolled back, nothing of it was written", "io",
                                lost=True)
            if self._in_tx:
                self._lost = fault
            return fault
        if state == _LOCK_TIMEOUT:
            fault = StoreFaultError(f"{self.kaos_path} is locked by another writer beyond the busy timeout; "
                                    "try again (or raise KAOS_BUSY_TIMEOUT_MS)")
            fault.kind = "locked"
            return fault
        if state == _READ_ONLY:
            fault = StoreFaultError(f"{self.kaos_path} is open read-only: cannot write to it")
            fault.kind = "readonly"
            return fault
        if state == "42501":
            fault = StoreFaultError(f"{self.kaos_path}: permission denied ({first})")
            fault.kind = "readonly"
            return fault
        if state == _CANCELED:  # statement_timeout (or an admin's pg_cancel_backend)
            fault = StoreFaultError(f"{self.kaos_path}: the server cancelled the statement ({first}); the "
                                    "transaction was rolled back, nothing of it was written; try again")
            fault.kind = "locked"
            return fault
        if state == _DISK_FULL or state.startswith("53"):
            fault = StoreFaultError(f"{self.kaos_path}: the server is out of resources ({first}); the transaction "
                                    "was rolled back, nothing of it was written")
            fault.kind = "full"
            return fault
        if state in (_DEADLOCK, _SERIALIZATION):
            fault = StoreFaultError(f"{self.kaos_path}: the server aborted the transaction ({first}); try again")
            fault.kind = "locked"
            return fault
        if state.startswith("23"):
            err: sqlite3.Error = PgIntegrityError(first)
        else:
            err = PgOperationalError(first)
        err.sqlstate = state  # type: ignore[attr-defined]
        return err
