"""Semantic candidates and the fused relevance of a hybrid search.

A search embeds the query once, takes the ``k`` nearest vectors of each kind by cosine (deprecated
skills dropped, cosine above τ), and adds them to the lexical candidates. Every candidate, whichever
path found it, is then scored with all its evidence (issue 31; before, a lexical match kept its BM25
alone, so a skill holding one incidental query word lost its close cosine):

    fused = max(bm25, weight × R × s × gate)      s = clip((cos − τ) / (c_full − τ), 0, 1), bm25 0 if unmatched

where ``R`` is the BM25 an ideal match would score: the sum over the query's words of the IDF the
lexical scorer uses (FTS5's: max(ln((N − n + 0.5) / (n + 0.5)), 1e-6)), with document counts from
the full-text vocabulary (a word no entry holds counts as the rarest). BM25 keeps its own units, so
the weighted ranking on top is unchanged. The semantic term is at most weight × R × gate (weight < 1):
nothing once the best lexical match holds every query word, while a match on one incidental word
can lose to a close paraphrase.
``gate`` = 1 − cover, cover being the share of the query's content words (:mod:`kaos_dream.tokens`)
that the best lexical match holds, each word weighted by its IDF (the terms of R), and 0 from cover
0.9 on (the search then skips the embedding and the vector scan altogether: the common case of a
well-matched query costs no more than before). Cover is counted in words, not read as bm25 / R:
FTS5 clamps the IDF of a word found in more than half the rows to 1e-6 and length normalisation
lowers a long entry's BM25, so in a library of four skills a match holding every query word scored
88 % of R, looked uncovered, and a neighbour was fused in above the other lexical matches (issue 16
§1's invariant; tests/test_ranking_relevance.py). A match holding every word has cover 1 exactly, at
any library size.
Without the gate, neighbours found by meaning alone displaced right lexical answers often enough
to cost demo_neuroplasticity_bench's realistic workload 100 % -> 93.3 %.
``demo_semantic_retrieval_bench`` compares this with giving every candidate max(bm25, weight × R ×
s), an additive blend and reciprocal rank fusion.

Two tiers (issue 22): when the library holds vectors of the strong model, the query is embedded by it
too and a row with a strong vector is scored by its strong cosine, with the strong model's own τ and
c_full (cosines of different models are not comparable, their scaled values are); a row without one
(a fresh add, not yet backfilled) keeps its fast cosine. Neighbours are ranked by the scaled value
z = (cos − τ) / (c_full − τ) before clipping, ties by id: with the fast tier alone that is the cosine
order, as before.
"""

from __future__ import annotations

import math
import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..store.terms import document_count, index_term
from .query import content_tokens, tokenize

if TYPE_CHECKING:  # numpy loads with the first search that needs it, not with the library
    import numpy as np

    from ..embedding.ann import Graph
    from ..embedding.store import KindIndex

# The columns of skills_fts and memories_fts (migration 0001), as their content tables hold them.
HELD_CACHE_ENTRIES = 4096  # best-match entries whose index terms a connection remembers (~1 kB each)
_INDEXED = {"skill": ("skills", "name, description, tags"), "memory": ("memories", "key, content, kind")}
_LIVE_SKILLS = "SELECT id FROM skills WHERE deprecated = 0 AND id IN (SELECT value FROM json_each(?))"
_ALL = {"skill": "SELECT id FROM skills WHERE id IN (SELECT value FROM json_each(?))",
        "memory": "SELECT id FROM memories WHERE id IN (SELECT value FROM json_each(?))"}


@dataclass(frozen=True)
class Fusion:
    """``weight`` (< 1 keeps exact lexical matches on top), ``threshold`` τ (a cosine at or below it
    adds nothing) and ``full`` (the cosine at which a neighbour counts as a full match)."""

    weight: float = 0.9
    threshold: float = 0.1
    full: float = 0.5

    def scaled(self, cosine: np.ndarray) -> np.ndarray:
        """z = (cos − τ) / (c_full − τ): 0 at the threshold, 1 at a full match, comparable across models."""
        return (cosine - self.threshold) / (self.full - self.threshold)


@dataclass(frozen=True)
class Tier:
    """One model's side of a query: its index of one kind, the query embedded by it, its calibration."""

    index: KindIndex
    query: np.ndarray
    fusion: Fusion
    graph: Graph | None = None  # an ANN graph over ``index`` (a large library, issue 35), or exact search


