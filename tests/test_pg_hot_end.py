"""Episode ends on PostgreSQL run beside each other, never under the exclusive database-wide lock.

Against a real server (tests/pg_server.py). An end holds the database-wide write lock in *shared*
mode: while another session holds it shared (another end in flight) ends complete, and while a
session holds it exclusively (a dream phase, a cold write) an end waits and writes nothing; the
connection's counters show no exclusive lock taken. The race test runs real processes that end the
same episodes at once and counts every row: each episode ends once (one claim, one gate report),
the co-activation count and the edge's activations are exact, nothing doubled.
"""

from __future__ import annotations

import contextlib
from dataclasses import replace
from typing import Any

import pytest

from kaos_dream import Library, Settings
from kaos_dream.errors import StoreFaultError
from kaos_dream.store.postgres import adapter
from tests.pg_server import PgServer, needs_postgres
from tests.processes import run_workers

pytestmark = needs_postgres


def _library(url: str, **overrides: Any) -> Library:
    return Library(url, settings=replace(Settings.from_env(), dream_threshold=10**6, **overrides))


def _episodes(url: str, count: int, prefix: str) -> tuple[list[int], list[str]]:
    """Three skills, a co_occurs_with edge between the first two, and ``count`` running episodes that
    each recorded an outcome on every skill."""
    with _library(url) as lib:
        ids = [lib.skills.add(f"{prefix}-skill-{n}", description=f"deploy the service, step {n}").id for n in range(3)]
        with lib.transaction():
            lib.conn.execute(
                "INSERT INTO edges (src_kind, src_id, dst_kind, dst_id, relation, strength, provenance, created_at, "
                "updated_at) VALUES ('skill', ?, 'skill', ?, 'co_occurs_with', 0.3, 'emergent', 0, 0)",
                (ids[0], ids[1]))
        agents = []
        for n in range(count):
            agent = lib.episodes.start(f"{prefix}-{n}").id
            for skill in ids:
                lib.record_outcome(skill, True, agent=agent)
            agents.append(agent)
    return ids, agents


def test_an_end_shares_the_write_lock_with_other_ends_and_waits_for_an_exclusive_holder(pg_server: PgServer) -> None:
    database = pg_server.create_database("endlock")
    url = pg_server.socket_url(database)
    ids, agents = _episodes(url, 3, "lock")
    lib = _library(url, busy_timeout_ms=300)
    try:
        with pg_server.admin(database) as holder:
            holder.autocommit = False
            holder.execute("SELECT pg_advisory_xact_lock_shared(%s)", (adapter.WRITE_LOCK_KEY,))
            first = lib.episodes.complete(agents[0], "done")
            assert first.changed and first.learned and first.pairs == 3
            assert lib.episodes.fail(agents[1], "gave up").changed
            holder.rollback()
            holder.execute("SELECT pg_advisory_xact_lock(%s)", (adapter.WRITE_LOCK_KEY,))
            with pytest.raises(StoreFaultError, match="locked by another writer"):
                lib.episodes.complete(agents[2], "blocked")
            holder.rollback()
        assert lib.conn.lock_stats["locked"] == 0 and lib.conn.lock_stats["shared"] == 3
        assert lib.episodes.get(agents[2]).state == "running"  # the blocked end wrote nothing
        assert lib.episodes.complete(agents[2], "done").changed
        assert lib.conn.lock_stats["locked"] == 0
    finally:
        lib.close()


def test_an_end_that_needs_more_than_the_hot_statements_runs_again_under_the_exclusive_lock(
        pg_server: PgServer) -> None:
    """A failed episode with a recorded failure creates a `caused` evidence edge (a cold statement):
    the shared attempt is rolled back and the end runs once more, exclusively; it happens once."""
    url = pg_server.socket_url(pg_server.create_database("endcold"))
    ids, agents = _episodes(url, 1, "cold")
    with _library(url) as lib:
        lib.failures.record("psql", "psql: FATAL: too many clients", agent=agents[0])
        stats = dict(lib.conn.lock_stats)
        ended = lib.episodes.fail(agents[0], "the database refused")
        assert ended.changed
        assert lib.conn.lock_stats["shared"] == stats["shared"] + 1
        assert lib.conn.lock_stats["locked"] == stats["locked"] + 1
        caused = lib.conn.execute("SELECT count(*) FROM edges WHERE relation = 'caused'").fetchone()[0]
        assert caused == len(ids)
        assert lib.conn.execute("SELECT count(*) FROM episode_gates").fetchone()[0] == 1


def _ender(url: str, worker: int, agents: list[str]) -> dict[str, Any]:
    lib = _library(url)
    changed = [a for a in agents if lib.episodes.complete(a, f"ended by {worker}").changed]
    report = {"changed": changed, "stats": dict(lib.conn.lock_stats)}
    lib.close()
    return report


