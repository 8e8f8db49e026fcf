"""`kaos graph …` through the real binary: output, errors, and read commands that never write."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kaos_dream import Library, Settings
from kaos_dream.graph import Node

from .conftest import file_digest
from .conftest import run_kaos_in_process as run_kaos  # parsing and rendering: no new process needed
from .failure_nodes import add_fingerprints


@pytest.fixture
def graph_db(tmp_path: Path) -> Path:
    """Built in-process (the set-up is not under test); every command under test runs the real binary."""
    db = tmp_path / "graph.db"
    with Library(db, settings=Settings()) as lib:
        ids = {name: lib.skills.add(name, desc).id for name, desc in (
            ("deploy-friday", "deploy to production on friday"),
            ("rollback", "roll back a bad release"),
            ("canary", "canary release to five percent"))}
        note = lib.memories.add("friday deploys broke production", key="friday")
        add_fingerprints(lib.conn, 1, 12)
        lib.graph.link(Node("skill", ids["deploy-friday"]), "caused", Node("failure", 12))
        lib.graph.link(Node("skill", ids["canary"]), "prevented", Node("failure", 12))
        lib.graph.link(Node("memory", note.id), "enabled", Node("skill", ids["rollback"]))
    return db


def one_line_error(r, code: int = 1) -> str:
    assert r.returncode == code, (r.returncode, r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kaos: ") and "Traceback" not in r.stderr
    return lines[0]


def test_link_show_unlink(graph_db: Path) -> None:
    shown = json.loads(run_kaos("graph", "show", "failure:12", "--json", db=graph_db).stdout)
    assert sorted((e["src"], e["relation"]) for e in shown["edges"]) == [("skill:1", "caused"),
                                                                          ("skill:3", "prevented")]
    r = run_kaos("graph", "show", "failure:12", db=graph_db)
    assert r.returncode == 0 and "skill:3" in r.stdout
    r = run_kaos("graph", "unlink", "skill:canary", "prevented", "failure:12", db=graph_db)
    assert r.returncode == 0 and "removed edge" in r.stdout
    shown = json.loads(run_kaos("graph", "show", "failure:12", "--json", db=graph_db).stdout)
    assert [e["relation"] for e in shown["edges"]] == ["caused"]
    line = one_line_error(run_kaos("graph", "unlink", "skill:canary", "prevented", "failure:12", db=graph_db))
    assert "no edge" in line


def test_read_commands_leave_the_file_unchanged(graph_db: Path) -> None:
    before = file_digest(graph_db)
    for args in (["graph", "show", "skill:deploy-friday"], ["graph", "show", "failure:12", "--json"],
                 ["graph", "activate", "friday deploy"], ["graph", "activate", "--from", "failure:12", "--json"],
                 ["graph", "search", "friday", "--json"], ["graph", "pruned"],
                 ["graph", "prune", "--strategy", "weight"]):
        r = run_kaos(*args, db=graph_db)
        assert r.returncode == 0, (args, r.stderr)
    assert file_digest(graph_db) == before


def test_activate_shows_paths(graph_db: Path) -> None:
    data = json.loads(run_kaos("graph", "activate", "--from", "failure:12", "--mode", "adaptive", "--json",
                               db=graph_db).stdout)
    nodes = {n["node"]: n for n in data["nodes"]}
    assert nodes["failure:12"]["seed"] is True
    canary = nodes["skill:3"]
    assert canary["path"][0]["relation"] == "prevented" and canary["path"][0]["direction"] == "backward"
    text = run_kaos("graph", "activate", "friday deploy", "--top", "3", db=graph_db).stdout
    assert "deploy-friday" in text and "(seed)" in text
    one_line_error(run_kaos("graph", "activate", db=graph_db))
    one_line_error(run_kaos("graph", "activate", "x", "--mode", "loud", db=graph_db), code=2)


def test_bad_node_syntax_and_unknown_nodes(graph_db: Path) -> None:
    for bad in ("deploy-friday", "robot:1", "failure:twelve", "skill:"):
        line = one_line_error(run_kaos("graph", "show", bad, db=graph_db))
        assert "bad node" in line
    assert "no skill" in one_line_error(run_kaos("graph", "link", "skill:nope", "caused", "failure:1", db=graph_db))
    # an invalid value is a usage error (exit 2; it was 1 before issue 18)
    assert "'causes' is not one of" in one_line_error(
        run_kaos("graph", "link", "skill:rollback", "causes", "failure:1", db=graph_db), code=2)


def test_observe_and_evidence(graph_db: Path) -> None:
    out = json.loads(run_kaos("graph", "observe", "--action", "skill:canary", "--absent", "failure:12", "--json",
                              db=graph_db).stdout)
    assert [(u["relation"], u["correct"], round(u["after"], 4)) for u in out["updates"]] == [
        ("prevented", True, round(0.8 + 0.1 * 0.2, 4))]
    out = json.loads(run_kaos("graph", "observe", "--action", "skill:canary", "--json", db=graph_db).stdout)
    assert out["updates"] == [] and len(out["skipped"]) == 1  # not observable: left alone
    out = json.loads(run_kaos("graph", "observe", "--action", "skill:deploy-friday", "--json", db=graph_db).stdout)
    assert out["updates"][0]["correct"] is False
    ev = json.loads(run_kaos("graph", "evidence", "skill:rollback", "prevented", "failure:12", "--json",
                             db=graph_db).stdout)
    assert ev["provenance"] == "observed" and ev["strength"] == pytest.approx(0.55)
    line = one_line_error(run_kaos("graph", "evidence", "memory:friday", "caused", "failure:12", db=graph_db))
    assert "no evidence rule" in line


def test_prune_restore_round_trip(graph_db: Path) -> None:
    r = run_kaos("graph", "link", "skill:rollback", "co_occurs_with", "skill:canary", "--strength", "0.1",
                 db=graph_db)
    assert r.returncode == 0, r.stderr
    dry = json.loads(run_kaos("graph", "prune", "--json", db=graph_db).stdout)
    assert dry["applied"] is False and dry["pruned"] == 0  # nothing is dormant yet
    one_line_error(run_kaos("graph", "prune", "--strategy", "coverage", db=graph_db))  # no recorded queries
    r = run_kaos("graph", "record-query", "friday deploy", "--target", "failure:12", db=graph_db)
    assert r.returncode == 0, r.stderr
    plan = json.loads(run_kaos("graph", "prune", "--strategy", "coverage", "--max-fraction", "1", "--epsilon", "0",
                               "--apply", "--json", db=graph_db).stdout)
    assert plan["applied"] is True and plan["quality_after"] == plan["quality_before"] == 1.0
    assert plan["pruned"] >= 1 and 1 not in plan["pruned_edge_ids"]  # edge 1 is the path to the target
    rows = json.loads(run_kaos("graph", "pruned", "--json", db=graph_db).stdout)
    assert {r["edge_id"] for r in rows} == set(plan["pruned_edge_ids"])
    back = json.loads(run_kaos("graph", "restore", "--run", plan["run"], "--json", db=graph_db).stdout)
    assert back["restored"] == sorted(plan["pruned_edge_ids"])
    assert json.loads(run_kaos("graph", "pruned", "--json", db=graph_db).stdout) == []
    one_line_error(run_kaos("graph", "restore", "--run", "prune-99", db=graph_db))
    one_line_error(run_kaos("graph", "restore", db=graph_db))


def test_help_has_examples() -> None:
    """Every graph command documents an example; three are checked through the binary, all in-process."""
    from kaos_dream.cli.graph import app

    for cmd in ("activate", "prune", "observe"):
        r = run_kaos("graph", cmd, "--help")
        assert r.returncode == 0 and "Example: kaos graph " + cmd in r.stdout, cmd
    names = {c.name: c.callback.__doc__ or "" for c in app.registered_commands}
    assert set(names) == {"link", "unlink", "evidence", "show", "activate", "search", "observe", "neglect",
                          "record-query", "prune", "pruned", "restore", "purge", "export"}
    for name, doc in names.items():
        assert "Example: kaos graph " + name in doc, name


@pytest.mark.parametrize("args", [
    ["graph", "activate", "friday deploy", "--beta", "inf"],
    ["graph", "activate", "friday deploy", "--beta", "1e400"],
    ["graph", "activate", "friday deploy", "--beta", "nan"],
    ["graph", "activate", "--from", "skill:deploy-friday", "--beta", "-inf"],
    ["graph", "link", "skill:rollback", "caused", "failure:12", "--strength", "nan"],
    ["graph", "neglect", "--days", "inf"],
    ["graph", "neglect", "--days", "nan"],
    ["graph", "prune", "--epsilon", "nan"],
    ["graph", "prune", "--max-fraction", "nan", "--apply"],
    ["graph", "purge", "--older-than-days", "inf"],
    ["graph", "purge", "--older-than-days", "nan"],
])
def test_non_finite_float_options_are_usage_errors(graph_db: Path, args: list[str]) -> None:
    before = file_digest(graph_db)
    r = run_kaos(*args, db=graph_db)
    line = one_line_error(r, code=2)
    assert line.startswith("kaos: usage error") and "Warning" not in r.stderr
    assert file_digest(graph_db) == before


def test_library_activation_refuses_an_infinite_beta(graph_db: Path) -> None:
    from kaos_dream import graph as kg
    from kaos_dream.errors import InvalidInputError

    with Library(graph_db, settings=Settings(), readonly=True) as lib:
        seeds = kg.seeds_from_query(lib, "friday deploy")
        for beta in (float("inf"), float("nan")):
            with pytest.raises(InvalidInputError, match="beta"):
                kg.activate(lib, seeds, beta=beta)
            with pytest.raises(InvalidInputError, match="beta"):
                kg.sparsify(lib, beta=beta)


@pytest.mark.parametrize("args", [
    ["graph", "link", "skill:1", "caused", "failure:999"],
    ["graph", "link", "failure:999", "caused", "failure:12"],
    ["graph", "unlink", "skill:1", "caused", "failure:999"],
    ["graph", "evidence", "skill:rollback", "prevented", "failure:999"],
    ["graph", "observe", "--action", "skill:1", "--outcome", "failure:999"],
    ["graph", "observe", "--action", "skill:canary", "--absent", "failure:999"],
    ["graph", "observe", "--action", "failure:999"],
    ["graph", "record-query", "friday deploy", "--target", "failure:999"],
    ["graph", "show", "failure:999"],
    ["graph", "activate", "--from", "failure:999"],
    ["graph", "activate", "--from", "failure:12", "--from", "failure:999", "--json"],
])
def test_unknown_failure_nodes_are_refused(graph_db: Path, args: list[str]) -> None:
    before = file_digest(graph_db)
    line = one_line_error(run_kaos(*args, db=graph_db))
    assert "no failure with id 999" in line
    assert file_digest(graph_db) == before


def test_negative_random_seed_is_a_usage_error(graph_db: Path) -> None:
    assert run_kaos("graph", "record-query", "friday deploy", db=graph_db).returncode == 0
    before = file_digest(graph_db)
    line = one_line_error(run_kaos("graph", "prune", "--strategy", "random", "--seed", "-1", db=graph_db), code=2)
    assert "--seed" in line
    assert file_digest(graph_db) == before
    from kaos_dream import graph as kg
    from kaos_dream.errors import InvalidInputError

    with Library(graph_db, settings=Settings(), readonly=True) as lib, pytest.raises(InvalidInputError, match="seed"):
        kg.sparsify(lib, strategy="random", seed=-1)


def test_tables_print_nodes_as_kind_colon_id(graph_db: Path) -> None:
    """The activation table showed a node as `failure, 12` (the tuple joined); it is `failure:12`."""
    r = run_kaos("graph", "activate", "--from", "failure:12", "--top", "5", "--format", "table", db=graph_db)
    assert r.returncode == 0, r.stderr
    rows = [line for line in r.stdout.splitlines() if line.startswith("│")]
    assert rows and all(", " not in row.split("│")[2] for row in rows)
    assert {row.split("│")[2].strip() for row in rows} >= {"failure:12", "skill:1", "skill:3"}
    r = run_kaos("graph", "show", "failure:12", db=graph_db)
    assert "skill:1" in r.stdout and "failure:12" in r.stdout and "failure, 12" not in r.stdout
