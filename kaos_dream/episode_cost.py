"""What an episode cost (tokens in and out, tool calls, duration) and what successful episodes cost.

Seed 001's episode signals: an agent, a harness hook or a person reports them when the episode ends
(or, from a hook, as it goes); ``None`` means "not reported", never zero. Ranking does not read them:
they answer "what does a success cost with this skill, on this task", for the digest and the report.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .errors import InvalidInputError

MAX_COUNT = 10**12  # tokens or tool calls of one episode: far above any real session, below int64
MAX_DURATION_S = 10.0**8  # about three years


def _count(name: str, value: object) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_COUNT:
        raise InvalidInputError(f"{name} must be a whole number from 0 to {MAX_COUNT}, got {value!r}")
    return int(value)


@dataclass(frozen=True)
class EpisodeCost:
    """Tokens in and out, tool calls and duration in seconds of one episode; ``None``: not reported."""

    tokens_in: int | None = None
    tokens_out: int | None = None
    tool_calls: int | None = None
    duration_s: float | None = None

    def checked(self) -> EpisodeCost:
        """The same cost, or InvalidInputError naming the first bad field."""
        duration = self.duration_s
        if duration is not None:
            if isinstance(duration, bool) or not isinstance(duration, int | float) or not math.isfinite(duration) \
                    or not 0 <= duration <= MAX_DURATION_S:
                raise InvalidInputError(f"duration must be a number of seconds from 0 to {MAX_DURATION_S:.0f}, "
                                        f"got {duration!r}")
            duration = float(duration)
        return EpisodeCost(_count("tokens in", self.tokens_in), _count("tokens out", self.tokens_out),
                           _count("tool calls", self.tool_calls), duration)

    def values(self) -> tuple[int | None, int | None, int | None, float | None]:
        return self.tokens_in, self.tokens_out, self.tool_calls, self.duration_s

    def empty(self) -> bool:
        return all(v is None for v in self.values())


# One row per (successful episode, skill it reported an outcome for): the episode's cost fields.
_BY_SKILL_SQL = """
SELECT DISTINCT s.name, a.id, a.tokens_in, a.tokens_out, a.tool_calls, a.duration_s
FROM skill_uses AS u
JOIN agent_keys AS k ON k.id = u.agent_key
JOIN agents AS a ON a.id = k.agent_id
JOIN skills AS s ON s.id = u.skill_id
WHERE a.state = 'completed' AND a.ended_at >= ?
"""
# The same per task the episode's outcomes were on (the task's stored text).
_BY_TASK_SQL = """
SELECT DISTINCT t.text, a.id, a.tokens_in, a.tokens_out, a.tool_calls, a.duration_s
FROM skill_uses AS u
JOIN agent_keys AS k ON k.id = u.agent_key
JOIN agents AS a ON a.id = k.agent_id
JOIN tasks AS t ON t.id = u.task_id
WHERE a.state = 'completed' AND a.ended_at >= ?
"""
_ALL_SQL = ("SELECT 'all', id, tokens_in, tokens_out, tool_calls, duration_s FROM agents "
            "WHERE state = 'completed' AND ended_at >= ?")


def _median(values: list[float]) -> float | None:
    return float(statistics.median(values)) if values else None


def summarise(rows: Iterable[tuple[Any, ...]]) -> list[dict[str, Any]]:
    """Per group (the rows' first column): successful episodes, how many reported a cost, and the
    median tokens (in + out), tool calls and duration per successful episode, with their totals.
    Groups sorted by episodes (most first), ties by name."""
    groups: dict[str, list[tuple[Any, ...]]] = {}
    for row in rows:
        groups.setdefault(str(row[0]), []).append(row)
    out = []
    for name, members in groups.items():
        tokens = [float(r[2] or 0) + float(r[3] or 0) for r in members if r[2] is not None or r[3] is not None]
        calls = [float(r[4]) for r in members if r[4] is not None]
        durations = [float(r[5]) for r in members if r[5] is not None]
        out.append({
            "name": name,
            "episodes": len(members),
            "reported": sum(1 for r in members if any(v is not None for v in r[2:5])),
            "median_tokens": _median(tokens),
            "median_tool_calls": _median(calls),
            "median_duration_s": _median(durations),
            "total_tokens": int(sum(tokens)),
            "total_tool_calls": int(sum(calls)),
        })
    out.sort(key=lambda g: (-g["episodes"], g["name"]))
    return out


def cost_per_success(conn: Any, since: float | None = None, limit: int = 20) -> dict[str, Any]:
    """What a successful (completed) episode costs: overall, by skill and by task (at most ``limit``
    groups each, most episodes first). Read-only."""
    floor = since if since is not None else -1e18
    overall = summarise(conn.execute(_ALL_SQL, (floor,)).fetchall())
    return {
        "overall": overall[0] if overall else None,
        "by_skill": summarise(conn.execute(_BY_SKILL_SQL, (floor,)).fetchall())[:limit],
        "by_task": summarise(conn.execute(_BY_TASK_SQL, (floor,)).fetchall())[:limit],
    }
