"""The validation gate: run the validators on an ended episode, store what they said, and let the
episode teach the graph only when every enabled quality validator passed.

It replaces the default outcome-only gate (the outcome validator is one of its quality validators).
Results are written inside the episode-end transaction, so a crash never leaves an episode that
learned without a stored reason, or a reason without its episode.
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Any

from .. import hooks
from ..hooks import EpisodeEnd, GateDecision
from .base import CitedItem, ValidationContext, ValidationReport, Verdict, summarise, threshold_for, validators

if TYPE_CHECKING:
    from ..library import Library


def resolve_citation(conn: sqlite3.Connection, kind: str, ref: str) -> CitedItem:
    """Look a citation up by name/key, then by id; it may not exist (that is what grounding checks)."""
    ref = ref.strip()
    if kind == "skill":
        row = conn.execute("SELECT id, name, description, template, deprecated FROM skills WHERE name = ?",
                           (ref,)).fetchone()
        if row is None and ref.isdigit():
            row = conn.execute("SELECT id, name, description, template, deprecated FROM skills WHERE id = ?",
                               (int(ref),)).fetchone()
        if row is None:
            return CitedItem(kind, ref, False, False, "")
        return CitedItem(kind, ref, True, not row["deprecated"],
                         f"{row['name']} {row['description']} {row['template']}")
    if kind == "memory":
        row = conn.execute("SELECT id, key, content FROM memories WHERE key = ?", (ref,)).fetchone()
        if row is None and ref.isdigit():
            row = conn.execute("SELECT id, key, content FROM memories WHERE id = ?", (int(ref),)).fetchone()
        if row is None:
            return CitedItem(kind, ref, False, False, "")
        return CitedItem(kind, ref, True, True, f"{row['key']} {row['content']}")
    return CitedItem(kind, ref, False, False, "")


def validate_episode(lib: Library, episode: EpisodeEnd) -> ValidationReport:
    cited = tuple(resolve_citation(lib.conn, kind, ref) for kind, ref in episode.citations)
    ctx = ValidationContext(lib, episode, cited)
    verdicts: list[Verdict] = []
    for spec in validators():
        threshold = threshold_for(lib, spec)
        try:
            verdict = spec.fn(ctx, threshold)
        except Exception as exc:  # a broken custom validator is reported, never crashes an agent
            verdict = Verdict(spec.name, spec.kind, False, None, None, threshold,
                              f"off: validator raised {type(exc).__name__}: {exc}")
        verdicts.append(verdict)
    return summarise(verdicts)


def store_report(lib: Library, agent_id: str, report: ValidationReport) -> None:
    now = lib.now()
    conn = lib.conn
    conn.execute("DELETE FROM validations WHERE agent_id = ?", (agent_id,))
    if report.verdicts:  # one multi-row statement (the validator count is stable, so it stays prepared)
        conn.execute(
            "INSERT INTO validations (agent_id, validator, kind, enabled, score, passed, threshold, reason, "
            "created_at) VALUES " + ",".join(["(?, ?, ?, ?, ?, ?, ?, ?, ?)"] * len(report.verdicts)),
            [
                x
                for v in report.verdicts
                for x in (agent_id, v.validator, v.kind, int(v.enabled), v.score,
                          None if v.passed is None else int(v.passed), v.threshold, v.reason, now)
            ],
        )
    conn.execute(
        "INSERT INTO episode_gates (agent_id, passed, trust, novelty, reason, created_at) VALUES (?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (agent_id) DO UPDATE SET passed = excluded.passed, trust = excluded.trust, "
        "novelty = excluded.novelty, reason = excluded.reason, created_at = excluded.created_at",
        (agent_id, int(report.passed), report.trust, report.novelty, report.reason, now),
    )


def validation_gate(lib: Library, episode: EpisodeEnd) -> GateDecision:
    report = validate_episode(lib, episode)
    store_report(lib, episode.agent_id, report)
    return GateDecision(report.passed, report.reason)


def stored_report(conn: sqlite3.Connection, agent_id: str) -> dict[str, Any] | None:
    gate = conn.execute("SELECT * FROM episode_gates WHERE agent_id = ?", (agent_id,)).fetchone()
    if gate is None:
        return None
    rows = conn.execute(
        "SELECT validator, kind, enabled, score, passed, threshold, reason FROM validations WHERE agent_id = ? "
        "ORDER BY kind, validator",
        (agent_id,),
    ).fetchall()
    return {
        "agent_id": agent_id,
        "passed": bool(gate["passed"]),
        "trust": gate["trust"],
        "novelty": gate["novelty"],
        "reason": gate["reason"],
        "created_at": gate["created_at"],
        "validators": [
            {
                "validator": r["validator"],
                "kind": r["kind"],
                "enabled": bool(r["enabled"]),
                "score": r["score"],
                "passed": None if r["passed"] is None else bool(r["passed"]),
                "threshold": r["threshold"],
                "reason": r["reason"],
            }
            for r in rows
        ],
    }


def list_reports(conn: sqlite3.Connection, *, failed_only: bool = False, limit: int = 50) -> list[dict[str, Any]]:
    sql = "SELECT agent_id FROM episode_gates"
    if failed_only:
        sql += " WHERE passed = 0"
    sql += " ORDER BY created_at DESC, agent_id LIMIT ?"
    return [r for (agent_id,) in conn.execute(sql, (limit,)) if (r := stored_report(conn, agent_id))]


def install() -> None:
    """Use the validation gate instead of the default outcome-only gate."""
    hooks.unregister("outcome")
    hooks.register_gate("validation", validation_gate, order=0)
