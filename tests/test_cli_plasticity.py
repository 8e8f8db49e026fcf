"""`kaos agent …`, `kaos record-outcome`, `kaos search --rank/--record-hits`, `kaos dream related`."""

from __future__ import annotations

import json

import pytest

from .conftest import query, target_digest
from .conftest import run_kaos as run_kaos_process
from .conftest import run_kaos_in_process as run_kaos  # parsing and rendering: no new process needed


@pytest.fixture
def db(library_target: str) -> str:
    """On each engine (conftest BOTH_ENGINES): the learning loop through the CLI is storage behaviour."""
    path = library_target
    for name in ("twin-a", "twin-b"):
        assert run_kaos("skill", "add", name, "-d", "classify text topic", db=path).returncode == 0
    assert run_kaos("memory", "add", "classify notes", "--key", "note", db=path).returncode == 0
    return path


def test_episode_flow_and_learning_through_the_cli(db: str) -> None:
    assert run_kaos("agent", "start", "--id", "run-1", "--name", "first", db=db).stdout.strip() == "run-1"
    hits = json.loads(run_kaos("search", "classify text topic", "--agent", "run-1", "--record-hits", "--json",
                               db=db).stdout)
    assert sorted(h["name"] for h in hits) == ["note", "twin-a", "twin-b"]
    for _ in range(3):
        r = run_kaos("record-outcome", "twin-a", "--failure", "--agent", "run-1", db=db)
        assert r.returncode == 0, r.stderr
    assert run_kaos("record-outcome", "twin-b", "--success", "--agent", "run-1", db=db).returncode == 0
    done = json.loads(run_kaos("agent", "complete", "run-1", "--conclusion", "ok", "--cite", "skill:twin-b",
                               "--json", db=db).stdout)
    assert done["changed"] and done["learned"] and done["pairs"] == 3
    again = run_kaos("agent", "complete", "run-1", db=db)
    assert again.returncode == 0 and "already ended" in again.stdout
    before = target_digest(db)
    weighted = json.loads(run_kaos("search", "classify text topic", "--kind", "skill", "--json", db=db).stdout)
    bm25 = json.loads(run_kaos("search", "classify text topic", "--kind", "skill", "--rank", "bm25", "--json",
                               db=db).stdout)
    assert [h["name"] for h in weighted] == ["twin-b", "twin-a"]
    assert [h["name"] for h in bm25] == ["twin-a", "twin-b"]
    shown = json.loads(run_kaos("agent", "show", "run-1", "--json", db=db).stdout)
    assert shown["state"] == "completed" and shown["citations"] == [["skill", "twin-b"]]
    assert [(s["name"], s["uses"], s["successes"]) for s in shown["skills"]] == [("twin-a", 3, 0), ("twin-b", 1, 1)]
    listed = json.loads(run_kaos("agent", "list", "--state", "completed", "--json", db=db).stdout)
    assert [a["id"] for a in listed] == ["run-1"]
    related = json.loads(run_kaos("dream", "related", "skill", "twin-a", "--json", db=db).stdout)
    assert [(n["kind"], n["name"], n["coactivations"]) for n in related["neighbours"]] == [
        ("skill", "twin-b", 1.0), ("memory", "note", 0.5)
    ]
    assert run_kaos("agent", "show", "run-1", db=db).returncode == 0
    assert target_digest(db) == before  # search, show, list and related never write


def test_related_hides_deprecated_skills_unless_asked_and_marks_them(db: str) -> None:
    run_kaos("agent", "start", "--id", "run-1", db=db)
    run_kaos("search", "classify text topic", "--agent", "run-1", "--record-hits", "--json", db=db)
    run_kaos("record-outcome", "twin-a", "--success", "--agent", "run-1", db=db)
    run_kaos("record-outcome", "twin-b", "--success", "--agent", "run-1", db=db)
    assert run_kaos("agent", "complete", "run-1", db=db).returncode == 0
    assert run_kaos("skill", "deprecate", "twin-b", db=db).returncode == 0
    hidden = json.loads(run_kaos("dream", "related", "skill", "twin-a", "--json", db=db).stdout)
    assert [n["name"] for n in hidden["neighbours"]] == ["note"]
    shown = json.loads(run_kaos("dream", "related", "skill", "twin-a", "--include-deprecated", "--json",
                                db=db).stdout)
    assert [(n["name"], n["deprecated"]) for n in shown["neighbours"]] == [("twin-b", True), ("note", False)]
    # A real process: the in-process console keeps the width it was built with, and COLUMNS sets it.
    table = run_kaos_process("dream", "related", "skill", "twin-a", "--include-deprecated", db=db,
                             env={"COLUMNS": "200"})
    assert "twin-b (deprecated)" in table.stdout


def test_plasticity_off_in_any_case_means_bm25(db: str) -> None:
    for _ in range(3):
        run_kaos("record-outcome", "twin-a", "--failure", "--task", "classify text topic", db=db)
    for word in ("0", "FALSE", "No", "off"):
        r = run_kaos("search", "classify text topic", "--kind", "skill", "--json", db=db,
                     env={"KAOS_DREAM_AUTO": word})
        assert [h["name"] for h in json.loads(r.stdout)] == ["twin-a", "twin-b"], word


def test_cli_errors_are_one_line(db: str) -> None:
    cases = [
        (("record-outcome", "no-such-skill", "--success"), 1, "no skill"),
        (("record-outcome", "twin-a"), 2, "--success or --failure"),
        (("agent", "complete", "ghost"), 1, "no agent"),
        (("agent", "complete", "x", "--cite", "nonsense"), 1, "KIND:NAME"),
        (("search", "x", "--rank", "magic"), 2, "usage error"),
        (("dream", "related", "skill", "ghost"), 1, "no skill"),
    ]
    run_kaos("agent", "start", "--id", "x", db=db)
    for args, code, text in cases:
        r = run_kaos(*args, db=db)
        assert r.returncode == code, (args, r.stdout, r.stderr)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("kaos: ") and text in lines[0], (args, r.stderr)
    dup = run_kaos("agent", "start", "--id", "x", db=db)
    assert dup.returncode == 1 and "already exists" in dup.stderr


def test_help_has_examples() -> None:
    for args in (["agent", "start"], ["agent", "complete"], ["agent", "list"], ["record-outcome"],
                 ["dream", "related"], ["search"]):
        r = run_kaos(*args, "--help")
        assert r.returncode == 0 and "Example" in r.stdout, args


def test_record_hits_writes_rows_in_one_go(db: str) -> None:
    run_kaos("search", "classify", "--record-hits", "--agent", "auto", db=db)
    assert query(db, "SELECT count(*) FROM skill_hits") == [(2,)]
    assert query(db, "SELECT count(*) FROM memory_hits") == [(1,)]
    assert query(db, "SELECT state FROM agents WHERE id = 'auto'") == [("running",)]
