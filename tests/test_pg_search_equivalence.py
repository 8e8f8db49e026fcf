"""Search ranks the same on PostgreSQL as on SQLite: random small libraries, every rank, with --expand.

Each example builds one random library (skills, memories, outcomes per task, deprecated skills, graph
edges) the same way on an in-memory SQLite file and on a fresh PostgreSQL database (cloned from a
migrated template), then runs random queries with the weighted, wilson and bm25 ranks, with and without
a task, exploring or not, and expands the hits through the graph. Both engines must return the same
ids in the same order, with scores equal within 1e-12 relative.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kaos_dream import Library, ManualClock, Settings
from kaos_dream.graph import Node
from kaos_dream.graph.retrieval import expand

from .conftest import T0
from .pg_server import PgServer

WORDS = ("deploy", "rollback", "canary", "release", "friday", "csv", "parquet", "convert", "schema", "backup",
         "nightly", "report", "tls", "postgres", "cache", "queue")
RELATIONS = ("co_occurs_with", "caused", "enabled", "prevented")
REL_TOL = 1e-12

text = st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join)
library_spec = st.fixed_dictionaries({
    "skills": st.lists(st.tuples(text, st.booleans()), min_size=1, max_size=14),
    "memories": st.lists(text, max_size=6),
    # (skill index, success, task index or None), played in order with the clock advancing
    "outcomes": st.lists(st.tuples(st.integers(0, 13), st.booleans(), st.one_of(st.none(), st.integers(0, 2))),
                         max_size=40),
    "edges": st.lists(st.tuples(st.integers(0, 19), st.sampled_from(RELATIONS), st.integers(0, 19),
                                st.floats(0.1, 1.0)), max_size=8),
    "queries": st.lists(st.tuples(st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join),
                                  st.sampled_from((None, "skill", "memory")), st.one_of(st.none(), st.integers(0, 2)),
                                  st.one_of(st.none(), st.integers(0, 2**32 - 1))), min_size=1, max_size=4),
})


@pytest.fixture(scope="module")
def template(pg_server: PgServer) -> Iterator[str]:
    """A migrated empty database that each example clones (CREATE DATABASE … TEMPLATE)."""
    name = pg_server.create_database("tmpl")
    Library(pg_server.socket_url(name), settings=Settings()).close()
    yield name
    with pg_server.admin() as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')


def build(lib: Library, clock: ManualClock, spec: dict[str, Any]) -> list[Node]:
    """The library ``spec`` describes; returns its nodes (skills then memories) for the edges."""
    nodes = []
    for n, (description, deprecated) in enumerate(spec["skills"]):
        clock.advance(37.0)
        skill = lib.skills.add(f"skill-{n:02d}", description)
        nodes.append(Node("skill", skill.id))
        if deprecated and n % 3 == 2:
            lib.skills.deprecate(skill.id)
    for n, content in enumerate(spec["memories"]):
        clock.advance(3_600.0 * (n + 1))
        nodes.append(Node("memory", lib.memories.add(content, key=f"mem-{n}").id))
    skills = len(spec["skills"])
    for index, success, task in spec["outcomes"]:
        clock.advance(61.0)
        lib.record_outcome(f"skill-{index % skills:02d}", success, agent="agent",
                           task=None if task is None else f"task {task}")
    for a, relation, b, strength in spec["edges"]:
        src, dst = nodes[a % len(nodes)], nodes[b % len(nodes)]
        if src != dst:
            lib.graph.link(src, relation, dst, strength=strength)
    clock.advance(86_400.0)
    return nodes


def answers(lib: Library, spec: dict[str, Any]) -> list[tuple[str, list[tuple[str, int, float]]]]:
    """Every query of ``spec`` under every rank, and the expanded weighted hits."""
    out = []
    for query, kind, task, seed in spec["queries"]:
        task_text = None if task is None else f"task {task}"
        for rank in ("weighted", "wilson", "bm25"):
            hits = lib.search(query, kind=kind, limit=8, rank=rank, task=task_text)
            out.append((f"{rank} {query!r} {kind} {task_text}", [(h.kind, h.id, h.score) for h in hits]))
            if rank == "weighted":
                grown = expand(lib, hits, extra=4, mode="gated")
                out.append((f"expand {query!r} {kind}", [(h.kind, h.id, h.score) for h in grown]))
                if seed is not None:
                    drawn = lib.search(query, kind=kind, limit=8, task=task_text, explore=True, seed=seed)
                    out.append((f"explore {query!r} {seed}", [(h.kind, h.id, h.score) for h in drawn]))
    return out


def assert_same(lite: list, pg: list) -> None:
    assert [label for label, _ in lite] == [label for label, _ in pg]
    for (label, a), (_, b) in zip(lite, pg, strict=True):
        assert [(k, i) for k, i, _ in a] == [(k, i) for k, i, _ in b], label
        for (_, _, x), (_, _, y) in zip(a, b, strict=True):
            assert x == pytest.approx(y, rel=REL_TOL, abs=0.0), label


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(spec=library_spec)
def test_search_returns_the_same_ids_and_scores_on_both_engines(pg_server: PgServer, template: str,
                                                                 spec: dict[str, Any]) -> None:
    name = f"eq_{secrets.token_hex(6)}"
    with pg_server.admin() as conn:
        # FILE_COPY (PostgreSQL 15+): a small clone is quicker than WAL-logging every block
        strategy = " STRATEGY FILE_COPY" if conn.info.server_version >= 150000 else ""
        conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"{strategy}')
    try:
        results = []
        for target in (":memory:", pg_server.socket_url(name)):
            clock = ManualClock(T0)
            with Library(target, clock=clock, settings=Settings()) as lib:
                build(lib, clock, spec)
                results.append(answers(lib, spec))
        assert_same(*results)
    finally:
        with pg_server.admin() as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
