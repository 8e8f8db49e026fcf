"""The values `kaos db import` (and `db copy`) accept: what the write path would have let in, on both
engines alike (issue 33 item 3).

An export is data from outside: a row that loads (the schema's constraints are few) may still hold a
value the library cannot handle later: an Infinity or -1e300 timestamp ("usage error" when shown), bytes
where a template's text belongs (a TypeError in `skill show`), a skill name `skill add` refuses (NUL,
ESC, U+202E), or an integer past 64 bits (an OverflowError, exit 2). Each is refused with the line
that holds it, and nothing is written. :func:`stored_value_problems` finds the same in a library an
older import already filled (`kaos db check`).
"""

from __future__ import annotations

import math
from typing import Any

from ..clock import MAX_TIMESTAMP, MIN_TIMESTAMP, iso
from ..errors import InvalidInputError
from ..names import clean_skill_name
from .dialect import is_postgres

INT64 = (-(2**63), 2**63 - 1)
# Columns that hold epoch seconds: every ``*_at`` column and the dream's window start.
_TIME_NAMES = ("since",)


def is_time_column(column: str) -> bool:
    return column.endswith("_at") or column in _TIME_NAMES


def text_columns(conn: Any) -> dict[str, frozenset[str]]:
    """Per table, the columns declared as text, read from the target's schema (the same on both engines)."""
    out: dict[str, set[str]] = {}
    if is_postgres(conn):
        rows = conn.execute(
            "SELECT c.relname, a.attname, t.typname FROM pg_catalog.pg_class AS c "
            "JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace "
            "JOIN pg_catalog.pg_attribute AS a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped "
            "JOIN pg_catalog.pg_type AS t ON t.oid = a.atttypid "
            "WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')").fetchall()
        for table, column, typ in rows:
            if str(typ) in ("text", "varchar", "bpchar"):
                out.setdefault(str(table), set()).add(str(column))
    else:
        for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
                                     ).fetchall():
            for row in conn.execute(f'PRAGMA table_info("{table}")').fetchall():
                if "TEXT" in str(row[2]).upper() or "CHAR" in str(row[2]).upper():
                    out.setdefault(str(table), set()).add(str(row[1]))
    return {t: frozenset(c) for t, c in out.items()}


def value_problem(table: str, column: str, value: Any, texts: frozenset[str]) -> str | None:
    """Why ``value`` must not be stored in ``table.column``, or None."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int) and not INT64[0] <= value <= INT64[1]:
        return f"{table}.{column} = {value} is out of range (whole numbers from {INT64[0]} to {INT64[1]})"
    if isinstance(value, float) and not math.isfinite(value):
        return f"{table}.{column} = {value} is not a finite number"
    if is_time_column(column) and isinstance(value, (int, float)) and not MIN_TIMESTAMP <= value <= MAX_TIMESTAMP:
        return (f"{table}.{column} = {value!r} is not a time kaos can show (epoch seconds from "
                f"{MIN_TIMESTAMP:.0f}, {iso(MIN_TIMESTAMP)}, to {MAX_TIMESTAMP:.0f}, {iso(MAX_TIMESTAMP)})")
    if column in texts:
        if isinstance(value, (bytes, bytearray, memoryview)):
            return f"{table}.{column} holds binary data where text belongs"
        if isinstance(value, str) and "\x00" in value:
            return f"{table}.{column} holds a NUL character"
    if table == "skills" and column == "name" and isinstance(value, str):
        try:
            cleaned = clean_skill_name(value)
        except InvalidInputError as exc:
            return f"skill name {value[:60]!r} is one `kaos skill add` refuses: {exc}"
        if cleaned != value:
            why = ("it has leading or trailing spaces" if value != value.strip()
                   else "it is not in Unicode NFC form (`kaos skill add` stores the composed spelling)")
            return f"skill name {value[:60]!r} is one `kaos skill add` refuses: {why}"
    return None


def row_problem(table: str, columns: tuple[str, ...], values: list[Any], texts: frozenset[str]) -> str | None:
    for column, value in zip(columns, values, strict=True):
        problem = value_problem(table, column, value, texts)
        if problem is not None:
            return problem
    return None


def stored_value_problems(conn: Any, tables: list[tuple[str, tuple[str, ...]]], limit: int = 20) -> list[str]:
    """Values already stored that an import would now refuse (an older import let them in)."""
    texts = text_columns(conn)
    found: list[str] = []
    for table, columns in tables:
        listed = ", ".join(f'"{c}"' for c in columns)
        cur = conn.execute(f'SELECT {listed} FROM "{table}"')
        for row in cur:
            problem = row_problem(table, columns, list(row), texts.get(table, frozenset()))
            if problem is not None:
                found.append(f"values: {problem}")
                if len(found) >= limit:
                    return found
    return found
