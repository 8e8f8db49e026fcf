"""What export, import and copy need to know of a library's tables, answered for either engine.

An export must come out byte for byte the same from a SQLite file and from its PostgreSQL copy, so
both engines answer the same questions the same way: which tables hold library data (not SQLite's
own tables, not the full-text index, which each engine derives: FTS5's virtual and shadow tables,
PostgreSQL's ``fulltext.POSTGRES_ONLY_TABLES``), their columns in declaration order, and an ORDER BY
that sorts rows identically. SQLite compares text with memcmp (BINARY) and sorts NULL first;
PostgreSQL sorts text by the database's collation and NULL last, so its ORDER BY names
``COLLATE "C"`` (byte order, whatever the database's locale) and ``NULLS FIRST``.

An import also needs to know the order tables can be filled in (PostgreSQL checks each foreign key
at the insert, see :func:`load_order`), which tables triggers write into (loaded last, from the
export's own rows) and how the full-text index is rebuilt.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from .dialect import is_postgres

# A trigger body that writes a table: INSERT [OR x] INTO t, or UPDATE t [AS a] SET.
_TRIGGER_WRITE = re.compile(
    r"\bINSERT\s+(?:OR\s+\w+\s+)?INTO\s+([A-Za-z_]\w*)|\bUPDATE\s+([A-Za-z_]\w*)(?:\s+AS\s+\w+)?\s+SET\b",
    re.IGNORECASE,
)


# Columns that say how a row is stored, not what it holds: never exported, and a loaded row takes the
# column's default (migration 18: whether the row is in the per-agent index yet).
STORAGE_COLUMNS = frozenset({("skill_uses", "agent_indexed")})


@dataclass(frozen=True)
class TableSpec:
    """A data table: its columns in declaration order and the ORDER BY that lists its rows in key order."""

    name: str
    columns: tuple[str, ...]
    order_by: str


# -- SQLite -----------------------------------------------------------------------------------------

def _sqlite_virtual_tables(conn: Any) -> list[str]:
    return [
        r[0]
        for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%' ORDER BY name"
        )
    ]


def _sqlite_tables(conn: Any) -> list[TableSpec]:
    virtual = _sqlite_virtual_tables(conn)
    specs: list[TableSpec] = []
    for (name,) in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
    ):
        if name in virtual or any(name.startswith(v + "_") for v in virtual):
            continue
        info = conn.execute(f'PRAGMA table_info("{name}")').fetchall()
        columns = tuple(str(r[1]) for r in info if (name, str(r[1])) not in STORAGE_COLUMNS)
        pk = [c for _, c in sorted((int(r[5]), str(r[1])) for r in info if int(r[5]) > 0)]
        rowid_alias = len(pk) == 1 and next(str(r[2]) for r in info if str(r[1]) == pk[0]).upper() == "INTEGER"
        order = ", ".join(f'"{c}"' for c in pk) if pk else "rowid"
        if pk and not rowid_alias:
            # A text or composite key: make the order total even if the key had duplicates.
            order += ", " + ", ".join(f'"{c}"' for c in columns)
        specs.append(TableSpec(name, columns, order))
    return specs


def _sqlite_foreign_keys(conn: Any, table: str) -> set[str]:
    return {str(r[2]) for r in conn.execute(f'PRAGMA foreign_key_list("{table}")')}


def _sqlite_trigger_sources(conn: Any) -> list[str]:
    return [str(r[0] or "") for r in conn.execute("SELECT sql FROM sqlite_master WHERE type = 'trigger'")]


# -- PostgreSQL -------------------------------------------------------------------------------------

_PG_COLUMNS = """
SELECT c.relname, a.attname, t.typname, a.attnotnull
FROM pg_catalog.pg_class AS c
JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace
JOIN pg_catalog.pg_attribute AS a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
JOIN pg_catalog.pg_type AS t ON t.oid = a.atttypid
WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')
ORDER BY c.relname, a.attnum
"""
_PG_KEYS = """
SELECT c.relname, a.attname
FROM pg_catalog.pg_index AS i
JOIN pg_catalog.pg_class AS c ON c.oid = i.indrelid
JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace
JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k (attnum, position) ON true
JOIN pg_catalog.pg_attribute AS a ON a.attrelid = c.oid AND a.attnum = k.attnum
WHERE i.indisprimary AND n.nspname = current_schema()
ORDER BY c.relname, k.position
"""
_PG_FOREIGN_KEYS = """
SELECT c.relname, p.relname
FROM pg_catalog.pg_constraint AS f
JOIN pg_catalog.pg_class AS c ON c.oid = f.conrelid
JOIN pg_catalog.pg_class AS p ON p.oid = f.confrelid
JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace
WHERE f.contype = 'f' AND n.nspname = current_schema()
"""
_PG_FUNCTIONS = """
SELECT p.prosrc FROM pg_catalog.pg_proc AS p JOIN pg_catalog.pg_namespace AS n ON n.oid = p.pronamespace
WHERE n.nspname = current_schema() ORDER BY p.proname
"""
_PG_TEXT_TYPES = ("text", "varchar", "bpchar", "name")


def _pg_derived_only() -> frozenset[str]:
    from .postgres.fulltext import POSTGRES_ONLY_TABLES

    return frozenset(POSTGRES_ONLY_TABLES)


def _pg_term(column: str, type_name: str, not_null: bool) -> str:
    term = f'"{column}"'
    if type_name in _PG_TEXT_TYPES:
        term += ' COLLATE "C"'
    return term if not_null else term + " NULLS FIRST"


def _pg_tables(conn: Any) -> list[TableSpec]:
    skip = _pg_derived_only()
    columns: dict[str, list[tuple[str, str, bool]]] = {}
    for table, column, type_name, not_null in conn.native(_PG_COLUMNS).fetchall():
        if table not in skip and (table, column) not in STORAGE_COLUMNS:
            columns.setdefault(str(table), []).append((str(column), str(type_name), bool(not_null)))
    keys: dict[str, list[str]] = {}
    for table, column in conn.native(_PG_KEYS).fetchall():
        keys.setdefault(str(table), []).append(str(column))
    specs: list[TableSpec] = []
    for name in sorted(columns):  # code-point order, as SQLite's BINARY ORDER BY name
        cols = columns[name]
        described = {c: (t, nn) for c, t, nn in cols}
        pk = keys.get(name, [])
        if not pk:
            raise RuntimeError(f"table {name} has no primary key: its rows have no order to export in")
        order = ", ".join(_pg_term(c, *described[c]) for c in pk)
        if not (len(pk) == 1 and described[pk[0]][0] == "int8"):  # SQLite's rule: no rowid alias
            order += ", " + ", ".join(_pg_term(c, t, nn) for c, t, nn in cols)
        specs.append(TableSpec(name, tuple(c for c, _, _ in cols), order))
    return specs


# -- both -------------------------------------------------------------------------------------------

def data_tables(conn: Any) -> list[TableSpec]:
    """Every table that holds library data, in name order (the full-text index excluded)."""
    return _pg_tables(conn) if is_postgres(conn) else _sqlite_tables(conn)


def fulltext_tables(conn: Any) -> list[str]:
    """The tables of the full-text index (derived from the entries, never exported)."""
    if is_postgres(conn):
        return sorted(_pg_derived_only())
    return _sqlite_virtual_tables(conn)


def select_rows(conn: Any, spec: TableSpec) -> Iterator[tuple[Any, ...]]:
    """The table's rows in key order, as plain tuples of Python values (``bytes`` for blobs)."""
    cols = ", ".join(f'"{c}"' for c in spec.columns)
    sql = f'SELECT {cols} FROM "{spec.name}" ORDER BY {spec.order_by}'
    if is_postgres(conn):  # PostgreSQL's own ORDER BY terms: not the shared dialect, so not translated
        yield from conn.native(sql.encode("utf-8"))
        return
    for row in conn.execute(sql):
        yield tuple(row)


