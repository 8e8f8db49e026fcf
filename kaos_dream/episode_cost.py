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
from .store.agent_uses import agent_uses

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


# Completed episodes that ended in a window, newest first: their cost fields.
_EPISODES_SQL = ("SELECT id, tokens_in, tokens_out, tool_calls, duration_s FROM agents "
                 "WHERE state = 'completed' AND ended_at >= ? AND ended_at <= ? ORDER BY ended_at DESC, id")
# The skills (by name) and tasks (by text) one episode reported outcomes for.
_EPISODE_USES_SQL = (f"SELECT DISTINCT s.name, t.text FROM ({agent_uses('skill_id, task_id')}) AS u "
                     "JOIN skills AS s ON s.id = u.skill_id LEFT JOIN tasks AS t ON t.id = u.task_id")
MAX_BROKEN_DOWN = 2000  # episodes broken down by skill and task per call (the newest): bounds the reads


def _median(values: list[float]) -> float | None:
    return float(statistics.median(values)) if values else None


def summarise(name: str, rows: Iterable[tuple[Any, ...]]) -> dict[str, Any]:
    """One group of episodes' cost rows ``(id, tokens_in, tokens_out, tool_calls, duration_s)``: how
    many, how many reported tokens or tool calls, and the median tokens (in + out), tool calls and
    duration per episode, with the totals."""
    members = list(rows)
    tokens = [float(r[1] or 0) + float(r[2] or 0) for r in members if r[1] is not None or r[2] is not None]
    calls = [float(r[3]) for r in members if r[3] is not None]
    durations = [float(r[4]) for r in members if r[4] is not None]
    return {
        "name": name,
        "episodes": len(members),
        "reported": sum(1 for r in members if any(v is not None for v in r[1:4])),
        "median_tokens": _median(tokens),
        "median_tool_calls": _median(calls),
        "median_duration_s": _median(durations),
        "total_tokens": int(sum(tokens)),
        "total_tool_calls": int(sum(calls)),
    }


def _reported(row: tuple[Any, ...]) -> bool:
    return any(v is not None for v in row[1:4])


def cost_per_success(conn: Any, since: float | None = None, until: float | None = None,
                     limit: int = 20) -> dict[str, Any]:
    """What a successful (completed) episode costs in a window: overall, and by skill and by task
    over the episodes that reported tokens or tool calls (the newest :data:`MAX_BROKEN_DOWN`), at most
    ``limit`` groups each, most episodes first, ties by name. Read-only."""
    lo = since if since is not None else -1e18
    hi = until if until is not None else 1e18
    episodes = [tuple(r) for r in conn.execute(_EPISODES_SQL, (lo, hi))]
    by_skill: dict[str, list[tuple[Any, ...]]] = {}
    by_task: dict[str, list[tuple[Any, ...]]] = {}
    for row in [r for r in episodes if _reported(r)][:MAX_BROKEN_DOWN]:
        skills, tasks = set(), set()
        for skill, task in conn.execute(_EPISODE_USES_SQL, (row[0],)):
            skills.add(str(skill))
            if task is not None:
                tasks.add(str(task))
        for skill in skills:
            by_skill.setdefault(skill, []).append(row)
        for task in tasks:
            by_task.setdefault(task, []).append(row)

    def groups(found: dict[str, list[tuple[Any, ...]]]) -> list[dict[str, Any]]:
        out = [summarise(name, rows) for name, rows in found.items()]
        out.sort(key=lambda g: (-g["episodes"], g["name"]))
        return out[:limit]

    return {"overall": summarise("all", episodes), "by_skill": groups(by_skill), "by_task": groups(by_task)}
