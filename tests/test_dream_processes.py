"""The dream through real processes: the `kaos` CLI, concurrent runs, kill -9 and resume."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from kaos_dream import Library, ManualClock, Settings
from kaos_dream.store import transaction

from .conftest import PROJECT_ROOT, T0, file_digest, kaos_command, query, run_kaos, target_digest


def env() -> dict[str, str]:
    e = {k: v for k, v in os.environ.items() if not k.startswith("KAOS_")}
    e["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PROJECT_ROOT), e.get("PYTHONPATH")]))
    return e


def build(db: Path | str, skills: int = 40) -> None:
    """A library with merge candidates, prune/promote candidates, edges to decay and co-activations."""
    lib = Library(db, clock=ManualClock(T0), settings=Settings())
    with transaction(lib.conn):
        for i in range(skills):
            lib.skills.add(f"job-{i}", f"run the nightly {['etl', 'backup', 'report'][i % 3]} job for team {i // 2}")
        lib.memories.add("staging rejects TLS 1.0", key="tls")
        c = lib.conn
        # three agents: prune and promote need evidence from several distinct agents
        c.executemany("INSERT INTO agents (id, started_at) VALUES (?, ?)", [(f"a{i}", T0) for i in range(3)])
        c.executemany("INSERT INTO memory_hits (memory_id, agent_id, query, rank, created_at) VALUES (1, ?, 'q', 1, ?)",
                      [(f"a{i % 3}", T0) for i in range(6)])
        c.executemany("INSERT INTO skill_uses (skill_id, agent_key, success, created_at) "
                      "SELECT ?1, (SELECT id FROM agent_keys WHERE agent_id = ?2), ?3, ?4",
                      [(1 + i % 7, f"a{i % 3}", int(i % 5 == 0), T0) for i in range(70)])
        for i in range(1, skills - 1):
            c.execute("INSERT INTO edges (src_kind, src_id, dst_kind, dst_id, relation, strength, last_activated_cycle,"
                      " provenance, created_at, updated_at) VALUES ('skill', ?, 'skill', ?, 'co_occurs_with', ?, 0,"
                      " 'observed', ?, ?)", (i, i + 1, 0.2 + (i % 8) / 10, T0, T0))
            c.execute("INSERT INTO coactivations VALUES ('skill', ?, 'skill', ?, ?, ?, ?)",
                      (i, i + 2, 3 + i % 3, T0, T0))
        c.execute("UPDATE dream_state SET value = 3 WHERE key = 'cycle'")
    lib.close()


def snapshot_queries(strength: str = "strength") -> dict[str, str]:
    """The queries of a dream snapshot: everything a dream changes, without timestamps (runs use the
    wall clock). ``strength`` is the column as the engine rounds it (PostgreSQL: ``strength::numeric``)."""
    return {
        "edges": f"SELECT src_kind, src_id, dst_kind, dst_id, relation, round({strength}, 12), provenance "
                 "FROM edges ORDER BY 1, 2, 3, 4, 5",
        "skills": "SELECT id, name, deprecated FROM skills ORDER BY id",
        "proposals": "SELECT kind, targets, fingerprint, status FROM proposals ORDER BY kind, targets, status",
        "state": "SELECT key, value FROM dream_state ORDER BY key",
        "runs": "SELECT mode, status FROM dream_runs WHERE status = 'completed'",
    }


def snapshot(db: Path) -> dict[str, list]:
    """Everything a dream changes in the file (see :func:`snapshot_queries`)."""
    conn = sqlite3.connect(db)
    try:
        return {name: conn.execute(sql).fetchall() for name, sql in snapshot_queries().items()}
    finally:
        conn.close()


def check_clean(db: Path) -> None:
    r = run_kaos("db", "check", db=db)
    assert r.returncode == 0, r.stdout + r.stderr


KILLER = textwrap.dedent("""
    import os, signal, sys
    from kaos_dream import Library
    from kaos_dream.dream import PhaseResult, register_phase
    where = int(sys.argv[2])
    def die(ctx, _):
        os.kill(os.getpid(), signal.SIGKILL)
        return PhaseResult({})
    register_phase("die", die, order=where)
    lib = Library(sys.argv[1])
    lib.dream.run(apply=True)