@dataclass(frozen=True)
class SemanticMatches:
    """The query's scaled similarity z to every embedded entry of one kind (``ids`` ascending; a row
    with a strong vector scored by it), its ``top`` neighbours (id, z; best first, ties by id) and
    the ideal lexical relevance ``reference`` the semantic term is scaled by."""

    kind: str
    ids: np.ndarray
    scaled: np.ndarray  # one per id
    top: list[tuple[int, float]]
    reference: float
    weight: float
    gate: float  # :func:`gate` of the coverage of the lexical pool's best match
    strong_rows: int  # how many of ``ids`` the strong tier scored
    # Set when the ANN graph chose ``ids`` (only its candidates were scored): the tiers score any other id.
    tiers: tuple[Tier, ...] | None = None
    blend: Tier | None = None  # the fast tier, when the strong one scored the rows (see :func:`blended`)

    def scaled_of(self, ids: np.ndarray) -> np.ndarray:
        """z of each id (−1, adding nothing, for an entry with no current vector); with a ``blend``
        tier, an entry holding both vectors gets :func:`blended` z."""
        import numpy as np
        wanted = np.asarray(ids, dtype=np.int64)
        out = np.full(len(wanted), -1.0, dtype=np.float64)
        if not len(wanted):
            return out
        found = np.zeros(len(wanted), dtype=bool)
        if len(self.ids):
            pos = np.minimum(np.searchsorted(self.ids, wanted), len(self.ids) - 1)
            found = self.ids[pos] == wanted
            out[found] = self.scaled[pos[found]]
        if self.tiers is not None and not found.all():
            out[~found] = scaled_for(list(self.tiers), wanted[~found])
        if self.tiers is not None:
            found = out > -1.0
        if self.blend is not None:
            fast = self.blend.index
            if len(fast.ids):
                at = np.minimum(np.searchsorted(fast.ids, wanted), len(fast.ids) - 1)
                both = found & (fast.ids[at] == wanted)
                if both.any():
                    rows = fast.matrix[at[both]]
                    z_fast = self.blend.fusion.scaled(
                        np.einsum("ij,j->i", rows, np.asarray(self.blend.query, dtype=np.float32)).astype(np.float64))
                    out[both] = blended(out[both], z_fast)
        return out

    def fuse(self, bm25: np.ndarray, ids: np.ndarray) -> np.ndarray:
        """Fused relevance of candidates (``bm25`` lexical, higher is better; 0 when not matched)."""
        import numpy as np
        z = self.scaled_of(ids)
        s = np.clip(z, 0.0, 1.0)
        # Every candidate keeps all its evidence (issue 31): a lexical match with a close cosine is
        # not stuck with the small BM25 share of the one word it holds. The better the best lexical
        # match covers the query, the less the meaning may add (see :func:`gate`).
        fused = np.maximum(bm25, self.weight * self.reference * s * self.gate)
        # Past a full match the clipped term ties (two neighbours both at z >= 1 scored the same and
        # the lower id won); a small share of the unclipped z orders them by closeness.
        return fused + TIE_SHARE * self.reference * self.gate * np.clip(z, 0.0, Z_CAP)


TIE_SHARE = 0.02  # of R per unit of z: orders candidates whose clipped semantic terms tie
Z_CAP = 2.0
FAST_BLEND = 0.3  # the fast tier's share beside the strong one's (demo_semantic_retrieval_bench/realstyle.py)


def blended(z_strong: np.ndarray, z_fast: np.ndarray) -> np.ndarray:
    """(z_strong + FAST_BLEND × z_fast) / (1 + FAST_BLEND): still 0 at both thresholds and 1 at both
    full matches. Two models that disagree about a neighbour make it less likely than either alone
    says: on the tuning sets the blend lifted the real-style set's recall@5 of queries sharing no
    word with their skill from 0.78 (strong cosine alone) to 0.83. Only the candidates being scored
    are blended (at most the pool and its neighbours); the neighbours themselves are chosen by the
    strong cosine over the whole library, so the vector scan stays one tier's. A fast model that
    relates spelling only (``spelling_only``, hash-trigram) is never blended: its cosine says nothing
    about meaning."""
    return (z_strong + FAST_BLEND * z_fast) / (1.0 + FAST_BLEND)


def idf(rows: int, docs: int) -> float:
    """FTS5's BM25 IDF (keep in step with the lexical scorer if it changes)."""
    return max(math.log((rows - docs + 0.5) / (docs + 0.5)), 1e-6)


def smooth_idf(rows: int, docs: int) -> float:
    """An IDF that stays positive for a word most entries hold (the relevance's word weights)."""
    return math.log(1.0 + (rows - docs + 0.5) / (docs + 0.5))


