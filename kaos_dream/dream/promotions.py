"""Promotion review: a memory becomes a skill only when a person accepts it (like merges).

A skill is instructions other agents retrieve and execute, so a memory that one or a few agents
retrieved often (or planted and searched for) is proposed, never silently made a skill — unless
``KAOS_DREAM_AUTO_PROMOTE`` says so, in which case ``dream run --apply`` applies it as before.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ..errors import ConflictError, InvalidInputError, NotFoundError
from ..store import transaction
from .merge import reject_proposal
from .proposals import promote_memory

if TYPE_CHECKING:
    from ..store.context import Context


def pending_promotions(lib: Context) -> list[dict[str, Any]]:
    """Pending promote proposals, most hits first, with the memory's text and the agents behind it."""
    out = []
    for r in lib.conn.execute(
        "SELECT p.id, p.targets, p.score, p.rationale, p.created_at, p.evidence, m.content, m.kind FROM proposals p "
        "LEFT JOIN memories m ON p.targets = 'memory:' || m.id "
        "WHERE p.kind = 'promote' AND p.status = 'pending' ORDER BY p.score DESC, p.id"
    ):
        ev = json.loads(r["evidence"])
        out.append({"id": r["id"], "memory_id": ev.get("memory_id"), "key": ev.get("key"), "hits": ev.get("hits"),
                    "principal_count": ev.get("principal_count"), "principals": ev.get("principals", []),
                    "agent_count": ev.get("agent_count"), "agents": ev.get("agents", []), "content": r["content"],
                    "memory_kind": r["kind"], "rationale": r["rationale"], "created_at": r["created_at"]})
    return out


def _promotion(lib: Context, proposal_id: int) -> Any:
    row = lib.conn.execute("SELECT * FROM proposals WHERE id = ?", (proposal_id,)).fetchone()
    if row is None:
        raise NotFoundError(f"no proposal {proposal_id}")
    if row["kind"] != "promote":
        raise InvalidInputError(f"proposal {proposal_id} is a {row['kind']} proposal, not a promotion")
    return row


def reject_promotion(lib: Context, proposal_id: int, reason: str) -> dict[str, Any]:
    """A person's "no" to a promotion; it comes back only if the memory's content changes."""
    _promotion(lib, proposal_id)
    return reject_proposal(lib, proposal_id, reason)


def accept_promotion(lib: Context, proposal_id: int) -> dict[str, Any]:
    """Make a pending promote proposal's memory a skill (tagged ``promoted``), in one transaction."""
    conn = lib.conn
    with transaction(conn):
        row = _promotion(lib, proposal_id)
        if row["status"] != "pending":
            raise ConflictError(f"proposal {proposal_id} is already {row['status']}")
        now = lib.now()
        result = promote_memory(conn, proposal_id, int(row["targets"].split(":")[1]), now)
        if result is None:
            raise NotFoundError(f"proposal {proposal_id}'s memory was deleted; the proposal is superseded")
        conn.execute(
            "UPDATE proposals SET status = 'applied', decided_at = ?, result = ?, reason = ? WHERE id = ?",
            (now, json.dumps(result, sort_keys=True), "accepted by a person", proposal_id))
    return {"proposal": proposal_id, **result}
