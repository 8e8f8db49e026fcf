"""The validation gate: run the validators on an ended episode, store what they said, and let the
episode teach the graph only when every enabled quality validator passed.

It replaces the default outcome-only gate (the outcome validator is one of its quality validators).
The decision and every verdict are one ``episode_gates`` row, written inside the episode-end
transaction, so a crash never leaves an episode that learned without a stored reason, or a reason
without its episode.
"""

from __future__ import annotations

import json
import math
import sqlite3
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from .. import hooks
from ..hooks import EpisodeEnd, GateDecision
from .base import (
    QUALITY,
    REPORT,
    CitedItem,
    ValidationContext,
    ValidationReport,
    Verdict,
    summarise,
    threshold_for,
    validators,
)

if TYPE_CHECKING:
    from .base import ValidationHost


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


def validate_episode(lib: ValidationHost, episode: EpisodeEnd) -> ValidationReport:
    cited = tuple(resolve_citation(lib.conn, kind, ref) for kind, ref in episode.citations)
    ctx = ValidationContext(lib, episode, cited)
    verdicts: list[Verdict] = []
    for spec in validators():
        threshold = threshold_for(lib, spec)
        try:
            verdict: Verdict | str = normalised(spec.fn(ctx, threshold))
        except Exception as exc:  # a broken custom validator is reported, never crashes an agent
            verdict = f"raised {type(exc).__name__}: {exc}"
        if isinstance(verdict, str):
            safe = threshold if threshold is not None and math.isfinite(threshold) else None
            verdict = Verdict(spec.name, spec.kind, False, None, None, safe, f"off: validator {verdict}")
        verdicts.append(verdict)
    return summarise(verdicts)


def normalised(answer: object) -> Verdict | str:
    """A (custom) validator's answer in the plain types it is stored as — str, bool, finite float or
    None, as the old REAL/INTEGER columns coerced them — or why it cannot be stored."""
    if not isinstance(answer, Verdict):
        return f"returned {type(answer).__name__}, not a Verdict"
    try:
        score = _unit_or_none(answer.score)
        threshold = _unit_or_none(answer.threshold)
    except (TypeError, ValueError):
        return f"returned score {answer.score!r} / threshold {answer.threshold!r}, not numbers in [0, 1]"
    if answer.kind not in (QUALITY, REPORT) or not isinstance(answer.validator, str) or not isinstance(
            answer.reason, str):
        return "returned a malformed verdict"
    passed = None if answer.passed is None else bool(answer.passed)
    return Verdict(answer.validator, answer.kind, bool(answer.enabled), score, passed, threshold, answer.reason)


def _unit_or_none(value: object) -> float | None:
    if value is None:
        return None
    if isinstance(value, str | bytes):
        raise TypeError("text is not a number")
    number = float(value)  # type: ignore[arg-type]
    if not 0.0 <= number <= 1.0:  # also refuses NaN
        raise ValueError("outside [0, 1]")
    return number


_VERDICT_KEYS = ("validator", "kind", "enabled", "score", "passed", "threshold", "reason")
_REPORT_SQL = "SELECT * FROM episode_gates WHERE id = (SELECT gate_id FROM agents WHERE id = ?)"


def verdicts_json(report: ValidationReport) -> str:
    """The verdicts as stored: listed by kind then validator, as every reader shows them."""
    ordered = sorted(report.verdicts, key=_listing_order)
    return "[" + ",".join(_verdict_json(v) for v in ordered) + "]"


def _listing_order(v: Verdict) -> tuple[str, str]:
    return v.kind, v.validator


@lru_cache(maxsize=1024)
def _verdict_json(v: Verdict) -> str:
    """One verdict as a JSON object; cached, since most verdicts repeat from episode to episode (an
    off validator, a completed outcome), and encoding them each time cost more than the write."""
    values = (v.validator, v.kind, v.enabled, v.score, v.passed, v.threshold, v.reason)
    return json.dumps(dict(zip(_VERDICT_KEYS, values, strict=True)), separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False)


def store_report(lib: ValidationHost, agent_id: str, report: ValidationReport) -> None:
    """Append the episode's gate row and point the episode at it, in the caller's transaction: the
    row lands on the table's last page and the pointer on the agent row the episode end rewrites
    anyway, so storing a report dirties about one page. A report stored again replaces the old one."""
    conn = lib.conn
    gate_id = conn.execute(
        "INSERT INTO episode_gates (agent_id, passed, trust, novelty, reason, verdicts, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (agent_id, int(report.passed), report.trust, report.novelty, report.reason, verdicts_json(report), lib.now()),
    ).lastrowid
    if conn.execute("UPDATE agents SET gate_id = ? WHERE id = ? AND gate_id IS NULL", (gate_id, agent_id)).rowcount:
        return  # the usual case: the episode's first report
    conn.execute("DELETE FROM episode_gates WHERE id = (SELECT gate_id FROM agents WHERE id = ?)", (agent_id,))
    conn.execute("UPDATE agents SET gate_id = ? WHERE id = ?", (gate_id, agent_id))


def validation_gate(lib: ValidationHost, episode: EpisodeEnd) -> GateDecision:
    report = validate_episode(lib, episode)
    store_report(lib, episode.agent_id, report)
    return GateDecision(report.passed, report.reason)


def _report(row: sqlite3.Row) -> dict[str, Any]:
    return {
        "agent_id": row["agent_id"],
        "passed": bool(row["passed"]),
        "trust": row["trust"],
        "novelty": row["novelty"],
        "reason": row["reason"],
        "created_at": row["created_at"],
        "validators": [{k: v.get(k) for k in _VERDICT_KEYS} for v in json.loads(row["verdicts"])],
    }


def stored_report(conn: sqlite3.Connection, agent_id: str) -> dict[str, Any] | None:
    row = conn.execute(_REPORT_SQL, (agent_id,)).fetchone()
    return None if row is None else _report(row)


def list_reports(conn: sqlite3.Connection, *, failed_only: bool = False, limit: int = 50) -> list[dict[str, Any]]:
    """Newest first: a walk back from the end of the table (rows are appended as episodes end)."""
    sql = "SELECT * FROM episode_gates" + (" WHERE passed = 0" if failed_only else "") + " ORDER BY id DESC LIMIT ?"
    return [_report(row) for row in conn.execute(sql, (limit,))]


def install() -> None:
    """Use the validation gate instead of the default outcome-only gate."""
    hooks.unregister("outcome")
    hooks.register_gate("validation", validation_gate, order=0)
