"""An approximate-nearest-neighbour graph over one kind's vectors of one model (issue 35 item 4).

Exact search scans every vector (einsum over the whole matrix), a cost that grows with the library.
From :data:`DEFAULT_MIN_ROWS` vectors on (setting ``ann_min_rows``) the search asks an HNSW graph
(usearch, Apache-2.0, the ``scale`` extra) for a few hundred candidates instead and scores only those
exactly. Chosen over hnswlib and faiss-cpu on the same vectors (demo_scale_bench/ann_choice.py,
docs/scale.md): the same recall after exact rescoring, the fastest build, and it stores its vectors
as 8-bit integers, a third of the others' file (the exact float32 matrix is in memory anyway); it
saves and loads in one call, removes keys in place, and ships wheels with no system library.

The graph only *proposes* candidates. Every candidate is scored with its exact cosine from the
in-process matrix (the database's current vectors), a candidate without a current vector is dropped,
and the caller filters deprecated and deleted rows: a stale, partial or foreign graph can lower
recall, never return a wrong row or a wrong score.

Persistence, beside the database (``<db>.ann/``), not inside it: the graph takes about 400 bytes a
vector (40 MB at 100k, measured) and changes with every write, and as a BLOB it would be rewritten into the WAL at each
save. A save writes the graph to a new file named by the vectors' ``seq`` it holds, then a small
meta file naming it (``os.replace``, both fsynced): the meta file is the commit point, so a process
killed mid-save leaves the previous graph in force (or none: exact search until the dream builds
one). On load the graph catches up in memory with the vectors whose ``seq`` is newer than its own (a
replaced vector is removed and added again); a graph whose meta does not match the model, whose file
is torn, whose ``seq`` is ahead of the database (a restored backup) or whose sampled vectors differ
from the database's (another library's) is not used, and the dream's next pass rebuilds it.

Deterministic: the graph is built with one thread in id order (two builds of the same vectors give
the same bytes), and the candidates are ranked by their exact scores, ties by id. A graph grown by
catch-ups is not byte-identical to a fresh build of the same vectors, so on a hard query its
candidates, and then rarely a neighbour, can differ from a rebuilt one's.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np


class KindIndex(Protocol):
    """What a graph reads of one kind's loaded vectors (:class:`.store.KindIndex` has it; named here
    rather than imported, so this module and the store that uses it do not import each other)."""

    ids: np.ndarray
    matrix: np.ndarray
    seq: int
    row_of: dict[int, int]

DEFAULT_MIN_ROWS = 200_000  # below this many vectors exact search is affordable (~30 ms at 100k) and exact
CONNECTIVITY = 16  # HNSW links per node (M)
EXPANSION_ADD = 128  # efConstruction
EXPANSION_SEARCH = 400  # efSearch: the breadth of a query's walk; candidates asked for are at least this
MIN_CANDIDATES = 400  # candidates scored exactly per query, at least (4 x k when larger)
SAVE_AFTER = 0.05  # a process saves its graph once it holds this share of vectors newer than the file
CHECK_SAMPLE = 32  # vectors compared with the database when a saved graph is loaded
FORMAT = 1  # the meta file's layout; another value means rebuild
_DELTA_SQL = ("SELECT entry_id, vector FROM embeddings WHERE kind = ? AND model = ? AND model_version = ? "
              "AND dim = ? AND seq > ? ORDER BY seq")


def available() -> bool:
    """True when the ``scale`` extra (usearch) is installed."""
    try:
        import usearch.index  # noqa: F401
    except ImportError:
        return False
    return True


@dataclass(frozen=True)
class Identity:
    """What a graph holds: one kind's vectors of one model version."""

    kind: str
    model: str
    version: str
    dim: int

    def stem(self) -> str:
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in self.model)
        return f"{self.kind}-{safe}"

    def params(self) -> tuple[str, str, str, int]:
        return self.kind, self.model, self.version, self.dim


