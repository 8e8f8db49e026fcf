"""Recording failures and reading fingerprints: the library's ``lib.failures``.

``record`` is the agent-facing write: normalise, fingerprint and (on first sight) diagnose before any
lock is taken, then store an occurrence and check the systemic detector in one short transaction. The
optional LLM diagnosis runs *after* that transaction commits, so a slow model never holds the write lock
other agents need.
``lookup``, ``get`` and ``list`` only read.
"""

from __future__ import annotations

import sqlite3
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from .. import limits
from ..errors import InvalidInputError, NotFoundError
from ..llm import LLMClient
from ..names import clean_agent_id
from ..store import transaction
from . import alerts, fixes
from . import heuristics as _heuristics  # noqa: F401  (registers the built-in diagnosers)
from .cues import generic_diagnosis
from .diagnosis import CATEGORIES, LLM_METHODS, REGISTRY, Diagnosis, FailureInput, diagnosis_source
from .fingerprint import bounded_sample, fingerprint_hash, message_hash
from .learned import learned_diagnosis, learned_from
from .llm_diagnoser import llm_diagnose
from .normalize import ALGORITHM, Normalized, normalize

if TYPE_CHECKING:
    from ..graph.edges import Graph
    from ..skills import Skills
    from ..store.context import StoreContext

MAX_TOOL_CHARS = limits.NAME
MAX_KEY_TEXT = 2000
FUTURE_TOLERANCE_S = 60.0

FALLBACK = Diagnosis(
    "unknown",
    "No diagnoser recognised this failure.",
    "Read the example message; register a diagnoser (or set ANTHROPIC_API_KEY for LLM diagnosis) and run "
    "`kaos dream recategorize`.",
    0.0,
    "fallback",
    None,
)


NO_SESSION_CONCLUSION = "no session: registered by a failure report"


def register_reporting_agent(conn, agent: str, now: float, principal: str | None = None) -> None:
    """Make sure ``agent`` has a row (occurrences reference it) without inventing a session.

    An agent id nobody started gets an *ended* row (state ``failed``, already processed, so no
    episode-end learning runs for it): a failure report must not leave a "running" session that
    never ends. An agent that did ``agent start`` keeps its own session untouched.
    """
    conn.execute(
        "INSERT OR IGNORE INTO agents (id, state, started_at, ended_at, conclusion, processed_at, principal)"
        " VALUES (?, 'failed', ?, ?, ?, ?, ?)",
        (agent, now, now, NO_SESSION_CONCLUSION, now, principal or None),
    )


def checked_agent(agent: object) -> str | None:
    """An agent id checked by the same rules as everywhere else (:func:`clean_agent_id`), or None."""
    if agent is None:
        return None
    if not isinstance(agent, str):
        raise InvalidInputError("agent id must be a string")
    return clean_agent_id(agent)


@dataclass(frozen=True)
class Known:
    """What :meth:`Failures.lookup` knows about a message: the same style as :class:`Recorded`
    (attributes, and ``to_dict()`` for JSON)."""

    fingerprint_id: int
    hash: str
    tool: str
    occurrences: int
    category: str
    root_cause: str | None
    suggested_action: str | None
    confidence: float | None
    diagnostic_method: str | None
    diagnoser: str | None
    learned_from: int | None
    source: str | None
    fix: dict[str, Any] | None
    preventing_skills: list[dict[str, Any]]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Recorded:
    """What one ``record`` call did."""

    fingerprint_id: int
    hash: str
    new: bool
    occurrence_id: int
    diagnosis: Diagnosis
    alert_id: int | None
    llm_note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "fingerprint_id": self.fingerprint_id,
            "hash": self.hash,
            "new": self.new,
            "occurrence_id": self.occurrence_id,
            **self.diagnosis.to_dict(),
            "learned_from": learned_from(self.diagnosis.diagnoser),
            "alert_id": self.alert_id,
            "llm_note": self.llm_note,
        }