""")


@pytest.mark.parametrize("where", [250, 550])
def test_kill9_mid_run_then_rerun_equals_uninterrupted(tmp_path: Path, where: int) -> None:
    base = tmp_path / "base.db"
    build(base)
    clean, killed = tmp_path / "clean.db", tmp_path / "killed.db"
    shutil.copy(base, clean)
    shutil.copy(base, killed)
    assert run_kaos("dream", "run", "--apply", "--quiet", db=clean).returncode == 0
    proc = subprocess.run([sys.executable, "-c", KILLER, str(killed), str(where)], env=env(), timeout=120)
    assert proc.returncode == -signal.SIGKILL
    check_clean(killed)
    assert json.loads(run_kaos("dream", "runs", "--json", db=killed).stdout)[0]["status"] == "running"
    r = run_kaos("dream", "run", "--apply", "--json", db=killed)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["status"] == "completed" and out["resumed"] is True
    check_clean(killed)
    assert snapshot(killed) == snapshot(clean)
    # And one more pass on each stays equal (no duplicated work left behind).
    run_kaos("dream", "run", "--apply", "--quiet", db=clean)
    run_kaos("dream", "run", "--apply", "--quiet", db=killed)
    assert snapshot(killed) == snapshot(clean)


def _latest_run_status(db: Path | str) -> tuple[str] | None:
    """The newest dream run's status, read-only: a raw read-only connection to a file (no library
    open, so no migration check), a read-only library on PostgreSQL."""
    if str(db).startswith("postgresql://"):
        with Library(str(db), settings=Settings(), readonly=True) as lib:
            return lib.conn.execute("SELECT status FROM dream_runs ORDER BY id DESC LIMIT 1").fetchone()
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1)
    try:
        return conn.execute("SELECT status FROM dream_runs ORDER BY id DESC LIMIT 1").fetchone()
    finally:
        conn.close()


def wait_until_running(db: Path | str, proc: subprocess.Popen) -> bool:
    """Poll (read-only) until the child's dream run row exists; False if the child ended first."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            row = _latest_run_status(db)
        except sqlite3.Error:
            row = None
        if row is not None and row[0] == "running":
            return True
        time.sleep(0.002)
    return False


