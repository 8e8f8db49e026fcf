"""One search: parse the query once, retrieve candidates, rank them, record the hits.

``lib.search`` is the library's :class:`SearchPipeline` (``lib.search(query, …)`` calls it). The query
text is parsed once into a :class:`~kaos_dream.tokens.Query` (the text plus its content tokens) that
candidate retrieval, coordination levels, the task hash and the semantic gate all read, instead of
each tokenising it again. Candidates come from the FTS5 indexes (:mod:`.lexical`, :mod:`.candidates`),
optionally fused with the nearest vectors (:mod:`.semantic`); the weighted ranks score the pool with
the aged outcome records (:mod:`.ranking`); ``record_hits`` hands the results to the episodes store,
which writes them in one transaction.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from .. import limits
from ..errors import InvalidInputError
from ..plasticity.task import task_hash, task_key
from .candidates import (
    BM25,
    ID,
    SUCCESSES,
    TASK_SUCCESSES,
    TASK_USES,
    USES,
    Pool,
    Rows,
    candidate_rows,
    details,
    hybrid_memories,
    hybrid_pool,
    ranked_memories,
)
from .lexical import Hit, lexical_candidates, with_skill_counts
from .query import Query
from .relevance import check_min_relevance, relevance
from .semantic import Fusion, IdealRelevance, SemanticMatches, Tier, gate, semantic_matches, strong_covers

if TYPE_CHECKING:
    from ..embedding.store import Vectors
    from ..plasticity.evidence import Effective
    from ..store.context import StoreContext

SEARCH_KINDS = ("skill", "memory")
RANKS = ("weighted", "wilson", "bm25")

RecordHits = Callable[[list[Hit], str, "str | None"], object]


class SearchPipeline:
    """The search of one library: the store context, its vectors (built on first use) and where hits
    are recorded (``record_hits(hits, query, agent)``: the episodes store)."""

    def __init__(self, ctx: StoreContext, *, vectors: Callable[[], Vectors], record_hits: RecordHits) -> None:
        self._ctx = ctx
        self._vectors = vectors
        self._record_hits = record_hits
        self._ideal_relevance = IdealRelevance()

    def __call__(
        self,
        query: str,
        *,
        kind: str | None = None,
        limit: int = 10,
        include_deprecated: bool = False,
        rank: str | None = None,
        record_hits: bool = False,
        agent: str | None = None,
        task: str | None = None,
        explore: bool = False,
        seed: int | None = None,
        min_relevance: float | None = None,
    ) -> list[Hit]:
        """Skills and/or memories matching ``query``, best first, ties by kind then id.

        ``rank``: ``weighted`` (default, from settings) re-ranks a bounded coordination-level pool by
        relevance x the effective (aged) outcome record (conditioned on ``task``, which defaults to
        the query); ``wilson`` is the seed's formula exactly; ``bm25`` is the plain lexical order.
        ``explore`` (weighted only) ranks skills by a Thompson draw from their effective record,
        seeded by ``seed`` (default ``settings.explore_seed``) and the candidates' evidence: the same
        seed and data give the same order. With plasticity off (``KAOS_DREAM_AUTO=0``) every rank is
        ``bm25``. Every hit carries a calibrated ``relevance`` (:mod:`.relevance`); hits below
        ``min_relevance`` (default ``settings.min_relevance``, 0 keeps all) are dropped, so a query
        nothing answers returns no hit. ``record_hits`` writes one
        hit row per result (with ``agent``, registered if new) in one transaction; without it the
        search only reads.
        """
        if limit < 0:
            raise InvalidInputError("limit must not be negative")
        limits.capped(query, "query", limits.QUERY)
        limits.capped_optional(task, "task", limits.TASK)
        rank = rank or self._ctx.settings.rank
        if rank not in RANKS:
            raise InvalidInputError(f"unknown rank {rank!r}: use weighted, wilson or bm25")
        kinds = SEARCH_KINDS if kind is None else (kind,)
        for k in kinds:
            if k not in SEARCH_KINDS:
                raise InvalidInputError(f"unknown kind {k!r}: use skill or memory")
        if record_hits and self._ctx.readonly:
            raise InvalidInputError("cannot record hits: the library is open read-only")
        if explore and rank != "weighted":
            raise InvalidInputError(f"explore works with the weighted rank, not {rank!r}")
        if seed is not None and not explore:
            raise InvalidInputError("seed is only used with explore")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**32):
            raise InvalidInputError("seed must be a whole number from 0 to 4294967295")
        try:
            threshold = check_min_relevance(self._ctx.settings.min_relevance if min_relevance is None
                                            else min_relevance)
        except (TypeError, ValueError):
            raise InvalidInputError(f"min relevance {min_relevance!r} must be a number from 0 to 1") from None
        if not self._ctx.settings.dream_auto:
            rank = "bm25"
        text = str(query)
        query = Query(query)  # parsed once; every step below reads its tokens
        semantic: dict[str, SemanticMatches] = {}
        if rank == "bm25":
            hits = self._lexical_search(query, kinds, limit, include_deprecated)
        else:
            explore_seed = (self._ctx.settings.explore_seed if seed is None else int(seed)) if explore else None
            hits, semantic = self._weighted_search(query, kinds, limit, include_deprecated, rank, task, explore_seed)
        hits = [h for h in self._with_relevance(query, hits, semantic) if h.relevance >= threshold]
        if record_hits and hits:
            self._record_hits(hits, text, agent)
        elif record_hits and agent is not None:
            self._record_hits([], text, agent)
        return hits

    def _lexical_search(self, query: str, kinds: tuple[str, ...], limit: int, include_deprecated: bool) -> list[Hit]:
        hits: list[Hit] = []
        for k in kinds:
            hits.extend(lexical_candidates(self._ctx.conn, query, k, limit, include_deprecated))
        hits.sort(key=lambda h: (-h.score, h.kind, h.id))
        return with_skill_counts(self._ctx.conn, hits[:limit])

    def _weighted_search(
        self,
        query: str,
        kinds: tuple[str, ...],
        limit: int,
        include_deprecated: bool,
        rank: str,
        task: str | None,
        explore_seed: int | None = None,
    ) -> tuple[list[Hit], dict[str, SemanticMatches]]:
        """The weighted top ``limit`` and the semantic matches of each kind that took the semantic path."""
        if limit == 0:
            return [], {}
        s = self._ctx.settings
        pool = max(s.rank_pool, limit)
        task_id = self._task_id(task if task is not None else query) if "skill" in kinds else None
        now = self._ctx.now()
        # The seed's formula floors relevance; the default does not (see search/ranking.py).
        floor = s.rank_floor if rank == "wilson" else 0.0
        memory_order = (floor, now, s.rank_half_life_days * 86_400.0, limit)
        if kinds == ("memory",):  # no outcomes to weigh: SQL ranks them, no pool matrix needed
            ranked = ranked_memories(self._ctx.conn, query, pool=pool, memory_order=memory_order)
            best = min(ranked, key=lambda r: (-r[3], r[0]), default=None)  # best BM25, ties by id
            semantic = self._semantic(query, {"memory": None if best is None else best[0]}, include_deprecated)
            if "memory" in semantic:
                ranked = hybrid_memories(self._ctx.conn, ranked, semantic["memory"], memory_order)
            unit = max((r[3] for r in ranked), default=1.0) if rank == "weighted" else 1.0
            return [
                Hit("memory", entry_id, key, snippet, bm25, score / (unit or 1.0))
                for entry_id, key, snippet, bm25, score, _ in ranked
            ], semantic
        candidates = [
            candidate_rows(
                self._ctx.conn, query, k, pool=pool, pool_min=max(s.rank_pool_min, limit), task_id=task_id,
                include_deprecated=include_deprecated, memory_order=memory_order,
            )
            for k in kinds
        ]
        semantic = self._semantic(query, {c.kind: best_lexical(c) for c in candidates}, include_deprecated)
        if not semantic and rank == "weighted" and explore_seed is None:
            return self._list_ranked(candidates, task_id, limit), semantic
        pools = [c.pool() for c in candidates]
        pools = [
            hybrid_pool(self._ctx.conn, p, semantic[p.kind], task_id=task_id, memory_order=memory_order)
            if p.kind in semantic else p
            for p in pools
        ]
        from .ranking import RankParams, best_relevance, score_pool, top  # numpy: only ranking needs it

        params = RankParams(
            alpha=s.rank_alpha,
            half_life_days=s.rank_half_life_days,
            z=s.rank_z,
            floor=s.rank_floor,
            task_context=s.rank_task_context,
            evidence_half_life=s.evidence_half_life,
            explore_seed=explore_seed,
        )
        unit = best_relevance(pools)
        scores = [
            score_pool(p, now, rank, params, effective=self._effective(p, task_id) if rank == "weighted" else None,
                       unit=unit)
            for p in pools
        ]
        best = top(pools, scores, limit)
        shown = {
            p.kind: p.shown
            if p.shown is not None
            else details(self._ctx.conn, p.kind, [int(p.matrix[row, ID]) for _, pi, row, _ in best if pools[pi] is p])
            for p in pools
        }
        hits: list[Hit] = []
        for k, pi, row, score in best:
            values = pools[pi].matrix[row]
            entry_id = int(values[ID])
            name, text, deprecated = shown[k][entry_id]
            lexical = pools[pi].lexical
            bm25 = float(values[BM25] if lexical is None else lexical[row])
            hits.append(
                Hit(k, entry_id, name, text, bm25, score, deprecated, int(values[USES]), int(values[SUCCESSES]))
            )
        return hits, semantic

    def _list_ranked(self, candidates: list[Rows], task_id: int | None, limit: int) -> list[Hit]:
        """The weighted top ``limit`` of a search that took no semantic step, ranked on lists
        (:mod:`.list_ranking`: the same scores and order as the numpy path, without importing numpy)."""
        from . import list_ranking

        s = self._ctx.settings
        unit = list_ranking.best_relevance(candidates)
        scores = [list_ranking.scores(self._ctx.conn, c, unit, task_id=task_id, alpha=s.rank_alpha, z=s.rank_z,
                                      task_context=s.rank_task_context, half_life=s.evidence_half_life)
                  for c in candidates]
        best = list_ranking.top(candidates, scores, limit)
        shown = {
            c.kind: c.shown if c.shown is not None
            else details(self._ctx.conn, c.kind, [int(c.rows[row][ID]) for _, ci, row, _ in best if ci == index])
            for index, c in enumerate(candidates)
        }
        hits: list[Hit] = []
        for k, ci, row, score in best:
            values = candidates[ci].rows[row]
            entry_id = int(values[ID])
            name, text, deprecated = shown[k][entry_id]
            hits.append(Hit(k, entry_id, name, text, values[BM25], score, deprecated, int(values[USES]),
                            int(values[SUCCESSES])))
        return hits

    def _with_relevance(self, query: str, hits: list[Hit], semantic: dict[str, SemanticMatches]) -> list[Hit]:
        """``hits`` with their calibrated relevance: each hit's own word cover and, where the search
        took the semantic path for its kind, its scaled cosine (:mod:`.relevance`)."""
        if not hits:
            return hits
        covers = {kind: self._ideal_relevance.coverages(self._ctx.conn, kind, query,
                                                        [h.id for h in hits if h.kind == kind], smooth=True)
                  for kind in dict.fromkeys(h.kind for h in hits)}
        return [replace(h, relevance=relevance(covers[h.kind][h.id], self._scaled(h, semantic))) for h in hits]

    def evidence(self, query: str, hit: Hit, semantic: dict[str, SemanticMatches]) -> tuple[float, float | None]:
        """(cover, z) of one hit: the IDF-weighted share of the query's words it holds, and its scaled
        cosine where the search took the semantic path for its kind (None otherwise, or when the
        entry has no vector yet). What :func:`.relevance.relevance` reads; the bench fits on it."""
        cover = self._ideal_relevance.coverage(self._ctx.conn, hit.kind, query, hit.id, smooth=True)
        return cover, self._scaled(hit, semantic)

    @staticmethod
    def _scaled(hit: Hit, semantic: dict[str, SemanticMatches]) -> float | None:
        """The hit's scaled cosine z, where the search took the semantic path for its kind and the
        entry has a vector (None otherwise)."""
        matches = semantic.get(hit.kind)
        if matches is None:
            return None
        import numpy as np  # only here: a search that took no semantic step needs none

        scaled = float(matches.scaled_of(np.array([hit.id], dtype=np.int64))[0])
        return scaled if scaled > -1.0 else None  # -1: no vector

    def _task_id(self, text: str) -> int | None:
        """The stored key of ``text``'s task context (``None``: no content words, or no outcome has
        been recorded under it, so no counter row can match)."""
        key = task_key(task_hash(text))
        if key is None:
            return None
        row = self._ctx.conn.execute("SELECT id FROM tasks WHERE hash = ?", (key,)).fetchone()
        return None if row is None else int(row[0])

    def _effective(self, pool: Pool, task_id: int | None) -> Effective | None:
        """The aged outcome records of a skill pool's candidates (None for memories)."""
        if pool.kind != "skill" or not len(pool):
            return None
        m = pool.matrix
        from ..plasticity.evidence import effective_records

        return effective_records(
            self._ctx.conn, m[:, ID], (m[:, USES], m[:, SUCCESSES], m[:, TASK_USES], m[:, TASK_SUCCESSES]), task_id,
            self._ctx.settings.evidence_half_life,
        )

    def _semantic(
        self, query: str, best_lexical: dict[str, int | None], include_deprecated: bool
    ) -> dict[str, SemanticMatches]:
        """The query's nearest vectors for each kind whose best lexical match (``best_lexical``: its id,
        None for no match) leaves part of the query's words uncovered; empty when semantic retrieval
        is off, nothing is embedded yet, or lexical matches cover the query (then neither the model
        nor the vectors are touched)."""
        s = self._ctx.settings
        if s.semantic_k <= 0 or not query.strip() or not s.semantic:
            return {}
        conn = self._ctx.conn
        covers = {k: self._ideal_relevance.coverage(conn, k, query, best_id) for k, best_id in best_lexical.items()}
        # A kind with no entry at all has no neighbour to add: it loads neither the vectors nor a model
        # (an empty memory table would load both, and numpy, for every skill search).
        wanted = [k for k in best_lexical if gate(covers[k]) > 0.0 and has_entries(conn, k)]
        vectors = self._vectors() if wanted else None
        model = vectors.embedder() if vectors is not None else None
        if vectors is None or model is None:
            return {}
        indexes = {k: vectors.index(k) for k in wanted}
        # The strong tier joins only where the library holds its vectors: the index is read by the
        # model's identity, so a library without them never loads the strong model.
        strong_indexes = {k: idx for k in wanted if (idx := vectors.index(k, strong=True)) is not None}
        if not any(v is not None for v in indexes.values()) and not strong_indexes:
            return {}
        strong = vectors.strong() if strong_indexes else None
        # A backfilled kind is scored by the strong tier alone: the fast tier neither embeds nor scans.
        fast_kinds = [k for k in wanted if indexes[k] is not None and not (
            strong is not None and k in strong_indexes and strong_covers(strong_indexes[k], indexes[k]))]
        # The fast query vector is also wanted where the strong tier scans alone: the candidates it
        # scores get both models' blended z (:func:`.semantic.blended`; no second scan).
        # A spelling-only fast model (hash-trigram) says nothing about meaning and is not blended.
        blends = [k for k in wanted if k not in fast_kinds and indexes[k] is not None and k in strong_indexes
                  and not getattr(model, "spelling_only", False)]
        vector = vectors.embed_query(model, query) if fast_kinds or blends else None
        strong_vector = vectors.embed_query(strong, query) if strong is not None else None
        fusion = Fusion(weight=s.semantic_weight, threshold=s.semantic_threshold, full=s.semantic_full)
        strong_fusion = Fusion(weight=s.semantic_weight, threshold=s.strong_semantic_threshold,
                               full=s.strong_semantic_full)
        out: dict[str, SemanticMatches] = {}
        for k in wanted:
            tiers = []
            if k in fast_kinds and vector is not None and vector.any():
                tiers.append(Tier(indexes[k], vector, fusion, vectors.graph(k)))
            if strong_vector is not None and k in strong_indexes and strong_vector.any():
                tiers.append(Tier(strong_indexes[k], strong_vector, strong_fusion, vectors.graph(k, strong=True)))
            blend = (Tier(indexes[k], vector, fusion) if k in blends and vector is not None and vector.any()
                     else None)
            if tiers:
                out[k] = semantic_matches(conn, k, tiers, s.semantic_k, s.semantic_weight,
                                          self._ideal_relevance(conn, k, query), covers[k],
                                          include_deprecated=include_deprecated, blend=blend)
        return out


