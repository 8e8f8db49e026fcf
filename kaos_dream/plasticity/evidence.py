"""The effective outcome record: recent outcomes weigh more than old ones.

The exact all-time counters (``skill_stats``, ``skill_task_stats``) never forget, so a skill that
worked 20 times keeps outranking the sibling a team switched to long after it started failing. The
effective record discounts each outcome by how many outcomes of the *same record* came after it: the
k-th most recent (k = 0 is the newest) weighs ``2^(-k / half_life)``. A record therefore only ages
when it gets new outcomes, which is exactly when the old ones may be contradicted; a skill nobody
used for a year keeps its record, because nothing has disagreed with it.

The half-life is counted in outcomes, not in time, so a library used ten times a day and one used
once a month follow a change after the same number of contradicting outcomes. Outcomes older than
``HORIZON`` half-lives (weight below 0.4 %) are left out, which bounds the read to the newest
``ceil(HORIZON * half_life)`` rows of each record through the existing indexes. Half-life 0 turns
aging off (the effective record is the all-time one).

Only reads: the raw ``skill_uses`` rows stay the source of truth.
"""

from __future__ import annotations

import json
import math
import sqlite3
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

HORIZON = 8.0  # half-lives of outcomes read per record

Floats = npt.NDArray[np.float64]

# The newest rows of one skill's global record (index skill_uses_skill: skill_id, created_at) and of
# one (task, skill) record (index skill_uses_task: task_hash, skill_id, rowid), with their weights.
_WEIGHTED = """
(SELECT total(r.success * pow(:decay, r.k)) FROM (
    SELECT success, row_number() OVER (ORDER BY {order}) - 1 AS k
    FROM (SELECT success, created_at, id FROM skill_uses WHERE {where} ORDER BY {order} LIMIT :horizon)
) AS r)
"""
_GLOBAL = _WEIGHTED.format(where="skill_id = j.value", order="created_at DESC, id DESC")
_TASK = _WEIGHTED.format(where="task_hash = :task AND skill_id = j.value", order="id DESC")
_BOTH_SQL = f"SELECT j.value, {_GLOBAL}, {_TASK} FROM json_each(:ids) AS j"


def decay_of(half_life: float) -> float:
    """Weight ratio between an outcome and the one just before it (1.0: no aging)."""
    return 1.0 if half_life <= 0 else math.pow(2.0, -1.0 / half_life)


def horizon_of(half_life: float) -> int:
    """How many of a record's newest outcomes the effective record reads."""
    return max(1, math.ceil(HORIZON * half_life))


def effective_uses(uses: npt.ArrayLike, half_life: float) -> Floats:
    """Effective number of outcomes of records with ``uses`` outcomes: the sum of the weights of the
    newest ``horizon`` of them, ``(1 - d^m) / (1 - d)`` with ``m = min(uses, horizon)``."""
    n = np.asarray(uses, dtype=np.float64)
    if half_life <= 0:
        return n
    d = decay_of(half_life)
    m = np.minimum(n, float(horizon_of(half_life)))
    return (1.0 - np.power(d, m)) / (1.0 - d)


@dataclass(frozen=True)
class Effective:
    """Effective successes and outcomes, global and for the query's task, one entry per skill."""

    successes: Floats
    uses: Floats
    task_successes: Floats
    task_uses: Floats


def effective_records(
    conn: sqlite3.Connection,
    skill_ids: npt.ArrayLike,
    counts: tuple[npt.ArrayLike, npt.ArrayLike, npt.ArrayLike, npt.ArrayLike],
    task_hash: str | None,
    half_life: float,
) -> Effective:
    """The effective records of ``skill_ids`` whose exact counters are ``counts`` (uses, successes,
    task uses, task successes). One statement for the skills that have any outcome; with half-life
    0 the exact counters are returned as they are."""
    uses, wins, task_uses, task_wins = (np.asarray(c, dtype=np.float64) for c in counts)
    if half_life <= 0:
        return Effective(wins, uses, task_wins, task_uses)
    ids = np.asarray(skill_ids, dtype=np.float64)
    eff_wins, eff_task_wins = np.zeros(len(ids)), np.zeros(len(ids))
    used = np.flatnonzero(uses > 0)
    if used.size:
        params = {
            "decay": decay_of(half_life),
            "horizon": horizon_of(half_life),
            "task": task_hash,
            "ids": json.dumps([int(ids[i]) for i in used]),
        }
        cursor = conn.cursor()
        cursor.row_factory = None
        found = {int(row[0]): (row[1], row[2]) for row in cursor.execute(_BOTH_SQL, params)}
        for i in used:
            eff_wins[i], eff_task_wins[i] = found.get(int(ids[i]), (0.0, 0.0))
    return Effective(eff_wins, effective_uses(uses, half_life), eff_task_wins, effective_uses(task_uses, half_life))


def _record(uses: int, successes: int, eff_uses: float, eff_successes: float) -> dict[str, Any]:
    return {
        "all_time": {"uses": uses, "successes": successes, "failures": uses - successes},
        "effective": {
            "uses": round(eff_uses, 4),
            "successes": round(eff_successes, 4),
            "failures": round(eff_uses - eff_successes, 4),
        },
    }


def skill_record(conn: sqlite3.Connection, skill_id: int, half_life: float, max_tasks: int = 20) -> dict[str, Any]:
    """A skill's outcome record as ``kaos skill show`` reports it: the exact all-time counters beside
    the effective (aged) record, globally and for each task it was used on (most used first, ties by
    task hash, at most ``max_tasks``)."""
    row = conn.execute("SELECT uses, successes FROM skill_stats WHERE skill_id = ?", (skill_id,)).fetchone()
    uses, wins = (int(row[0]), int(row[1])) if row else (0, 0)
    tasks = conn.execute(
        "SELECT t.task_hash, t.uses, t.successes, "
        "(SELECT task FROM skill_uses u WHERE u.task_hash = t.task_hash AND u.skill_id = t.skill_id "
        " ORDER BY id DESC LIMIT 1) "
        "FROM skill_task_stats AS t WHERE t.skill_id = ? AND t.uses > 0 ORDER BY t.uses DESC, t.task_hash LIMIT ?",
        (skill_id, max_tasks),
    ).fetchall()
    out: dict[str, Any] = {"half_life_outcomes": half_life}
    glob = effective_records(conn, [skill_id], ([uses], [wins], [0], [0]), None, half_life)
    out.update(_record(uses, wins, float(glob.uses[0]), float(glob.successes[0])))
    out["tasks"] = []
    for task_hash, t_uses, t_wins, task in tasks:
        eff = effective_records(conn, [skill_id], ([uses], [wins], [t_uses], [t_wins]), task_hash, half_life)
        out["tasks"].append(
            {"task": task, "task_hash": task_hash,
             **_record(int(t_uses), int(t_wins), float(eff.task_uses[0]), float(eff.task_successes[0]))}
        )
    return out