SKIP_COVER = 0.9  # a best lexical match covering this much of the query needs no semantic neighbours


def gate(cover: float) -> float:
    """How much a neighbour found by meaning alone may still add, given the ``cover`` of the best
    lexical match (:meth:`IdealRelevance.coverage`): 1 − cover, and 0 once cover reaches :data:`SKIP_COVER`, where
    the search does not look for neighbours at all."""
    cover = min(max(cover, 0.0), 1.0)
    return 0.0 if cover >= SKIP_COVER else 1.0 - cover


class IdealRelevance:
    """R for a query, with per-connection caches: a word's index term never changes, and a term's
    document count is re-read once the table's largest rowid moved (a new row); edits and deletes
    between inserts leave a count slightly stale, which only nudges a scale estimate. Counting a
    term's documents walks its doclist, so without the cache R would cost O(matches) per query."""

    def __init__(self) -> None:
        self._stems: dict[str, str | None] = {}
        self._counts: dict[str, tuple[int, dict[str, int]]] = {}
        self._held: dict[tuple[str, str], frozenset[str]] = {}  # an entry's text -> its index terms

    def _stem(self, conn: sqlite3.Connection, kind: str, tokens: list[str]) -> list[str]:
        missing = [t for t in tokens if t not in self._stems]
        if missing:
            for token in missing:  # one at a time: a token's term, so each maps back to its word
                self._stems[token] = index_term(conn, kind, token)
        return sorted({s for t in tokens if (s := self._stems[t]) is not None})

    def _idfs(
        self, conn: sqlite3.Connection, kind: str, tokens: list[str], *, smooth: bool = False
    ) -> dict[str, float]:
        """The IDF of each index term of ``tokens`` (the lexical scorer's, document counts cached;
        with ``smooth`` the unclamped ln(1 + (N − n + 0.5) / (n + 0.5)), positive for every word, so
        that a word most entries hold still counts for something in a small library)."""
        table = "skills" if kind == "skill" else "memories"
        rows = max(int(conn.execute(f"SELECT coalesce(max(rowid), 0) FROM {table}").fetchone()[0]), 1)
        cached_rows, counts = self._counts.get(kind, (-1, {}))
        if cached_rows != rows:
            counts = {}
            self._counts[kind] = (rows, counts)
        terms = self._stem(conn, kind, tokens)
        for term in terms:
            if term not in counts:
                counts[term] = document_count(conn, kind, term)
        if smooth:
            return {term: smooth_idf(rows, min(counts[term], rows)) for term in terms}
        return {term: idf(rows, min(counts[term], rows)) for term in terms}

    def __call__(self, conn: sqlite3.Connection, kind: str, text: str) -> float:
        """Sum of the query terms' IDF: about the BM25 of an average-length entry holding each once."""
        tokens = content_tokens(text)
        if not tokens:
            return 1e-6
        return sum(self._idfs(conn, kind, tokens).values()) or 1e-6

    def coverage(self, conn: sqlite3.Connection, kind: str, text: str, entry_id: int | None, *,
                 smooth: bool = False) -> float:
        """Share of the query's words that entry ``entry_id`` holds, each word weighted by its IDF
        (the terms of R): 1 exactly when it holds every word, at any library size. The entry's indexed
        columns are split as the index splits them (:func:`~kaos_dream.tokens.tokenize`) and each word
        mapped to its index term through the same cache as the query's, so the cost is the entry's
        length, not the library's (one FTS5 probe per word per entry was ~4x R's cost). 0 for no entry.
        ``smooth`` weighs the words by :func:`smooth_idf` (what a hit's relevance reads)."""
        tokens = content_tokens(text)
        if entry_id is None or not tokens:
            return 0.0
        idfs = self._idfs(conn, kind, tokens, smooth=smooth)
        total = sum(idfs.values())
        table, columns = _INDEXED[kind]
        row = conn.execute(f"SELECT {columns} FROM {table} WHERE id = ?", (entry_id,)).fetchone()
        if row is None or total <= 0:
            return 0.0
        return self._cover(conn, kind, idfs, total, tuple(row))

    def coverages(self, conn: sqlite3.Connection, kind: str, text: str, ids: list[int], *,
                  smooth: bool = False) -> dict[int, float]:
        """:meth:`coverage` of each of ``ids`` (a search's hits) with one read of the IDFs and one of
        the entries' rows: on PostgreSQL every statement is a round trip, and a search showing ten
        hits made twenty of them here."""
        out = dict.fromkeys(ids, 0.0)
        tokens = content_tokens(text)
        if not ids or not tokens:
            return out
        idfs = self._idfs(conn, kind, tokens, smooth=smooth)
        total = sum(idfs.values())
        if total <= 0:
            return out
        table, columns = _INDEXED[kind]
        wanted = "[" + ",".join(str(int(i)) for i in ids) + "]"
        for row in conn.execute(f"SELECT id, {columns} FROM {table} WHERE id IN (SELECT value FROM json_each(?))",
                                (wanted,)).fetchall():
            out[int(row[0])] = self._cover(conn, kind, idfs, total, tuple(row)[1:])
        return out

    def _cover(self, conn: sqlite3.Connection, kind: str, idfs: dict[str, float], total: float,
               row: tuple[object, ...]) -> float:
        text_of_entry = " ".join(str(c) for c in row if c is not None)
        held = self._held.get((kind, text_of_entry))
        if held is None:  # keyed by the text itself, so an edited entry can never reuse stale terms
            if len(self._held) >= HELD_CACHE_ENTRIES:
                self._held.clear()
            held = frozenset(self._stem(conn, kind, tokenize(text_of_entry)))
            self._held[(kind, text_of_entry)] = held
        return sum(v for term, v in idfs.items() if term in held) / total


