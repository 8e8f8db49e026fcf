"""Graph nodes: ``(kind, id)`` pairs, parsed from ``KIND:REF`` text and resolved against the library.

Skills are named by name or id, memories by key or id, failures by their integer fingerprint id.
Every node must exist (a row in ``skills``, ``memories`` or ``failure_fingerprints``): an edge to a
missing node would be a dangling reference that no command could show a label for.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import NamedTuple

from ..errors import InvalidInputError, NotFoundError
from ..limits import NODE, capped

KINDS = ("skill", "memory", "failure")
NODE_TABLES = {"skill": "skills", "memory": "memories", "failure": "failure_fingerprints"}
SQLITE_MAX_INT = 2**63 - 1


class Node(NamedTuple):
    kind: str
    id: int

    def __str__(self) -> str:
        return f"{self.kind}:{self.id}"

    def to_dict(self) -> dict[str, object]:
        return {"kind": self.kind, "id": self.id}


def make_node(kind: str, node_id: int) -> Node:
    if kind not in KINDS:
        raise InvalidInputError(f"unknown node kind {kind!r}: use skill, memory or failure")
    if isinstance(node_id, bool) or not isinstance(node_id, int) or node_id < 1:
        raise InvalidInputError(f"node id must be a positive whole number, got {node_id!r}")
    return Node(kind, node_id)


def split_node(text: str) -> tuple[str, str]:
    """``"skill:csv-to-parquet"`` -> ``("skill", "csv-to-parquet")``; a clear error otherwise."""
    capped(text, "a graph node", NODE)
    kind, sep, ref = text.partition(":")
    kind, ref = kind.strip().lower(), ref.strip()
    if not sep or kind not in KINDS or not ref:
        raise InvalidInputError(
            f"bad node {text!r}: use KIND:REF with KIND skill, memory or failure "
            "(e.g. skill:csv-to-parquet, memory:tls, failure:12)"
        )
    return kind, ref


@dataclass(frozen=True)
class NodeLabel:
    node: Node
    label: str  # skill name, memory key, or "failure N"
    text: str  # description / content, empty for failures
    deprecated: bool = False


def resolve_node(conn: sqlite3.Connection, text: str | Node) -> Node:
    """Parse and resolve a node reference to an existing ``(kind, id)``."""
    if isinstance(text, Node):
        return check_exists(conn, text)
    kind, ref = split_node(text)
    if kind == "failure":
        if not ref.isdigit() or int(ref) < 1:
            raise InvalidInputError(f"bad node {text!r}: a failure is named by its integer id (e.g. failure:12)")
        return check_exists(conn, Node("failure", int(ref)))
    table, column = ("skills", "name") if kind == "skill" else ("memories", "key")
    row = conn.execute(f"SELECT id FROM {table} WHERE {column} = ?", (ref,)).fetchone()
    if row is None and ref.isdigit():
        row = conn.execute(f"SELECT id FROM {table} WHERE id = ?", (int(ref),)).fetchone()
    if row is None:
        raise NotFoundError(f"no {kind} {ref!r}")
    return Node(kind, int(row[0]))


def check_exists(conn: sqlite3.Connection, node: Node) -> Node:
    node = make_node(node.kind, node.id)
    table = NODE_TABLES[node.kind]
    if node.id > SQLITE_MAX_INT or conn.execute(f"SELECT 1 FROM {table} WHERE id = ?", (node.id,)).fetchone() is None:
        raise NotFoundError(f"no {node.kind} with id {node.id}")
    return node


def labels(conn: sqlite3.Connection, nodes: list[Node] | set[Node]) -> dict[Node, NodeLabel]:
    """Human labels for display, fetched in two queries whatever the number of nodes."""
    out: dict[Node, NodeLabel] = {}
    skill_ids = sorted({n.id for n in nodes if n.kind == "skill"})
    memory_ids = sorted({n.id for n in nodes if n.kind == "memory"})
    for chunk in _chunks(skill_ids):
        marks = ",".join("?" * len(chunk))
        for row in conn.execute(f"SELECT id, name, description, deprecated FROM skills WHERE id IN ({marks})", chunk):
            node = Node("skill", row[0])
            out[node] = NodeLabel(node, row[1], row[2], bool(row[3]))
    for chunk in _chunks(memory_ids):
        marks = ",".join("?" * len(chunk))
        for row in conn.execute(f"SELECT id, key, content FROM memories WHERE id IN ({marks})", chunk):
            node = Node("memory", row[0])
            out[node] = NodeLabel(node, row[1], row[2])
    for node in nodes:
        if node not in out:
            out[node] = NodeLabel(node, f"failure {node.id}" if node.kind == "failure" else f"(missing) {node}", "")
    return out


def references(conn: sqlite3.Connection, nodes: list[Node] | set[Node]) -> dict[Node, str]:
    """Each node as a person types it: ``skill:deploy-friday``, ``memory:tls``, ``failure:12``
    (``kind:id`` where there is no name, e.g. a memory without a key). JSON keeps the ids."""
    out: dict[Node, str] = {}
    for node, label in labels(conn, nodes).items():
        named = node.kind in ("skill", "memory") and label.label and not label.label.startswith("(missing)")
        out[node] = f"{node.kind}:{label.label}" if named else str(node)
    return out


def _chunks(ids: list[int], size: int = 500) -> list[list[int]]:
    return [ids[i : i + size] for i in range(0, len(ids), size)]
