"""Dream consolidation: the phases of a pass, proposals, merge review, the digest, the auto trigger.

Public API for other features:
* :func:`register_phase` (``phases.py``) — plug a phase into every pass (failure catch-up, policies,
  sparsification), with ``ORDER_*`` constants for its place;
* :func:`current_cycle` — the dream cycle to stamp on an edge an episode activates;
* ``lib.dream`` (:class:`Dream`) — run, list and show passes; review proposals.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInputError, NotFoundError
from . import auto, digest, feature_phases, graph_phases, proposals  # noqa: F401  (registers the built-in phases and the hook)
from .host import DreamHost, DreamStores
from .merge import accept_merge, pending_merges, reject_proposal
from .phases import (
    ORDER_DECAY,
    ORDER_DIGEST,
    ORDER_EMERGENT,
    ORDER_FAILURES,
    ORDER_POLICIES,
    ORDER_PROPOSALS,
    ORDER_REPLAY,
    ORDER_SPARSIFY,
    DreamContext,
    Phase,
    PhaseResult,
    register_phase,
    registered_phases,
    unregister_phase,
)
from .promotions import accept_promotion, pending_promotions, reject_promotion
from .runner import Progress, RunOutcome, run_dream
from .state import ANY_PASS, APPLIED_PASS, completed_since_marker, current_cycle, lease_holder

if TYPE_CHECKING:
    from .host import DreamHost

__all__ = [
    "Dream", "DreamContext", "DreamHost", "DreamStores", "Phase", "PhaseResult", "RunOutcome", "register_phase",
    "unregister_phase",
    "registered_phases", "current_cycle", "run_dream", "ORDER_REPLAY", "ORDER_DECAY", "ORDER_EMERGENT",
    "ORDER_FAILURES", "ORDER_PROPOSALS", "ORDER_POLICIES", "ORDER_SPARSIFY", "ORDER_DIGEST",
]

PROPOSAL_STATUSES = ("pending", "applied", "rejected", "superseded")


class Dream:
    """``lib.dream``: the dream side of one library, working on the stores it is given (:class:`DreamStores`)."""

    def __init__(self, stores: DreamHost) -> None:
        self._lib = stores

    def run(self, *, apply: bool = False, since: float | None = None, wait: float = 0.0, if_due: bool = False,
            trigger: str = "manual", progress: Progress | None = None) -> RunOutcome:
        """Run one dream pass (a dry run unless ``apply``) under the lease and return its outcome."""
        return run_dream(self._lib, mode="apply" if apply else "dry-run", since=since, wait=wait, if_due=if_due,
                         trigger=trigger, progress=progress)

    def consolidate(self, *, apply: bool = False, wait: float = 0.0, progress: Progress | None = None) -> RunOutcome:
        """Proposals only (no replay, decay or emergent edges)."""
        return run_dream(self._lib, mode="apply" if apply else "dry-run", kind="consolidate", wait=wait,
                         progress=progress)

    def cycle(self) -> int:
        """The number of completed dream passes so far (the decay clock of the graph)."""
        return current_cycle(self._lib.conn)

    def due(self) -> dict[str, Any]:
        """Both marks: the automatic dry run counts from the last pass of any kind, ``--apply --if-due``
        from the last applied pass (``KAOS_DREAM_THRESHOLD`` episodes each)."""
        threshold = self._lib.settings.dream_threshold
        n, marker = completed_since_marker(self._lib.conn, ANY_PASS)
        n_applied, applied_marker = completed_since_marker(self._lib.conn, APPLIED_PASS)
        return {"completed_since_last": n, "threshold": threshold, "due": n >= threshold, "marker": marker,
                "completed_since_last_apply": n_applied, "apply_due": n_applied >= threshold,
                "applied_marker": applied_marker}

    def lease(self) -> dict[str, Any] | None:
        """Who holds the dream lease right now (holder, expiry), or None when no pass is running."""
        held = lease_holder(self._lib.conn)
        return None if held is None else held.__dict__.copy()

    def runs(self, limit: int = 20) -> list[dict[str, Any]]:
        """The latest ``limit`` passes, newest first, with status and counts."""
        if limit < 0:
            raise InvalidInputError("limit must not be negative")
        return [
            {k: r[k] for k in ("id", "kind", "mode", "trigger", "status", "cycle", "started_at", "finished_at",
                               "duration_ms", "error")}
            for r in self._lib.conn.execute("SELECT * FROM dream_runs ORDER BY id DESC LIMIT ?", (limit,))
        ]

    def show(self, run_id: int) -> dict[str, Any]:
        """One pass with its phases, timings and digest."""
        r = self._lib.conn.execute("SELECT * FROM dream_runs WHERE id = ?", (run_id,)).fetchone()
        if r is None:
            raise NotFoundError(f"no dream run {run_id} (see `kaos dream runs`)")
        phases = [
            {"phase": p["phase"], "duration_ms": p["duration_ms"], "summary": json.loads(p["summary"])}
            for p in self._lib.conn.execute(
                "SELECT * FROM dream_run_phases WHERE run_id = ? ORDER BY position", (run_id,))
        ]
        out = {k: r[k] for k in r.keys() if k != "summary"}  # noqa: SIM118 (sqlite3.Row iterates values)
        out["summary"] = json.loads(r["summary"])
        out["phases"] = phases
        return out

    def proposals(self, *, kind: str | None = None, status: str | None = "pending",
                  limit: int | None = None) -> list[dict[str, Any]]:
        """Proposals in id order, optionally of one ``kind`` and ``status`` (None: every status)."""
        if kind is not None and kind not in proposals.KINDS:
            raise InvalidInputError(f"unknown proposal kind {kind!r}: use promote, prune or merge")
        if status is not None and status not in PROPOSAL_STATUSES:
            raise InvalidInputError(f"unknown status {status!r}: use {', '.join(PROPOSAL_STATUSES)}")
        sql, params = "SELECT * FROM proposals WHERE 1 = 1", []
        if kind:
            sql += " AND kind = ?"
            params.append(kind)
        if status:
            sql += " AND status = ?"
            params.append(status)
        sql += " ORDER BY id LIMIT ?"
        params.append(-1 if limit is None else limit)
        out = []
        for r in self._lib.conn.execute(sql, params):
            d = {k: r[k] for k in r.keys()}  # noqa: SIM118 (sqlite3.Row iterates values)
            d["evidence"] = json.loads(d["evidence"])
            d["result"] = json.loads(d["result"]) if d["result"] else None
            out.append(d)
        return out

    def merges(self) -> list[dict[str, Any]]:
        """Pending merge proposals, most similar first: what a person has to review."""
        return pending_merges(self._lib.conn)

    def accept_merge(self, proposal_id: int, keep: int | str | None = None) -> dict[str, Any]:
        """Accept pending merge proposal ``proposal_id``, keeping ``keep`` (name or id; default the proposal's
        first skill); the other skill's history moves to the keeper and it is deprecated."""
        return accept_merge(self._lib, proposal_id, keep)

    def promotions(self) -> list[dict[str, Any]]:
        """Pending promotion proposals (memory, hits, agents, content): they wait for a person."""
        return pending_promotions(self._lib)

    def accept_promotion(self, proposal_id: int) -> dict[str, Any]:
        """Accept pending promotion ``proposal_id``: its memory becomes a skill."""
        return accept_promotion(self._lib, proposal_id)

    def reject_promotion(self, proposal_id: int, reason: str) -> dict[str, Any]:
        """Reject pending promotion ``proposal_id`` with a reason; it stays rejected until the memory changes."""
        return reject_promotion(self._lib, proposal_id, reason)

    def reject(self, proposal_id: int, reason: str) -> dict[str, Any]:
        """Reject a pending proposal with a reason; it stays rejected until its targets change."""
        return reject_proposal(self._lib, proposal_id, reason)
