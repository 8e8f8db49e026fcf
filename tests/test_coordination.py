"""The coordination log and policies: protocol, append-only storage, concurrency, mining, --auto."""

from __future__ import annotations

import json
import multiprocessing
import sqlite3
from pathlib import Path

import pytest

from kaos_dream import ConflictError, InvalidInputError, Library, ManualClock, NotFoundError, Settings
from kaos_dream.coordination import normalise_action
from kaos_dream.store import apply_migrations, connect

from .conftest import file_digest
from .conftest import run_kaos_in_process as run_kaos  # parsing and rendering: no new process needed


def approve_intent(lib: Library, action: str, approve: bool = True, agent: str = "worker") -> int:
    intent = lib.log.intent(agent, action).position
    lib.log.vote("reviewer", intent, approve)
    lib.log.decide(intent)
    return intent


def test_protocol_happy_path(mem_lib: Library) -> None:
    intent = mem_lib.log.intent("a1", "Deploy staging", meta={"ticket": 7})
    assert (intent.kind, intent.action_key, intent.meta) == ("intent", "deploy staging", {"ticket": 7})
    mem_lib.log.vote("r1", intent.position, True)
    mem_lib.log.vote("r2", intent.position, False, reason="friday")
    mem_lib.log.vote("r3", intent.position, True)
    decision = mem_lib.log.decide(intent.position)
    assert decision.approve is True and decision.reason == "2 approve, 1 reject"
    mem_lib.log.commit(intent.position, "a1")
    mem_lib.log.result(intent.position, "a1", meta='{"ok": true}')
    thread = mem_lib.log.thread(intent.position)
    assert [e.kind for e in thread] == ["intent", "vote", "vote", "vote", "decision", "commit", "result"]
    assert [e.position for e in thread] == list(range(1, 8))


def test_tie_is_a_rejection_and_blocks_commit(mem_lib: Library) -> None:
    intent = mem_lib.log.intent("a1", "drop table").position
    mem_lib.log.vote("r1", intent, True)
    mem_lib.log.vote("r2", intent, False)
    assert mem_lib.log.decide(intent).approve is False
    with pytest.raises(ConflictError, match="no approved decision"):
        mem_lib.log.commit(intent, "a1")


@pytest.mark.parametrize("step", ["double_vote", "vote_after_decision", "decide_twice", "no_votes",
                                  "result_without_commit", "abort_after_commit", "vote_on_vote"])
def test_protocol_violations_are_refused_and_append_nothing(mem_lib: Library, step: str) -> None:
    intent = mem_lib.log.intent("a1", "rotate keys").position
    if step == "no_votes":
        with pytest.raises(ConflictError, match="no votes"):
            mem_lib.log.decide(intent)
        assert mem_lib.log.count() == 1
        return
    vote = mem_lib.log.vote("r1", intent, True).position
    actions = {
        "double_vote": lambda: mem_lib.log.vote("r1", intent, False),
        "vote_on_vote": lambda: mem_lib.log.vote("r2", vote, True),
    }
    if step in actions:
        before = mem_lib.log.count()
        with pytest.raises((ConflictError, InvalidInputError)):
            actions[step]()
        assert mem_lib.log.count() == before
        return
    mem_lib.log.decide(intent)
    if step == "abort_after_commit":
        mem_lib.log.commit(intent, "a1")
    before = mem_lib.log.count()
    later = {
        "vote_after_decision": lambda: mem_lib.log.vote("r2", intent, True),
        "decide_twice": lambda: mem_lib.log.decide(intent),
        "result_without_commit": lambda: mem_lib.log.result(intent, "a1"),
        "abort_after_commit": lambda: mem_lib.log.abort(intent, "a1"),
    }
    with pytest.raises(ConflictError):
        later[step]()
    assert mem_lib.log.count() == before


def test_unknown_intent_and_bad_input(mem_lib: Library) -> None:
    with pytest.raises(NotFoundError):
        mem_lib.log.vote("r1", 99, True)
    for bad in ("", "   ", "\x00"):
        with pytest.raises(InvalidInputError):
            mem_lib.log.intent("a1", bad)
    with pytest.raises(InvalidInputError):
        mem_lib.log.intent("", "x")
    with pytest.raises(InvalidInputError, match="JSON"):
        mem_lib.log.intent("a1", "x", meta="{nope")
    assert mem_lib.log.count() == 0


def test_log_is_append_only_in_the_database(mem_lib: Library) -> None:
    mem_lib.log.intent("a1", "x")
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        mem_lib.conn.execute("UPDATE coordination_log SET agent = 'mallory'")
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        mem_lib.conn.execute("DELETE FROM coordination_log")


def test_normalise_action() -> None:
    assert normalise_action("  Deploy   STAGING. ") == "deploy staging"
    assert normalise_action("deploy staging") == normalise_action("DEPLOY\tstaging!")
    assert normalise_action("deploy prod") != normalise_action("deploy staging")


