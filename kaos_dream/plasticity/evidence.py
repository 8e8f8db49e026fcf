"""The effective outcome record: evidence ages when later outcomes contradict it.

The exact all-time counters (``skill_stats``, ``skill_task_stats``) never forget, so a skill that
worked 20 times keeps outranking the sibling a team switched to long after it started failing. The
effective record discounts each outcome by the later outcomes *of the same record that contradict
it*: a success weighs ``2^(-f / half_life)`` where ``f`` is the number of failures recorded after it,
and a failure ``2^(-s / half_life)`` with ``s`` the later successes. So:

* a record nothing contradicts never ages: a skill that always works keeps its whole record, and the
  stationary rankings are unchanged;
* after a convention switch each new failure of the old skill halves (for half-life 1) the weight of
  its old successes, so a long success record cannot outweigh a run of fresh failures;
* a skill that works half the time keeps a small, uncertain effective record.

The half-life is counted in outcomes, not in time, so a library used ten times a day and one used
once a month follow a change after the same number of contradicting outcomes. The record's newest
``ceil(HORIZON * half_life)`` outcomes are read one by one through the existing indexes (the global
record by ``skill_uses_skill``, a task's by ``skill_uses_task``); everything older is one block from
the exact counters, discounted by the contradictions among the newest ones, so a read is bounded
whatever the record's size. Half-life 0 turns aging off (the effective record is the all-time one).

Only reads: the raw ``skill_uses`` rows stay the source of truth.
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .task import task_hex

if TYPE_CHECKING:  # numpy only for the array form: a lexical search ranks lists (effective_lists)
    import numpy as np
    import numpy.typing as npt

HORIZON = 8.0  # half-lives of outcomes read one by one per record


# The newest outcomes of one skill's global record and of one (task, skill) record, newest first, as
# a string of 0/1 (the subquery's order is the concatenation's order).
_NEWEST = (
    "(SELECT group_concat(success, '') FROM "
    "(SELECT success FROM skill_uses WHERE {where} ORDER BY {order} LIMIT :n))"
)
_BOTH_SQL = (
    "SELECT j.value, "
    + _NEWEST.format(where="skill_id = j.value", order="created_at DESC, id DESC")
    + ", "
    + _NEWEST.format(where="task_id = :task AND skill_id = j.value", order="id DESC")
    + " FROM json_each(:ids) AS j"
)


def decay_of(half_life: float) -> float:
    """Weight kept per contradicting outcome (1.0: no aging)."""
    return 1.0 if half_life <= 0 else math.pow(2.0, -1.0 / half_life)


def horizon_of(half_life: float) -> int:
    """How many of a record's newest outcomes are read one by one."""
    return max(1, math.ceil(HORIZON * half_life))


def aged(newest: str, uses: float, successes: float, half_life: float) -> tuple[float, float]:
    """Effective (successes, uses) of a record with exact counts ``uses``/``successes`` whose newest
    outcomes are ``newest`` (newest first, '1' success, '0' failure)."""
    if half_life <= 0 or uses <= 0:
        return successes, uses
    d = decay_of(half_life)
    later_s = later_f = 0
    eff_s = eff_f = 0.0
    for ch in newest:
        if ch == "1":
            eff_s += d**later_f
            later_s += 1
        else:
            eff_f += d**later_s
            later_f += 1
    old_s = max(successes - later_s, 0.0)
    old_f = max(uses - successes - later_f, 0.0)
    eff_s += old_s * d**later_f
    eff_f += old_f * d**later_s
    return eff_s, eff_s + eff_f


@dataclass(frozen=True)
class Effective:
    """Effective successes and outcomes, global and for the query's task, one entry per skill."""

    successes: npt.NDArray[np.float64]
    uses: npt.NDArray[np.float64]
    task_successes: npt.NDArray[np.float64]
    task_uses: npt.NDArray[np.float64]


