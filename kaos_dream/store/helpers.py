"""Small SQL helpers shared by the table modules."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any


def rows(conn: sqlite3.Connection, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
    return conn.execute(sql, params).fetchall()


def one(conn: sqlite3.Connection, sql: str, params: Sequence[Any] = ()) -> sqlite3.Row | None:
    return conn.execute(sql, params).fetchone()


def scalar(conn: sqlite3.Connection, sql: str, params: Sequence[Any] = ()) -> Any:
    row = conn.execute(sql, params).fetchone()
    return None if row is None else row[0]


def placeholders(values: Iterable[Any]) -> str:
    return ",".join("?" for _ in values)