def test_kill9_from_outside_at_random_moments(tmp_path: Path) -> None:
    base = tmp_path / "base.db"
    build(base, skills=1500)
    clean = tmp_path / "clean.db"
    shutil.copy(base, clean)
    assert run_kaos("dream", "run", "--apply", "--quiet", db=clean).returncode == 0
    expected = snapshot(clean)
    killed_mid_run = 0
    for n, delay in enumerate((0.0, 0.02, 0.06)):
        db = tmp_path / f"k{n}.db"
        shutil.copy(base, db)
        cmd = [sys.executable, "-m", "kaos_dream", "--db", str(db), "dream", "run", "--apply", "--quiet"]
        proc = subprocess.Popen(cmd, env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if wait_until_running(db, proc):
            time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        check_clean(db)
        conn = sqlite3.connect(db)
        statuses = [r[0] for r in conn.execute("SELECT status FROM dream_runs")]
        conn.close()
        if "completed" not in statuses:  # killed before the pass finished: the rerun must complete it
            killed_mid_run += "running" in statuses
            assert run_kaos("dream", "run", "--apply", "--quiet", db=db).returncode == 0
        assert snapshot(db) == expected, delay
    assert killed_mid_run >= 1


SLOW = textwrap.dedent("""
    import json, os, sys, time
    from kaos_dream import Library
    from kaos_dream.dream import PhaseResult, register_phase
    # Heavy work happens in prepare (outside the write lock), as the proposals phase does.
    pause = float(sys.argv[3]) if len(sys.argv) > 3 else 1.5
    release = sys.argv[4] if len(sys.argv) > 4 else None  # the pause ends early once this file exists

    def hold(ctx):
        deadline = time.monotonic() + pause
        while time.monotonic() < deadline and not (release and os.path.exists(release)):
            time.sleep(0.005)

    register_phase("slow", lambda ctx, _: PhaseResult({}), order=150, prepare=hold)
    lib = Library(sys.argv[1])
    go = sys.argv[2] if len(sys.argv) > 2 and sys.argv[2] else None
    if go:  # start together: report ready, then wait for the parent's go file
        print("ready", flush=True)
        while not os.path.exists(go):
            time.sleep(0.005)
    print(json.dumps(lib.dream.run().to_dict()), flush=True)
""")


def test_two_concurrent_runs_one_works_the_other_reports(db_path: Path, tmp_path: Path) -> None:
    """On the file; on PostgreSQL the lease under concurrent passes is demo_fleet_bench's (two racers,
    no overlapping passes: tests/test_fleet_bench.py) and test_pg_faults' (a killed pass)."""
    db = str(db_path)
    build(db)
    go = tmp_path / "go"
    procs = [subprocess.Popen([sys.executable, "-c", SLOW, str(db), str(go)], env=env(), stdout=subprocess.PIPE,
                              text=True) for _ in range(2)]
    for p in procs:
        assert p.stdout is not None and p.stdout.readline().strip() == "ready"
    go.touch()
    outs = [json.loads(p.communicate(timeout=120)[0]) for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert sorted(o["status"] for o in outs) == ["busy", "completed"]
    busy = next(o for o in outs if o["status"] == "busy")
    assert busy["holder"] and "holds the lease" in busy["message"]
    # A CLI run while another holds the lease: reports and exits 0; with --wait it runs afterwards.
    # The holder keeps the lease until the test releases it (at most 60 s).
    release = tmp_path / "release"
    holder = subprocess.Popen([sys.executable, "-c", SLOW, str(db), "", "60", str(release)], env=env(),
                              stdout=subprocess.PIPE, text=True)
    assert wait_until_running(db, holder)
    r = run_kaos("dream", "run", db=db)
    assert r.returncode == 0 and "holds the lease" in r.stdout
    waiter = subprocess.Popen(kaos_command() + ["--db", db, "dream", "run", "--wait", "30", "--json"], env=env(),
                              stdout=subprocess.PIPE, text=True)
    time.sleep(1.0)  # the waiter starts and finds the lease held
    assert waiter.poll() is None
    release.touch()
    assert json.loads(waiter.communicate(timeout=60)[0])["status"] == "completed"
    assert json.loads(holder.communicate(timeout=60)[0])["status"] == "completed"


def test_merge_accept_end_to_end_through_cli(library_target: str) -> None:
    db = library_target  # both engines (conftest BOTH_ENGINES)
    for args in (["skill", "add", "csv-to-parquet", "-d", "convert csv files to parquet with a schema"],
                 ["skill", "add", "csv-to-parquet-fast", "-d", "convert csv files to parquet with a schema"],
                 ["skill", "add", "upload-s3", "-d", "upload a folder to a bucket"],
                 ["memory", "add", "parquet drift note", "--key", "drift"]):
        assert run_kaos(*args, db=db).returncode == 0
    seed = Library(db, settings=Settings())
    with transaction(seed.conn) as conn:
        conn.executemany("INSERT INTO skill_uses (skill_id, success, created_at) VALUES (?, ?, ?)",
                         [(2, 1, T0)] * 3 + [(1, 0, T0)])
        conn.execute("INSERT INTO skill_hits (skill_id, query, rank, created_at) VALUES (2, 'csv', 1, ?)", (T0,))
        ins = ("INSERT INTO edges (src_kind, src_id, dst_kind, dst_id, relation, strength, activations, provenance, "
               "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, 'observed', ?, ?)")
        conn.execute(ins, ("skill", 1, "skill", 3, "co_occurs_with", 0.7, 2, T0, T0))  # conflicts after the merge
        conn.execute(ins, ("skill", 2, "skill", 3, "co_occurs_with", 0.6, 1, T0, T0))
        conn.execute(ins, ("skill", 1, "skill", 2, "co_occurs_with", 0.5, 1, T0, T0))  # becomes a self-edge
        conn.execute(ins, ("memory", 1, "skill", 2, "co_occurs_with", 0.4, 1, T0, T0))  # moves
        conn.execute(ins, ("skill", 2, "skill", 3, "caused", 0.3, 1, T0, T0))  # directed, moves
        conn.execute("INSERT INTO coactivations VALUES ('skill', 2, 'skill', 3, 2, ?, ?)", (T0, T0))
        conn.execute("INSERT INTO coactivations VALUES ('skill', 1, 'skill', 3, 1, ?, ?)", (T0, T0))
    seed.close()
    assert run_kaos("dream", "run", "--quiet", db=db).returncode == 0
    before = target_digest(db)
    for args in (["dream", "merges"], ["dream", "merges", "--json"], ["dream", "runs"], ["dream", "show", "1"],
                 ["dream", "proposals", "--status", "all"], ["dream", "status"]):
        r = run_kaos(*args, db=db)
        assert r.returncode == 0, (args, r.stderr)
    assert target_digest(db) == before  # read-only listings leave the file byte-for-byte unchanged
    pending = json.loads(run_kaos("dream", "merges", "--json", db=db).stdout)
    assert [p["skills"] for p in pending] == [[1, 2]]
    pid = pending[0]["id"]
    r = run_kaos("dream", "merges", "--accept", str(pid), "--keep", "csv-to-parquet", db=db)
    assert r.returncode == 0, r.stderr
    assert query(db, "SELECT count(*) FROM skill_uses WHERE skill_id = 1") == [(4,)]
    assert query(db, "SELECT count(*) FROM skill_hits WHERE skill_id = 1") == [(1,)]
    edges = query(db, "SELECT src_kind, src_id, dst_kind, dst_id, relation, strength, activations FROM edges "
                      "ORDER BY 1, 2, 3, 4, 5")
    assert edges == [("memory", 1, "skill", 1, "co_occurs_with", 0.4, 1),
                     ("skill", 1, "skill", 3, "caused", 0.3, 1),
                     ("skill", 1, "skill", 3, "co_occurs_with", 1.0, 3)]  # 0.7 + 0.6 capped at 1
    assert query(db, "SELECT a_id, b_id, count FROM coactivations") == [(1, 3, 3.0)]
    [(dep, reason)] = query(db, "SELECT deprecated, deprecated_reason FROM skills WHERE id = 2")
    assert dep == 1 and reason == f"merged into 1 via proposal {pid}"
    r = run_kaos("dream", "merges", "--accept", str(pid), db=db)
    assert r.returncode == 1 and "already applied" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_accepting_a_merge_whose_skill_is_gone_is_a_clear_error(tmp_path: Path) -> None:
    db = tmp_path / "g.db"
    run_kaos("skill", "add", "a-job", "-d", "the same words here", db=db)
    run_kaos("skill", "add", "a-job-2", "-d", "the same words here", db=db)
    run_kaos("dream", "run", "--quiet", db=db)
    pid = json.loads(run_kaos("dream", "merges", "--json", db=db).stdout)[0]["id"]
    lib = Library(db, settings=Settings())
    lib.skills.delete("a-job-2")
    lib.close()
    r = run_kaos("dream", "merges", "--accept", str(pid), db=db)
    assert r.returncode == 1 and "no longer exists" in r.stderr and "Traceback" not in r.stderr
    r = run_kaos("dream", "merges", "--reject", str(pid), db=db)
    assert r.returncode == 2
    r = run_kaos("dream", "merges", "--reject", str(pid), "--reason", "gone", db=db)
    assert r.returncode == 0


def test_cli_run_json_if_due_and_help(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    run_kaos("init", db=db)
    r = run_kaos("dream", "run", "--if-due", "--json", db=db)
    assert json.loads(r.stdout)["status"] == "not-due"
    r = run_kaos("dream", "run", "--if-due", "--json", db=db, env={"KAOS_DREAM_THRESHOLD": "1"})
    assert json.loads(r.stdout)["status"] == "not-due"  # no completed episodes yet
    r = run_kaos("dream", "run", "--since", "2026-01-01T00:00:00Z", "--quiet", db=db)
    assert r.returncode == 0 and r.stdout == ""
    assert run_kaos("dream", "run", "--since", "yesterday", db=db).returncode == 1
    assert run_kaos("dream", "show", "99", db=db).returncode == 1
    for cmd in ("run", "consolidate", "runs", "show", "merges", "proposals"):
        h = run_kaos("dream", cmd, "--help")
        assert h.returncode == 0 and "Example" in h.stdout, cmd
    r = run_kaos("dream", "consolidate", "--json", db=db)
    assert list(json.loads(r.stdout)["summary"]["timings_ms"]) == ["proposals", "policies", "digest"]


@pytest.fixture(scope="module")
def demo_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`kaos demo` run once for the module; each test gets its own copy of the closed file."""
    db = tmp_path_factory.mktemp("demo") / "demo.db"
    assert run_kaos("demo", "--db", str(db)).returncode == 0
    assert not Path(f"{db}-wal").exists()  # the demo closed its connections, so the file is whole
    return db


@pytest.fixture
def demo_db(demo_template: Path, tmp_path: Path) -> Path:
    db = tmp_path / "demo.db"
    shutil.copyfile(demo_template, db)
    return db


@pytest.mark.parametrize("since", ["99999999999999999999", "inf", "1e400", "-inf", "nan", "9999999999999",
                                   "-99999999999999", "0001-01-01T00:00:00+01:00"])
def test_cli_since_out_of_range_is_a_usage_error_that_writes_nothing(demo_db: Path, since: str) -> None:
    runs_before = json.loads(run_kaos("dream", "runs", "--json", db=demo_db).stdout)
    before = file_digest(demo_db)
    r = run_kaos("dream", "run", f"--since={since}", db=demo_db)
    assert r.returncode == 2, (r.returncode, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kaos: usage error") and "--since" in lines[0]
    assert "internal error" not in r.stderr
    assert file_digest(demo_db) == before
    assert json.loads(run_kaos("dream", "runs", "--json", db=demo_db).stdout) == runs_before


def test_cli_since_at_the_edges_of_the_range_runs(demo_db: Path) -> None:
    for since in ("-62135596800", "253402300799", "9999-12-31T23:59:59Z"):
        r = run_kaos("dream", "run", "--since", since, "--json", db=demo_db)
        assert r.returncode == 0 and json.loads(r.stdout)["status"] == "completed", (since, r.stderr)


@pytest.mark.parametrize("args", [["runs", "-n", "-1"], ["run", "--wait", "-1"], ["run", "--wait", "inf"],
                                  ["run", "--wait", "nan"], ["consolidate", "--wait", "-5"],
                                  ["consolidate", "--wait", "inf"]])
def test_cli_negative_or_non_finite_counts_and_waits_are_usage_errors(demo_db: Path, args: list[str]) -> None:
    before = file_digest(demo_db)
    r = run_kaos("dream", *args, db=demo_db)
    assert r.returncode == 2, (args, r.returncode, r.stderr)
    assert r.stderr.startswith("kaos: usage error") and len(r.stderr.strip().splitlines()) == 1
    assert file_digest(demo_db) == before
