"""The typed edge store: declared links, observed evidence, neighbours.

Edges live in the shared ``edges`` table. A pruned edge (``pruned_at`` set) is invisible to
activation and neighbour listings unless asked for, and can be restored until it is purged.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInputError, NotFoundError
from ..store import transaction
from ..store.records import as_dict, from_row
from .nodes import Node, check_exists, make_node
from .relations import (
    DEFAULT_DECLARED_STRENGTH,
    STRENGTH_CEIL,
    STRENGTH_FLOOR,
    UNDIRECTED,
    check_relation,
)

if TYPE_CHECKING:
    from ..store.context import StoreContext

# Evidence helpers accept exactly these (source kind, relation, destination kind) shapes.
EVIDENCE_SHAPES = {
    ("skill", "caused", "failure"),
    ("skill", "prevented", "failure"),
    ("memory", "enabled", "skill"),
}


@dataclass(frozen=True)
class Edge:
    id: int
    src: Node
    relation: str
    dst: Node
    strength: float
    activations: int
    last_activated_cycle: int
    provenance: str
    created_at: float
    updated_at: float
    pruned_at: float | None
    verifications: int
    verified_correct: int
    last_verified_at: float | None

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> Edge:
        return from_row(cls, row, src=Node(row["src_kind"], row["src_id"]), dst=Node(row["dst_kind"], row["dst_id"]))

    def to_dict(self) -> dict[str, Any]:
        return as_dict(self, src=str(self.src), dst=str(self.dst))


def canonical(src: Node, relation: str, dst: Node) -> tuple[Node, Node]:
    """``co_occurs_with`` is undirected and stored once, smaller ``(kind, id)`` first."""
    if relation in UNDIRECTED and tuple(dst) < tuple(src):
        return dst, src
    return src, dst


def clamp_strength(value: float) -> float:
    return min(STRENGTH_CEIL, max(STRENGTH_FLOOR, float(value)))


class Graph:
    """Typed edges of one :class:`Library` (``lib.graph``)."""

    loads = 0  # how many times arrays() read the edges table (the cache's misses), per instance once set

    def __init__(self, ctx: StoreContext) -> None:
        self._ctx = ctx
        self._arrays: tuple[tuple[int, int], Any] | None = None

    def arrays(self) -> Any:
        """The live graph as CSR arrays (:class:`GraphArrays`), cached until an edge changes.

        The cache key is the edges-only counter ``graph_version`` (moved by triggers whenever an
        edge is added, removed or changes what the arrays hold, whoever writes), so a telemetry
        write or another process's search leaves the cache alone. Arrays built inside a
        transaction may hold edges that a rollback takes back, so they are trusted only in that
        same state (this connection's ``total_changes`` and ``data_version`` unchanged); arrays
        built on committed data are valid for as long as the counter reads the same."""
        from .arrays import GraphArrays, load_edge_list

        conn = self._conn
        version = int(conn.execute("SELECT version FROM graph_version WHERE id = 1").fetchone()[0])
        if conn.in_transaction:
            data_version = int(conn.execute("PRAGMA data_version").fetchone()[0])
            key: Any = (version, conn.total_changes, data_version)
        else:
            key = (version,)
        cached = self._arrays
        if cached is not None and (cached[0] == key or cached[0] == (version,)):
            return cached[1]
        self.loads += 1
        arrays = GraphArrays.build(load_edge_list(conn))  # read after the version: a newer load only reloads again
        self._arrays = (key, arrays)  # type: ignore[assignment]  # (version,) or (version, changes, data_version)
        return arrays

    @property
    def _conn(self) -> sqlite3.Connection:
        return self._ctx.conn

    # -- reading ---------------------------------------------------------------------------------
    def get(self, src: Node, relation: str, dst: Node, *, include_pruned: bool = False) -> Edge | None:
        """The edge ``src -relation-> dst``, or None (pruned edges only with ``include_pruned``)."""
        relation = check_relation(relation)
        src, dst = canonical(src, relation, dst)
        sql = (
            "SELECT * FROM edges WHERE src_kind = ? AND src_id = ? AND relation = ? AND dst_kind = ? AND dst_id = ?"
        )
        if not include_pruned:
            sql += " AND pruned_at IS NULL"
        row = self._conn.execute(sql, (src.kind, src.id, relation, dst.kind, dst.id)).fetchone()
        return None if row is None else Edge.from_row(row)

    def edge(self, edge_id: int) -> Edge:
        """One edge by id; NotFoundError when there is none."""
        row = self._conn.execute("SELECT * FROM edges WHERE id = ?", (edge_id,)).fetchone()
        if row is None:
            raise NotFoundError(f"no edge {edge_id}")
        return Edge.from_row(row)

    def neighbours(
        self,
        node: Node,
        *,
        relation: str | None = None,
        direction: str = "both",
        include_pruned: bool = False,
    ) -> list[Edge]:
        """Edges touching ``node`` (``out``, ``in`` or ``both``), strongest first, ties by id."""
        if direction not in ("out", "in", "both"):
            raise InvalidInputError("direction must be out, in or both")
        node = make_node(node.kind, node.id)
        where: list[str] = []
        params: list[Any] = []
        if direction in ("out", "both"):
            where.append("(src_kind = ? AND src_id = ?)")
            params += [node.kind, node.id]
        if direction in ("in", "both"):
            where.append("(dst_kind = ? AND dst_id = ?)")
            params += [node.kind, node.id]
        sql = "SELECT * FROM edges WHERE (" + " OR ".join(where) + ")"
        if relation is not None:
            sql += " AND relation = ?"
            params.append(check_relation(relation))
        if not include_pruned:
            sql += " AND pruned_at IS NULL"
        sql += " ORDER BY strength DESC, id"
        return [Edge.from_row(r) for r in self._conn.execute(sql, params)]

    def preventers(self, failure: Node, *, limit: int = 10) -> list[Edge]:
        """Live ``—prevented→ failure`` edges from skills, most confident first (for failure lookup)."""
        if limit < 0:
            raise InvalidInputError("limit must not be negative")
        rows = self._conn.execute(
            "SELECT e.* FROM edges e JOIN skills s ON s.id = e.src_id "
            "WHERE e.dst_kind = ? AND e.dst_id = ? AND e.relation = 'prevented' AND e.src_kind = 'skill' "
            "AND e.pruned_at IS NULL AND s.deprecated = 0 "
            "ORDER BY e.strength DESC, e.verified_correct DESC, e.id LIMIT ?",
            (failure.kind, failure.id, limit),
        )
        return [Edge.from_row(r) for r in rows]

    def count(self, *, include_pruned: bool = False) -> int:
        """Number of edges (live ones unless ``include_pruned``)."""
        sql = "SELECT count(*) FROM edges" + ("" if include_pruned else " WHERE pruned_at IS NULL")
        return int(self._conn.execute(sql).fetchone()[0])

    # -- declaring ------------------------------------------------------------------------------
    def link(
        self,
        src: Node,
        relation: str,
        dst: Node,
        *,
        strength: float | None = None,
        provenance: str = "declared",
    ) -> Edge:
        """Create or update an edge. A user's declaration wins: an existing edge takes the given
        strength (default 0.8) and provenance ``declared``; a pruned edge is revived."""
        relation = check_relation(relation)
        if provenance not in ("declared", "observed", "emergent"):
            raise InvalidInputError("provenance must be declared, observed or emergent")
        value = DEFAULT_DECLARED_STRENGTH if strength is None else float(strength)
        if not 0.0 <= value <= 1.0:
            raise InvalidInputError(f"strength must be between 0 and 1, got {value}")
        with transaction(self._conn):
            src, dst = check_exists(self._conn, src), check_exists(self._conn, dst)
            if src == dst:
                raise InvalidInputError(f"an edge needs two different nodes, got {src} twice")
            src, dst = canonical(src, relation, dst)
            now = self._ctx.now()
            self._conn.execute(
                "INSERT INTO edges (src_kind, src_id, dst_kind, dst_id, relation, strength, provenance, "
                "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (src_kind, src_id, dst_kind, dst_id, relation) DO UPDATE SET "
                "strength = excluded.strength, provenance = excluded.provenance, updated_at = excluded.updated_at, "
                "pruned_at = NULL",
                (src.kind, src.id, dst.kind, dst.id, relation, value, provenance, now, now),
            )
            edge = self.get(src, relation, dst)
        assert edge is not None
        return edge

    def unlink(self, src: Node, relation: str, dst: Node) -> Edge:
        """Delete an edge (live or pruned); a missing edge is an error."""
        relation = check_relation(relation)
        with transaction(self._conn):
            edge = self.get(src, relation, dst, include_pruned=True)
            if edge is None:
                raise NotFoundError(f"no edge {src} -{relation}-> {dst}")
            self._conn.execute("DELETE FROM edges WHERE id = ?", (edge.id,))
            self._conn.execute(
                "UPDATE edge_prunes SET purged_at = ? WHERE edge_id = ? AND restored_at IS NULL AND purged_at IS NULL",
                (self._ctx.now(), edge.id),
            )
        return edge

    # -- observed evidence ------------------------------------------------------------------------
    def add_evidence(
        self,
        src: Node,
        relation: str,
        dst: Node,
        *,
        correct: bool = True,
        rate: float | None = None,
    ) -> Edge:
        """One piece of observed evidence for ``src —relation→ dst``.

        Shapes: ``skill —caused→ failure`` (skill applied in an episode that failed with that
        fingerprint), ``skill —prevented→ failure`` (a fix skill whose fix-outcome succeeded),
        ``memory —enabled→ skill`` (memory cited in a validated success). A new edge starts at
        ``graph_evidence_initial``; evidence then moves it by ``w ← w + η (r − w)`` with r = 1 for
        supporting and 0 for contradicting evidence. A declared edge keeps its provenance.
        """
        relation = check_relation(relation)
        if (src.kind, relation, dst.kind) not in EVIDENCE_SHAPES:
            shapes = ", ".join(f"{a} -{r}-> {b}" for a, r, b in sorted(EVIDENCE_SHAPES))
            raise InvalidInputError(f"no evidence rule for {src.kind} -{relation}-> {dst.kind} (known: {shapes})")
        eta = self._ctx.settings.graph_learning_rate if rate is None else rate
        if not 0.0 < eta <= 1.0:
            raise InvalidInputError("learning rate must be in (0, 1]")
        r = 1.0 if correct else 0.0
        with transaction(self._conn):
            src, dst = check_exists(self._conn, src), check_exists(self._conn, dst)
            now = self._ctx.now()
            edge = self.get(src, relation, dst, include_pruned=True)
            if edge is None:
                start = self._ctx.settings.graph_evidence_initial
                value = clamp_strength(start + eta * (r - start))
                self._conn.execute(
                    "INSERT INTO edges (src_kind, src_id, dst_kind, dst_id, relation, strength, provenance, "
                    "created_at, updated_at, last_verified_at, verifications, verified_correct) "
                    "VALUES (?, ?, ?, ?, ?, ?, 'observed', ?, ?, ?, 1, ?)",
                    (src.kind, src.id, dst.kind, dst.id, relation, value, now, now, now, int(correct)),
                )
            else:
                value = clamp_strength(edge.strength + eta * (r - edge.strength))
                self._conn.execute(
                    "UPDATE edges SET strength = ?, updated_at = ?, last_verified_at = ?, "
                    "verifications = verifications + 1, verified_correct = verified_correct + ?, pruned_at = NULL "
                    "WHERE id = ?",
                    (value, now, now, int(correct), edge.id),
                )
            out = self.get(src, relation, dst)
        assert out is not None
        return out

    def record_activation(self, edge_ids: list[int], cycle: int | None = None) -> int:
        """Bookkeeping for edges that carried activation into a result the caller used (write path)."""
        ids = sorted(set(edge_ids))
        if not ids:
            return 0
        now = self._ctx.now()
        with transaction(self._conn):
            self._conn.executemany(
                "UPDATE edges SET activations = activations + 1, last_activated_at = ?, "
                "last_activated_cycle = CASE WHEN ? IS NULL THEN last_activated_cycle ELSE ? END WHERE id = ?",
                [(now, cycle, cycle, i) for i in ids],
            )
        return len(ids)
