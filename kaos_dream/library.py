"""The :class:`Library`: one connection, one clock, and the stores built on them."""

from __future__ import annotations

import functools
import os
import sqlite3
from collections.abc import Iterable, Iterator, Mapping
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import validation as _validation  # noqa: F401 - installs the validation gate
from .clock import Clock, SystemClock
from .coordination import CoordinationLog
from .dream import Dream
from .episodes import Episodes, Outcome
from .errors import InvalidInputError, StoreError
from .failures import Failures
from .graph import episode_evidence as _graph_episode_evidence
from .graph.edges import Graph
from .llm import LLMClient
from .memories import Memories
from .plasticity.task import task_hash
from .policies import Policies
from .preferences import Preferences
from .search import Hit, lexical_candidates
from .search.candidates import (
    BM25,
    ID,
    SUCCESSES,
    TASK_SUCCESSES,
    TASK_USES,
    USES,
    Pool,
    candidate_pool,
    details,
    ensure_sql_math,
    hybrid_memories,
    hybrid_pool,
    ranked_memories,
)
from .search.lexical import with_skill_counts
from .search.semantic import Fusion, IdealRelevance, SemanticMatches, gate, semantic_matches
from .settings import Settings
from .skills import Skills
from .store import LATEST_VERSION, apply_migrations, connect, schema_version, transaction
from .store.connect import describe_sqlite_error, enable_wal
from .store.counters import counter_mismatches
from .store.migrations import check_ownership, refuse_foreign_file, require_current

if TYPE_CHECKING:
    from .embedding.store import Vectors
    from .plasticity.evidence import Effective

# Causal evidence from ended episodes (skill -caused-> failure, memory -enabled-> skill, and checks of
# caused/prevented predictions) is recorded by the graph's episode-end hook.
_graph_episode_evidence.register()

SEARCH_KINDS = ("skill", "memory")
RANKS = ("weighted", "wilson", "bm25")
FTS_TABLES = ("skills_fts", "memories_fts")
CHECK_CACHE_KIB = 8192  # page cache of the scratch copy `db check` verifies the full-text indexes on