def clean_tool(tool: str) -> str:
    if not isinstance(tool, str) or not tool.strip():
        raise InvalidInputError("a failure needs a tool name (--tool)")
    tool = " ".join(tool.split())
    if len(tool) > MAX_TOOL_CHARS:
        raise InvalidInputError(f"tool name is longer than {MAX_TOOL_CHARS} characters")
    return tool


def clean_message(message: str) -> str:
    if not isinstance(message, str) or not message.strip():
        raise InvalidInputError("a failure needs a non-empty error message")
    return limits.capped(message, "the error message", limits.TEXT)


def fingerprint_dict(row: sqlite3.Row) -> dict[str, Any]:
    data = dict(row)
    data["short_hash"] = row["hash"][:12]
    data["learned_from"] = learned_from(row["diagnoser"])
    data["source"] = diagnosis_source(row["diagnostic_method"])
    return data


class Failures:
    """Failure fingerprints, occurrences, diagnoses, fixes and systemic alerts of one library."""

    def __init__(self, ctx: StoreContext, *, llm: LLMClient, graph: Graph, skills: Skills) -> None:
        self._ctx = ctx
        self.llm = llm
        self._graph = graph
        self._skills = skills

    @property
    def conn(self) -> sqlite3.Connection:
        return self._ctx.conn

    # -- writing ----------------------------------------------------------------------------------
    def record(self, tool: str, message: str, agent: str | None = None, *, at: float | None = None) -> Recorded:
        """Record one failure of ``tool`` (by ``agent``, at ``at`` — default now). A message up to the text
        cap (:data:`..limits.TEXT`) is accepted; a bounded sample and the full message's hash are stored."""
        tool = clean_tool(tool)
        message = clean_message(message)
        agent = checked_agent(agent)
        now = self._ctx.now()
        when = now if at is None else float(at)
        if when > now + FUTURE_TOLERANCE_S:
            raise InvalidInputError("a failure cannot be recorded in the future")
        norm = normalize(message)
        digest = fingerprint_hash(tool, norm)
        sample = bounded_sample(message, self._ctx.settings.failure_sample_chars)
        key_text = norm.key_lines[:MAX_KEY_TEXT]
        normalized = norm.text[:MAX_KEY_TEXT]  # shown, never re-hashed: the hash above saw all of it
        conn = self.conn
        # Diagnose a fingerprint not seen yet BEFORE the write transaction opens: the rules read text an
        # agent chose, and their CPU must not hold the lock every other writer waits for.
        seen = conn.execute("SELECT id FROM failure_fingerprints WHERE hash = ?", (digest,)).fetchone()
        first = None if seen is not None else self._first_diagnosis(tool, key_text, sample, norm, normalized)
        with transaction(conn):
            if agent is not None:
                register_reporting_agent(conn, agent, now, self._ctx.principal)
            row = conn.execute("SELECT id FROM failure_fingerprints WHERE hash = ?", (digest,)).fetchone()
            new = row is None
            if new:
                # (deleted since the read above: diagnose now, the rare slow path)
                diagnosis = first or self._first_diagnosis(tool, key_text, sample, norm, normalized)
                fp_id = int(
                    conn.execute(
                        "INSERT INTO failure_fingerprints (hash, algorithm, tool, exception_type, normalized, key_text,"
                        " example, occurrences, first_seen, last_seen) VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?)",
                        (digest, ALGORITHM, tool, norm.exception_type, normalized, key_text, sample, when, when),
                    ).lastrowid
                )
                self._set_diagnosis(fp_id, diagnosis, now, decided_by=None)
            else:
                fp_id = int(row[0])
                diagnosis = self._current_diagnosis(fp_id)
            occurrence_id = int(
                conn.execute(
                    "INSERT INTO failure_occurrences (fingerprint_id, agent_id, message_sample, message_hash,"
                    " message_chars, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                    (fp_id, agent, sample, message_hash(message), len(message), when),
                ).lastrowid
            )
            conn.execute(
                "UPDATE failure_fingerprints SET occurrences = occurrences + 1, first_seen = min(first_seen, ?),"
                " last_seen = max(last_seen, ?) WHERE id = ?",
                (when, when, fp_id),
            )
            alert_id = alerts.evaluate(conn, fp_id, when, now, self._ctx.settings)
        note = None
        if new and diagnosis.method == "fallback" and conn.in_transaction:
            # Inside a caller's transaction a network call would hold the write lock for every other agent.
            note = "LLM diagnosis deferred (recorded inside a transaction): run `kaos dream recategorize`"
        elif new and diagnosis.method == "fallback":
            better, note = self._llm_diagnosis(fp_id, digest, tool, key_text)
            if better is not None:
                diagnosis = better
        return Recorded(fp_id, digest, new, occurrence_id, diagnosis, alert_id, note)

    def _first_diagnosis(self, tool: str, key_text: str, sample: str, norm: Normalized, normalized: str) -> Diagnosis:
        """A new fingerprint's diagnosis: the rules, then a person's labels, then the generic cues."""
        failure = FailureInput(tool, key_text, sample, norm.exception_type)
        return (
            REGISTRY.diagnose(failure)
            or learned_diagnosis(self.conn, tool, normalized)
            or generic_diagnosis(failure)
            or FALLBACK
        )

    def _llm_diagnosis(self, fp_id: int, digest: str, tool: str, text: str) -> tuple[Diagnosis | None, str | None]:
        """Ask the LLM (outside any transaction); store its answer unless someone else already did."""
        diagnosis, error = llm_diagnose(self.llm, self.conn, digest, tool, text, self._ctx.now())
        if diagnosis is None:
            return None, error
        with transaction(self.conn):
            current = self._current_diagnosis(fp_id)
            if current.method not in ("fallback", "none"):
                return current, None
            self._set_diagnosis(fp_id, diagnosis, self._ctx.now(), decided_by=None)
        return diagnosis, None

    def _set_diagnosis(self, fp_id: int, d: Diagnosis, now: float, decided_by: str | None) -> None:
        self.conn.execute(
            "UPDATE failure_fingerprints SET category = ?, root_cause = ?, suggested_action = ?, confidence = ?,"
            " diagnostic_method = ?, diagnoser = ?, diagnosed_at = ? WHERE id = ?",
            (d.category, d.root_cause, d.suggested_action, d.confidence, d.method, d.diagnoser, now, fp_id),
        )
        self.conn.execute(
            "INSERT INTO failure_diagnoses (fingerprint_id, category, root_cause, suggested_action, confidence,"
            " method, diagnoser, decided_by, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (fp_id, d.category, d.root_cause, d.suggested_action, d.confidence, d.method, d.diagnoser, decided_by, now),
        )

    def _current_diagnosis(self, fp_id: int) -> Diagnosis:
        row = self.conn.execute(
            "SELECT category, root_cause, suggested_action, confidence, diagnostic_method, diagnoser"
            " FROM failure_fingerprints WHERE id = ?",
            (fp_id,),
        ).fetchone()
        return Diagnosis(row[0], row[1] or "", row[2] or "", row[3], row[4], row[5])

    def diagnose(
        self,
        ref: int | str,
        *,
        category: str,
        root_cause: str | None = None,
        suggested_action: str | None = None,
        by: str | None = None,
    ) -> dict[str, Any]:
        """Override a fingerprint's diagnosis by hand (recorded with method ``manual``).

        A given text must say something: a manual diagnosis pins the fingerprint (automatic diagnosers
        never replace it), so an empty root cause would stay forever."""
        if category not in CATEGORIES:
            raise InvalidInputError(f"category must be one of {', '.join(CATEGORIES)}")
        for what, value, cap in (("root cause", root_cause, limits.DIAGNOSIS),
                                 ("suggested action", suggested_action, limits.DIAGNOSIS), ("--by", by, limits.NAME)):
            if value is not None and not value.strip():
                raise InvalidInputError(f"{what} must not be empty or only whitespace")
            limits.capped_optional(value, what, cap)
        with transaction(self.conn):
            fp = self.get(ref)
            diagnosis = Diagnosis(
                category,
                (root_cause or fp["root_cause"] or "").strip() or "Set by hand.",
                (suggested_action or fp["suggested_action"] or "").strip() or "See the root cause.",
                1.0,
                "manual",
                f"manual:{by}" if by else "manual",
            )
            self._set_diagnosis(fp["id"], diagnosis, self._ctx.now(), decided_by=by or "manual")
        return self.get(fp["id"])

    def confirm(self, ref: int | str, by: str | None = None) -> dict[str, Any]:
        """A person vouches for the current (model-written) diagnosis: it becomes ``manual`` (source
        ``person``), so agents are given it from now on. Confirming a diagnosis that is already not a
        model's is refused, so nobody mistakes a heuristic's answer for a reviewed one."""
        with transaction(self.conn):
            fp = self.get(ref)
            if fp["diagnostic_method"] not in LLM_METHODS:
                raise InvalidInputError(
                    f"failure {fp['id']}'s diagnosis is not a model's (source: {fp['source']}); nothing to confirm")
        return self.diagnose(fp["id"], category=fp["category"], root_cause=fp["root_cause"],
                             suggested_action=fp["suggested_action"], by=by or "confirmed")

    def recategorize(self, *, use_llm: bool = True) -> int:
        """Re-diagnose every ``unknown`` fingerprint that was not set by hand (after a new diagnoser
        was registered, a fingerprint labelled by hand, or a key configured): heuristics, then the
        nearest labelled example, then the generic cues, then the LLM. Returns how many now have a
        known category."""
        rows = self.conn.execute(
            "SELECT id, hash, tool, exception_type, normalized, key_text, example FROM failure_fingerprints"
            " WHERE category = 'unknown' AND diagnostic_method <> 'manual' ORDER BY id"
        ).fetchall()
        changed = 0
        for row in rows:
            failure = FailureInput(row["tool"], row["key_text"], row["example"], row["exception_type"])
            found = REGISTRY.diagnose(failure) or learned_diagnosis(self.conn, row["tool"], row["normalized"])
            if found is None:
                found = generic_diagnosis(failure)
            if found is None and use_llm and self.llm.enabled:
                found, _ = llm_diagnose(self.llm, self.conn, row["hash"], row["tool"], row["key_text"], self._ctx.now())
            if found is None or found.category == "unknown":
                continue
            with transaction(self.conn):
                still = self.conn.execute(
                    "SELECT category, diagnostic_method FROM failure_fingerprints WHERE id = ?", (row["id"],)
                ).fetchone()
                if still is None or still[0] != "unknown" or still[1] == "manual":
                    continue
                self._set_diagnosis(row["id"], found, self._ctx.now(), decided_by=None)
            changed += 1
        return changed

    # -- reading ----------------------------------------------------------------------------------
    def resolve_id(self, ref: int | str) -> int:
        """A fingerprint id from its integer id or a hash prefix of at least 6 hex characters."""
        text = limits.capped(str(ref).strip(), "the failure reference", limits.REF)
        if text.isdigit():
            row = self.conn.execute("SELECT id FROM failure_fingerprints WHERE id = ?", (int(text),)).fetchone()
            if row is None:
                raise NotFoundError(f"no failure fingerprint with id {text}")
            return int(row[0])
        low = text.lower()
        if len(low) < 6 or any(c not in "0123456789abcdef" for c in low):
            raise InvalidInputError(f"{text!r} is neither a fingerprint id nor a hash prefix (6+ hex characters)")
        found = self.conn.execute(
            "SELECT id FROM failure_fingerprints WHERE hash >= ? AND hash < ? ORDER BY id LIMIT 2",
            (low, low + "g"),
        ).fetchall()
        if not found:
            raise NotFoundError(f"no failure fingerprint whose hash starts with {low}")
        if len(found) > 1:
            raise InvalidInputError(f"hash prefix {low} is ambiguous: give more characters or the id")
        return int(found[0][0])

    def get(self, ref: int | str) -> dict[str, Any]:
        """One fingerprint with its diagnosis, current fix and occurrence/agent counts."""
        fp_id = self.resolve_id(ref)
        row = self.conn.execute("SELECT * FROM failure_fingerprints WHERE id = ?", (fp_id,)).fetchone()
        data = fingerprint_dict(row)
        data["agents"] = int(
            self.conn.execute(
                "SELECT COUNT(DISTINCT agent_id) FROM failure_occurrences WHERE fingerprint_id = ?", (fp_id,)
            ).fetchone()[0]
        )
        fix = fixes.active_fix(self.conn, fp_id)
        data["fix"] = fix
        data["fix_summary"] = fix["summary"] if fix else None
        return data

    def list(
        self, *, min_count: int = 1, category: str | None = None, tool: str | None = None, limit: int | None = None
    ) -> list[dict[str, Any]]:
        """Fingerprints seen at least ``min_count`` times, most frequent first (ties: newest, then id)."""
        if min_count < 0:
            raise InvalidInputError("--min-count must not be negative")
        if limit is not None and limit < 0:
            raise InvalidInputError("limit must not be negative")  # SQLite reads LIMIT -1 as "no limit"
        if category is not None and category not in CATEGORIES:
            raise InvalidInputError(f"category must be one of {', '.join(CATEGORIES)}")
        sql = (
            "SELECT f.*, (SELECT COUNT(DISTINCT agent_id) FROM failure_occurrences o WHERE o.fingerprint_id = f.id)"
            " AS agents, x.summary AS fix_summary, x.id AS fix_id FROM failure_fingerprints f"
            " LEFT JOIN failure_fixes x ON x.fingerprint_id = f.id AND x.status = 'active'"
            " WHERE f.occurrences >= ?"
        )
        params: list[Any] = [min_count]
        if category is not None:
            sql += " AND f.category = ?"
            params.append(category)
        if tool is not None:
            sql += " AND f.tool = ?"
            params.append(tool)
        sql += " ORDER BY f.occurrences DESC, f.last_seen DESC, f.id"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(int(limit))
        return [fingerprint_dict(r) for r in self.conn.execute(sql, params)]

    def lookup(self, tool: str, message: str) -> Known | None:
        """The agent fast path: this message's fingerprint, diagnosis and current fix, or None. Reads only."""
        tool = clean_tool(tool)
        digest = fingerprint_hash(tool, normalize(clean_message(message)))
        row = self.conn.execute("SELECT id FROM failure_fingerprints WHERE hash = ?", (digest,)).fetchone()
        if row is None:
            return None
        fp = self.get(int(row[0]))
        return Known(
            fingerprint_id=fp["id"], hash=fp["hash"], tool=fp["tool"], occurrences=fp["occurrences"],
            category=fp["category"], root_cause=fp["root_cause"], suggested_action=fp["suggested_action"],
            confidence=fp["confidence"], diagnostic_method=fp["diagnostic_method"], diagnoser=fp["diagnoser"],
            learned_from=fp["learned_from"], source=fp["source"], fix=fp["fix"],
            preventing_skills=self.preventing_skills(fp["id"]),
        )

    def preventing_skills(self, fp_id: int, limit: int = 5) -> list[dict[str, Any]]:
        """Live skills with a ``prevented`` edge to this fingerprint, most confident first (reads only)."""
        from ..graph.nodes import Node

        out = []
        for edge in self._graph.preventers(Node("failure", fp_id), limit=limit):
            row = self.conn.execute("SELECT name FROM skills WHERE id = ?", (edge.src.id,)).fetchone()
            if row is not None:
                out.append({"skill_id": edge.src.id, "name": row[0], "strength": round(edge.strength, 4),
                            "provenance": edge.provenance})
        return out

    def history(self, ref: int | str) -> list[dict[str, Any]]:
        """How a fingerprint's diagnosis changed over time, oldest first."""
        fp_id = self.resolve_id(ref)
        return [
            dict(r)
            for r in self.conn.execute("SELECT * FROM failure_diagnoses WHERE fingerprint_id = ? ORDER BY id", (fp_id,))
        ]

    def ids_for_agent(self, agent_id: str) -> tuple[int, ...]:
        """Distinct fingerprints an agent hit, in id order (for ``EpisodeEnd.failure_ids``)."""
        return tuple(
            int(r[0])
            for r in self.conn.execute(
                "SELECT DISTINCT fingerprint_id FROM failure_occurrences WHERE agent_id = ? ORDER BY fingerprint_id",
                (agent_id,),
            )
        )

    def occurrences(self, ref: int | str, limit: int = 20) -> list[dict[str, Any]]:
        """The latest ``limit`` occurrences of a fingerprint (agent, message sample, time)."""
        fp_id = self.resolve_id(ref)
        return [
            dict(r)
            for r in self.conn.execute(
                "SELECT id, agent_id, message_sample, message_hash, message_chars, created_at FROM failure_occurrences"
                " WHERE fingerprint_id = ? ORDER BY created_at DESC, id DESC LIMIT ?",
                (fp_id, limit),
            )
        ]

    # -- fixes and alerts (thin delegates so callers need one object) ---------------------------------
    def attach_fix(
        self, ref: int | str, *, summary: str | None = None, skill: int | str | None = None, by: str | None = None
    ) -> dict[str, Any]:
        """Attach a fix (a summary and/or a skill) to a fingerprint; it becomes the current fix."""
        with transaction(self.conn):
            fp_id = self.resolve_id(ref)
            skill_id = self._skills.resolve_id(skill) if skill is not None else None
            return fixes.attach(self.conn, fp_id, summary, skill_id, by, self._ctx.now())

    def record_fix_outcome(self, ref: int | str, succeeded: bool, *, agent: str | None = None) -> dict[str, Any]:
        """Report whether the current fix worked; a fix under the success floor after enough attempts is withdrawn."""
        agent = checked_agent(agent)
        with transaction(self.conn):
            fp_id = self.resolve_id(ref)
            now = self._ctx.now()
            if agent is not None:
                register_reporting_agent(self.conn, agent, now, self._ctx.principal)
            fix = fixes.active_fix(self.conn, fp_id)
            result = fixes.record_outcome(self.conn, fp_id, bool(succeeded), agent, now, self._ctx.settings)
            if fix is not None and fix["skill_id"] is not None:
                # A fix skill's outcome is evidence for (or against) skill —prevented→ failure.
                from ..graph.nodes import Node

                self._graph.add_evidence(
                    Node("skill", int(fix["skill_id"])), "prevented", Node("failure", fp_id), correct=bool(succeeded)
                )
            return result

    def fix_history(self, ref: int | str) -> list[dict[str, Any]]:
        """Every fix attached to a fingerprint with its outcomes, oldest first."""
        return fixes.history(self.conn, self.resolve_id(ref))

    def alerts(self, *, include_resolved: bool = False) -> list[dict[str, Any]]:
        """Systemic alerts, resolved ones too when ``include_resolved``."""
        return alerts.list_alerts(self.conn, include_resolved=include_resolved)

    def active_alerts(self) -> list[dict[str, Any]]:
        """Systemic alerts not yet resolved (active and acknowledged)."""
        return alerts.list_alerts(self.conn, include_resolved=False)

    def ack_alert(self, alert_id: int, by: str | None = None) -> bool:
        """Acknowledge an active systemic alert; False when it was not active."""
        with transaction(self.conn):
            return alerts.ack(self.conn, alert_id, by, self._ctx.now())

    def resolve_alert(self, alert_id: int, by: str | None = None) -> bool:
        """Resolve a systemic alert; False when it was already resolved."""
        with transaction(self.conn):
            return alerts.resolve(self.conn, alert_id, by, self._ctx.now())