def effective_records(
    conn: sqlite3.Connection,
    skill_ids: npt.ArrayLike,
    counts: tuple[npt.ArrayLike, npt.ArrayLike, npt.ArrayLike, npt.ArrayLike],
    task_id: int | None,
    half_life: float,
) -> Effective:
    """The effective records of ``skill_ids`` whose exact counters are ``counts`` (uses, successes,
    task uses, task successes), as arrays: :func:`effective_lists` on lists."""
    import numpy as np

    uses, wins, task_uses, task_wins = (np.array(c, dtype=np.float64).tolist() for c in counts)
    ids = [int(i) for i in np.asarray(skill_ids, dtype=np.float64)]
    wins, uses, task_wins, task_uses = effective_lists(conn, ids, (uses, wins, task_uses, task_wins), task_id,
                                                       half_life)
    return Effective(*(np.array(c, dtype=np.float64) for c in (wins, uses, task_wins, task_uses)))


def effective_lists(
    conn: sqlite3.Connection,
    skill_ids: Sequence[int],
    counts: tuple[list[float], list[float], list[float], list[float]],
    task_id: int | None,
    half_life: float,
) -> tuple[list[float], list[float], list[float], list[float]]:
    """(successes, uses, task successes, task uses), effective, of ``skill_ids`` whose exact counters
    are ``counts`` (uses, successes, task uses, task successes; changed in place). One statement for
    the skills that have any outcome; with half-life 0 the exact counters are returned as they are."""
    uses, wins, task_uses, task_wins = counts
    if half_life <= 0:
        return wins, uses, task_wins, task_uses
    used = [i for i, n in enumerate(uses) if n > 0]
    if used:
        params = {"n": horizon_of(half_life), "task": task_id, "ids": json.dumps([int(skill_ids[i]) for i in used])}
        cursor = conn.cursor()
        cursor.row_factory = None
        found = {int(row[0]): (row[1] or "", row[2] or "") for row in cursor.execute(_BOTH_SQL, params)}
        for i in used:
            newest, newest_task = found.get(int(skill_ids[i]), ("", ""))
            wins[i], uses[i] = aged(newest, uses[i], wins[i], half_life)
            if task_uses[i] > 0:
                task_wins[i], task_uses[i] = aged(newest_task, task_uses[i], task_wins[i], half_life)
    return wins, uses, task_wins, task_uses


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
        # The latest wording of the task on this skill (a use row's own, else the task's text); ties
        # in uses by the hex digest, whose order is the digests' unsigned order.
        "SELECT t.task_id, t.uses, t.successes, "
        "coalesce((SELECT u.task FROM skill_uses u WHERE u.task_id = t.task_id AND u.skill_id = t.skill_id "
        " ORDER BY id DESC LIMIT 1), k.text), k.hash "
        "FROM skill_task_stats AS t JOIN tasks AS k ON k.id = t.task_id WHERE t.skill_id = ? AND t.uses > 0 "
        "ORDER BY t.uses DESC, k.hash < 0, k.hash LIMIT ?",
        (skill_id, max_tasks),
    ).fetchall()
    out: dict[str, Any] = {"half_life_outcomes": half_life}
    g_wins, g_uses, _, _ = effective_lists(conn, [skill_id], ([float(uses)], [float(wins)], [0.0], [0.0]), None,
                                           half_life)
    out.update(_record(uses, wins, g_uses[0], g_wins[0]))
    out["tasks"] = []
    for task_id, t_uses, t_wins, task, key in tasks:
        _, _, t_eff_wins, t_eff_uses = effective_lists(
            conn, [skill_id], ([float(uses)], [float(wins)], [float(t_uses)], [float(t_wins)]), task_id, half_life)
        out["tasks"].append(
            {"task": task, "task_hash": task_hex(key),
             **_record(int(t_uses), int(t_wins), t_eff_uses[0], t_eff_wins[0])}
        )
    return out
