"""The :class:`Library`: one connection, one clock, and the stores built on them."""

from __future__ import annotations

import functools
import os
import sqlite3
from collections.abc import Iterable, Iterator, Mapping
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .clock import Clock, SystemClock
from .errors import StoreError
from .hooks import HookRunner
from .memories import Memories
from .names import effective_principal
from .search.candidates import ensure_sql_math
from .settings import Settings
from .skills import Skills
from .store import LATEST_VERSION, apply_migrations, connect, schema_version, transaction
from .store.agent_uses import agent_index_problems
from .store.bundled import bundled_file_problems
from .store.connect import describe_sqlite_error, enable_wal
from .store.context import StoreContext
from .store.counters import counter_mismatches
from .store.dialect import is_postgres, table_names
from .store.engine import parse_db, require_driver
from .store.migrations import check_ownership, refuse_foreign_file, require_current
from .store.name_words import name_word_problems

if TYPE_CHECKING:
    from .coordination import CoordinationLog
    from .dream import Dream
    from .embedding.store import Vectors
    from .episodes import Episodes, Outcome
    from .failures import Failures
    from .graph.edges import Graph
    from .llm import LLMClient
    from .policies import Policies
    from .preferences import Preferences
    from .search.pipeline import SearchPipeline


@functools.cache
def install_learning_hooks() -> None:
    """Register what an ending episode runs: the validation gate, the dream's due/after hooks and the
    graph's causal evidence (skill -caused-> failure, memory -enabled-> skill, checks of
    caused/prevented predictions). Done before the first episode is touched, not at import: a search
    or a listing never ends an episode and need not import those features (~40 ms)."""
    from . import dream as _dream  # noqa: F401 - registers the dream's episode hooks
    from . import validation as _validation  # noqa: F401 - installs the validation gate
    from .graph import episode_evidence

    episode_evidence.register()

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
        create: bool = True,
        principal: str | None = None,
    ) -> None:
        self.settings = settings or Settings.from_env()
        # Who writes: ``principal`` (an MCP server's configured identity), else KAOS_PRINCIPAL, else
        # user@host. Checked before the file is opened, so a bad one changes nothing.
        self.principal = effective_principal(self.settings.principal if principal is None else principal)
        self._create = create
        self.path = str(path) if path is not None else self.settings.db
        self.clock: Clock = clock or SystemClock()
        self.readonly = readonly
        self.engine = parse_db(self.path)
        if self.engine.kind == "postgresql":
            self.conn: sqlite3.Connection = self._open_postgres()
        else:
            self.conn = self._open_sqlite()
        # The stores get the narrow context and the other stores they use, never the library itself;
        # gates and episode hooks (a public extension point) still receive the library, through the runner.
        self.ctx = StoreContext(self.conn, self.clock, self.settings, self.path, readonly, HookRunner(self),
                                self.principal)
        ctx = self.ctx
        self.skills = Skills(ctx, self._vectors)
        self.memories = Memories(ctx, self._vectors)

    def _open_sqlite(self) -> sqlite3.Connection:
        if not self.readonly:
            refuse_foreign_file(self.path, self.settings.busy_timeout_ms)
        conn = connect(
            self.path,
            readonly=self.readonly,
            busy_timeout_ms=self.settings.busy_timeout_ms,
            synchronous=self.settings.synchronous,
            max_page_count=self.settings.max_page_count,
        )
        try:
            if self.readonly:
                require_current(conn, self.path)
            else:
                check_ownership(conn, self.path)
                enable_wal(conn, self.path)
                apply_migrations(conn, self.now(), self.path)
        except sqlite3.Error as exc:
            conn.close()
            raise StoreError(describe_sqlite_error(exc, self.path)) from None
        except BaseException:
            conn.close()
            raise
        ensure_sql_math(conn)
        return conn

    def _open_postgres(self) -> sqlite3.Connection:
        """The same stores on PostgreSQL: the connection presents sqlite3's surface (store/postgres)."""
        from .store.postgres.open import open_postgres

        require_driver(self.engine)
        conn = open_postgres(self.engine, readonly=self.readonly, busy_timeout_ms=self.settings.busy_timeout_ms,
                             now=self.now(), create=self._create)
        return conn  # type: ignore[return-value]

    # The stores below are built on first use, each importing its module then: a search or a listing
    # uses none of them. The episode store installs the learning hooks first (see above).
    @functools.cached_property
    def log(self) -> CoordinationLog:
        from .coordination import CoordinationLog

        return CoordinationLog(self.ctx)

    @functools.cached_property
    def policies(self) -> Policies:
        from .policies import Policies

        return Policies(self.ctx)

    @functools.cached_property
    def preferences(self) -> Preferences:
        from .preferences import Preferences

        return Preferences(self.ctx)

    @functools.cached_property
    def llm(self) -> LLMClient:
        """Shared by every LLM feature; disabled (with a reason) without a key."""
        from .llm import LLMClient

        return LLMClient(self.settings)

    @functools.cached_property
    def graph(self) -> Graph:
        from .graph.edges import Graph

        return Graph(self.ctx)

    @functools.cached_property
    def failures(self) -> Failures:
        from .failures import Failures

        return Failures(self.ctx, llm=self.llm, graph=self.graph, skills=self.skills)

    @functools.cached_property
    def dream(self) -> Dream:
        from .dream import Dream, DreamStores

        return Dream(DreamStores(self.ctx, self.skills, self.failures, self.policies, self._vectors))

    @functools.cached_property
    def episodes(self) -> Episodes:
        install_learning_hooks()
        from .episodes import Episodes

        return Episodes(self.ctx, skills=self.skills, failures=self.failures)

    @functools.cached_property
    def _search(self) -> SearchPipeline:
        from .search.pipeline import SearchPipeline

        return SearchPipeline(self.ctx, vectors=self._vectors, record_hits=self._record_hits)

    def _record_hits(self, hits: Any, query: str, agent: str | None) -> object:
        return self.episodes.record_hits(hits, query, agent)

    # -- plumbing ---------------------------------------------------------------------------------
    def now(self) -> float:
        """The library clock's current time (seconds since the epoch; injectable for tests)."""
        return self.clock.now()

    def transaction(self, *, warm: bool = True) -> AbstractContextManager[sqlite3.Connection]:
        """Group several library calls into one atomic write (``BEGIN IMMEDIATE`` … ``COMMIT``).

        Nothing inside loads code or a model while holding the write lock: before the first one takes
        the lock, the library loads what a call inside would otherwise load under it (:meth:`warm`;
        ``warm=False`` for a caller that has loaded what it needs itself, such as a hook process
        applying one event), and a process that searches semantically loads the strong model outside
        the lock once the library gains strong vectors (:class:`_WarmTransaction`)."""
        if self.conn.in_transaction:
            return transaction(self.conn)
        if warm and "_warmed" not in self.__dict__:
            self.warm()
        if "vectors" in self.__dict__:
            return _WarmTransaction(self.conn, self.vectors)
        return transaction(self.conn)

    def warm(self) -> None:
        """Load now, outside any write lock, what the first write or search would load on first use:
        the episode stack and its hooks, the search pipeline and the embedding models a semantic search
        needs. Under the lock, that first load held it 0.3-1.6 s on a loaded 2-core machine and made
        every other writer wait past its busy timeout (issue 33 item 13). Writes nothing; a read-only
        library loads nothing."""
        if not self.readonly:
            from .search.pipeline import warm_search_stack

            self.warm_writes()
            self._search  # noqa: B018 - imports the pipeline
            warm_search_stack(self.vectors if self.settings.semantic else None)
        self.__dict__["_warmed"] = True

    def warm_writes(self) -> None:
        """The write half of :meth:`warm`: the episode stack and its hooks, and the plug-in validators
        and failure diagnosers other packages publish (the first episode end and the first new
        failure read every installed package's metadata to find them)."""
        from .failures.diagnosis import REGISTRY
        from .validation.base import load_entry_points

        self.episodes  # noqa: B018 - imports the episode stack and registers its hooks
        load_entry_points()
        REGISTRY.load_entry_points()

    def close(self) -> None:
        """Close the connection (also done by ``with``)."""
        self.conn.close()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- search -----------------------------------------------------------------------------------
    @property
    def search(self) -> SearchPipeline:
        """Search skills and memories: ``lib.search(query, kind=…, limit=…, rank=…, record_hits=…, …)``
        returns the hits, best first (the options: :class:`~kaos_dream.search.pipeline.SearchPipeline`)."""
        return self._search

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

        return Vectors(self.ctx)

    def _vectors(self) -> Vectors:
        return self.vectors

    def semantic_unavailable_reason(self) -> str:
        """:meth:`Vectors.unavailable_reason`, without building the vectors (numpy) when this process
        has not touched them: then no model was loaded, and only a missing package can be said."""
        if "vectors" in self.__dict__:
            return self.vectors.unavailable_reason()
        if not self.settings.semantic:
            return ""
        from .embedding.packages import fast_tier_off

        return fast_tier_off(self.settings)

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
        """Where the library is (a file's path, or a PostgreSQL URL with its password masked), its engine,
        schema version, size and row counts."""
        size = None
        if is_postgres(self.conn):
            shown = self.engine.shown
            size = int(self.conn.execute("SELECT pg_database_size(current_database())").fetchone()[0])
        else:
            shown = self.path if self.path == ":memory:" else str(Path(self.path).resolve())
            if self.path != ":memory:" and Path(self.path).exists():
                size = Path(self.path).stat().st_size
        extra: dict[str, Any] = {}
        if is_postgres(self.conn):
            from .store.postgres.inspect import vector_support

            extra["vectors"] = vector_support(self.conn)
        return {
            "path": shown,
            "engine": self.engine.kind,
            "schema_version": schema_version(self.conn),
            "latest_schema_version": LATEST_VERSION,
            "size_bytes": size,
            "skills": self.skills.count(),
            "deprecated_skills": self.skills.count(deprecated=True),
            "memories": self.memories.count(),
            **extra,
        }

    def check(self) -> list[str]:
        """Integrity problems found (empty when the library is sound): SQLite's integrity and foreign-key
        checks (PostgreSQL enforces both itself), the full-text indexes, the derived counters
        recounted from their rows, and that the per-agent index holds every folded row. Reads only."""
        problems: list[str] = []
        if is_postgres(self.conn):
            from .store.postgres.inspect import fulltext_problems

            problems.extend(fulltext_problems(self.conn))
            problems.extend(name_word_problems(self.conn))
            problems.extend(counter_mismatches(self.conn))
            problems.extend(agent_index_problems(self.conn))
            problems.extend(bundled_file_problems(self.conn))
            problems.extend(self._value_problems())
            return problems
        for (line,) in self.conn.execute("PRAGMA integrity_check"):
            if line != "ok":
                problems.append(f"integrity: {line}")
        for row in self.conn.execute("PRAGMA foreign_key_check"):
            problems.append(f"foreign key: {row[0]} row {row[1]} points at a missing {row[2]}")
        problems.extend(self._check_fulltext())
        problems.extend(name_word_problems(self.conn))
        problems.extend(counter_mismatches(self.conn))
        problems.extend(agent_index_problems(self.conn))
        problems.extend(bundled_file_problems(self.conn))
        problems.extend(self._value_problems())
        return problems

    def _value_problems(self) -> list[str]:
        """Stored values `db import` now refuses (an older import let them in; issue 33 item 3)."""
        from .store.catalogue import data_tables
        from .store.import_values import stored_value_problems
        from .store.lookalikes import skeleton_problems

        values = stored_value_problems(self.conn, [(t.name, t.columns) for t in data_tables(self.conn)])
        return values + skeleton_problems(self.conn)

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
        yield from table_names(self.conn)


