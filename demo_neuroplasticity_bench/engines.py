"""Where each benchmark run's fresh library lives: an in-memory SQLite file or a new PostgreSQL database.

Every run of the workloads starts from an empty library. On SQLite that is ``:memory:``; on
PostgreSQL it is a new database on the server, cloned from one migrated template (``CREATE DATABASE
… TEMPLATE``), so a run does not pay for the migrations, and dropped when the run ends. The server is
the one ``--pg-url`` names (its user must be allowed to create databases), or a throw-away server that
``tests/pg_server.py`` starts from the installed binaries (``initdb`` + ``pg_ctl``) and stops at exit.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

from kaos_dream import Library, ManualClock, Settings

ENGINES = ("sqlite", "postgresql")

# --strong-backfill (issue 22's no-regression check with the strong tier): every run's library gets the
# strong model's vectors for its skills right after they are added, as a dream pass or `kaos db reindex`
# would give them, so the semantic path scores by the strong tier. Identical skill texts recur in every
# run, so their vectors are computed once per process (the model is deterministic).
STRONG_BACKFILL = {"on": False}
_STRONG_MEMO: dict[str, Any] = {}


def backfill_strong(lib: Library) -> None:
    """With --strong-backfill, the strong tier's vectors for every skill of ``lib`` (memoised by text)."""
    if not STRONG_BACKFILL["on"]:
        return
    import numpy as np

    from kaos_dream.embedding.loader import load_embedder

    model = load_embedder(lib.settings.strong_embedding_model)
    if not getattr(model, "kaos_bench_memo", False):
        embed = model.embed

        def memo_embed(texts: list[str]) -> Any:
            missing = [t for t in dict.fromkeys(texts) if t not in _STRONG_MEMO]
            if missing:
                for t, v in zip(missing, embed(missing), strict=True):
                    _STRONG_MEMO[t] = v
            return np.stack([_STRONG_MEMO[t] for t in texts]) if texts else embed(texts)

        model.embed = memo_embed  # type: ignore[method-assign]
        model.kaos_bench_memo = True  # type: ignore[attr-defined]
    done = lib.vectors.reindex()
    if not done.get("strong"):
        raise RuntimeError(f"--strong-backfill: the strong tier wrote nothing ({done})")


class SqliteTarget:
    """A fresh ``:memory:`` library per run."""

    name = "sqlite"

    @contextlib.contextmanager
    def library(self, clock: ManualClock, settings: Settings) -> Iterator[Library]:
        with Library(":memory:", clock=clock, settings=settings) as lib:
            yield lib

    def close(self) -> None:
        """Nothing to stop."""