def test_real_processes_ending_the_same_episodes_end_each_once_and_count_exactly(pg_server: PgServer) -> None:
    database = pg_server.create_database("endrace")
    url = pg_server.socket_url(database)
    workers, count = 4, 30
    ids, agents = _episodes(url, count, "race")
    # Each process walks the episodes from another starting point, so ends of one episode collide.
    reports = run_workers(_ender, [(url, w, agents[w * 7:] + agents[:w * 7]) for w in range(workers)])
    changed = [a for r in reports for a in r["changed"]]
    assert sorted(changed) == sorted(agents)  # every episode ended, none twice
    assert all(r["stats"]["locked"] == 0 and r["stats"]["shared"] == count for r in reports)
    with pg_server.admin(database) as conn:
        assert conn.execute("SELECT count(*) FROM agents WHERE state = 'completed'").fetchone()[0] == count
        gates = conn.execute("SELECT agent_id, count(*) FROM episode_gates GROUP BY agent_id").fetchall()
        assert sorted(g[0] for g in gates) == sorted(agents) and {g[1] for g in gates} == {1}
        assert conn.execute("SELECT count(*) FROM agents WHERE gate_id IS NULL AND state = 'completed'"
                            ).fetchone()[0] == 0
        counts = {(int(r[0]), int(r[1])): float(r[2]) for r in conn.execute(
            "SELECT a_id, b_id, count FROM coactivations WHERE a_kind = 'skill' AND b_kind = 'skill'")}
        pairs = {(ids[0], ids[1]), (ids[0], ids[2]), (ids[1], ids[2])}
        assert counts == {pair: float(count) for pair in pairs}  # 0 lost, 0 doubled
        activations = conn.execute(
            "SELECT activations FROM edges WHERE relation = 'co_occurs_with' AND src_id = %s AND dst_id = %s",
            (ids[0], ids[1])).fetchone()[0]
        assert activations == count


def _adder(url: str, worker: int, count: int) -> dict[str, Any]:
    from kaos_dream.errors import ConflictError

    lib = _library(url)
    ids = [lib.memories.add(f"worker {worker} note {n}: rotate the helm keys weekly", key=f"w{worker}-{n}").id
           for n in range(count)]
    with contextlib.suppress(ConflictError):  # one worker's runbook wins the key
        ids.append(lib.memories.add(f"the shared runbook, as worker {worker} wrote it", key="runbook").id)
    report = {"ids": ids, "stats": dict(lib.conn.lock_stats)}
    lib.close()
    return report


def test_memory_adds_share_the_write_lock_and_real_processes_lose_and_double_nothing(pg_server: PgServer) -> None:
    database = pg_server.create_database("memrace")
    url = pg_server.socket_url(database)
    with _library(url, busy_timeout_ms=300) as lib, pg_server.admin(database) as holder:
        holder.autocommit = False
        holder.execute("SELECT pg_advisory_xact_lock_shared(%s)", (adapter.WRITE_LOCK_KEY,))
        assert lib.memories.add("written beside another shared holder", key="beside").id > 0
        holder.rollback()
        holder.execute("SELECT pg_advisory_xact_lock(%s)", (adapter.WRITE_LOCK_KEY,))
        with pytest.raises(StoreFaultError, match="locked by another writer"):
            lib.memories.add("waits for the exclusive holder", key="blocked")
        holder.rollback()
        assert lib.conn.lock_stats["locked"] == 0 and lib.conn.lock_stats["shared"] == 2
        assert [m.key for m in lib.memories.list()] == ["beside"]
    workers, count = 4, 15
    reports = run_workers(_adder, [(url, w, count) for w in range(workers)])
    ids = [i for r in reports for i in r["ids"]]
    assert len(ids) == len(set(ids)) == workers * count + 1  # one runbook won, the others were told
    assert all(r["stats"]["locked"] == 0 for r in reports)
    with pg_server.admin(database) as conn:
        stored = {int(r[0]) for r in conn.execute("SELECT id FROM memories WHERE key <> 'beside'")}
        assert stored == set(ids)
        indexed = {int(r[0]) for r in conn.execute("SELECT id FROM memories_fts")}
        assert indexed == stored | {int(conn.execute("SELECT id FROM memories WHERE key = 'beside'").fetchone()[0])}
        docs, tokens = conn.execute("SELECT docs, tokens FROM fulltext_totals WHERE name = 'memories'").fetchone()
        assert (docs, tokens) == tuple(conn.execute("SELECT count(*), sum(length) FROM memories_fts").fetchone())
        drift = conn.execute(
            "SELECT count(*) FROM (SELECT term, count(*) AS n FROM memories_fts_postings GROUP BY term) AS p "
            "FULL JOIN memories_fts_vocab AS v USING (term) WHERE coalesce(p.n, 0) <> coalesce(v.docs, 0)"
        ).fetchone()[0]
        assert drift == 0  # every document frequency exact
