"""The same library built on both engines answers every `kaos search` mode alike through the CLI
(weighted, wilson, bm25, --expand, --explore, --task, semantic neighbours), and the writes a search
makes (--record-hits) land alike: PostgreSQL must rank like SQLite, not merely return rows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kaos_dream import Library, ManualClock, Settings
from kaos_dream.graph.nodes import Node

from .conftest import query
from .conftest import run_kaos_in_process as run_kaos
from .pg_server import needs_postgres
from .test_search_fast_path import SKILLS

pytestmark = needs_postgres

SEARCHES = [
    ["search", "deploy"],
    ["search", "deploy", "--rank", "bm25"],
    ["search", "deploy", "--rank", "wilson"],
    ["search", "deploy", "--rank", "weighted"],
    ["search", "deploy", "--expand", "2"],
    ["search", "deploy", "--expand", "2", "--mode", "adaptive"],
    ["search", "deploy", "--expand", "1", "--mode", "additive"],
    ["search", "deploy", "--kind", "memory"],
    ["search", "deploy", "--explore", "--seed", "7"],
    ["search", "deploy", "--task", "ship it"],
    ["search", "release", "--include-deprecated"],
    ["search", "release"],
    ["search", "shipping a new build to the servers"],  # no shared word: semantic neighbours only
    ["search", "csv OR cache", "--limit", "3"],
]


def build(target: str) -> str:
    """The fast-path test's library, with outcomes, an edge and a deprecated skill; written in 2100 so
    every age is 0 and the two engines' scores can be compared exactly."""
    with Library(target, clock=ManualClock(4_102_444_800.0), settings=Settings()) as lib:
        for name, text, tags in SKILLS:
            lib.skills.add(name, text, f"run {name}", tags)
        lib.skills.add("release-notes", "write the release notes", "notes", ["docs"])
        lib.skills.deprecate("release-notes", "moved to the wiki")
        lib.memories.add("the deploy needs a warm cache first", key="warm-first")
        lib.memories.add("parquet files compress csv well", key="parquet-size")
        for success in (True, False, True):
            lib.record_outcome("deploy-app", success, agent="a1", task="ship it")
        lib.record_outcome("rollback-release", False, agent="a1", task="ship it")
        lib.graph.link(Node("skill", lib.skills.resolve_id("deploy-app")), "enabled",
                       Node("skill", lib.skills.resolve_id("warm-cache")))
    return target


def answer(args: list[str], db: str) -> tuple[int, list[tuple]]:
    result = run_kaos(*args, "--json", db=db)
    assert result.returncode == 0, (args, result.stderr)
    rows = json.loads(result.stdout)
    return result.returncode, [(r["kind"], r["name"], round(r["score"], 9)) for r in rows]


@pytest.fixture
def libraries(tmp_path: Path, pg_url: str) -> tuple[str, str]:
    return build(str(tmp_path / "lib.db")), build(pg_url)


@pytest.mark.parametrize("args", SEARCHES, ids=lambda a: " ".join(a[1:]))
def test_every_search_mode_answers_alike_on_both_engines(libraries: tuple[str, str], args: list[str]) -> None:
    sqlite_answer, postgres_answer = (answer(args, db) for db in libraries)
    assert postgres_answer == sqlite_answer
    if args[1] in ("deploy", "release"):
        assert sqlite_answer[1], args  # a comparison of two empty lists would prove nothing


def test_recorded_hits_land_alike(libraries: tuple[str, str]) -> None:
    for db in libraries:
        assert run_kaos("agent", "start", "--id", "a2", db=db).returncode == 0
        assert run_kaos("search", "deploy", "--agent", "a2", "--record-hits", db=db).returncode == 0
    sql = ("SELECT s.name, h.agent_id, h.query, h.rank FROM skill_hits AS h JOIN skills AS s ON s.id = h.skill_id "
           "ORDER BY h.rank, s.name")
    sqlite_rows, postgres_rows = (query(db, sql) for db in libraries)
    assert postgres_rows == sqlite_rows and sqlite_rows
