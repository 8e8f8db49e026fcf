"""Stored vectors: written with each skill or memory, recomputed by ``kaos db reindex``, backfilled by
the dream, and read into an in-process index for search.

A vector is float32 little-endian bytes with its model id, version and dimension beside it, so any
engine can store it and numpy reads it back. Only vectors of the configured model and version are
searched; others are stale until reindexed. Vectors of deprecated skills are kept (a restore needs no
recompute) and filtered out at search time.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InvalidInputError
from ..store import transaction
from ..store.helpers import insert_unique
from .base import Embedder
from .loader import missing_package, semantic_status

if TYPE_CHECKING:
    from ..store.context import Context

KINDS = ("skill", "memory")
BATCH = 256  # rows embedded and written per transaction by reindex and backfill

_TEXT_SQL = {
    "skill": "SELECT id, name, description, tags FROM skills WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id",
    "memory": "SELECT id, content FROM memories WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id",
}
_TABLE = {"skill": "skills", "memory": "memories"}
_UPSERT = (
    "INSERT OR REPLACE INTO embeddings (kind, entry_id, model, model_version, dim, vector) VALUES (?, ?, ?, ?, ?, ?)"
)


def skill_text(name: str, description: str, tags: str | list[str] | tuple[str, ...]) -> str:
    """What a skill's vector is made from: its name as words, its description and its tags."""
    tag_list = json.loads(tags) if isinstance(tags, str) else list(tags)
    words = name.replace("-", " ").replace("_", " ")
    return f"{words}. {description} {' '.join(tag_list)}".strip()


def _text(kind: str, row: tuple[Any, ...]) -> str:
    return skill_text(row[1], row[2], row[3]) if kind == "skill" else str(row[1])


def to_bytes(vector: np.ndarray) -> bytes:
    return np.asarray(vector, dtype="<f4").tobytes()


def from_bytes(blob: bytes, dim: int) -> np.ndarray:
    return np.frombuffer(blob, dtype="<f4", count=dim).astype(np.float32)


@dataclass(frozen=True)
class KindIndex:
    """Every current vector of one kind: ``matrix[i]`` belongs to ``ids[i]`` (ids ascending)."""

    seq: int
    ids: np.ndarray
    matrix: np.ndarray
    row_of: dict[int, int]