_ANY_ENTRY = {"skill": "SELECT 1 FROM skills LIMIT 1", "memory": "SELECT 1 FROM memories LIMIT 1"}


def has_entries(conn: sqlite3.Connection, kind: str) -> bool:
    """Whether the library holds any entry of ``kind`` (one probe)."""
    return conn.execute(_ANY_ENTRY[kind]).fetchone() is not None


def best_lexical(candidates: Rows) -> int | None:
    """Id of the best lexical match (highest BM25, ties by id), None when there is no candidate."""
    if not len(candidates):
        return None
    return int(min(candidates.rows, key=lambda row: (-row[BM25], row[ID]))[ID])


def warm_search_stack(vectors: Vectors | None) -> None:
    """Load what a process's first search loads on first use, outside any write lock: the ranking
    and evidence modules (numpy), and with ``vectors`` the fast embedding model (one embedding, which
    loads its tokenizer) and, when the library holds strong vectors, the strong one. A search inside
    ``lib.transaction()`` then loads nothing while holding the lock (issue 33 item 13). Writes nothing
    and changes no search result (the query cache is not touched)."""
    import numpy.ma  # noqa: F401 - numpy loads it on the first np.unique (strong-tier layout), under the lock

    from ..plasticity import evidence, usage  # noqa: F401 - imported by the rankings' first use
    from . import list_ranking, ranking  # noqa: F401 - the scoring (numpy's and the plain-float one)

    if vectors is None:
        return
    fast = vectors.embedder()
    if fast is None:
        return
    fast.embed(["warm"])
    vectors.warm_before_lock()
    if vectors.strong_loaded():
        vectors.load_strong()
