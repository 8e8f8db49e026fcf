"""The report's read-only queries: plain SELECTs over one connection, returning plain data.

Nothing here writes; the report opens the library with ``mode=ro`` as well, so a mistake here would
be an error, not a change. ``since`` (epoch seconds or None) limits what happened over time —
outcomes, failure occurrences, dream passes, proposals — never the totals.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from typing import Any

from ..dream.merge import pending_merges
from ..status import library_status

TOP_FINGERPRINTS = 15
MAX_ALERTS = 6
MAX_RUNS = 20
MAX_PROPOSALS = 40


def _since(column: str, since: float | None) -> tuple[str, tuple[Any, ...]]:
    return (f" AND {column} >= ?", (since,)) if since is not None else ("", ())


def overview(conn: sqlite3.Connection) -> dict[str, Any]:
    status = library_status(conn)
    return {
        "skills": conn.execute("SELECT count(*) FROM skills").fetchone()[0],
        "deprecated_skills": conn.execute("SELECT count(*) FROM skills WHERE deprecated = 1").fetchone()[0],
        "memories": conn.execute("SELECT count(*) FROM memories").fetchone()[0],
        "outcomes": status["telemetry"]["skill_uses"],
        "search_hits": status["telemetry"]["skill_hits"] + status["telemetry"]["memory_hits"],
        "agents": status["agents"],
        "edges": status["edges"],
        "fingerprints": status["failures"]["fingerprints"],
        "open_alerts": status["failures"]["open_alerts"],
        "dream_cycle": status["dream"]["cycle"],
        "last_run": status["dream"]["last_run"],
        "pending_proposals": status["dream"]["pending_proposals"],
    }


def outcomes(conn: sqlite3.Connection, skill_ids: list[int], since: float | None) -> dict[int, list[tuple[float, int]]]:
    """(time, success) per skill, oldest first."""
    out: dict[int, list[tuple[float, int]]] = {sid: [] for sid in skill_ids}
    if not skill_ids:
        return out
    where, args = _since("created_at", since)
    marks = ",".join("?" * len(skill_ids))
    for sid, ts, ok in conn.execute(
        f"SELECT skill_id, created_at, success FROM skill_uses WHERE skill_id IN ({marks}){where}"
        " ORDER BY created_at, id", (*skill_ids, *args)
    ):
        out[sid].append((float(ts), int(ok)))
    return out


def occurrences_by_category(conn: sqlite3.Connection, since: float | None) -> list[tuple[float, str]]:
    where, args = _since("o.created_at", since)
    return [(float(t), c) for t, c in conn.execute(
        "SELECT o.created_at, f.category FROM failure_occurrences o JOIN failure_fingerprints f"
        f" ON f.id = o.fingerprint_id WHERE 1 = 1{where} ORDER BY o.created_at, o.id", args)]


def top_fingerprints(conn: sqlite3.Connection, since: float | None) -> list[dict[str, Any]]:
    where, args = _since("o.created_at", since)
    rows = conn.execute(
        "SELECT f.id, f.tool, f.category, f.example, f.root_cause, f.diagnostic_method, f.last_seen,"
        " count(o.id) AS seen, count(DISTINCT o.agent_id) AS agents"
        " FROM failure_fingerprints f JOIN failure_occurrences o ON o.fingerprint_id = f.id"
        f" WHERE 1 = 1{where} GROUP BY f.id ORDER BY seen DESC, f.id LIMIT ?", (*args, TOP_FINGERPRINTS))
    return [dict(zip([d[0] for d in rows.description], r, strict=True)) for r in rows]


@dataclass
class Incident:
    alert: dict[str, Any]
    points: list[tuple[str, float]] = field(default_factory=list)  # (agent, time)


def incidents(conn: sqlite3.Connection) -> list[Incident]:
    """The newest alerts with every occurrence of their fingerprint in the alert's window."""
    out = []
    for row in conn.execute(
        "SELECT a.id, a.fingerprint_id, a.status, a.agent_count, a.threshold, a.window_s, a.raised_at,"
        " a.last_seen_at, a.resolved_at, f.tool, f.category FROM systemic_alerts a"
        " JOIN failure_fingerprints f ON f.id = a.fingerprint_id ORDER BY a.raised_at DESC, a.id DESC LIMIT ?",
        (MAX_ALERTS,),
    ).fetchall():
        alert = dict(zip(("id", "fingerprint_id", "status", "agent_count", "threshold", "window_s", "raised_at",
                          "last_seen_at", "resolved_at", "tool", "category"), row, strict=True))
        start = alert["raised_at"] - alert["window_s"]
        end = max(alert["last_seen_at"], alert["raised_at"]) + alert["window_s"]
        rows = conn.execute(
            "SELECT o.agent_id, ag.name, o.created_at FROM failure_occurrences o"
            " LEFT JOIN agents ag ON ag.id = o.agent_id"
            " WHERE o.fingerprint_id = ? AND o.created_at >= ? AND o.created_at <= ? ORDER BY o.created_at, o.id",
            (alert["fingerprint_id"], start, end)).fetchall()
        label = agent_labels({(agent, name) for agent, name, _ in rows})
        points = [(label[(agent, name)], float(t)) for agent, name, t in rows]
        out.append(Incident(alert, points))
    return out


