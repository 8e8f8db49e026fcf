"""The telemetry fast path (issue 19): record_outcome's short path and its fallbacks, and the batched
record_outcomes in the library, on the CLI (--stdin JSON Lines) and over MCP."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kaos_dream import Library, ManualClock, Settings
from kaos_dream.errors import InvalidInputError, NotFoundError
from kaos_dream.store.counters import counter_mismatches

from .conftest import run_kaos


@pytest.fixture
def skills(lib: Library) -> list[int]:
    return [lib.skills.add(name, f"{name} things").id for name in ("alpha", "beta", "gamma")]


def uses(lib: Library) -> list[tuple]:
    return [tuple(r) for r in lib.conn.execute(
        "SELECT u.skill_id, a.agent_id, u.success, coalesce(u.task, t.text), "
        "CASE WHEN u.task_id IS NULL THEN NULL ELSE printf('%016x', u.task_id) END "
        "FROM skill_uses AS u LEFT JOIN tasks AS t ON t.id = u.task_id "
        "LEFT JOIN agent_keys AS a ON a.id = u.agent_key ORDER BY u.id")]


def test_the_short_path_registers_a_new_agent_once_and_survives_a_rolled_back_registration(lib, skills) -> None:
    with pytest.raises(RuntimeError), lib.transaction():
        lib.record_outcome(skills[0], True, agent="ghost")  # registers "ghost" ...
        raise RuntimeError("... and the caller rolls it back")
    assert lib.conn.execute("SELECT count(*) FROM agents WHERE id = 'ghost'").fetchone()[0] == 0
    outcome = lib.record_outcome(skills[0], False, agent="ghost")  # the connection thought it known
    assert outcome.agent_id == "ghost" and lib.episodes.get("ghost").state == "running"
    assert uses(lib) == [(skills[0], "ghost", 0, None, None)]


def test_the_short_path_names_a_missing_skill_and_writes_nothing(lib, skills) -> None:
    lib.record_outcome(skills[0], True, agent="a1")
    with pytest.raises(NotFoundError, match="999"):
        lib.record_outcome(999, True, agent="a1")
    with pytest.raises(NotFoundError):
        lib.record_outcome(999, True)
    assert len(uses(lib)) == 1


def test_the_short_path_takes_the_task_from_the_agents_latest_search(lib, skills) -> None:
    lib.record_outcome(skills[0], True, agent="a1")  # now a known agent
    lib.search("alpha things", kind="skill", record_hits=True, agent="a1")
    outcome = lib.record_outcome(skills[0], True, agent="a1")
    assert outcome.task == "alpha things" and outcome.task_hash is not None


def test_a_batch_writes_every_row_with_exact_counters(lib, skills) -> None:
    lib.search("beta things", kind="skill", record_hits=True, agent="a1")
    items = [{"skill": skills[i % 3], "success": i % 2 == 0, "agent": f"a{i % 2}"} for i in range(10)]
    items.append({"skill": "gamma", "success": True, "task": "ship gamma"})
    items.append({"skill": skills[1], "success": False, "agent": "a1"})
    out = lib.record_outcomes(items)
    assert [o.id for o in out] == [r[0] for r in lib.conn.execute("SELECT id FROM skill_uses ORDER BY id")]
    assert [(o.skill_id, o.agent_id, o.success) for o in out] == [
        (lib.skills.resolve_id(i["skill"]), i.get("agent"), i["success"]) for i in items]
    assert out[-2].task == "ship gamma" and out[-1].task == "beta things"
    assert counter_mismatches(lib.conn) == []
    stats = dict((r[0], (r[1], r[2])) for r in lib.conn.execute("SELECT skill_id, uses, successes FROM skill_stats"))
    assert stats[skills[1]] == (4, 1)
    assert {e.id for e in lib.episodes.list()} == {"a0", "a1"}
    assert lib.record_outcomes([]) == []


@pytest.mark.parametrize(("bad", "message"), [
    ({"skill": "alpha", "success": "yes"}, "outcome 3: success must be true or false"),
    ({"skill": "", "success": True}, "outcome 3: skill must be a skill id or name"),
    ({"skill": "alpha", "success": True, "agent": "x\x1b"}, "outcome 3: agent id must not contain"),
    ({"skill": "alpha", "success": True, "extra": 1}, "outcome 3: unknown field 'extra'"),
    ("alpha", "outcome 3: expected an object"),
])
def test_a_bad_item_writes_nothing(lib, skills, bad, message) -> None:
    items = [{"skill": "alpha", "success": True, "agent": "new-agent"}, {"skill": skills[1], "success": False}, bad]
    with pytest.raises(InvalidInputError, match=message.replace("\x1b", "")):
        lib.record_outcomes(items)
    assert uses(lib) == [] and lib.episodes.list() == []


def test_an_unknown_skill_in_a_batch_is_named_and_nothing_is_written(lib, skills) -> None:
    with pytest.raises(NotFoundError, match="outcome 2: "):
        lib.record_outcomes([{"skill": skills[0], "success": True, "agent": "b"}, {"skill": 12345, "success": True}])
    with pytest.raises(NotFoundError, match="outcome 1: .*nope"):
        lib.record_outcomes([{"skill": "nope", "success": True}])
    assert uses(lib) == [] and lib.episodes.list() == []


def test_cli_stdin_records_json_lines_in_one_go(library_target: str) -> None:
    db = library_target
    with Library(db, clock=ManualClock(1.0)) as lib:
        lib.skills.add("alpha", "alpha things")
        lib.skills.add("beta", "beta things")
    lines = '{"skill": "alpha", "success": true}\n\n{"skill": "beta", "success": false, "task": "t", "agent": "b"}\n'
    done = run_kaos("record-outcome", "--stdin", "--agent", "run-1", "--json", db=db, input=lines)
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert [(r["agent_id"], r["success"], r["task"]) for r in rows] == [("run-1", True, None), ("b", False, "t")]
    human = run_kaos("record-outcome", "--stdin", db=db, input='{"skill": "alpha", "success": true}\n')
    assert human.returncode == 0 and "recorded 1 outcomes (1 successes, 0 failures)" in human.stdout


@pytest.mark.parametrize(("text", "message"), [
    ('{"skill": "alpha", "success": true}\n{"skill": "alpha", "success": tru}\n', "line 2: not valid JSON"),
    ('{"skill": "alpha", "success": true}\n\n[1, 2]\n', "line 3: expected a JSON object"),
    ('{"skill": "alpha", "success": true}\n\n{"skill": "zeta", "success": true}\n', "line 3: no skill"),
    ('{"skill": "alpha", "success": 1}\n', "line 1: success must be true or false"),
    ("\n\n", "no outcomes on stdin"),
])
def test_cli_stdin_refuses_a_bad_line_with_one_line_and_writes_nothing(library_target: str, text, message) -> None:
    db = library_target
    with Library(db, clock=ManualClock(1.0)) as lib:
        lib.skills.add("alpha", "alpha things")
    done = run_kaos("record-outcome", "--stdin", "--agent", "run-1", db=db, input=text)
    assert done.returncode != 0 and message in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    with Library(db) as lib:
        assert lib.conn.execute("SELECT count(*) FROM skill_uses").fetchone()[0] == 0
        assert lib.episodes.list() == []


def test_cli_stdin_excludes_the_single_outcome_flags(tmp_path: Path) -> None:
    done = run_kaos("record-outcome", "alpha", "--stdin", db=tmp_path / "k.db", input="")
    assert done.returncode == 2 and "--stdin" in done.stderr


def test_a_named_skill_with_a_rolled_back_agent_registers_it_again(lib, skills) -> None:
    with pytest.raises(RuntimeError), lib.transaction():
        lib.record_outcome("alpha", True, agent="ghost-2")
        raise RuntimeError("roll back")
    outcome = lib.record_outcome("beta", True, agent="ghost-2")  # known to the connection, absent in the file
    assert outcome.agent_id == "ghost-2" and lib.episodes.get("ghost-2").state == "running"
    assert uses(lib) == [(skills[1], "ghost-2", 1, None, None)]


def test_a_batch_with_a_rolled_back_agent_registers_it_again(lib, skills) -> None:
    with pytest.raises(RuntimeError), lib.transaction():
        lib.record_outcomes([{"skill": skills[0], "success": True, "agent": "ghost-3"}])
        raise RuntimeError("roll back")
    lib.record_outcome(skills[2], True, agent="other")  # takes the key the rolled-back agent had had
    out = lib.record_outcomes([{"skill": skills[1], "success": False, "agent": "ghost-3"},
                               {"skill": skills[0], "success": True, "agent": "other"}])
    assert [o.agent_id for o in out] == ["ghost-3", "other"]
    assert uses(lib) == [(skills[2], "other", 1, None, None), (skills[1], "ghost-3", 0, None, None),
                         (skills[0], "other", 1, None, None)]


def _register_the_same_agents(target: str, worker: int, skill_ids: list[int], rounds: int) -> None:
    """Every worker names the same new agents, in a different order, one outcome and one batch at a time."""
    with Library(target, settings=Settings()) as lib:
        for r in range(rounds):
            agent = f"fresh-{(r * (worker + 1)) % 5}"
            lib.record_outcome(skill_ids[r % 3], r % 2 == 0, agent=agent)
            other = f"fresh-{(r + worker) % 5}"
            lib.record_outcomes([{"skill": skill_ids[(r + 1) % 3], "success": True, "agent": other},
                                 {"skill": skill_ids[r % 3], "success": False, "agent": agent}])


def test_processes_registering_the_same_new_agents_give_each_one_key(library_target: str) -> None:
    import multiprocessing

    workers, rounds = 4, 25
    with Library(library_target, settings=Settings()) as lib:
        skill_ids = [lib.skills.add(name, f"{name} things").id for name in ("alpha", "beta", "gamma")]
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_register_the_same_agents, args=(library_target, w, skill_ids, rounds))
             for w in range(workers)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(600)
        assert p.exitcode == 0
    expected: dict[str, int] = {}
    for w in range(workers):
        for r in range(rounds):
            for agent in (f"fresh-{(r * (w + 1)) % 5}", f"fresh-{(r + w) % 5}", f"fresh-{(r * (w + 1)) % 5}"):
                expected[agent] = expected.get(agent, 0) + 1
    with Library(library_target, settings=Settings(), readonly=True) as lib:
        keys = lib.conn.execute("SELECT count(*), count(DISTINCT agent_id) FROM agent_keys").fetchone()
        assert tuple(keys) == (5, 5)
        per_agent = dict(lib.conn.execute(
            "SELECT a.agent_id, count(*) FROM skill_uses AS u JOIN agent_keys AS a ON a.id = u.agent_key "
            "GROUP BY a.agent_id"))
        assert per_agent == expected
        assert sum(s["uses"] for s in lib.episodes.activity("fresh-0")["skills"]) == expected["fresh-0"]
        assert counter_mismatches(lib.conn) == []