def _append_many(path: str, worker: int, count: int, queue: multiprocessing.Queue) -> None:
    try:
        with Library(path) as lib:
            positions = [lib.log.intent(f"worker-{worker}", f"task {i}").position for i in range(count)]
        queue.put(("ok", positions))
    except Exception as exc:
        queue.put(("error", f"{type(exc).__name__}: {exc}"))


def test_four_processes_append_1200_entries_without_gaps(library_target: str) -> None:
    path = library_target
    Library(path).close()
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    procs = [ctx.Process(target=_append_many, args=(path, w, 300, queue)) for w in range(4)]
    for p in procs:
        p.start()
    results = [queue.get(timeout=180) for _ in procs]
    for p in procs:
        p.join(timeout=30)
    assert [r for r in results if r[0] != "ok"] == []
    for _, positions in results:
        assert positions == sorted(positions)  # each appender sees its own positions increase
    with Library(path) as lib:
        rows = [r[0] for r in lib.conn.execute("SELECT position FROM coordination_log ORDER BY position")]
        assert rows == list(range(1, 1201))
        assert sorted(p for _, ps in results for p in ps) == rows


def test_mining_proposes_then_enables_and_auto_uses_policy(mem_lib: Library) -> None:
    for _ in range(3):
        approve_intent(mem_lib, "Deploy staging")
    approve_intent(mem_lib, "deploy prod")  # support 1: not enough
    report = mem_lib.policies.mine(apply=False)
    assert len(report.proposed) == 1 and report.enabled == []
    proposed = mem_lib.policies.get("deploy staging")
    assert proposed.status == "proposed" and proposed.support == 3
    auto = mem_lib.log.intent_auto("a9", "deploy staging")
    assert auto.policy_id is None and auto.decision is None  # proposed is not enabled
    assert mem_lib.policies.mine(apply=False).proposed == [proposed.id]  # idempotent: same policy
    assert mem_lib.policies.mine(apply=True).enabled == [proposed.id]
    auto = mem_lib.log.intent_auto("a9", "DEPLOY  staging")
    assert auto.policy_id == proposed.id
    assert auto.vote is not None and auto.vote.policy_id == proposed.id and auto.vote.approve
    assert auto.decision is not None and auto.decision.approve and "policy" in (auto.decision.reason or "")
    policy = mem_lib.policies.get(proposed.id)
    assert policy.applied_count == 1 and policy.last_applied_at == mem_lib.now()
    assert [p.action_key for p in mem_lib.policies.list()] == ["deploy staging"]


def test_policy_votes_do_not_count_towards_mining(mem_lib: Library) -> None:
    for _ in range(3):
        approve_intent(mem_lib, "deploy staging")
    mem_lib.policies.mine(apply=True)
    for _ in range(20):
        mem_lib.log.intent_auto("a1", "deploy staging")
    assert mem_lib.policies.get("deploy staging").support == 3
    mem_lib.policies.mine(apply=True)
    assert mem_lib.policies.get("deploy staging").support == 3


def test_demotion_when_approval_falls(mem_lib: Library) -> None:
    for _ in range(9):
        approve_intent(mem_lib, "deploy staging")
    mem_lib.policies.mine(apply=True)
    approve_intent(mem_lib, "deploy staging", approve=False)  # 9/10 = 90 %: still a policy
    assert mem_lib.policies.mine(apply=True).demoted == []
    approve_intent(mem_lib, "deploy staging", approve=False)  # 9/11 < 90 %
    report = mem_lib.policies.mine(apply=False)  # demotion happens in dry runs too
    policy = mem_lib.policies.get("deploy staging")
    assert report.demoted == [policy.id] and policy.status == "demoted"
    assert mem_lib.log.intent_auto("a1", "deploy staging").policy_id is None


def test_disabled_policy_is_never_used_nor_reenabled(mem_lib: Library) -> None:
    for _ in range(3):
        approve_intent(mem_lib, "deploy staging")
    mem_lib.policies.mine(apply=True)
    mem_lib.policies.disable("deploy staging", reason="too risky")
    assert mem_lib.log.intent_auto("a1", "deploy staging").policy_id is None
    for _ in range(3):
        approve_intent(mem_lib, "deploy staging")
    mem_lib.policies.mine(apply=True)
    policy = mem_lib.policies.get("deploy staging")
    assert policy.status == "disabled" and policy.status_by == "human"
    assert mem_lib.log.intent_auto("a1", "deploy staging").policy_id is None


def test_thresholds_are_settings(clock: ManualClock) -> None:
    settings = Settings(policy_min_approval=0.5, policy_min_support=2)
    with Library(":memory:", clock=clock, settings=settings) as lib:
        approve_intent(lib, "x")
        approve_intent(lib, "x", approve=False)
        assert len(lib.policies.mine(apply=True).enabled) == 1


