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

from .dialect import column_names, table_names


@dataclass(frozen=True)
class Counter:
    table: str
    keys: tuple[str, ...]
    where: str  # which skill_uses rows count towards this table


COUNTERS = (
    Counter("skill_stats", ("skill_id",), "1 = 1"),
    Counter("skill_task_stats", ("task_id", "skill_id"), "u.task_id IS NOT NULL"),
)
# Before migration 14 a task context was its hex digest, stored on every use row.
_HEX_TASK_COUNTER = Counter("skill_task_stats", ("task_hash", "skill_id"), "u.task_hash IS NOT NULL")
# First schema version whose counters are exact by construction (migration 9 recounted older ones).
EXACT_FROM_VERSION = 9
_VALUES = ("uses", "successes", "last_used_at")


def _mismatch_sql(c: Counter, limit: int, timed: bool = True) -> str:
    """Rows of ``c`` that disagree with the recount; ``timed``: the table keeps last_used_at (since
    schema 15 skill_task_stats does not, its time being the newest of its rows by definition)."""
    keys = ", ".join(f"u.{k}" for k in c.keys)
    recount = (
        f"SELECT {keys}, count(*) AS uses, sum(u.success) AS successes, max(u.created_at) AS last_used_at "
        f"FROM skill_uses u WHERE {c.where} GROUP BY {keys}"
    )
    # The keys are never NULL (primary keys of the counter tables; skill_uses.skill_id is NOT NULL
    # and task_id is filtered by ``where``), so ``=`` means what ``IS`` would, and PostgreSQL can
    # hash-join on it (``IS NOT DISTINCT FROM`` made it a nested loop: 21 s at 10k uses).
    stored_at = "d.last_used_at" if timed else "r.last_used_at"
    on = " AND ".join(f"d.{k} = r.{k}" for k in c.keys)
    differs = " OR ".join(f"d.{v} IS NOT r.{v}" for v in _VALUES[: 3 if timed else 2])
    nonzero = "d.uses != 0 OR d.successes != 0" + (" OR d.last_used_at IS NOT NULL" if timed else "")
    match_rows = " AND ".join(f"u.{k} = d.{k}" for k in c.keys)
    r_keys = ", ".join(f"r.{k}" for k in c.keys)
    d_keys = ", ".join(f"d.{k}" for k in c.keys)
    return (
        f"SELECT * FROM (SELECT {r_keys}, d.uses, d.successes, {stored_at}, r.uses, r.successes, "
        f"r.last_used_at FROM ({recount}) r "
        f"LEFT JOIN {c.table} d ON {on} WHERE d.uses IS NULL OR {differs} "
        f"UNION ALL SELECT {d_keys}, d.uses, d.successes, {'d.last_used_at' if timed else 'NULL'}, 0, 0, NULL "
        f"FROM {c.table} d WHERE ({nonzero}) "
        f"AND NOT EXISTS (SELECT 1 FROM skill_uses u WHERE {c.where} AND {match_rows})) LIMIT {int(limit)}"
    )


def counter_mismatches(conn: sqlite3.Connection, limit: int = 20) -> list[str]:
    """One line per counter row that disagrees with the ``skill_uses`` rows (at most ``limit``)."""
    present = set(table_names(conn))
    if "skill_uses" not in present:
        return []
    problems: list[str] = []
    columns = set(column_names(conn, "skill_uses"))
    counters = COUNTERS if "task_id" in columns else (COUNTERS[0], _HEX_TASK_COUNTER)
    for c in counters:
        if c.table not in present:
            continue
        timed = "last_used_at" in column_names(conn, c.table)
        for row in conn.execute(_mismatch_sql(c, limit - len(problems), timed)):
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