def count_rows(conn: Any, table: str) -> int:
    return int(conn.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0])


def trigger_written_tables(conn: Any) -> set[str]:
    """Data tables that triggers write into (running counters such as skill_stats, the graph version):
    an import loads them last, from the export's rows, so the triggers' work is not counted twice."""
    sources = ([str(r[0] or "") for r in conn.native(_PG_FUNCTIONS).fetchall()]
               if is_postgres(conn) else _sqlite_trigger_sources(conn))
    data = {s.name for s in data_tables(conn)}
    found: set[str] = set()
    for source in sources:
        for match in _TRIGGER_WRITE.finditer(source):
            name = match.group(1) or match.group(2)
            if name in data and not _sets_storage_column(name, source[match.end():]):
                found.add(name)
    return found


def _sets_storage_column(table: str, after_set: str) -> bool:
    """Whether an ``UPDATE table SET`` assigns a storage column (migration 18's fold trigger marks
    skill_uses rows indexed): that says how rows are stored, so it makes no table trigger-written.
    A file exported in a layout past 18 (a later migration that changes what rows hold) is loaded at
    that layout, where the fold trigger exists; taking skill_uses for a counter table loaded it
    after skill_stats, and its insert triggers counted every outcome twice."""
    head = after_set.lstrip()
    return any(t == table and re.match(rf"{re.escape(c)}\s*=", head) for t, c in STORAGE_COLUMNS)