def open_library(
    path: str | os.PathLike[str] | None = None,
    *,
    clock: Clock | None = None,
    settings: Settings | None = None,
    readonly: bool = False,
) -> Library:
    """Open (creating and migrating when needed, unless ``readonly``) the library at ``path``."""
    return Library(path, clock=clock, settings=settings, readonly=readonly)


class _WarmTransaction:
    """``transaction(conn)`` for a process that searches semantically: the strong model, when a search
    inside would load it, is loaded before the lock is taken, and again after an empty release when the
    vectors that call for it were committed while this writer waited for the lock (issue 33 item 13:
    a writer loading the model under the lock made the others wait past their busy timeout)."""

    __slots__ = ("_conn", "_tx", "_vectors")

    def __init__(self, conn: sqlite3.Connection, vectors: Vectors) -> None:
        self._conn, self._vectors, self._tx = conn, vectors, transaction(conn)

    def __enter__(self) -> sqlite3.Connection:
        self._vectors.warm_before_lock()
        self._tx.__enter__()
        # SQLite only: its BEGIN IMMEDIATE waited for the lock, so the strong vectors may have come
        # meanwhile. On PostgreSQL the read would be the transaction's first, non-hot statement and
        # would take the database-wide lock that the hot paths avoid.
        if isinstance(self._conn, sqlite3.Connection) and self._vectors.strong_to_load():
            self._tx.__exit__(None, None, None)
            self._vectors.load_strong()
            self._tx = transaction(self._conn)
            self._tx.__enter__()
        return self._conn

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        self._tx.__exit__(exc_type, exc, tb)