def folder_of(db_path: str) -> Path | None:
    """Where a database's graphs live: None for an in-memory database and a server (PostgreSQL keeps
    exact search here; its vectors belong in pgvector, issue 35 item 3), whose graphs are never saved."""
    if not db_path or db_path == ":memory:" or db_path.startswith("file:") or "://" in db_path:
        return None
    return Path(db_path + ".ann")


def _new_index(dim: int) -> Any:
    from usearch.index import Index

    return Index(ndim=dim, metric="ip", dtype="i8", connectivity=CONNECTIVITY,
                 expansion_add=EXPANSION_ADD, expansion_search=EXPANSION_SEARCH)


class Graph:
    """One kind's HNSW graph in this process: ``seq`` is the newest vector it holds."""

    def __init__(self, ident: Identity, index: Any, seq: int, saved_seq: int) -> None:
        self.ident = ident
        self.index = index
        self.seq = seq
        self.saved_seq = saved_seq  # the seq of the file on disk this graph was loaded from or saved as
        self.pending = 0  # vectors added since saved_seq

    # -- building ----------------------------------------------------------------------------------
    @classmethod
    def build(cls, ident: Identity, vectors: KindIndex) -> Graph:
        """Every vector of ``vectors``, in id order, one thread (a reproducible graph)."""
        index = _new_index(ident.dim)
        if len(vectors.ids):
            index.add(vectors.ids.astype(np.uint64), vectors.matrix, threads=1)
        graph = cls(ident, index, vectors.seq, -1)
        graph.pending = len(vectors.ids)
        return graph

    def catch_up(self, conn: sqlite3.Connection, vectors: KindIndex) -> int:
        """Add the vectors newer than the graph (a replaced one is removed first); returns how many."""
        if vectors.seq <= self.seq:
            return 0
        rows = conn.execute(_DELTA_SQL, (*self.ident.params(), self.seq)).fetchall()
        latest: dict[int, bytes] = {int(r[0]): r[1] for r in rows}  # a row replaced twice: its last vector
        if latest:
            keys = np.array(sorted(latest), dtype=np.uint64)
            present = np.asarray(self.index.contains(keys), dtype=bool).reshape(-1)
            if present.any():
                self.index.remove(keys[present])
            matrix = np.frombuffer(b"".join(latest[int(k)] for k in keys), dtype="<f4").reshape(len(keys), -1)
            self.index.add(keys, np.ascontiguousarray(matrix, dtype=np.float32), threads=1)
        self.seq = vectors.seq
        self.pending += len(latest)
        return len(latest)

    def dead_share(self, vectors: KindIndex) -> float:
        """Share of the graph's keys with no current vector (deleted rows; they only cost recall)."""
        size = len(self.index)
        return 0.0 if size == 0 else max(size - len(vectors.ids), 0) / size

    def matches(self, vectors: KindIndex, sample: int = CHECK_SAMPLE) -> bool:
        """True when sampled keys hold the database's vectors (not a graph of another database)."""
        if not len(vectors.ids):
            return True
        picks = vectors.ids[np.linspace(0, len(vectors.ids) - 1, min(sample, len(vectors.ids))).astype(np.int64)]
        keys = picks.astype(np.uint64)
        present = np.asarray(self.index.contains(keys), dtype=bool).reshape(-1)
        if not present.any():
            return False
        stored = np.asarray(self.index.get(keys[present], dtype=np.float32), dtype=np.float32)
        stored = stored.reshape(-1, self.ident.dim)
        rows = np.array([vectors.row_of[int(k)] for k in picks[present]], dtype=np.int64)
        exact = vectors.matrix[rows]
        norms = np.linalg.norm(stored, axis=1) * np.linalg.norm(exact, axis=1)
        cos = np.einsum("ij,ij->i", stored, exact) / np.maximum(norms, 1e-12)
        return bool((cos > 0.98).all())  # i8 storage keeps a unit vector's cosine to itself above 0.99

    # -- searching ---------------------------------------------------------------------------------
    def candidates(self, query: np.ndarray, count: int) -> np.ndarray:
        """Ids of about ``count`` nearest keys by inner product (not ranked: the caller scores them)."""
        count = max(1, min(count, len(self.index)))
        found = self.index.search(np.asarray(query, dtype=np.float32), count, threads=1)
        return np.unique(np.asarray(found.keys, dtype=np.int64))

    # -- saving ------------------------------------------------------------------------------------
    def save(self, folder: Path) -> None:
        """Write the graph and then its meta file (the commit point); older graphs are removed after."""
        folder.mkdir(parents=True, exist_ok=True)
        stem = self.ident.stem()
        name = f"{stem}-{self.seq}.usearch"
        tmp = folder / f".{name}.{os.getpid()}.tmp"
        self.index.save(str(tmp))
        _fsync(tmp)
        os.replace(tmp, folder / name)
        meta_path = folder / f"{stem}.json"
        current = _read_meta(meta_path)
        if current is not None and int(current.get("seq", -1)) > self.seq:
            tmp_unused = folder / name  # another process saved a newer graph meanwhile: keep theirs
            tmp_unused.unlink(missing_ok=True)
            return
        meta = {"format": FORMAT, "kind": self.ident.kind, "model": self.ident.model, "version": self.ident.version,
                "dim": self.ident.dim, "seq": self.seq, "graph": name, "bytes": (folder / name).stat().st_size,
                "connectivity": CONNECTIVITY, "rows": len(self.index)}
        tmp_meta = folder / f".{stem}.json.{os.getpid()}.tmp"
        tmp_meta.write_text(json.dumps(meta, sort_keys=True))
        _fsync(tmp_meta)
        os.replace(tmp_meta, meta_path)
        _fsync_dir(folder)
        self.saved_seq = self.seq
        self.pending = 0
        for old in folder.glob(f"{stem}-*.usearch"):  # only older ones: a newer one may be about to commit
            try:
                if int(old.stem.rsplit("-", 1)[1]) < self.seq:
                    old.unlink(missing_ok=True)
            except ValueError:
                continue

    def should_save(self, rows: int) -> bool:
        return self.saved_seq < 0 or self.pending >= max(1, int(SAVE_AFTER * rows))