class Vectors:
    """The library's vectors; one instance per :class:`Library`. The model loads on first use only."""

    def __init__(self, ctx: Context) -> None:
        self._ctx = ctx
        self._status: tuple[Embedder | None, str] | None = None
        self._index: dict[str, KindIndex] = {}

    @property
    def _conn(self) -> sqlite3.Connection:
        return self._ctx.conn

    # -- the model ---------------------------------------------------------------------------------
    def embedder(self) -> Embedder | None:
        """The configured model, or None when semantic retrieval is off (see :meth:`off_reason`)."""
        if self._status is None:
            self._status = semantic_status(self._ctx.settings)
        return self._status[0]

    def off_reason(self) -> str:
        """One line saying why semantic search is off, or "" when it is on."""
        self.embedder()
        assert self._status is not None
        return self._status[1]

    def unavailable_reason(self) -> str:
        """The one line to show when semantic retrieval is on but its model is missing or could not be
        loaded; "" otherwise. Never loads the model itself (a search that lexical matches answered
        did not need it)."""
        if not self._ctx.settings.semantic:
            return ""
        if self._status is None:
            return missing_package(self._ctx.settings.embedding_model)
        return "" if self._status[0] is not None else self._status[1]

    # -- writing -----------------------------------------------------------------------------------
    def embed_skill(self, name: str, description: str, tags: list[str] | tuple[str, ...]) -> np.ndarray | None:
        """The vector a new or edited skill gets, computed before its write transaction (None when off)."""
        model = self.embedder()
        return None if model is None else model.embed([skill_text(name, description, tags)])[0]

    def embed_memory(self, content: str) -> np.ndarray | None:
        """The vector a new or edited memory gets, computed before its write transaction (None when off)."""
        model = self.embedder()
        return None if model is None else model.embed([content])[0]

    def store(self, kind: str, entry_id: int, vector: np.ndarray | None) -> None:
        """Write one vector (inside the caller's transaction); nothing when semantic retrieval is off."""
        model = self.embedder()
        if vector is None or model is None:
            return
        self._conn.execute(_UPSERT, (kind, entry_id, model.model_id, model.model_version, model.dim,
                                     to_bytes(vector)))

    def add_entry(self, kind: str, vector: np.ndarray | None, sql: str, params: tuple[Any, ...], conflict: str) -> int:
        """Insert one skill or memory row (``sql``; a unique clash is ``ConflictError(conflict)``) and its
        vector in one transaction, so an entry never exists without the vector it was embedded with."""
        with transaction(self._conn):
            entry_id = insert_unique(self._conn, sql, params, conflict)
            self.store(kind, entry_id, vector)
        return entry_id

    def _prepare(self, model: Embedder, kind: str, ids: list[int]) -> list[tuple[str, int, str, np.ndarray]]:
        """(kind, id, embedded text, vector) for ``ids``, computed without writing."""
        rows = self._conn.execute(_TEXT_SQL[kind], (json.dumps(ids),)).fetchall()
        if not rows:
            return []
        texts = [_text(kind, tuple(r)) for r in rows]
        vectors = model.embed(texts)
        return [(kind, int(r[0]), text, v) for r, text, v in zip(rows, texts, vectors, strict=True)]

    def stale_ids(self, kind: str, *, force: bool = False, limit: int | None = None) -> list[int]:
        """Ids of ``kind`` whose vector is missing or was made by another model or version (every id
        when ``force``), ascending."""
        model = self.embedder()
        table = _TABLE[kind]
        if force or model is None:
            sql, params = f"SELECT id FROM {table} ORDER BY id", []
        else:
            sql = (
                f"SELECT t.id FROM {table} AS t LEFT JOIN embeddings AS e ON e.kind = ? AND e.entry_id = t.id "
                "WHERE e.entry_id IS NULL OR e.model != ? OR e.model_version != ? OR e.dim != ? ORDER BY t.id"
            )
            params = [kind, model.model_id, model.model_version, model.dim]
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        return [int(r[0]) for r in self._conn.execute(sql, params)]

    def reindex(self, *, force: bool = False, limit: int | None = None) -> dict[str, int]:
        """(Re)compute the vectors that are missing or stale (all of them with ``force``), in batches of
        :data:`BATCH` rows; at most ``limit`` rows per kind. Returns rows written per kind. A batch is
        embedded before its write transaction (a transformer takes seconds per batch, and other
        writers must not wait for it); a row edited meanwhile already got its vector with the edit."""
        model = self.embedder()
        if model is None:
            raise InvalidInputError(f"cannot reindex: {self.off_reason()}")
        done: dict[str, int] = {}
        for kind in KINDS:
            ids = self.stale_ids(kind, force=force, limit=limit)
            done[kind] = 0
            for start in range(0, len(ids), BATCH):
                batch = self._prepare(model, kind, ids[start : start + BATCH])
                with transaction(self._conn):
                    done[kind] += self.store_backfill(batch)
        return done

    def backfill_batch(self, limit: int) -> list[tuple[str, int, str, np.ndarray]]:
        """Vectors for up to ``limit`` rows per kind that lack a current one, computed without writing
        (the dream's prepare step, outside the write lock): (kind, id, embedded text, vector)."""
        model = self.embedder()
        if model is None:
            return []
        out: list[tuple[str, int, str, np.ndarray]] = []
        for kind in KINDS:
            ids = self.stale_ids(kind, limit=limit)
            if ids:
                out += self._prepare(model, kind, ids)
        return out

    def store_backfill(self, batch: list[tuple[str, int, str, np.ndarray]]) -> int:
        """Write the vectors of :meth:`backfill_batch` whose row still holds the text that was embedded
        (inside the caller's transaction); returns how many were written."""
        written = 0
        for kind in KINDS:
            items = [(i, text, v) for k, i, text, v in batch if k == kind]
            if not items:
                continue
            current = {int(r[0]): _text(kind, tuple(r))
                       for r in self._conn.execute(_TEXT_SQL[kind], (json.dumps([i for i, _, _ in items]),))}
            for entry_id, text, vector in items:
                if current.get(entry_id) == text:
                    self.store(kind, entry_id, vector)
                    written += 1
        return written

    # -- reading -----------------------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        """Per kind: rows, current vectors, stale vectors (another model or version), missing vectors."""
        model = self.embedder()
        out: dict[str, Any] = {"semantic": model is not None, "off_reason": self.off_reason() or None,
                               "model": model.model_id if model else None,
                               "model_version": model.model_version if model else None}
        for kind in KINDS:
            rows = int(self._conn.execute(f"SELECT count(*) FROM {_TABLE[kind]}").fetchone()[0])
            stored = int(self._conn.execute("SELECT count(*) FROM embeddings WHERE kind = ?", (kind,)).fetchone()[0])
            current = 0
            if model is not None:
                current = int(self._conn.execute(
                    "SELECT count(*) FROM embeddings WHERE kind = ? AND model = ? AND model_version = ? AND dim = ?",
                    (kind, model.model_id, model.model_version, model.dim)).fetchone()[0])
            out[kind] = {"rows": rows, "current": current, "stale": stored - current, "missing": rows - stored}
        return out

    def index(self, kind: str) -> KindIndex | None:
        """The current vectors of ``kind`` as one matrix, reloaded only when a vector was added or
        replaced since (``seq`` grew); None when semantic retrieval is off or nothing is embedded.
        A deleted row's vector may linger in the cached index: search joins its candidates with the
        live table, so it is never returned."""
        model = self.embedder()
        if model is None:
            return None
        seq = int(self._conn.execute("SELECT coalesce(max(seq), 0) FROM embeddings").fetchone()[0])
        cached = self._index.get(kind)
        if cached is not None and cached.seq == seq:
            return cached if len(cached.ids) else None
        cursor = self._conn.cursor()
        cursor.row_factory = None
        rows = cursor.execute(
            "SELECT entry_id, vector FROM embeddings WHERE kind = ? AND model = ? AND model_version = ? AND dim = ? "
            "ORDER BY entry_id",
            (kind, model.model_id, model.model_version, model.dim),
        ).fetchall()
        ids = np.array([r[0] for r in rows], dtype=np.int64)
        matrix = (np.frombuffer(b"".join(r[1] for r in rows), dtype="<f4").reshape(len(rows), model.dim)
                  if rows else np.zeros((0, model.dim), dtype=np.float32))
        built = KindIndex(seq, ids, np.ascontiguousarray(matrix, dtype=np.float32),
                          {int(i): n for n, i in enumerate(ids)})
        self._index[kind] = built
        return built if len(ids) else None
