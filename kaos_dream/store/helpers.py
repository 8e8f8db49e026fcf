"""Small SQL helpers shared by the table modules."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

from ..errors import ConflictError
from ..limits import REF, capped


def rows(conn: sqlite3.Connection, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
    return conn.execute(sql, params).fetchall()


def one(conn: sqlite3.Connection, sql: str, params: Sequence[Any] = ()) -> sqlite3.Row | None:
    return conn.execute(sql, params).fetchone()


def scalar(conn: sqlite3.Connection, sql: str, params: Sequence[Any] = ()) -> Any:
    row = conn.execute(sql, params).fetchone()
    return None if row is None else row[0]


def placeholders(values: Iterable[Any]) -> str:
    return ",".join("?" for _ in values)


def resolve_ref(conn: sqlite3.Connection, table: str, label_column: str, ref: int | str, noun: str) -> int:
    """An integer id, or a name/key (which wins over a digit-string that looks like an id), to the row's
    id; ``NotFoundError`` names the ``noun`` when there is no such row. ``table`` and ``label_column``
    are trusted identifiers from the calling module, never user input."""
    from ..errors import NotFoundError

    if isinstance(ref, int):
        row = conn.execute(f"SELECT id FROM {table} WHERE id = ?", (ref,)).fetchone()
    else:
        text = capped(ref.strip(), f"the {noun} reference", REF)
        row = conn.execute(f"SELECT id FROM {table} WHERE {label_column} = ?", (text,)).fetchone()
        if row is None and text.isdigit():
            row = conn.execute(f"SELECT id FROM {table} WHERE id = ?", (int(text),)).fetchone()
    if row is None:
        raise NotFoundError(f"no {noun} {ref!r}")
    return int(row[0])


def insert_unique(conn: sqlite3.Connection, sql: str, params: Sequence[Any], conflict: str) -> int:
    """Run one INSERT and return the new row's id; a clash with a unique constraint is a
    :class:`ConflictError` saying ``conflict`` rather than SQLite's message."""
    try:
        cur = conn.execute(sql, params)
    except sqlite3.IntegrityError:
        raise ConflictError(conflict) from None
    row_id = cur.lastrowid
    assert row_id is not None
    return row_id