def saved_meta(folder: Path, ident: Identity) -> dict[str, Any] | None:
    """The meta file of ``ident``'s saved graph when it describes a graph of this model and layout."""
    meta = _read_meta(folder / f"{ident.stem()}.json")
    expected = {"format": FORMAT, "kind": ident.kind, "model": ident.model, "version": ident.version,
                "dim": ident.dim, "connectivity": CONNECTIVITY}
    if meta is None or any(meta.get(k) != v for k, v in expected.items()):
        return None
    if not isinstance(meta.get("seq"), int) or not isinstance(meta.get("rows"), int):
        return None
    graph = meta.get("graph")
    try:  # the graph it names, whole (a torn copy or a removed file is no graph)
        whole = isinstance(graph, str) and "/" not in graph and (folder / graph).stat().st_size == meta.get("bytes")
    except OSError:
        whole = False
    return meta if whole else None


def load(folder: Path, ident: Identity, current_seq: int) -> Graph | None:
    """The saved graph of ``ident``, or None when there is none or it cannot be trusted (another
    model, a format or size that does not match, a seq ahead of the database, a file usearch rejects)."""
    meta = saved_meta(folder, ident)
    if meta is None:
        return None
    seq = meta.get("seq")
    graph_name = meta.get("graph")
    if not isinstance(seq, int) or seq > current_seq or not isinstance(graph_name, str) or "/" in graph_name:
        return None
    path = folder / graph_name
    try:
        if path.stat().st_size != meta.get("bytes"):
            return None
        index = _new_index(ident.dim)
        index.load(str(path))
    except (OSError, RuntimeError, ValueError):
        return None
    if index.ndim != ident.dim:
        return None
    return Graph(ident, index, seq, seq)


def _read_meta(path: Path) -> dict[str, Any] | None:
    try:
        meta = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return meta if isinstance(meta, dict) else None


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):  # a platform without directory fsync: the replace is still atomic
        _fsync(folder)