def fixes(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    rows = conn.execute(
        "SELECT x.id, x.fingerprint_id, x.summary, s.name AS skill, x.status, x.attempts, x.successes, x.attached_at"
        " FROM failure_fixes x LEFT JOIN skills s ON s.id = x.skill_id ORDER BY x.attempts DESC, x.id")
    return [dict(zip([d[0] for d in rows.description], r, strict=True)) for r in rows]


def dream_runs(conn: sqlite3.Connection, since: float | None) -> list[dict[str, Any]]:
    """The newest passes (oldest first in the list), each with its phases in order."""
    where, args = _since("started_at", since)
    runs = [dict(zip(("id", "kind", "mode", "trigger", "status", "started_at", "duration_ms", "error"), r,
                     strict=True))
            for r in conn.execute(
                "SELECT id, kind, mode, trigger, status, started_at, duration_ms, error FROM dream_runs"
                f" WHERE 1 = 1{where} ORDER BY id DESC LIMIT ?", (*args, MAX_RUNS))]
    runs.reverse()
    for run in runs:
        run["phases"] = [(p, float(ms)) for p, ms in conn.execute(
            "SELECT phase, duration_ms FROM dream_run_phases WHERE run_id = ? ORDER BY position, phase", (run["id"],))]
    return runs


def proposals(conn: sqlite3.Connection, since: float | None) -> tuple[dict[tuple[str, str], int], list[dict[str, Any]]]:
    """Counts by (kind, status) and the newest proposals with what became of them."""
    where, args = _since("created_at", since)
    counts = {(k, s): n for k, s, n in conn.execute(
        f"SELECT kind, status, count(*) FROM proposals WHERE 1 = 1{where} GROUP BY kind, status", args)}
    rows = conn.execute(
        "SELECT id, kind, targets, status, score, rationale, created_at, decided_at, reason, evidence FROM proposals"
        f" WHERE 1 = 1{where} ORDER BY id DESC LIMIT ?", (*args, MAX_PROPOSALS))
    recent = []
    for r in rows:
        item = dict(zip([d[0] for d in rows.description], r, strict=True))
        evidence = json.loads(item.pop("evidence") or "{}")
        names = evidence.get("names") if isinstance(evidence, dict) else None
        item["names"] = [str(n) for n in names] if isinstance(names, list) else target_names(conn, item["targets"])
        recent.append(item)
    return counts, recent


def target_names(conn: sqlite3.Connection, targets: str) -> list[str]:
    """``memory:6`` as a person knows it (``memory:staging-tls``); [] when a target is not a node."""
    from ..graph.nodes import NODE_TABLES, Node, references

    nodes = []
    for part in (targets or "").split(","):
        kind, _, ref = part.partition(":")
        if kind not in NODE_TABLES or not ref.isdigit():
            return []
        nodes.append(Node(kind, int(ref)))
    names = references(conn, nodes)
    return [names[n] for n in nodes]


def merges(conn: sqlite3.Connection, limit: int) -> tuple[int, list[dict[str, Any]]]:
    """How many merges wait for a person, and the ``limit`` best (a big library can have 10^5)."""
    total = conn.execute("SELECT count(*) FROM proposals WHERE kind = 'merge' AND status = 'pending'").fetchone()[0]
    return int(total), pending_merges(conn, limit=limit)


def agent_labels(agents: set[tuple[str | None, str | None]]) -> dict[tuple[str | None, str | None], str]:
    """An agent as a person knows it: its name (``agent_start --name``), else its id; a name two agents
    share gets each one's id prefix, so their rows stay apart."""
    named: dict[str, int] = {}
    for _, name in agents:
        if name:
            named[name] = named.get(name, 0) + 1
    out = {}
    for agent, name in agents:
        if not agent:
            out[(agent, name)] = "(unknown agent)"
        elif name and named[name] > 1:
            out[(agent, name)] = f"{name} ({agent[:8]})"
        else:
            out[(agent, name)] = name or agent
    return out


def winning_tasks(conn: sqlite3.Connection, skill_ids: list[int],
                  per_skill: int = 3) -> dict[int, list[tuple[str, int, int]]]:
    """For each skill, the tasks it succeeds on most: (task text, successes, uses), most successes
    first, then the fewest uses, ties by task id; at most ``per_skill`` each."""
    out: dict[int, list[tuple[str, int, int]]] = {sid: [] for sid in skill_ids}
    if not skill_ids:
        return out
    marks = ",".join("?" * len(skill_ids))
    for sid, text, wins, uses in conn.execute(
        "SELECT t.skill_id, k.text, t.successes, t.uses FROM skill_task_stats AS t JOIN tasks AS k ON k.id = t.task_id"
        f" WHERE t.skill_id IN ({marks}) AND t.successes > 0 ORDER BY t.skill_id, t.successes DESC, t.uses, k.id",
        skill_ids,
    ):
        if len(out[sid]) < per_skill:
            out[sid].append((str(text), int(wins), int(uses)))
    return out
