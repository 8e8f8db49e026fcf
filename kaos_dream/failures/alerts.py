"""Systemic alerts: many distinct agents failing the same way at once is an incident, not bad luck.

The detector runs inside ``record``'s transaction. It counts distinct agents whose occurrences of the
fingerprint fall in the sliding window ``[now − KAOS_SYSTEMIC_WINDOW_S, now]``; at
``KAOS_SYSTEMIC_THRESHOLD`` it raises one alert. While that alert is open (active or acked) further
hits only update it: one alert per incident, however long the incident lasts (this subsumes the
reference design's 60 s re-trigger debounce, which would raise a fresh alert every minute of an
outage). After a resolution only agents failing *after* it count towards the
next incident, so resolving never hides a new wave and never re-raises the old one. Failures
recorded with a timestamp outside the window (imports, replays) never raise an alert.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from ..errors import ConflictError, NotFoundError
from ..settings import Settings
from .diagnosis import diagnosis_source

_SELECT = (
    "SELECT a.*, f.hash, f.tool, f.category, f.root_cause, f.suggested_action, f.diagnostic_method"
    " FROM systemic_alerts a"
    " JOIN failure_fingerprints f ON f.id = a.fingerprint_id"
)


def _alert_dict(row: sqlite3.Row) -> dict[str, Any]:
    data = dict(row)
    data["short_hash"] = data["hash"][:12]
    data["active"] = data["status"] != "resolved"
    data["source"] = diagnosis_source(data.get("diagnostic_method"))
    return data


def evaluate(conn: sqlite3.Connection, fp_id: int, when: float, now: float, settings: Settings) -> int | None:
    """Raise (and return the id of) a new alert when this occurrence completes an incident."""
    window = settings.systemic_window_s
    if now - when > window:
        return None
    last = conn.execute(
        "SELECT id, status, raised_at, resolved_at FROM systemic_alerts WHERE fingerprint_id = ?"
        " ORDER BY raised_at DESC, id DESC LIMIT 1",
        (fp_id,),
    ).fetchone()
    since = now - window
    if last is not None and last["status"] == "resolved" and last["resolved_at"] is not None:
        since = max(since, last["resolved_at"])
    strict = last is not None and last["status"] == "resolved" and since == last["resolved_at"]
    agents = int(
        conn.execute(
            "SELECT COUNT(DISTINCT agent_id) FROM failure_occurrences WHERE fingerprint_id = ? AND agent_id IS NOT NULL"
            f" AND created_at {'>' if strict else '>='} ? AND created_at <= ?",
            (fp_id, since, max(now, when)),
        ).fetchone()[0]
    )
    if last is not None and last["status"] != "resolved":
        conn.execute(
            "UPDATE systemic_alerts SET agent_count = max(agent_count, ?), last_seen_at = max(last_seen_at, ?)"
            " WHERE id = ?",
            (agents, when, last["id"]),
        )
        return None
    if agents < settings.systemic_threshold:
        return None
    return int(
        conn.execute(
            "INSERT INTO systemic_alerts (fingerprint_id, agent_count, threshold, window_s, raised_at, last_seen_at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (fp_id, agents, settings.systemic_threshold, window, now, when),
        ).lastrowid
    )


def list_alerts(conn: sqlite3.Connection, *, include_resolved: bool = False) -> list[dict[str, Any]]:
    """Open alerts (active, then acked), newest first; with ``include_resolved`` every alert."""
    where = "" if include_resolved else " WHERE a.status <> 'resolved'"
    order = " ORDER BY CASE a.status WHEN 'active' THEN 0 WHEN 'acked' THEN 1 ELSE 2 END, a.raised_at DESC, a.id DESC"
    return [_alert_dict(r) for r in conn.execute(_SELECT + where + order)]


def get(conn: sqlite3.Connection, alert_id: int) -> dict[str, Any]:
    row = conn.execute(_SELECT + " WHERE a.id = ?", (alert_id,)).fetchone()
    if row is None:
        raise NotFoundError(f"no systemic alert with id {alert_id}")
    return _alert_dict(row)


def ack(conn: sqlite3.Connection, alert_id: int, by: str | None, now: float) -> bool:
    """active → acked. False when already acked; resolved alerts cannot be acked."""
    alert = get(conn, alert_id)
    if alert["status"] == "resolved":
        raise ConflictError(f"alert {alert_id} is already resolved")
    if alert["status"] == "acked":
        return False
    conn.execute(
        "UPDATE systemic_alerts SET status = 'acked', acked_at = ?, acked_by = ? WHERE id = ?", (now, by, alert_id)
    )
    return True


def resolve(conn: sqlite3.Connection, alert_id: int, by: str | None, now: float) -> bool:
    """active/acked → resolved. False when it was already resolved."""
    alert = get(conn, alert_id)
    if alert["status"] == "resolved":
        return False
    conn.execute(
        "UPDATE systemic_alerts SET status = 'resolved', resolved_at = ?, resolved_by = ? WHERE id = ?",
        (now, by, alert_id),
    )
    return True