def cosines(index: KindIndex, query: np.ndarray) -> np.ndarray:
    """The query's cosine to every row of ``index`` (rows and query are unit length)."""
    import numpy as np
    # einsum, not ``@``: a matrix-vector product through a multithreaded BLAS took 15 ms instead of
    # 0.4 ms for 10k rows on a busy 2-core machine, and its summation order depends on the thread count.
    return np.einsum("ij,j->i", index.matrix, np.asarray(query, dtype=np.float32))


_LAYOUT_CACHE = 8  # union layouts remembered (a library has at most two kinds x one tier pair)
_layouts: dict[tuple[tuple[int, int, int], ...], tuple[tuple[KindIndex, ...], np.ndarray, list[np.ndarray]]] = {}


def layout(indexes: list[KindIndex]) -> tuple[np.ndarray, list[np.ndarray]]:
    """(the union of the indexes' ids, ascending; each index's row positions in it). It depends on the
    vectors only, never on the query, so it is computed once per set of indexes (an index is rebuilt,
    as a new object, whenever a vector is added) instead of once per search: at 100k skills the
    per-query ``np.union1d`` was 57 % of a two-tier search (issue 31)."""
    import numpy as np
    key = tuple((id(i), i.seq, len(i.ids)) for i in indexes)
    cached = _layouts.get(key)
    if cached is not None and all(a is b for a, b in zip(cached[0], indexes, strict=True)):
        return cached[1], cached[2]
    ids = indexes[0].ids
    for index in indexes[1:]:
        ids = np.union1d(ids, index.ids)
    positions = [np.searchsorted(ids, index.ids) for index in indexes]
    if len(_layouts) >= _LAYOUT_CACHE:
        _layouts.clear()
    _layouts[key] = (tuple(indexes), ids, positions)  # holds the indexes, so their ids stay unique
    return ids, positions


def strong_covers(strong: KindIndex, fast: KindIndex) -> bool:
    """True when every row of ``fast`` also has a strong vector (a backfilled library): the strong
    tier's z would replace every fast one, so the fast tier need not embed the query or scan."""
    ids, _ = layout([fast, strong])
    return len(ids) == len(strong.ids)


def combined(tiers: list[Tier]) -> tuple[np.ndarray, np.ndarray, int]:
    """(ids ascending, z per id, rows the later tiers scored) over the union of the tiers' rows; a
    later tier's z replaces an earlier one's for the rows it holds (fast first, then strong)."""
    import numpy as np
    first = tiers[0]
    scaled = first.fusion.scaled(cosines(first.index, first.query).astype(np.float64))
    if len(tiers) == 1:
        return first.index.ids, scaled, 0
    ids, positions = layout([t.index for t in tiers])
    out = np.full(len(ids), -1.0, dtype=np.float64)
    out[positions[0]] = scaled
    replaced = 0
    for tier, pos in zip(tiers[1:], positions[1:], strict=True):
        out[pos] = tier.fusion.scaled(cosines(tier.index, tier.query).astype(np.float64))
        replaced += len(tier.index.ids)
    return ids, out, replaced


