"""Phases other features contribute to the dream: failure catch-up, policy mining, graph upkeep."""

from __future__ import annotations

import json

from kaos_dream import Library
from kaos_dream.failures import Diagnosis, register_diagnoser, unregister_diagnoser

from .conftest import run_kaos_in_process as run_kaos  # parsing and rendering: no new process needed


def approve(lib: Library, action: str) -> None:
    intent = lib.log.intent("worker", action).position
    lib.log.vote("reviewer", intent, True)
    lib.log.decide(intent)


def test_dry_run_proposes_policies_and_apply_enables_them(lib: Library) -> None:
    for _ in range(3):
        approve(lib, "rotate keys")
    dry = lib.dream.run()
    assert dry.summary["phases"]["policies"]["proposed"] == [1]
    assert lib.policies.get(1).status == "proposed"
    lib.dream.run(apply=True)
    assert lib.policies.get(1).status == "enabled"
    assert "policy 1 enabled" in lib.dream.show(2)["digest"]


def test_failure_catch_up_recategorizes_and_reports_alerts(lib: Library) -> None:
    lib.failures.record("mystery", "zzfoo.QuuxWidgetError was raised", agent="a1")
    for i in range(5):
        lib.failures.record("db", "ConnectionRefusedError: connect ECONNREFUSED 10.0.0.5:5432", agent=f"w{i}")
    assert lib.failures.get(1)["category"] == "unknown"

    def quux(failure):
        if "QuuxWidgetError" in failure.text:
            return Diagnosis("code", "the quux widget is broken", "fix the widget", 0.9)
        return None

    register_diagnoser("quux", quux)
    try:
        dry = lib.dream.run()
        assert dry.summary["phases"]["failures"]["recategorized"] == 0  # a dry run changes nothing
        applied = lib.dream.run(apply=True)
    finally:
        unregister_diagnoser("quux")
    assert applied.summary["phases"]["failures"]["recategorized"] == 1
    assert lib.failures.get(1)["category"] == "code"
    digest = lib.dream.show(2)["digest"]
    assert "## Failures" in digest and "Open systemic alerts" in digest


def test_dream_run_through_the_cli_mines_policies(library_target: str) -> None:
    db = library_target
    with Library(db) as lib:
        for _ in range(3):
            approve(lib, "deploy staging")
    out = json.loads(run_kaos("dream", "run", "--apply", "--quiet", "--json", db=db).stdout)
    assert out["summary"]["phases"]["policies"]["enabled"] == [1]
    auto = json.loads(run_kaos("log", "intent", "w", "deploy staging", "--auto", "--json", db=db).stdout)
    assert auto["decided_by_policy"] == 1


def test_dream_status_reports_cycle_due_and_alerts_without_writing(library_target: str) -> None:
    from .conftest import target_digest

    db = library_target
    with Library(db) as lib:
        lib.skills.add("a")
        for i in range(3):
            lib.episodes.start(f"w{i}")
            lib.episodes.complete(f"w{i}")
        for i in range(5):
            lib.failures.record("db", "ConnectionRefusedError: connect ECONNREFUSED 10.0.0.5:5432", agent=f"x{i}")
        lib.dream.run(apply=True)
        lib.episodes.start("late")
        lib.episodes.complete("late")
    before = target_digest(db)
    status = json.loads(run_kaos("dream", "status", "--json", db=db, env={"KAOS_DREAM_THRESHOLD": "1"}).stdout)
    assert status["dream"]["cycle"] == 1 and status["dream"]["completed_since_last_dream"] == 1
    assert status["dream"]["due"] is True and status["dream"]["last_run"]["status"] == "completed"
    assert status["failures"] == {"fingerprints": 1, "open_alerts": 1}
    assert status["agents"]["completed"] == 4
    assert run_kaos("dream", "status", db=db).returncode == 0
    assert target_digest(db) == before
