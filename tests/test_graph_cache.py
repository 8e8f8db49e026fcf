"""The graph's CSR cache is keyed on the edges alone (issue 19): telemetry writes keep it, every
edge change (this process, another process, a cascade, a rollback) replaces it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from kaos_dream import Library, ManualClock
from kaos_dream.graph import Node
from kaos_dream.store import apply_migrations, connect


@pytest.fixture
def linked(lib: Library) -> tuple[Library, list[Node]]:
    nodes = [Node("skill", lib.skills.add(f"skill-{i}", f"does thing {i}").id) for i in range(4)]
    lib.graph.link(nodes[0], "enabled", nodes[1], strength=0.6)
    lib.graph.link(nodes[1], "caused", nodes[2], strength=0.4)
    return lib, nodes


def strengths(arrays) -> list[float]:
    return sorted(np.round(arrays.edges.strength, 6).tolist())


def test_telemetry_writes_keep_the_cached_arrays(linked) -> None:
    lib, nodes = linked
    first = lib.graph.arrays()
    lib.record_outcome(nodes[0].id, True, agent="a1", task="ship it")
    lib.search("thing", kind="skill", record_hits=True, agent="a1")
    lib.memories.add("an unrelated note", key="note")
    lib.episodes.complete("a1")
    assert lib.graph.arrays() is first
    assert lib.graph.loads == 1


def test_bookkeeping_updates_keep_the_cache_and_strength_changes_replace_it(linked) -> None:
    lib, nodes = linked
    first = lib.graph.arrays()
    lib.graph.record_activation([int(i) for i in first.edges.edge_id])  # activations only: no array changes
    assert lib.graph.arrays() is first
    lib.graph.link(nodes[0], "enabled", nodes[1], strength=0.9)  # strength moves
    second = lib.graph.arrays()
    assert second is not first and strengths(second) == [0.4, 0.9]


def test_own_edge_writes_replace_the_arrays(linked) -> None:
    lib, nodes = linked
    assert len(lib.graph.arrays().edges) == 2
    lib.graph.link(nodes[2], "enabled", nodes[3])
    assert len(lib.graph.arrays().edges) == 3
    lib.graph.unlink(nodes[2], "enabled", nodes[3])
    assert len(lib.graph.arrays().edges) == 2
    lib.skills.delete(nodes[0].id)  # the trigger cascade deletes its edge
    assert len(lib.graph.arrays().edges) == 1


def test_arrays_built_inside_a_rolled_back_transaction_are_not_reused(linked) -> None:
    lib, nodes = linked
    lib.graph.arrays()
    with pytest.raises(RuntimeError), lib.transaction():
        lib.graph.link(nodes[2], "enabled", nodes[3])
        assert len(lib.graph.arrays().edges) == 3
        raise RuntimeError("roll back")
    assert len(lib.graph.arrays().edges) == 2
    lib.graph.link(nodes[0], "caused", nodes[3])  # the counter reaches the rolled-back value again
    arrays = lib.graph.arrays()
    assert len(arrays.edges) == 3
    assert Node("skill", nodes[3].id) in arrays.edges.index and Node("skill", nodes[2].id) in arrays.edges.index


_OTHER_PROCESS = """
import sys
from kaos_dream import Library, ManualClock
from kaos_dream.graph import Node
with Library(sys.argv[1], clock=ManualClock(2_000_000_000.0)) as lib:
    if sys.argv[2] == "outcome":
        lib.record_outcome(int(sys.argv[3]), True, agent="other")
    else:
        lib.graph.link(Node("skill", int(sys.argv[3])), "enabled", Node("skill", int(sys.argv[4])), strength=0.7)
"""


def test_another_process_write_is_seen_and_its_telemetry_is_not(linked, db_path: Path) -> None:
    lib, nodes = linked
    first = lib.graph.arrays()
    subprocess.run([sys.executable, "-c", _OTHER_PROCESS, str(db_path), "outcome", str(nodes[0].id)], check=True)
    assert lib.graph.arrays() is first
    subprocess.run([sys.executable, "-c", _OTHER_PROCESS, str(db_path), "link", str(nodes[2].id), str(nodes[3].id)],
                   check=True)
    assert strengths(lib.graph.arrays()) == [0.4, 0.6, 0.7]
    assert lib.graph.loads == 2


def test_expanded_search_after_an_outcome_reuses_the_arrays(linked) -> None:
    lib, nodes = linked
    from kaos_dream.graph import search_expanded

    search_expanded(lib, "thing", limit=3)
    loads = lib.graph.loads
    for i in range(5):
        lib.record_outcome(nodes[i % 4].id, i % 2 == 0, agent="loop")
        search_expanded(lib, "thing", limit=3)
    assert lib.graph.loads == loads


def test_a_file_from_before_the_counter_is_upgraded_and_cached(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    conn = connect(str(path))
    apply_migrations(conn, 1.0, upto=11)
    conn.executemany("INSERT INTO skills (name, description, template, tags, created_at, updated_at) "
                     "VALUES (?, 'd', 't', '[]', 1, 1)", [("a",), ("b",)])
    conn.execute("INSERT INTO edges (src_kind, src_id, dst_kind, dst_id, relation, strength, provenance, "
                 "created_at, updated_at) VALUES ('skill', 1, 'skill', 2, 'enabled', 0.5, 'declared', 1, 1)")
    conn.close()
    with Library(path, clock=ManualClock(2.0)) as lib:
        first = lib.graph.arrays()
        assert len(first.edges) == 1
        lib.record_outcome(1, True, agent="a")
        assert lib.graph.arrays() is first
        lib.graph.link(Node("skill", 2), "caused", Node("skill", 1))
        assert len(lib.graph.arrays().edges) == 2