def referenced_tables(conn: Any, tables: list[str]) -> set[str]:
    """Those of ``tables`` that a foreign key of another of ``tables`` points at."""
    wanted = set(tables)
    if is_postgres(conn):
        pairs = [(str(c), str(p)) for c, p in conn.native(_PG_FOREIGN_KEYS).fetchall()]
    else:
        pairs = [(t, p) for t in tables for p in _sqlite_foreign_keys(conn, t)]
    return {p for c, p in pairs if c in wanted and p in wanted and c != p}


def load_order(conn: Any, tables: list[str]) -> list[str]:
    """``tables`` with every table after the tables its foreign keys point at (ties by name).

    PostgreSQL checks a foreign key at each insert (the schema's keys are not DEFERRABLE, and
    ``session_replication_role``, which would skip them, needs a superuser), so a bulk load fills
    parents first. A self-reference (an intent's vote in coordination_log) is satisfied by loading
    the table in key order: a row can only point at a row that existed when it was written.
    """
    wanted = set(tables)
    parents: dict[str, set[str]] = {t: set() for t in tables}
    if is_postgres(conn):
        for child, parent in conn.native(_PG_FOREIGN_KEYS).fetchall():
            if child in wanted and parent in wanted and child != parent:
                parents[str(child)].add(str(parent))
    else:
        for t in tables:
            parents[t] = {p for p in _sqlite_foreign_keys(conn, t) if p in wanted and p != t}
    ordered: list[str] = []
    placed: set[str] = set()
    while len(ordered) < len(tables):
        ready = sorted(t for t in tables if t not in placed and parents[t] <= placed)
        if not ready:
            raise RuntimeError(f"foreign keys form a cycle among {sorted(wanted - placed)}")
        ordered.extend(ready)
        placed.update(ready)
    return ordered


def rebuild_fulltext(conn: Any) -> None:
    """Rebuild the full-text index from the entries. On PostgreSQL the connection indexes every entry
    it inserted at COMMIT (:meth:`.postgres.adapter.PgConnection._flush_fulltext`): nothing to do here."""
    if is_postgres(conn):
        return
    for vt in _sqlite_virtual_tables(conn):
        conn.execute(f'INSERT INTO "{vt}" ("{vt}") VALUES (\'rebuild\')')


def broken_reference(conn: Any) -> tuple[str, Any, str] | None:
    """A row whose foreign key points at a missing row (table, rowid, parent), after a load with the
    checks off. PostgreSQL refused such a row at its insert already."""
    if is_postgres(conn):
        return None
    row = conn.execute("PRAGMA foreign_key_check").fetchone()
    return None if row is None else (str(row[0]), row[1], str(row[2]))


@contextlib.contextmanager
def read_snapshot(conn: Any) -> Iterator[None]:
    """One consistent view of the whole library for the block, while writers carry on (a SQLite read
    transaction; on PostgreSQL a REPEATABLE READ one: READ COMMITTED would see each statement's own)."""
    conn.execute("BEGIN")
    try:
        if is_postgres(conn):
            conn.native("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        yield
    finally:
        conn.execute("ROLLBACK")