class Library(AbstractContextManager["Library"]):
    """A kaos-dream library stored in one SQLite file.

    ``readonly=True`` opens the file with SQLite's ``mode=ro``: nothing can be written, the schema is
    never migrated, and a file that still needs migrating is refused with a clear message.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        clock: Clock | None = None,
        settings: Settings | None = None,
        readonly: bool = False,
    ) -> None:
        self.settings = settings or Settings.from_env()
        self.path = str(path) if path is not None else self.settings.db
        self.clock: Clock = clock or SystemClock()
        self.readonly = readonly
        if not readonly:
            refuse_foreign_file(self.path, self.settings.busy_timeout_ms)
        self.conn: sqlite3.Connection = connect(
            self.path,
            readonly=readonly,
            busy_timeout_ms=self.settings.busy_timeout_ms,
            synchronous=self.settings.synchronous,
            max_page_count=self.settings.max_page_count,
        )
        try:
            if readonly:
                require_current(self.conn, self.path)
            else:
                check_ownership(self.conn, self.path)
                enable_wal(self.conn, self.path)
                apply_migrations(self.conn, self.now(), self.path)
        except sqlite3.Error as exc:
            self.conn.close()
            raise StoreError(describe_sqlite_error(exc, self.path)) from None
        except BaseException:
            self.conn.close()
            raise
        ensure_sql_math(self.conn)
        self._ideal_relevance = IdealRelevance()
        self.skills = Skills(self)
        self.memories = Memories(self)
        self.log = CoordinationLog(self)
        self.policies = Policies(self)
        self.preferences = Preferences(self)
        self.llm = LLMClient(self.settings)  # shared by every LLM feature; disabled (with a reason) without a key
        self.failures = Failures(self)
        self.graph = Graph(self)
        self.dream = Dream(self)
        self.episodes = Episodes(self)

    # -- plumbing ---------------------------------------------------------------------------------
    def now(self) -> float:
        """The library clock's current time (seconds since the epoch; injectable for tests)."""
        return self.clock.now()

    def transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        """Group several library calls into one atomic write (``BEGIN IMMEDIATE`` … ``COMMIT``)."""
        return transaction(self.conn)

    def close(self) -> None:
        """Close the connection (also done by ``with``)."""
        self.conn.close()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- search -----------------------------------------------------------------------------------
    def search(
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
    ) -> list[Hit]:
        """Skills and/or memories matching ``query``, best first, ties by kind then id.

        ``rank``: ``weighted`` (default, from settings) re-ranks a bounded coordination-level pool by
        relevance x the effective (aged) outcome record (conditioned on ``task``, which defaults to
        the query); ``wilson`` is the seed's formula exactly; ``bm25`` is the plain lexical order.
        ``explore`` (weighted only) ranks skills by a Thompson draw from their effective record,
        seeded by ``seed`` (default ``settings.explore_seed``) and the candidates' evidence: the same
        seed and data give the same order. With plasticity off (``KAOS_DREAM_AUTO=0``) every rank is
        ``bm25``. ``record_hits`` writes one
        hit row per result (with ``agent``, registered if new) in one transaction; without it the
        search only reads.
        """
        if limit < 0:
            raise InvalidInputError("limit must not be negative")
        rank = rank or self.settings.rank
        if rank not in RANKS:
            raise InvalidInputError(f"unknown rank {rank!r}: use weighted, wilson or bm25")
        kinds = SEARCH_KINDS if kind is None else (kind,)
        for k in kinds:
            if k not in SEARCH_KINDS:
                raise InvalidInputError(f"unknown kind {k!r}: use skill or memory")
        if record_hits and self.readonly:
            raise InvalidInputError("cannot record hits: the library is open read-only")
        if explore and rank != "weighted":
            raise InvalidInputError(f"explore works with the weighted rank, not {rank!r}")
        if seed is not None and not explore:
            raise InvalidInputError("seed is only used with explore")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**32):
            raise InvalidInputError("seed must be a whole number from 0 to 4294967295")
        if not self.settings.dream_auto:
            rank = "bm25"
        if rank == "bm25":
            hits = self._lexical_search(query, kinds, limit, include_deprecated)
        else:
            explore_seed = (self.settings.explore_seed if seed is None else int(seed)) if explore else None
            hits = self._weighted_search(query, kinds, limit, include_deprecated, rank, task, explore_seed)
        if record_hits and hits:
            self.episodes.record_hits(hits, query, agent)
        elif record_hits and agent is not None:
            self.episodes.record_hits([], query, agent)
        return hits

    def _lexical_search(self, query: str, kinds: tuple[str, ...], limit: int, include_deprecated: bool) -> list[Hit]:
        hits: list[Hit] = []
        for k in kinds:
            hits.extend(lexical_candidates(self.conn, query, k, limit, include_deprecated))
        hits.sort(key=lambda h: (-h.score, h.kind, h.id))
        return with_skill_counts(self.conn, hits[:limit])

    def _weighted_search(
        self,
        query: str,
        kinds: tuple[str, ...],
        limit: int,
        include_deprecated: bool,
        rank: str,
        task: str | None,
        explore_seed: int | None = None,
    ) -> list[Hit]:
        if limit == 0:
            return []
        s = self.settings
        pool = max(s.rank_pool, limit)
        digest = task_hash(task if task is not None else query) if "skill" in kinds else None
        now = self.now()
        # The seed's formula floors relevance; the default does not (see search/ranking.py).
        floor = s.rank_floor if rank == "wilson" else 0.0
        memory_order = (floor, now, s.rank_half_life_days * 86_400.0, limit)
        if kinds == ("memory",):  # no outcomes to weigh: SQL ranks them, no pool matrix needed
            ranked = ranked_memories(self.conn, query, pool=pool, memory_order=memory_order)
            semantic = self._semantic(query, {"memory": max((r[3] for r in ranked), default=0.0)},
                                      include_deprecated)
            if "memory" in semantic:
                ranked = hybrid_memories(self.conn, ranked, semantic["memory"], memory_order)
            unit = max((r[3] for r in ranked), default=1.0) if rank == "weighted" else 1.0
            return [
                Hit("memory", entry_id, key, snippet, bm25, score / (unit or 1.0))
                for entry_id, key, snippet, bm25, score, _ in ranked
            ]
        pools = [
            candidate_pool(
                self.conn, query, k, pool=pool, pool_min=max(s.rank_pool_min, limit), task_hash=digest,
                include_deprecated=include_deprecated, memory_order=memory_order,
            )
            for k in kinds
        ]
        best_lexical = {p.kind: float(p.matrix[:, BM25].max()) if len(p) else 0.0 for p in pools}
        semantic = self._semantic(query, best_lexical, include_deprecated)
        pools = [
            hybrid_pool(self.conn, p, semantic[p.kind], task_hash=digest, memory_order=memory_order)
            if p.kind in semantic else p
            for p in pools
        ]
        from .search.ranking import RankParams, best_relevance, score_pool, top  # numpy: only ranking needs it

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
            score_pool(p, now, rank, params, effective=self._effective(p, digest) if rank == "weighted" else None,
                       unit=unit)
            for p in pools
        ]
        best = top(pools, scores, limit)
        shown = {
            p.kind: p.shown
            if p.shown is not None
            else details(self.conn, p.kind, [int(p.matrix[row, ID]) for _, pi, row, _ in best if pools[pi] is p])
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
        return hits

    def _effective(self, pool: Pool, digest: str | None) -> Effective | None:
        """The aged outcome records of a skill pool's candidates (None for memories)."""
        if pool.kind != "skill" or not len(pool):
            return None
        m = pool.matrix
        from .plasticity.evidence import effective_records

        return effective_records(
            self.conn, m[:, ID], (m[:, USES], m[:, SUCCESSES], m[:, TASK_USES], m[:, TASK_SUCCESSES]), digest,
            self.settings.evidence_half_life,
        )

    def skill_record(self, ref: int | str) -> dict[str, Any]:
        """A skill's outcome record: exact all-time counters beside the effective (aged) record,
        globally and per task (``kaos skill show``). Reads only."""
        from .plasticity.evidence import skill_record

        return skill_record(self.conn, self.skills.resolve_id(ref), self.settings.evidence_half_life)

    @functools.cached_property
    def vectors(self) -> Vectors:
        """Stored vectors (issue 22), built on first use: they need numpy, which opening a library for
        `kaos skill list` does not; the embedding model itself loads later still, on first embed."""
        from .embedding.store import Vectors

        return Vectors(self)

    def _semantic(
        self, query: str, best_lexical: dict[str, float], include_deprecated: bool
    ) -> dict[str, SemanticMatches]:
        """The query's nearest vectors for each kind whose best lexical match (``best_lexical``)
        leaves part of the query uncovered; empty when semantic retrieval is off, nothing is embedded
        yet, or lexical matches cover the query (then neither the model nor the vectors are touched)."""
        s = self.settings
        if s.semantic_k <= 0 or not query.strip() or not s.semantic:
            return {}
        references = {k: self._ideal_relevance(self.conn, k, query) for k in best_lexical}
        wanted = [k for k in best_lexical if gate(best_lexical[k], references[k]) > 0.0]
        model = self.vectors.embedder() if wanted else None
        if model is None:
            return {}
        indexes = {k: self.vectors.index(k) for k in wanted}
        if not any(v is not None for v in indexes.values()):
            return {}
        vector = model.embed([query])[0]
        if not vector.any():
            return {}
        fusion = Fusion(weight=s.semantic_weight, threshold=s.semantic_threshold, full=s.semantic_full)
        return {
            k: semantic_matches(self.conn, k, index, vector, s.semantic_k, fusion, references[k], best_lexical[k],
                                include_deprecated=include_deprecated)
            for k, index in indexes.items()
            if index is not None
        }

    def record_outcome(
        self, skill: int | str, success: bool, agent: str | None = None, task: str | None = None
    ) -> Outcome:
        """Shorthand for :meth:`Episodes.record_outcome` (``lib.episodes.record_outcome``)."""
        return self.episodes.record_outcome(skill, success, agent=agent, task=task)

    def record_outcomes(self, outcomes: Iterable[Mapping[str, Any]]) -> list[Outcome]:
        """Many outcomes in one transaction (:meth:`Episodes.record_outcomes`): items of ``skill``,
        ``success`` and optional ``agent``, ``task``; a bad item writes nothing."""
        return self.episodes.record_outcomes(outcomes)

    # -- inspection -------------------------------------------------------------------------------
    def info(self) -> dict[str, Any]:
        """Path, schema version, size and row counts of the file."""
        size = None
        if self.path != ":memory:" and Path(self.path).exists():
            size = Path(self.path).stat().st_size
        return {
            "path": self.path if self.path == ":memory:" else str(Path(self.path).resolve()),
            "schema_version": schema_version(self.conn),
            "latest_schema_version": LATEST_VERSION,
            "size_bytes": size,
            "skills": self.skills.count(),
            "deprecated_skills": self.skills.count(deprecated=True),
            "memories": self.memories.count(),
        }

    def check(self) -> list[str]:
        """Integrity problems found (empty when the file is sound): SQLite's integrity and foreign-key
        checks, the full-text indexes, and the derived counters recounted from their rows. Reads only."""
        problems: list[str] = []
        for (line,) in self.conn.execute("PRAGMA integrity_check"):
            if line != "ok":
                problems.append(f"integrity: {line}")
        for row in self.conn.execute("PRAGMA foreign_key_check"):
            problems.append(f"foreign key: {row[0]} row {row[1]} points at a missing {row[2]}")
        problems.extend(self._check_fulltext())
        problems.extend(counter_mismatches(self.conn))
        return problems

    def _check_fulltext(self) -> list[str]:
        """FTS5's integrity-check is phrased as an INSERT, so it needs a writable connection. A
        read-only library runs it on a copy (SQLite's backup API), so the check works on read-only
        and locked files and can never write to the file; a writable one runs it inside a
        transaction that is always rolled back. The copy is SQLite's private temporary on-disk
        database (empty file name, deleted on close) with a small page cache, so checking a large
        file costs a bounded amount of memory rather than the file's size."""
        if self.readonly and self.path != ":memory:":
            conn = sqlite3.connect("", isolation_level=None)
            try:
                conn.execute(f"PRAGMA cache_size = -{CHECK_CACHE_KIB}")
                self.conn.backup(conn)
            except sqlite3.Error as exc:
                conn.close()
                return [f"full-text indexes not checked: {describe_sqlite_error(exc, self.path)}"]
            owned = True
        else:
            conn, owned = self.conn, False
        problems: list[str] = []
        try:
            if conn.in_transaction:
                raise StoreError("cannot check full-text indexes inside an open transaction")
            conn.execute("BEGIN")
            try:
                for table in FTS_TABLES:
                    try:
                        conn.execute(f"INSERT INTO {table} ({table}, rank) VALUES ('integrity-check', 1)")
                    except sqlite3.DatabaseError as exc:
                        problems.append(f"full-text index {table}: {exc}")
            finally:
                conn.execute("ROLLBACK")
        finally:
            if owned:
                conn.close()
        return problems

    def iter_tables(self) -> Iterator[str]:
        """Names of every table in the file except SQLite's own, in name order."""
        for (name,) in self.conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
        ):
            yield name


def open_library(
    path: str | os.PathLike[str] | None = None,
    *,
    clock: Clock | None = None,
    settings: Settings | None = None,
    readonly: bool = False,
) -> Library:
    """Open (creating and migrating when needed, unless ``readonly``) the library at ``path``."""
    return Library(path, clock=clock, settings=settings, readonly=readonly)
