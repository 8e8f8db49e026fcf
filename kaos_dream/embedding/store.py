"""Stored vectors in two tiers: the fast model's, written with each skill or memory, and a strong
model's, backfilled by the dream (a bounded batch per pass) and by ``kaos db reindex``; both are read
into in-process indexes for search.

A vector is float32 little-endian bytes with its model id, version and dimension beside it, so any
engine can store it and numpy reads it back. A row holds at most one vector per model (migration 17).
Only vectors of a configured model and version are searched; others are stale until reindexed.
Vectors of deprecated skills are kept (a restore needs no recompute) and filtered out at search time.
An edit of what was embedded drops every vector of the row (a trigger); the writer embeds the new text
with the fast model in the same transaction, and the strong vector follows at the next backfill.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InvalidInputError
from ..store import transaction
from ..store.helpers import insert_unique
from ..tokens import identifier_words
from . import ann
from .background import at_lowest_priority
from .base import Embedder
from .loader import EmbedderUnavailable, identity, load_embedder, semantic_status
from .packages import OFF, fast_tier_off, strong_tier_off, tier_status

if TYPE_CHECKING:
    from ..store.context import Context

KINDS = ("skill", "memory")
BATCH = 256  # rows embedded and written per transaction by reindex and backfill
QUERY_CACHE = 512  # query vectors a process remembers per library (a few hundred KB at most)
STRONG_CHUNK = 64  # rows the strong tier's backfill embeds at once (bounds the batch's working memory)

_TEXT_SQL = {
    "skill": "SELECT id, name, description, tags FROM skills WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id",
    "memory": "SELECT id, content FROM memories WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id",
}
_TABLE = {"skill": "skills", "memory": "memories"}
# A replaced vector is deleted and inserted (a new seq, which search processes' caches watch), the same
# two statements on both engines.
_DELETE = "DELETE FROM embeddings WHERE kind = ? AND entry_id = ? AND model = ?"
_INSERT = "INSERT INTO embeddings (kind, entry_id, model, model_version, dim, vector) VALUES (?, ?, ?, ?, ?, ?)"
Identity = tuple[str, str, int]  # (model id, version, dimension)
Prepared = tuple[str, int, str, np.ndarray, Identity]  # (kind, id, embedded text, vector, model)


def skill_text(name: str, description: str, tags: str | list[str] | tuple[str, ...]) -> str:
    """What a skill's vector is made from: its name as words (identifiers split, issue 31), its
    description and its tags."""
    tag_list = json.loads(tags) if isinstance(tags, str) else list(tags)
    words = identifier_words(name)
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


def _identity_of(model: Embedder) -> Identity:
    return model.model_id, model.model_version, model.dim


class Vectors:
    """The library's vectors; one instance per :class:`Library`. Each model loads on first use only."""

    def __init__(self, ctx: Context) -> None:
        self._ctx = ctx
        self._status: tuple[Embedder | None, str] | None = None
        self._strong: tuple[Embedder | None, str] | None = None
        self._strong_id: tuple[Identity | None] | None = None  # strong_identity's answer, once known
        self._index: dict[tuple[str, str], KindIndex] = {}
        self._graphs: dict[tuple[str, str], ann.Graph] = {}  # (kind, model id) -> its ANN graph
        self._warm_seq: int | None = None  # the vectors' seq at the last look of warm_before_lock
        self._queries: dict[tuple[str, str], np.ndarray] = {}  # (model id, query) -> vector, newest last

    @property
    def _conn(self) -> sqlite3.Connection:
        return self._ctx.conn

    # -- the models --------------------------------------------------------------------------------
    def embedder(self) -> Embedder | None:
        """The fast model, or None when semantic retrieval is off (see :meth:`off_reason`)."""
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
            return fast_tier_off(self._ctx.settings)
        return "" if self._status[0] is not None else self._status[1]

    def _strong_name(self) -> str | None:
        s = self._ctx.settings
        name = s.strong_embedding_model.strip().lower()
        return None if not s.semantic or name in OFF or name == s.embedding_model else name

    def strong_off_reason(self) -> str:
        """One line saying why the strong tier is off, "" when it is on or may be (its package is
        installed). Cheap: it never loads the model, only looks its package up."""
        if self._strong is not None and self._strong[0] is None and self._strong_name() is not None:
            return self._strong[1]
        return strong_tier_off(self._ctx.settings)

    def tiers(self) -> dict[str, dict[str, Any]]:
        """Each tier's configured model and whether it is on, with the one line saying why not
        (:func:`.packages.tier_status`, plus a load failure this process met)."""
        out = tier_status(self._ctx.settings)
        if self._status is not None and self._status[0] is None:
            out["fast"].update(on=False, off_reason=self._status[1])
        if out["strong"]["on"] and self.strong_off_reason():
            out["strong"].update(on=False, off_reason=self.strong_off_reason())
        return out

    def strong(self) -> Embedder | None:
        """The strong tier's model, loaded on first use; None when the tier is off or its package is
        missing (see :meth:`strong_off_reason`)."""
        if self._strong is None:
            name = self._strong_name()
            if name is None or self.embedder() is None:
                self._strong = (None, self.strong_off_reason() or "the strong tier is off")
            else:
                try:
                    self._strong = (load_embedder(name), "")
                except EmbedderUnavailable as exc:
                    self._strong = (None, f"the strong tier is off: {exc}; semantic search uses the fast tier only")
        return self._strong[0]

    def strong_identity(self) -> Identity | None:
        """(model id, version, dimension) of the strong tier without loading its weights; None when off."""
        if self._strong is not None:
            model = self._strong[0]
            return None if model is None else _identity_of(model)
        if self._strong_id is None:
            name = self._strong_name()
            found: Identity | None = None
            if name is not None and not self.strong_off_reason():
                try:
                    found = identity(name)
                except (ImportError, EmbedderUnavailable):
                    found = None
            self._strong_id = (found,)
        return self._strong_id[0]

    def strong_to_load(self) -> bool:
        """True when a semantic search now would load the strong model: this process searched
        semantically (it holds the fast model), the strong model is not loaded, and the library has
        gained strong vectors. Looked at only when the vectors changed since the last look (one
        ``max(seq)`` read otherwise); see :meth:`warm_before_lock`."""
        if self._strong is not None or self._status is None or self._status[0] is None:
            return False
        seq = int(self._conn.execute("SELECT coalesce(max(seq), 0) FROM embeddings").fetchone()[0])
        if seq == self._warm_seq:
            return False
        self._warm_seq = seq
        model = self.strong_identity()
        return model is not None and self._conn.execute(
            "SELECT 1 FROM embeddings WHERE model = ? AND model_version = ? AND dim = ? LIMIT 1", model
        ).fetchone() is not None

    def strong_loaded(self) -> bool:
        """True when this process holds the strong model (loading nothing)."""
        return self._strong is not None and self._strong[0] is not None

    def warm_before_lock(self) -> None:
        """Load the strong model now, outside any write transaction, when a search would load it.

        Once the library gains strong vectors (the dream's backfill), a process's next semantic search
        loads the strong model: half a second or more, which inside ``lib.transaction()`` held the
        write lock, and the other writers' waits ran past their busy timeout (issue 33 item 13).
        Never changes what a search returns."""
        if self.strong_to_load():
            self.load_strong()

    def load_strong(self) -> None:
        """Load the strong model and run one forward pass (the first one imports what it needs, such
        as the BLAS thread limits), so that a search inside a write transaction loads nothing."""
        strong = self.strong()
        if strong is not None:
            strong.embed(["warm"])

    def _tiers(self) -> list[Embedder]:
        """The models whose vectors reindex and backfill compute: the fast one, then the strong one."""
        fast = self.embedder()
        if fast is None:
            return []
        strong = self.strong()
        return [fast] if strong is None else [fast, strong]

    # -- writing -----------------------------------------------------------------------------------
    def embed_skill(self, name: str, description: str, tags: list[str] | tuple[str, ...]) -> np.ndarray | None:
        """The fast vector a new or edited skill gets, computed before its write transaction (None when off)."""
        model = self.embedder()
        return None if model is None else model.embed([skill_text(name, description, tags)])[0]

    def embed_skills(self, rows: list[tuple[str, str, tuple[str, ...]]]) -> np.ndarray | None:
        """The fast vectors of many (name, description, tags) at once (a bulk import; None when off)."""
        model = self.embedder()
        return None if model is None else model.embed([skill_text(n, d, t) for n, d, t in rows])

    def store_many(self, kind: str, ids: list[int], matrix: np.ndarray) -> int:
        """Write fast vectors of rows that hold none yet (fresh rows), inside the caller's transaction."""
        fast = self.embedder()
        if fast is None or not ids:
            return 0
        model_id, version, dim = _identity_of(fast)
        self._conn.executemany(_INSERT, ((kind, i, model_id, version, dim, to_bytes(v))
                                         for i, v in zip(ids, matrix, strict=True)))
        return len(ids)

    def embed_query(self, model: Embedder, query: str) -> np.ndarray:
        """``model``'s vector of a search query, remembered for the last :data:`QUERY_CACHE` queries:
        agents repeat their queries, and the strong model's forward pass (milliseconds a query) ran
        inside writers' transactions (issue 33 item 13). The same text always gets the same vector."""
        key = (model.model_id, query)
        vector = self._queries.pop(key, None)
        if vector is None:
            vector = model.embed([query])[0]
            vector.setflags(write=False)
            if len(self._queries) >= QUERY_CACHE:
                del self._queries[next(iter(self._queries))]
        self._queries[key] = vector
        return vector

    def embed_memory(self, content: str) -> np.ndarray | None:
        """The fast vector a new or edited memory gets, computed before its write transaction (None when off)."""
        model = self.embedder()
        return None if model is None else model.embed([content])[0]

    def store(self, kind: str, entry_id: int, vector: np.ndarray | None, model: Identity | None = None) -> None:
        """Write one vector of ``model`` (the fast model when None) inside the caller's transaction,
        replacing that model's earlier vector of the row; nothing when semantic retrieval is off."""
        fast = self.embedder()
        if vector is None or fast is None:
            return
        model_id, version, dim = model or _identity_of(fast)
        self._conn.execute(_DELETE, (kind, entry_id, model_id))
        self._conn.execute(_INSERT, (kind, entry_id, model_id, version, dim, to_bytes(vector)))

    def add_entry(self, kind: str, vector: np.ndarray | None, sql: str, params: tuple[Any, ...], conflict: str) -> int:
        """Insert one skill or memory row (``sql``; a unique clash is ``ConflictError(conflict)``) and its
        fast vector in one transaction, so an entry never exists without the vector it was embedded with."""
        with transaction(self._conn):
            entry_id = insert_unique(self._conn, sql, params, conflict)
            self.store(kind, entry_id, vector)
        return entry_id

    def _prepare(self, model: Embedder, kind: str, ids: list[int]) -> list[Prepared]:
        """(kind, id, embedded text, vector, model) for ``ids``, computed without writing."""
        rows = self._conn.execute(_TEXT_SQL[kind], (json.dumps(ids),)).fetchall()
        if not rows:
            return []
        texts = [_text(kind, tuple(r)) for r in rows]
        vectors = model.embed(texts)
        made = _identity_of(model)
        return [(kind, int(r[0]), text, v, made) for r, text, v in zip(rows, texts, vectors, strict=True)]

    def stale_ids(self, kind: str, *, force: bool = False, limit: int | None = None,
                  model: Identity | None = None) -> list[int]:
        """Ids of ``kind`` without a current vector of ``model`` (the fast model when None): none, or one
        made by another version (every id when ``force``), ascending."""
        fast = self.embedder()
        table = _TABLE[kind]
        if force or fast is None:
            sql, params = f"SELECT id FROM {table} ORDER BY id", []
        else:
            model_id, version, dim = model or _identity_of(fast)
            sql = (
                f"SELECT t.id FROM {table} AS t WHERE NOT EXISTS (SELECT 1 FROM embeddings AS e WHERE e.kind = ? "
                "AND e.entry_id = t.id AND e.model = ? AND e.model_version = ? AND e.dim = ?) ORDER BY t.id"
            )
            params = [kind, model_id, version, dim]
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        return [int(r[0]) for r in self._conn.execute(sql, params)]

    def reindex(self, *, force: bool = False, limit: int | None = None, drop_unused: bool = False,
                progress: Callable[[str, int, int], None] | None = None) -> dict[str, Any]:
        """(Re)compute the vectors that are missing or stale (all of them with ``force``) for the fast
        model and, when installed, the strong one, in batches of :data:`BATCH` rows; at most ``limit``
        rows per kind and model. Returns the fast tier's rows written per kind and under ``"strong"`` the
        strong tier's (absent when it is off). A batch is embedded before its write transaction (the strong model takes
        seconds per batch, and other writers must not wait for it); a row edited meanwhile already got
        its fast vector with the edit. ``progress`` hears (step, rows done, rows) per batch.

        Vectors of other models are never deleted unless ``drop_unused`` (issue 33 item 6: turning the
        strong tier off must not throw away hours of its embedding); then they are, and ``"dropped"``
        says how many went."""
        if self.embedder() is None:
            raise InvalidInputError(f"cannot reindex: {self.off_reason()}")
        tiers = self._tiers()
        if drop_unused and self._strong_name() is not None and len(tiers) < 2:
            raise InvalidInputError(
                f"cannot tell which vectors the strong tier uses ({self.strong_off_reason() or 'it did not load'}); "
                "nothing dropped. Set KAOS_STRONG_EMBEDDING_MODEL=none to drop its vectors on purpose")
        done: dict[str, Any] = {}
        for n, model in enumerate(tiers):
            counts: dict[str, int] = {}
            for kind in KINDS:
                ids = self.stale_ids(kind, force=force, limit=limit, model=_identity_of(model))
                counts[kind] = 0
                step = f"{'fast' if n == 0 else 'strong'} model, {kind} vectors"
                for start in range(0, len(ids), BATCH):
                    if progress is not None:
                        progress(step, start, len(ids))
                    batch = self._prepare(model, kind, ids[start : start + BATCH])
                    with transaction(self._conn):
                        counts[kind] += self.store_backfill(batch)
            if n == 0:
                done.update(counts)
            else:
                done["strong"] = counts
        if drop_unused:
            kept = [m.model_id for m in tiers]
            with transaction(self._conn):
                done["dropped"] = self.unused_count()
                self._conn.execute(f"DELETE FROM embeddings WHERE model NOT IN ({', '.join('?' for _ in kept)})", kept)
        return done

    def unused_count(self) -> int:
        """Stored vectors of models that are neither tier's (kept until ``reindex(drop_unused=True)``).
        While the strong tier is configured but could not load, its own vectors are not counted."""
        kept = [m.model_id for m in self._tiers()]
        if self._strong_name() is not None and len(kept) < 2:
            return 0
        return int(self._conn.execute(
            f"SELECT count(*) FROM embeddings WHERE model NOT IN ({', '.join('?' for _ in kept)})", kept).fetchone()[0])

    def fast_backfill_batch(self, limit: int) -> list[Prepared]:
        """The dream's prepare step for the fast tier, outside the write lock, computed without
        writing: fast vectors for up to ``limit`` rows per kind that lack a current one."""
        fast = self.embedder()
        if fast is None:
            return []
        out: list[Prepared] = []
        for kind in KINDS:
            ids = self.stale_ids(kind, limit=limit)
            if ids:
                out += self._prepare(fast, kind, ids)
        return out

    def strong_backfill_batch(self, rows: int, between: Callable[[], None] | None = None) -> list[Prepared]:
        """The dream's prepare step for the strong tier (empty when it is off), outside the write lock:
        strong vectors for the first ``rows`` rows in all (skills, then memories, by id) that lack a
        current one. Bounded by rows only, never by time, so what a pass embeds does not depend on the
        machine's speed (issue 33 item 10). Each chunk of :data:`STRONG_CHUNK` rows is embedded at the
        lowest CPU priority (:mod:`.background`), so writers beside it keep the CPU (item 13);
        ``between`` runs in the calling thread after each chunk (the dream renews its lease there)."""
        if rows <= 0 or self.strong_identity() is None:
            return []
        strong = self.strong()
        if strong is None:
            return []
        out: list[Prepared] = []
        left = rows
        for kind in KINDS:
            ids = self.stale_ids(kind, limit=left, model=_identity_of(strong)) if left > 0 else []
            left -= len(ids)
            for start in range(0, len(ids), STRONG_CHUNK):
                chunk = ids[start : start + STRONG_CHUNK]
                out += at_lowest_priority(lambda chunk=chunk, kind=kind: self._prepare(strong, kind, chunk))
                if between is not None:
                    between()
        return out

    def store_backfill(self, batch: list[Prepared]) -> int:
        """Write the vectors of a backfill batch whose row still holds the text that was embedded
        (inside the caller's transaction); returns how many were written."""
        return sum(self.store_backfill_by_model(batch).values())

    def store_backfill_by_model(self, batch: list[Prepared]) -> dict[str, int]:
        """:meth:`store_backfill`, counting the vectors written per model id."""
        written: dict[str, int] = {}
        for kind in KINDS:
            items = [(i, text, v, m) for k, i, text, v, m in batch if k == kind]
            if not items:
                continue
            current = {int(r[0]): _text(kind, tuple(r))
                       for r in self._conn.execute(_TEXT_SQL[kind], (json.dumps(sorted({i for i, *_ in items})),))}
            kept = [(entry_id, vector, model) for entry_id, text, vector, model in items
                    if current.get(entry_id) == text]
            self._store_many(kind, kept)
            for _, _, model in kept:
                written[model[0]] = written.get(model[0], 0) + 1
        return written

    def _store_many(self, kind: str, items: list[tuple[int, np.ndarray, Identity]]) -> None:
        """:meth:`store` for many rows of ``kind`` in two statements: every old vector of the row's
        model deleted, then the new ones inserted in the same order (so the same ``seq`` values as
        row by row); a 10k-row backfill spent a third of its time in 2 x N single statements."""
        if not items or self.embedder() is None:
            return
        if len({(entry_id, model[0]) for entry_id, _, model in items}) < len(items):  # a row twice: last one wins
            for entry_id, vector, model in items:
                self.store(kind, entry_id, vector, model)
            return
        self._conn.executemany(_DELETE, [(kind, entry_id, model[0]) for entry_id, _, model in items])
        self._conn.executemany(_INSERT, [(kind, entry_id, model[0], model[1], model[2], to_bytes(vector))
                                         for entry_id, vector, model in items])

    # -- reading -----------------------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        """Per kind: rows, current fast vectors, stale rows (a vector, but none current of the fast
        model), missing rows (no vector at all), and ``strong``: rows with a current strong vector
        (absent when the tier is off). The strong tier is described without loading its model."""
        model = self.embedder()
        strong = self.strong_identity() if model is not None else None
        out: dict[str, Any] = {"semantic": model is not None, "off_reason": self.off_reason() or None,
                               "model": model.model_id if model else None,
                               "model_version": model.model_version if model else None,
                               "strong_model": strong[0] if strong else None,
                               "strong_model_version": strong[1] if strong else None,
                               "strong_off_reason": (self.strong_off_reason() or None) if not strong else None}
        for kind in KINDS:
            rows = int(self._conn.execute(f"SELECT count(*) FROM {_TABLE[kind]}").fetchone()[0])
            stored = int(self._conn.execute(
                "SELECT count(DISTINCT entry_id) FROM embeddings WHERE kind = ?", (kind,)).fetchone()[0])
            current = self._current(kind, _identity_of(model)) if model is not None else 0
            out[kind] = {"rows": rows, "current": current, "stale": stored - current, "missing": rows - stored}
            if strong:
                out[kind]["strong"] = self._current(kind, strong)
        return out

    def _current(self, kind: str, model: Identity) -> int:
        return int(self._conn.execute(
            "SELECT count(*) FROM embeddings WHERE kind = ? AND model = ? AND model_version = ? AND dim = ?",
            (kind, *model)).fetchone()[0])

    def _model_of(self, strong: bool) -> Identity | None:
        fast = self.embedder()
        if fast is None:
            return None
        return self.strong_identity() if strong else _identity_of(fast)

    def index(self, kind: str, *, strong: bool = False) -> KindIndex | None:
        """The current vectors of ``kind`` of the fast model (of the strong one with ``strong``) as one
        matrix, reloaded only when a vector was added or replaced since (``seq`` grew); None when that
        tier is off or holds no vector. The strong index never loads the strong model. A deleted
        row's vector may linger in the cached index: search joins its candidates with the live
        table, so it is never returned."""
        model = self._model_of(strong)
        if model is None:
            return None
        model_id, version, dim = model
        seq = int(self._conn.execute("SELECT coalesce(max(seq), 0) FROM embeddings").fetchone()[0])
        cached = self._index.get((kind, model_id))
        if cached is not None and cached.seq == seq:
            return cached if len(cached.ids) else None
        cursor = self._conn.cursor()
        cursor.row_factory = None
        rows = cursor.execute(
            "SELECT entry_id, vector FROM embeddings WHERE kind = ? AND model = ? AND model_version = ? AND dim = ? "
            "ORDER BY entry_id",
            (kind, model_id, version, dim),
        ).fetchall()
        ids = np.array([r[0] for r in rows], dtype=np.int64)
        matrix = (np.frombuffer(b"".join(r[1] for r in rows), dtype="<f4").reshape(len(rows), dim)
                  if rows else np.zeros((0, dim), dtype=np.float32))
        built = KindIndex(seq, ids, np.ascontiguousarray(matrix, dtype=np.float32),
                          {int(i): n for n, i in enumerate(ids)})
        self._index[(kind, model_id)] = built
        return built if len(ids) else None

    # -- the approximate-nearest-neighbour graphs (issue 35 item 4) -----------------------------------
    def _ann_identity(self, kind: str, strong: bool, vectors: KindIndex | None) -> ann.Identity | None:
        minimum = self._ctx.settings.ann_min_rows
        if vectors is None or minimum <= 0 or len(vectors.ids) < minimum or not ann.available():
            return None
        model = self._model_of(strong)
        return None if model is None else ann.Identity(kind, *model)

    def graph(self, kind: str, *, strong: bool = False) -> ann.Graph | None:
        """The ANN graph over :meth:`index` (``kind``, ``strong``) for a search, or None for exact search:
        fewer than ``ann_min_rows`` vectors, the setting 0, usearch not installed, or no graph saved yet
        (a search never builds one, which takes minutes at a million rows, nor writes: the dream's
        ``ann`` phase and ``kaos skill import-jsonl`` save it). A saved graph behind the database catches up in
        memory with the newer vectors; one too far behind (half the rows) is not used."""
        vectors = self.index(kind, strong=strong)
        ident = self._ann_identity(kind, strong, vectors)
        if ident is None or vectors is None:
            return None
        graph = self._graphs.get((kind, ident.model))
        if graph is None or graph.ident != ident:
            folder = ann.folder_of(self._ctx.path)
            graph = ann.load(folder, ident, vectors.seq) if folder is not None else None
            if graph is None or not graph.matches(vectors):
                return None
            self._graphs[(kind, ident.model)] = graph
        if vectors.seq > graph.seq:
            behind = int(self._conn.execute(
                "SELECT count(*) FROM embeddings WHERE kind = ? AND model = ? AND model_version = ? AND dim = ? "
                "AND seq > ?", (*ident.params(), graph.seq)).fetchone()[0])
            if behind * 2 > len(vectors.ids):
                return None
            graph.catch_up(self._conn, vectors)
        return graph

    def _saved_graph_fresh(self, folder: Path, kind: str, strong: bool) -> int | None:
        """The saved graph's rows when it needs no save: fewer than :data:`.ann.SAVE_AFTER` of its
        rows are newer than it (searches catch up with those in memory). Read from its meta file and
        a range count over ``seq``, without loading the vectors."""
        model = self._model_of(strong)
        if model is None or self._ctx.settings.ann_min_rows <= 0 or not ann.available():
            return None
        meta = ann.saved_meta(folder, ann.Identity(kind, *model))
        if meta is None:
            return None
        newer = int(self._conn.execute(
            "SELECT count(*) FROM embeddings WHERE seq > ? AND kind = ? AND model = ?", (meta["seq"], kind, model[0]),
        ).fetchone()[0])
        last = int(self._conn.execute("SELECT coalesce(max(seq), 0) FROM embeddings").fetchone()[0])
        if meta["seq"] > last or newer >= max(1, int(ann.SAVE_AFTER * meta["rows"])):
            return None
        return int(meta["rows"])

    def save_graphs(self, *, force: bool = False) -> dict[str, Any]:
        """Bring each kind's and tier's saved graph up to date (built when missing, rebuilt when a fifth
        of its keys lost their vector or it does not match the database; otherwise caught up and saved
        once :data:`.ann.SAVE_AFTER` of the rows are newer than the file). Per graph: rows, what was done.
        Nothing for an in-memory database, a library below ``ann_min_rows`` or without usearch."""
        folder = ann.folder_of(self._ctx.path)
        done: dict[str, Any] = {}
        if folder is None or self.embedder() is None:
            return done
        for strong in (False, True):
            for kind in KINDS:
                if not force and (fresh := self._saved_graph_fresh(folder, kind, strong)) is not None:
                    done[f"{'strong' if strong else 'fast'} {kind}"] = {"rows": fresh, "action": "up to date"}
                    continue  # the pass does not read a million vectors to learn that nothing changed
                vectors = self.index(kind, strong=strong)
                ident = self._ann_identity(kind, strong, vectors)
                if ident is None or vectors is None:
                    continue
                graph = self._graphs.get((kind, ident.model))
                if graph is None or graph.ident != ident:
                    graph = ann.load(folder, ident, vectors.seq)
                action = "caught up"
                if force or graph is None or not graph.matches(vectors):
                    graph, action = ann.Graph.build(ident, vectors), "built"
                else:
                    graph.catch_up(self._conn, vectors)
                    if graph.dead_share(vectors) > 0.2:
                        graph, action = ann.Graph.build(ident, vectors), "rebuilt"
                if graph.should_save(len(vectors.ids)):
                    graph.save(folder)
                    action += ", saved"
                self._graphs[(kind, ident.model)] = graph
                done[f"{'strong' if strong else 'fast'} {kind}"] = {"rows": len(vectors.ids), "action": action}
        return done
