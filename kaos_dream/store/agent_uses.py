"""One agent's outcome rows, found although the per-agent index is filled in batches (migration 18).

A new ``skill_uses`` row enters ``skill_uses_agent`` only when a fold takes every row written since
the last one (SQLite: a trigger, at each row whose id is a multiple of :data:`FOLD_EVERY`), which
saves a single outcome one written page. The folded rows are a prefix by id, so every reader of one
agent's rows reads the folded ones from the index and the short tail after the newest folded row by
a rowid range, in one statement (one snapshot). On PostgreSQL every row is folded as it is written
and the tail is empty. :func:`agent_index_problems` is ``kaos db check``'s proof of the prefix.
"""

from __future__ import annotations

from typing import Any

from .dialect import column_names

FOLD_EVERY = 256  # migration 18's trigger: `WHEN new.id % 256 = 0`
# The newest folded row: a scan backwards from the newest row that stops after the unfolded tail
# (`+` keeps the planner off the partial index, which would be read whole, whatever its statistics say).
_NEWEST_FOLDED = "coalesce((SELECT f.id FROM skill_uses AS f WHERE +f.agent_indexed = 1 ORDER BY f.id DESC LIMIT 1), 0)"


def agent_uses(columns: str, agent: str = "?1") -> str:
    """``SELECT columns`` of the ``skill_uses`` rows of the agent whose id is the SQL expression
    ``agent`` (written twice, so a numbered parameter): a compound select to use as a subquery."""
    key = f"(SELECT a.id FROM agent_keys AS a WHERE a.agent_id = {agent})"
    return (
        f"SELECT {columns} FROM skill_uses WHERE agent_key = {key} AND agent_indexed = 1 "
        f"UNION ALL SELECT {columns} FROM skill_uses WHERE id > {_NEWEST_FOLDED} AND agent_key = {key}"
    )


def agent_index_problems(conn: Any) -> list[str]:
    """A line when an outcome row at or before the newest folded row is not folded: the agent views
    would miss it (a hand edit, or a row given an explicit id below the prefix)."""
    if "agent_indexed" not in column_names(conn, "skill_uses"):
        return []
    newest, missed, first = conn.execute(
        f"SELECT n.id, count(u.id), min(u.id) FROM (SELECT {_NEWEST_FOLDED} AS id) AS n "
        "LEFT JOIN skill_uses AS u ON u.id < n.id AND u.agent_indexed = 0 GROUP BY n.id"
    ).fetchone()
    if not missed:
        return []
    noun, verb, it = ("outcome row", "is", "it") if missed == 1 else ("outcome rows", "are", "them")
    return [f"agent index: {missed} {noun} at or before row {newest} {verb} not in skill_uses_agent "
            f"(first: row {first}); agent views miss {it}"]