def test_file_without_log_tables_upgrades_cleanly(db_path: Path) -> None:
    from kaos_dream.store import MIGRATIONS

    log_version = next(m.version for m in MIGRATIONS if m.name == "coordination")
    conn = connect(str(db_path))
    apply_migrations(conn, 0.0, upto=log_version - 1)
    conn.execute(
        "INSERT INTO skills (name, description, template, tags, created_at, updated_at) "
        "VALUES ('kept', 'from before the log', '', '[]', 1.0, 1.0)"
    )
    conn.close()
    with Library(db_path) as lib:
        assert lib.skills.get("kept").description == "from before the log"
        assert approve_intent(lib, "deploy") == 1
        assert lib.check() == []


def test_policy_lifecycle_through_the_cli(tmp_path: Path) -> None:
    db = tmp_path / "cli.db"
    assert run_kaos("init", db=db).returncode == 0  # log commands act on an existing library only
    for _ in range(3):
        intent = json.loads(run_kaos("log", "intent", "worker", "deploy staging", "--json", db=db).stdout)
        assert run_kaos("log", "vote", "alice", str(intent["position"]), "--approve", db=db).returncode == 0
        assert run_kaos("log", "decide", str(intent["position"]), db=db).returncode == 0
    mined = json.loads(run_kaos("policy", "mine", "--json", db=db).stdout)
    assert len(mined["proposed"]) == 1
    policy_id = str(mined["proposed"][0])
    r = run_kaos("log", "intent", "worker", "deploy staging", "--auto", "--json", db=db)
    assert json.loads(r.stdout)["decided_by_policy"] is None
    assert run_kaos("policy", "enable", policy_id, db=db).returncode == 0
    r = run_kaos("log", "intent", "worker", "Deploy Staging", "--auto", "--json", db=db)
    auto = json.loads(r.stdout)
    assert auto["decided_by_policy"] == int(policy_id) and auto["decision"]["approve"] is True
    shown = json.loads(run_kaos("policy", "show", policy_id, "--json", db=db).stdout)
    assert shown["applied_count"] == 1 and shown["status"] == "enabled"
    # Two human rejections bring approval to 3/5 = 60 %: the next mining pass demotes the policy.
    for _ in range(2):
        intent = json.loads(run_kaos("log", "intent", "worker", "deploy staging", "--json", db=db).stdout)
        run_kaos("log", "vote", "bob", str(intent["position"]), "--reject", db=db)
        run_kaos("log", "decide", str(intent["position"]), db=db)
    mined = json.loads(run_kaos("policy", "mine", "--apply", "--json", db=db).stdout)
    assert mined["demoted"] == [int(policy_id)]
    r = run_kaos("log", "intent", "worker", "deploy staging", "--auto", "--json", db=db)
    assert json.loads(r.stdout)["decided_by_policy"] is None


def test_log_read_commands_are_read_only_and_errors_are_one_line(tmp_path: Path) -> None:
    db = tmp_path / "ro.db"
    run_kaos("init", db=db)
    run_kaos("log", "intent", "a1", "deploy", db=db)
    run_kaos("log", "vote", "r1", "1", "--approve", db=db)
    before = file_digest(db)
    for args in (["log", "tail"], ["log", "tail", "-n", "1", "--json"], ["log", "show", "1"], ["policy", "list"],
                 ["log", "tail", "--follow", "--idle-exit", "0.3"], ["policy", "show", "1"], ["log", "show", "99"]):
        run_kaos(*args, db=db)
        assert file_digest(db) == before, args
    for args, code in ((["log", "vote", "r1", "1", "--approve"], 1), (["log", "show", "99"], 1),
                       (["log", "vote", "r2", "1"], 2), (["log", "intent", "a1", "x", "--meta", "[1]"], 1),
                       (["policy", "enable", "42"], 1), (["log", "decide", "abc"], 2)):
        r = run_kaos(*args, db=db)
        assert r.returncode == code, (args, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    assert file_digest(db) == before


def test_tail_follow_prints_entries_appended_by_another_process(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    from .conftest import PROJECT_ROOT

    db = tmp_path / "follow.db"
    run_kaos("init", db=db)
    run_kaos("log", "intent", "a1", "first", db=db)
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "kaos_dream", "--db", str(db), "log", "tail", "--follow", "--json", "--idle-exit", "4"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )
    assert proc.stdout is not None
    # With --follow, --json is JSON Lines from the start: the initial entry is one object on one line.
    assert json.loads(proc.stdout.readline())["action"] == "first"
    with Library(db) as lib:
        lib.log.intent("a2", "second")
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    lines = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert [e["action"] for e in lines] == ["second"]
