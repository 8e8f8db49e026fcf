"""Neighbours of a skill or memory in the association graph (``kaos dream related``). Read-only.

A neighbour is anything joined to the node by a live edge (any relation, either direction) or by a
co-activation count. Strongest edge first, then most co-activations, then (kind, id). Deprecated
skills are left out, as search leaves them out; ``include_deprecated`` brings them back, marked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import InvalidInputError
from ..store.context import Context

if TYPE_CHECKING:
    from ..memories import Memories
    from ..skills import Skills


class RelatedHost(Context, Protocol):
    """The part of the library :func:`related` reads (a Library satisfies it)."""

    @property
    def skills(self) -> Skills: ...

    @property
    def memories(self) -> Memories: ...

NODE_KINDS = ("skill", "memory")


@dataclass(frozen=True)
class Neighbour:
    kind: str
    id: int
    name: str | None  # skill name, memory key, or None for a failure
    relation: str | None  # strongest live edge's relation, None when only co-activated
    direction: str | None  # "out" (node -> neighbour), "in", or "both" for co_occurs_with
    strength: float | None
    coactivations: float
    deprecated: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "id": self.id,
            "name": self.name,
            "relation": self.relation,
            "direction": self.direction,
            "strength": self.strength,
            "coactivations": self.coactivations,
            "deprecated": self.deprecated,
        }


def related(
    lib: RelatedHost, kind: str, ref: int | str, limit: int = 10, *, include_deprecated: bool = False
) -> tuple[int, list[Neighbour]]:
    """The node's id and its neighbours, strongest first (deprecated skills only when asked)."""
    if kind not in NODE_KINDS:
        raise InvalidInputError(f"unknown kind {kind!r}: use skill or memory")
    if limit < 0:
        raise InvalidInputError("limit must not be negative")
    node_id = lib.skills.resolve_id(ref) if kind == "skill" else lib.memories.resolve_id(ref)
    conn = lib.conn
    found: dict[tuple[str, int], dict[str, Any]] = {}
    for row in conn.execute(
        "SELECT dst_kind, dst_id, relation, strength, 'out' FROM edges "
        "WHERE src_kind = ? AND src_id = ? AND pruned_at IS NULL "
        "UNION ALL SELECT src_kind, src_id, relation, strength, 'in' FROM edges "
        "WHERE dst_kind = ? AND dst_id = ? AND pruned_at IS NULL",
        (kind, node_id, kind, node_id),
    ):
        key = (row[0], int(row[1]))
        entry = found.setdefault(key, {"relation": None, "direction": None, "strength": None, "count": 0.0})
        if entry["strength"] is None or row[3] > entry["strength"]:
            direction = "both" if row[2] == "co_occurs_with" else row[4]
            entry.update(relation=row[2], direction=direction, strength=float(row[3]))
    for row in conn.execute(
        "SELECT b_kind, b_id, count FROM coactivations WHERE a_kind = ? AND a_id = ? "
        "UNION ALL SELECT a_kind, a_id, count FROM coactivations WHERE b_kind = ? AND b_id = ?",
        (kind, node_id, kind, node_id),
    ):
        key = (row[0], int(row[1]))
        entry = found.setdefault(key, {"relation": None, "direction": None, "strength": None, "count": 0.0})
        entry["count"] += float(row[2])
    ordered = sorted(
        found.items(), key=lambda kv: (-(kv[1]["strength"] or 0.0), -kv[1]["count"], kv[0][0], kv[0][1])
    )
    names = _names(lib, [k for k, _ in ordered])
    out = []
    for k, v in ordered:
        name, deprecated = names.get(k, (None, False))
        if deprecated and not include_deprecated:
            continue
        if len(out) == limit:
            break
        out.append(Neighbour(k[0], k[1], name, v["relation"], v["direction"], v["strength"], v["count"], deprecated))
    return node_id, out


def _names(lib: RelatedHost, nodes: list[tuple[str, int]]) -> dict[tuple[str, int], tuple[str, bool]]:
    """(name, deprecated) of each skill and memory among ``nodes`` (failures have no name)."""
    out: dict[tuple[str, int], tuple[str, bool]] = {}
    queries = (("skill", "SELECT id, name, deprecated FROM skills"), ("memory", "SELECT id, key, 0 FROM memories"))
    for kind, sql in queries:
        ids = [i for k, i in nodes if k == kind]
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            for row in lib.conn.execute(f"{sql} WHERE id IN ({','.join('?' * len(chunk))})", chunk):
                out[(kind, row[0])] = (row[1], bool(row[2]))
    return out