def _with_database(url: str, database: str) -> str:
    """``url`` pointing at ``database`` (the rest of it, query string included, unchanged)."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "/" + quote(database, safe=""), parts.query, parts.fragment))


class PostgresTarget:
    """A fresh database per run on one server, cloned from a migrated template database."""

    name = "postgresql"

    def __init__(self, url: str, stop: Any = None) -> None:
        import psycopg

        self.url = url
        self._stop = stop  # stops the throw-away server, when we started one
        self._admin = psycopg.connect(url, autocommit=True)
        self.template = f"kaos_bench_template_{secrets.token_hex(4)}"
        # FILE_COPY (PostgreSQL 15+): cloning a small database is quicker than WAL-logging its blocks
        self._strategy = " STRATEGY FILE_COPY" if self._admin.info.server_version >= 150000 else ""
        self._admin.execute(f'CREATE DATABASE "{self.template}"')
        Library(_with_database(url, self.template), settings=Settings()).close()  # migrate once

    @contextlib.contextmanager
    def library(self, clock: ManualClock, settings: Settings) -> Iterator[Library]:
        name = f"kaos_bench_{secrets.token_hex(6)}"
        self._admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{self.template}"{self._strategy}')
        try:
            with Library(_with_database(self.url, name), clock=clock, settings=settings) as lib:
                yield lib
        finally:
            self._admin.execute(f'DROP DATABASE IF EXISTS "{name}"')

    def close(self) -> None:
        """Drop the template and stop the server we started."""
        with contextlib.suppress(Exception):
            self._admin.execute(f'DROP DATABASE IF EXISTS "{self.template}"')
        self._admin.close()
        if self._stop is not None:
            self._stop()


def throwaway_server_url() -> tuple[str, Any]:
    """Start a server with tests/pg_server.py; its admin URL and the function that stops it.
    Raises RuntimeError (one line) when the server binaries or the test helpers are missing."""
    try:
        from tests.pg_server import find_bindir, start_server, stop_server
    except ImportError as exc:  # tests/pg_server.py needs pytest (the [test] extra)
        raise RuntimeError(f"cannot start a throw-away PostgreSQL server ({exc}); pass --pg-url URL") from None
    bindir = find_bindir()
    if bindir is None:
        raise RuntimeError("PostgreSQL server binaries (initdb, pg_ctl) not found: apt-get install postgresql, "
                           "or pass --pg-url URL")
    server = start_server(bindir)
    return server.socket_url(), lambda: stop_server(server, bindir)


def open_targets(engine: str, pg_url: str | None) -> list[SqliteTarget | PostgresTarget]:
    """The targets ``--engine`` asks for (``both``: SQLite first); raises RuntimeError (one line) when
    PostgreSQL cannot be reached or started."""
    names = list(ENGINES) if engine == "both" else [engine]
    targets: list[SqliteTarget | PostgresTarget] = []
    for name in names:
        if name == "sqlite":
            targets.append(SqliteTarget())
            continue
        try:
            import psycopg  # noqa: F401
        except ImportError:
            raise RuntimeError('PostgreSQL needs psycopg: pip install "kaos-dream[postgres]"') from None
        stop = None
        url = pg_url
        if url is None:
            url, stop = throwaway_server_url()
        try:
            targets.append(PostgresTarget(url, stop))
        except Exception as exc:
            if stop is not None:
                stop()
            first = next((line for line in str(exc).splitlines() if line.strip()), type(exc).__name__)
            raise RuntimeError(f"PostgreSQL at {_masked(url)}: {first}") from None
    return targets


def _masked(url: str) -> str:
    from kaos_dream.store.engine import mask

    return mask(url)


Target = SqliteTarget | PostgresTarget


class Runner:
    """Runs each workload run on every target and, with more than one, compares their searches.

    ``run`` makes the run on the first target (SQLite with ``--engine both``) and returns its result;
    the same run on the other targets goes to a thread pool (a PostgreSQL run spends most of its time
    waiting for the server, so a few overlap well), and :meth:`equivalence` waits for them and gives,
    per section, one entry per run: its key, each engine's figure (final top-1) and the
    :func:`search_trace.compare` of their traces."""

    def __init__(self, targets: list[Target], workers: int = 3) -> None:
        from concurrent.futures import ThreadPoolExecutor

        self.targets = targets
        self._pool = ThreadPoolExecutor(max_workers=workers) if len(targets) > 1 else None
        self._pending: list[tuple[str, dict[str, Any], str, dict[str, Any], dict[str, Any]]] = []

    @property
    def names(self) -> list[str]:
        return [t.name for t in self.targets]

    def run(self, section: str, key: dict[str, Any], fn: Any, *args: Any, figure: str = "final_accuracy",
            compare: bool = True, **kwargs: Any) -> dict[str, Any]:
        """``fn(*args, target=…, **kwargs)`` on the first target (returned) and, when ``compare``, on
        the others."""
        first, *others = self.targets
        result = fn(*args, target=first, **kwargs)
        trace = result.pop("trace")
        if self._pool is not None and compare:
            futures = {t.name: self._pool.submit(fn, *args, target=t, **kwargs) for t in others}
            self._pending.append((section, key, figure, {first.name: (result[figure], trace)}, futures))
        return result

    def equivalence(self) -> dict[str, list[dict[str, Any]]]:
        """Every compared run, by section, in the order the runs were made (waits for the pool)."""
        from search_trace import compare

        out: dict[str, list[dict[str, Any]]] = {}
        for section, key, figure, done, futures in self._pending:
            figures = {name: value for name, (value, _) in done.items()}
            traces = {name: trace for name, (_, trace) in done.items()}
            for name, future in futures.items():
                other = future.result()
                figures[name], traces[name] = other[figure], other["trace"]
            out.setdefault(section, []).append({**key, figure: figures, **compare(traces)})
        return out

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
        for target in self.targets:
            target.close()
