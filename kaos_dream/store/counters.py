"""Derived counter tables checked against the rows they count.

``skill_stats`` and ``skill_task_stats`` are running counters kept by triggers on ``skill_uses``
(migration 7). Nothing but those triggers should write them, so a file or an export whose counters
disagree with the rows was edited by hand or forged (``uses = 1000`` beside one use row would make a
skill look proven). ``kaos db check`` and ``kaos db import`` both recount them from ``skill_uses``
with one SQL query per table, so memory stays bounded whatever the file's size.

A counter row whose counts are all zero and whose skill has no matching rows is legitimate: the
delete trigger leaves it behind when the last use row goes.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from .dialect import table_names


@dataclass(frozen=True)
class Counter:
    table: str
    keys: tuple[str, ...]
    where: str  # which skill_uses rows count towards this table


COUNTERS = (
    Counter("skill_stats", ("skill_id",), "1 = 1"),
    Counter("skill_task_stats", ("task_hash", "skill_id"), "u.task_hash IS NOT NULL"),
)
# First schema version whose counters are exact by construction (migration 9 recounted older ones).
EXACT_FROM_VERSION = 9
_VALUES = ("uses", "successes", "last_used_at")


def _mismatch_sql(c: Counter, limit: int) -> str:
    keys = ", ".join(f"u.{k}" for k in c.keys)
    recount = (
        f"SELECT {keys}, count(*) AS uses, sum(u.success) AS successes, max(u.created_at) AS last_used_at "
        f"FROM skill_uses u WHERE {c.where} GROUP BY {keys}"
    )
    on = " AND ".join(f"d.{k} IS r.{k}" for k in c.keys)
    differs = " OR ".join(f"d.{v} IS NOT r.{v}" for v in _VALUES)
    nonzero = "d.uses != 0 OR d.successes != 0 OR d.last_used_at IS NOT NULL"
    match_rows = " AND ".join(f"u.{k} IS d.{k}" for k in c.keys)
    r_keys = ", ".join(f"r.{k}" for k in c.keys)
    d_keys = ", ".join(f"d.{k}" for k in c.keys)
    return (
        f"SELECT * FROM (SELECT {r_keys}, d.uses, d.successes, d.last_used_at, r.uses, r.successes, "
        f"r.last_used_at FROM ({recount}) r "
        f"LEFT JOIN {c.table} d ON {on} WHERE d.uses IS NULL OR {differs} "
        f"UNION ALL SELECT {d_keys}, d.uses, d.successes, d.last_used_at, 0, 0, NULL FROM {c.table} d "
        f"WHERE ({nonzero}) "
        f"AND NOT EXISTS (SELECT 1 FROM skill_uses u WHERE {c.where} AND {match_rows})) LIMIT {int(limit)}"
    )


def counter_mismatches(conn: sqlite3.Connection, limit: int = 20) -> list[str]:
    """One line per counter row that disagrees with the ``skill_uses`` rows (at most ``limit``)."""
    present = set(table_names(conn))
    if "skill_uses" not in present:
        return []
    problems: list[str] = []
    for c in COUNTERS:
        if c.table not in present:
            continue
        for row in conn.execute(_mismatch_sql(c, limit - len(problems))):
            key = ", ".join(f"{k}={row[i]!r}" for i, k in enumerate(c.keys))
            n = len(c.keys)
            stored = "no row" if row[n] is None else _counts(row[n : n + 3])
            problems.append(
                f"counters: {c.table} ({key}) stores {stored}; its skill_uses rows give {_counts(row[n + 3 : n + 6])}"
            )
        if len(problems) >= limit:
            break
    return problems


def _counts(values: tuple[object, ...] | sqlite3.Row) -> str:
    return " ".join(f"{name}={value}" for name, value in zip(_VALUES, values, strict=True))