def scaled_for(tiers: list[Tier], ids: np.ndarray) -> np.ndarray:
    """z of each of ``ids`` by the same rule as :func:`combined` (a later tier's z replaces an earlier
    one's; −1 for an id no tier holds), computed from those rows only."""
    import numpy as np
    ids = np.asarray(ids, dtype=np.int64)
    out = np.full(len(ids), -1.0, dtype=np.float64)
    for tier in tiers:
        held = tier.index.ids
        if not len(held) or not len(ids):
            continue
        pos = np.minimum(np.searchsorted(held, ids), len(held) - 1)
        hit = held[pos] == ids
        if hit.any():
            rows = tier.index.matrix[pos[hit]]
            cos = np.einsum("ij,j->i", rows, np.asarray(tier.query, dtype=np.float32)).astype(np.float64)
            out[hit] = tier.fusion.scaled(cos)
    return out


def graph_candidates(tiers: list[Tier], k: int) -> np.ndarray:
    """Ids worth scoring exactly: each tier's graph's nearest (a tier without a graph, a small one,
    gives its exact top), ascending. At least :data:`~kaos_dream.embedding.ann.MIN_CANDIDATES` a tier."""
    import numpy as np

    from ..embedding.ann import MIN_CANDIDATES
    count = max(MIN_CANDIDATES, 4 * k)
    parts = []
    for tier in tiers:
        if tier.graph is not None:
            parts.append(tier.graph.candidates(tier.query, count))
        else:
            cos = cosines(tier.index, tier.query)
            take = min(count, len(cos))
            parts.append(tier.index.ids[np.argpartition(-cos, take - 1)[:take]] if take else tier.index.ids[:0])
    return np.unique(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.int64)


def nearest(
    conn: sqlite3.Connection,
    kind: str,
    ids: np.ndarray,
    scores: np.ndarray,
    k: int,
    *,
    include_deprecated: bool = False,
) -> list[tuple[int, float]]:
    """The ``k`` live entries of highest score (descending, ties by id). Candidates are checked
    against the live table in growing batches, so deprecated or deleted rows never crowd the top
    ``k`` out."""
    import numpy as np
    n = len(ids)
    if k <= 0 or n == 0:
        return []
    order_sql = _ALL[kind] if include_deprecated or kind == "memory" else _LIVE_SKILLS
    want = min(n, 2 * k)
    while True:
        part = np.argpartition(-scores, want - 1)[:want] if want < n else np.arange(n)
        ranked = part[np.lexsort((ids[part], -scores[part]))]
        found = [int(ids[r]) for r in ranked]
        live = {int(r[0]) for r in conn.execute(order_sql, ("[" + ",".join(map(str, found)) + "]",))}
        kept = [(int(ids[r]), float(scores[r])) for r in ranked if int(ids[r]) in live]
        if len(kept) >= k or want >= n:
            return kept[:k]
        want = min(n, want * 4)


def semantic_matches(
    conn: sqlite3.Connection,
    kind: str,
    tiers: list[Tier],
    k: int,
    weight: float,
    reference: float,
    cover: float,
    *,
    include_deprecated: bool = False,
    blend: Tier | None = None,
) -> SemanticMatches:
    """The neighbours of one kind and how they are scored (``cover``: of the lexical pool's best match;
    ``tiers``: fast first, then strong; ``blend``: the fast tier when only the strong one scans). With
    an ANN graph on a tier, only the graph's candidates are
    scored; when too few of them are live (many deprecated), the exact scan answers instead."""
    if any(t.graph is not None for t in tiers):
        ids = graph_candidates(tiers, k)
        scaled = scaled_for(tiers, ids)
        held = ids[scaled > -1.0]  # a key whose vector is gone (a deleted row) is no candidate
        scaled = scaled[scaled > -1.0]
        top = nearest(conn, kind, held, scaled, k, include_deprecated=include_deprecated)
        if len(top) >= k or len(held) >= max(len(t.index.ids) for t in tiers):
            top = [(i, z) for i, z in top if z > 0.0]
            strong_rows = sum(len(t.index.ids) for t in tiers[1:])
            return SemanticMatches(kind, held, scaled, top, reference, weight, gate(cover), strong_rows,
                                   blend=blend, tiers=tuple(tiers))
    ids, scaled, strong_rows = combined(tiers)
    top = nearest(conn, kind, ids, scaled, k, include_deprecated=include_deprecated)
    top = [(i, z) for i, z in top if z > 0.0]  # at or below τ a neighbour would add nothing
    return SemanticMatches(kind, ids, scaled, top, reference, weight, gate(cover), strong_rows, blend=blend)
