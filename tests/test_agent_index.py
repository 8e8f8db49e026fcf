"""The per-agent index of outcome rows is filled in batches (migration 18, issue 19's single-outcome
goal): a new row enters ``skill_uses_agent`` only when a fold takes the rows written since the last
one, and every reader of one agent's rows adds the short unfolded tail by a rowid range. These tests
hold the readers to a full scan of the table, whatever the order of writes, deletions and folds."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kaos_dream import Library, ManualClock
from kaos_dream.store import apply_migrations, connect
from kaos_dream.store.agent_uses import FOLD_EVERY, agent_index_problems
from kaos_dream.store.migrations import LATEST_VERSION

T0 = 1_767_225_600.0


def _flags(conn: sqlite3.Connection) -> list[tuple[int, int]]:
    return [(int(r[0]), int(r[1])) for r in conn.execute("SELECT id, agent_indexed FROM skill_uses ORDER BY id")]


def _truth(conn: sqlite3.Connection, agent: str) -> dict[int, tuple[int, int]]:
    """Per-skill (uses, successes) of one agent by a full scan that cannot use the index."""
    rows = conn.execute(
        "SELECT u.skill_id, count(*), sum(u.success) FROM skill_uses AS u NOT INDEXED "
        "JOIN agent_keys AS a ON a.id = u.agent_key WHERE a.agent_id = ? GROUP BY u.skill_id", (agent,))
    return {int(r[0]): (int(r[1]), int(r[2])) for r in rows}


def _activity(lib: Library, agent: str) -> dict[int, tuple[int, int]]:
    return {s["skill_id"]: (s["uses"], s["successes"]) for s in lib.episodes.activity(agent)["skills"]}


@pytest.fixture
def lib(tmp_path: Path):
    with Library(tmp_path / "k.db", clock=ManualClock(T0)) as lib:
        yield lib


def _skills(lib: Library, n: int) -> list[int]:
    return [lib.skills.add(f"skill-{i}", f"does thing {i}", f"step {i}").id for i in range(n)]


def test_a_new_outcome_is_read_before_it_enters_the_index(lib: Library) -> None:
    ids = _skills(lib, 3)
    lib.episodes.start("a1")
    lib.record_outcome(ids[0], True, agent="a1")
    lib.record_outcome(ids[1], False, agent="a1")
    lib.record_outcome(ids[1], True, agent="other")
    # Written, but not yet in the agent index: a read through the index alone finds nothing.
    assert _flags(lib.conn) == [(1, 0), (2, 0), (3, 0)]
    assert lib.conn.execute("SELECT count(*) FROM skill_uses INDEXED BY skill_uses_agent "
                            "WHERE agent_key IS NOT NULL AND agent_indexed = 1").fetchone()[0] == 0
    assert _activity(lib, "a1") == {ids[0]: (1, 1), ids[1]: (1, 0)}
    assert lib.episodes._session_nodes("a1")[0] == (ids[0], ids[1])


def test_the_fold_takes_every_row_up_to_each_multiple(lib: Library) -> None:
    ids = _skills(lib, 5)
    n = FOLD_EVERY + 10
    for i in range(n):
        lib.record_outcome(ids[i % 5], i % 3 != 0, agent=f"a{i % 4}")
    flags = _flags(lib.conn)
    assert [f for _, f in flags] == [1] * FOLD_EVERY + [0] * 10
    lib.record_outcomes([{"skill": ids[0], "success": True, "agent": "a0"}] * FOLD_EVERY)  # crosses a multiple
    flags = _flags(lib.conn)
    assert [f for _, f in flags] == [1] * (2 * FOLD_EVERY) + [0] * 10
    for agent in ("a0", "a1", "a2", "a3"):
        assert _activity(lib, agent) == _truth(lib.conn, agent)
    assert agent_index_problems(lib.conn) == []


def test_readers_search_the_index_and_a_rowid_range_never_the_whole_table(lib: Library) -> None:
    from kaos_dream.store.agent_uses import agent_uses

    plan = " | ".join(r[3] for r in lib.conn.execute(
        f"EXPLAIN QUERY PLAN {agent_uses('skill_id')}", ("a1",)))
    assert "SEARCH skill_uses USING INDEX skill_uses_agent (agent_key=?)" in plan
    assert "SEARCH skill_uses USING INTEGER PRIMARY KEY (rowid>?)" in plan
    assert "SCAN f" in plan  # the newest folded row: a scan backwards by rowid that stops at it
    assert plan.count("SCAN") == 1 and "TEMP B-TREE" not in plan


_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("one"), st.integers(0, 5), st.integers(0, 3), st.booleans()),
        st.tuples(st.just("batch"), st.integers(1, 300), st.integers(0, 3), st.booleans()),
        st.tuples(st.just("delete_newest"), st.integers(1, 40), st.just(0), st.just(False)),
        st.tuples(st.just("delete_skill"), st.integers(0, 5), st.just(0), st.just(False)),
    ),
    min_size=1, max_size=25,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=_OPS)
def test_any_order_of_writes_and_deletions_keeps_every_row_findable(tmp_path_factory, ops) -> None:
    path = tmp_path_factory.mktemp("lag") / "k.db"
    with Library(path, clock=ManualClock(T0)) as lib:
        ids = _skills(lib, 6)
        for op, a, b, ok in ops:
            if op == "one" and ids[a] is not None:
                lib.record_outcome(ids[a], ok, agent=f"a{b}")
            elif op == "batch":
                live = [s for s in ids if s is not None]
                if live:
                    lib.record_outcomes([{"skill": live[(a + i) % len(live)], "success": ok ^ (i % 2 == 0),
                                          "agent": f"a{(b + i) % 4}"} for i in range(a)])
            elif op == "delete_newest":
                with lib.transaction():
                    lib.conn.execute("DELETE FROM skill_uses WHERE id IN "
                                     "(SELECT id FROM skill_uses ORDER BY id DESC LIMIT ?)", (a,))
            elif op == "delete_skill" and ids[a] is not None:
                with lib.transaction():
                    lib.conn.execute("DELETE FROM skills WHERE id = ?", (ids[a],))
                ids[a] = None
        assert agent_index_problems(lib.conn) == []
        flags = [f for _, f in _flags(lib.conn)]
        assert flags == sorted(flags, reverse=True)  # folded rows first, then the unfolded tail
        assert flags.count(0) <= FOLD_EVERY + 300  # the tail stays short
        for b in range(4):
            agent = f"a{b}"
            if lib.conn.execute("SELECT 1 FROM agents WHERE id = ?", (agent,)).fetchone():
                assert _activity(lib, agent) == _truth(lib.conn, agent)
                assert lib.episodes._session_nodes(agent)[0] == tuple(sorted(_truth(lib.conn, agent)))


def test_an_older_file_is_folded_by_the_migration(tmp_path: Path) -> None:
    path = tmp_path / "v17.db"
    conn = connect(str(path))
    apply_migrations(conn, T0, str(path), upto=17)
    conn.execute(f"INSERT INTO skills (id, name, created_at, updated_at) VALUES (1, 'a', {T0}, {T0})")
    conn.execute(f"INSERT INTO agents (id, started_at) VALUES ('ag', {T0})")
    conn.executemany("INSERT INTO skill_uses (skill_id, agent_key, success, created_at) VALUES (1, 1, ?, ?)",
                     [(i % 2, T0 + i) for i in range(300)])
    apply_migrations(conn, T0 + 1, str(path))
    assert LATEST_VERSION >= 18
    # Folded up to the newest multiple of the batch, as the trigger would have left it.
    assert [f for _, f in _flags(conn)] == [1] * FOLD_EVERY + [0] * (300 - FOLD_EVERY)
    assert conn.execute("SELECT count(*) FROM skill_uses INDEXED BY skill_uses_agent "
                        "WHERE agent_key = 1 AND agent_indexed = 1").fetchone()[0] == FOLD_EVERY
    conn.close()
    with Library(path, clock=ManualClock(T0 + 2)) as lib:
        lib.record_outcome(1, True, agent="ag")
        assert _flags(lib.conn)[-1] == (301, 0)
        assert _activity(lib, "ag") == {1: (301, 151)}


def test_db_check_names_a_row_the_readers_would_miss(lib: Library, tmp_path: Path) -> None:
    ids = _skills(lib, 2)
    for i in range(FOLD_EVERY + 5):
        lib.record_outcome(ids[i % 2], True, agent="a1")
    assert lib.check() == []
    with lib.transaction():  # a hand edit: an early row taken out of the index
        lib.conn.execute("UPDATE skill_uses SET agent_indexed = 0 WHERE id = 7")
    assert _activity(lib, "a1") != _truth(lib.conn, "a1")
    problems = lib.check()
    assert problems == ["agent index: 1 outcome row at or before row 256 is not in skill_uses_agent "
                        "(first: row 7); agent views miss it"]
    out = subprocess.run([sys.executable, "-m", "kaos_dream", "--db", str(lib.path), "db", "check"],
                         capture_output=True, text=True)
    assert out.returncode != 0 and "agent index: 1 outcome row" in out.stdout + out.stderr


def test_the_fold_trigger_and_the_readers_agree_on_the_batch_size(lib: Library) -> None:
    sql = lib.conn.execute("SELECT sql FROM sqlite_master WHERE name = 'skill_uses_agent_fold'").fetchone()[0]
    assert f"new.id % {FOLD_EVERY} = 0" in sql


def test_postgres_indexes_each_row_at_once_and_reads_the_same(pg_url: str) -> None:
    """On a server every row enters the index as it is written (the batches are SQLite's saving; on
    PostgreSQL rows commit out of id order, so a fold could pass over one still uncommitted)."""
    with Library(pg_url, clock=ManualClock(T0)) as lib:
        ids = _skills(lib, 3)
        for i in range(FOLD_EVERY + 3):
            lib.record_outcome(ids[i % 3], i % 2 == 0, agent=f"a{i % 2}")
        lib.record_outcomes([{"skill": ids[0], "success": True, "agent": "a1"}] * 5)
        assert {int(r[0]) for r in lib.conn.execute("SELECT agent_indexed FROM skill_uses")} == {1}
        for agent in ("a0", "a1"):
            truth = {int(r[0]): (int(r[1]), int(r[2])) for r in lib.conn.execute(
                "SELECT u.skill_id, count(*), sum(u.success) FROM skill_uses AS u JOIN agent_keys AS a "
                "ON a.id = u.agent_key WHERE a.agent_id = ? GROUP BY u.skill_id", (agent,))}
            assert _activity(lib, agent) == truth
        assert lib.episodes._session_nodes("a1")[0] == tuple(ids)
        assert lib.check() == []


_WRITER = """
import sys
from kaos_dream import Library, ManualClock
path, agent, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
with Library(path, clock=ManualClock(1_767_225_600.0)) as lib:
    for i in range(n):
        if i % 5 == 4:
            lib.record_outcomes([{"skill": 1 + (i + j) % 3, "success": j % 2 == 0, "agent": agent} for j in range(7)])
        else:
            lib.record_outcome(1 + i % 3, i % 3 != 0, agent=agent)
"""


def test_writers_in_many_processes_leave_every_row_findable(tmp_path: Path) -> None:
    """Four processes append outcomes to one file at once, singly and in batches, across several
    folds: the folded rows stay a prefix and each agent's view equals a full scan."""
    path = tmp_path / "k.db"
    with Library(path, clock=ManualClock(T0)) as lib:
        _skills(lib, 3)
    procs = [subprocess.Popen([sys.executable, "-c", _WRITER, str(path), f"w{k}", "150"]) for k in range(4)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0, 0]
    with Library(path, clock=ManualClock(T0)) as lib:
        total = lib.conn.execute("SELECT count(*) FROM skill_uses").fetchone()[0]
        assert total == 4 * (120 + 30 * 7)
        flags = [f for _, f in _flags(lib.conn)]
        assert flags == [1] * (total // FOLD_EVERY * FOLD_EVERY) + [0] * (total % FOLD_EVERY)
        assert agent_index_problems(lib.conn) == []
        for k in range(4):
            assert _activity(lib, f"w{k}") == _truth(lib.conn, f"w{k}")
