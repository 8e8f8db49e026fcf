"""Merge review: accept or reject a merge proposal. Merges are never applied without a person.

Accepting moves the retired skill's telemetry (skill_uses, skill_hits) to the keeper — the counters
are those rows, so this rolls them up — re-points its graph edges and co-activations to the keeper
(summing strengths capped at 1 and counts on conflict, dropping self-edges), soft-deprecates the
retired skill with "merged into K via proposal N", and supersedes the other pending proposals that
name the retired skill. All in one transaction.
"""

from __future__ import annotations

import json
import sqlite3
from typing import TYPE_CHECKING, Any

from ..errors import ConflictError, InvalidInputError, NotFoundError
from ..store import transaction
from .proposals import supersede

if TYPE_CHECKING:
    from .host import DreamHost


def _proposal(conn: sqlite3.Connection, proposal_id: int) -> sqlite3.Row:
    row = conn.execute("SELECT * FROM proposals WHERE id = ?", (proposal_id,)).fetchone()
    if row is None:
        raise NotFoundError(f"no proposal {proposal_id}")
    return row


def _merge_skills(row: sqlite3.Row) -> tuple[int, int]:
    if row["kind"] != "merge":
        raise InvalidInputError(f"proposal {row['id']} is a {row['kind']} proposal, not a merge")
    a, b = (int(part.split(":")[1]) for part in row["targets"].split(","))
    return a, b


def pending_merges(conn: sqlite3.Connection, limit: int = -1) -> list[dict[str, Any]]:
    """Pending merge proposals, best first (``limit`` -1: all of them)."""
    out = []
    for r in conn.execute(
        "SELECT p.id, p.targets, p.score, p.rationale, p.created_at, p.evidence FROM proposals p "
        "WHERE p.kind = 'merge' AND p.status = 'pending' ORDER BY p.score DESC, p.id LIMIT ?", (limit,)
    ):
        ev = json.loads(r["evidence"])
        out.append({"id": r["id"], "skills": ev.get("skills"), "names": ev.get("names"), "jaccard": r["score"],
                    "rationale": r["rationale"], "created_at": r["created_at"]})
    return out


def _uses(conn: sqlite3.Connection, skill_id: int) -> int:
    return int(conn.execute("SELECT count(*) FROM skill_uses WHERE skill_id = ?", (skill_id,)).fetchone()[0])


def _move_edges(conn: sqlite3.Connection, retired: int, keeper: int, now: float) -> dict[str, int]:
    moved = merged = dropped = 0
    rows = conn.execute(
        "SELECT * FROM edges WHERE (src_kind = 'skill' AND src_id = ?) OR (dst_kind = 'skill' AND dst_id = ?) "
        "ORDER BY id", (retired, retired)).fetchall()
    for e in rows:
        src = (e["src_kind"], keeper if (e["src_kind"], e["src_id"]) == ("skill", retired) else e["src_id"])
        dst = (e["dst_kind"], keeper if (e["dst_kind"], e["dst_id"]) == ("skill", retired) else e["dst_id"])
        conn.execute("DELETE FROM edges WHERE id = ?", (e["id"],))
        if src == dst:
            dropped += 1
            continue
        if e["relation"] == "co_occurs_with" and src > dst:
            src, dst = dst, src
        other = conn.execute(
            "SELECT id FROM edges WHERE src_kind = ? AND src_id = ? AND dst_kind = ? AND dst_id = ? AND relation = ?",
            (*src, *dst, e["relation"])).fetchone()
        if other is not None:
            conn.execute(
                "UPDATE edges SET strength = min(1.0, strength + ?), activations = activations + ?, "
                "last_activated_cycle = max(last_activated_cycle, ?), "
                "last_activated_at = max(coalesce(last_activated_at, 0), coalesce(?, 0)), updated_at = ? WHERE id = ?",
                (e["strength"], e["activations"], e["last_activated_cycle"], e["last_activated_at"], now, other[0]))
            merged += 1
        else:
            conn.execute(
                "INSERT INTO edges (src_kind, src_id, dst_kind, dst_id, relation, strength, activations, "
                "last_activated_cycle, last_activated_at, provenance, created_at, updated_at, pruned_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (*src, *dst, e["relation"], e["strength"], e["activations"], e["last_activated_cycle"],
                 e["last_activated_at"], e["provenance"], e["created_at"], now, e["pruned_at"]))
            moved += 1
    return {"edges_moved": moved, "edges_merged": merged, "self_edges_dropped": dropped}


def _move_coactivations(conn: sqlite3.Connection, retired: int, keeper: int) -> int:
    rows = conn.execute(
        "SELECT * FROM coactivations WHERE (a_kind = 'skill' AND a_id = ?) OR (b_kind = 'skill' AND b_id = ?)",
        (retired, retired)).fetchall()
    for c in rows:
        conn.execute("DELETE FROM coactivations WHERE a_kind = ? AND a_id = ? AND b_kind = ? AND b_id = ?",
                     (c["a_kind"], c["a_id"], c["b_kind"], c["b_id"]))
        a = (c["a_kind"], keeper if (c["a_kind"], c["a_id"]) == ("skill", retired) else c["a_id"])
        b = (c["b_kind"], keeper if (c["b_kind"], c["b_id"]) == ("skill", retired) else c["b_id"])
        if a == b:
            continue
        a, b = min(a, b), max(a, b)
        conn.execute(
            "INSERT INTO coactivations (a_kind, a_id, b_kind, b_id, count, first_at, last_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (a_kind, a_id, b_kind, b_id) DO UPDATE SET count = count + excluded.count, "
            "first_at = min(first_at, excluded.first_at), last_at = max(last_at, excluded.last_at)",
            (*a, *b, c["count"], c["first_at"], c["last_at"]))
    return len(rows)


def accept_merge(lib: DreamHost, proposal_id: int, keep: int | str | None = None) -> dict[str, Any]:
    """Merge the two skills of a pending merge proposal into ``keep`` (default: the more used, then lower id)."""
    conn = lib.conn
    with transaction(conn):
        row = _proposal(conn, proposal_id)
        a, b = _merge_skills(row)
        if row["status"] != "pending":
            raise ConflictError(f"proposal {proposal_id} is already {row['status']}")
        for sid in (a, b):
            skill = conn.execute("SELECT id, name, deprecated FROM skills WHERE id = ?", (sid,)).fetchone()
            if skill is None:
                raise NotFoundError(f"proposal {proposal_id} names skill {sid}, which no longer exists; "
                                    f"reject it with `kaos dream merges --reject {proposal_id} --reason ...`")
            if skill["deprecated"]:
                raise ConflictError(f"proposal {proposal_id} names skill {sid} ({skill['name']}), which is deprecated; "
                                    f"restore it first or reject the proposal")
        if keep is None:
            keeper = a if (_uses(conn, a), -a) >= (_uses(conn, b), -b) else b
        else:
            keeper = lib.skills.resolve_id(keep) if not isinstance(keep, int) else keep
            if keeper not in (a, b):
                raise InvalidInputError(f"--keep must be one of the proposal's skills: {a} or {b}")
        retired = b if keeper == a else a
        now = lib.now()
        uses = conn.execute("UPDATE skill_uses SET skill_id = ? WHERE skill_id = ?", (keeper, retired)).rowcount
        hits = conn.execute("UPDATE skill_hits SET skill_id = ? WHERE skill_id = ?", (keeper, retired)).rowcount
        edge_counts = _move_edges(conn, retired, keeper, now)
        coacts = _move_coactivations(conn, retired, keeper)
        reason = f"merged into {keeper} via proposal {proposal_id}"
        conn.execute(
            "UPDATE skills SET deprecated = 1, deprecated_reason = ?, deprecated_at = ?, updated_at = ? WHERE id = ?",
            (reason, now, now, retired))
        result = {"keeper": keeper, "retired": retired, "skill_uses_moved": uses, "skill_hits_moved": hits,
                  "coactivations_moved": coacts, **edge_counts}
        conn.execute(
            "UPDATE proposals SET status = 'applied', decided_at = ?, reason = ?, result = ? WHERE id = ?",
            (now, reason, json.dumps(result, sort_keys=True), proposal_id))
        for (pid,) in conn.execute(
            "SELECT id FROM proposals WHERE status = 'pending' AND id != ? AND (targets = ? OR targets LIKE ? "
            "OR targets LIKE ?)", (proposal_id, f"skill:{retired}", f"skill:{retired},%", f"%,skill:{retired}")
        ).fetchall():
            supersede(conn, pid, now, f"skill {retired} was {reason}")
    return {"proposal": proposal_id, **result}


def reject_proposal(lib: DreamHost, proposal_id: int, reason: str) -> dict[str, Any]:
    """Record a person's "no" (with why); the proposal comes back only if its targets change."""
    if not reason or not reason.strip():
        raise InvalidInputError("a rejection needs a reason: --reason TEXT")
    with transaction(lib.conn):
        row = _proposal(lib.conn, proposal_id)
        if row["status"] != "pending":
            raise ConflictError(f"proposal {proposal_id} is already {row['status']}")
        lib.conn.execute(
            "UPDATE proposals SET status = 'rejected', decided_at = ?, reason = ? WHERE id = ?",
            (lib.now(), reason.strip(), proposal_id))
    return {"proposal": proposal_id, "status": "rejected", "reason": reason.strip()}
