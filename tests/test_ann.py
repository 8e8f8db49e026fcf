"""The ANN graph of a large library (issue 35 item 4): it only proposes candidates, so a search
through it returns what exact search returns (on these small libraries, where it finds every true
neighbour), never a deleted or deprecated row, and a missing, stale, torn or foreign saved graph
means catch-up or exact search, never a wrong row. Real SQLite files, real processes, real usearch."""

from __future__ import annotations

import importlib.util
import json
import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from kaos_dream import Library, ManualClock, Settings
from kaos_dream.embedding import ann

from .conftest import PROJECT_ROOT, T0, run_kaos

pytestmark = pytest.mark.skipif(importlib.util.find_spec("usearch") is None,
                                reason="the scale extra (usearch) is not installed")

WORDS = ("deploy release rotate secret backup restore parse csv json yaml index search cache warm cold "
         "queue retry alert page trace metric log shard merge split upload download render chart table "
         "report audit scan patch build test lint format compile bundle ship roll canary").split()
ANN = Settings(embedding_model="hash-trigram", strong_embedding_model="none", ann_min_rows=100)
EXACT = Settings(embedding_model="hash-trigram", strong_embedding_model="none", ann_min_rows=0)
QUERIES = ["deployment of canaries", "restoring backups", "parsing yaml files", "tracing metrics",
           "rotation of secrets", "compiling bundles", "scanning patches", "chart rendering"]


def fill(db: Path, n: int, seed: int = 3) -> None:
    rng = random.Random(seed)
    with Library(db, clock=ManualClock(T0), settings=EXACT) as lib:
        for i in range(n):
            words = rng.sample(WORDS, 4)
            lib.skills.add(f"{words[0]}-{words[1]}-{i}", " ".join(words), tags=[words[2]])


def hits(lib: Library, query: str) -> list[tuple[int, float]]:
    return [(h.id, round(h.score, 9)) for h in lib.search(query, kind="skill", limit=10)]


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("ann") / "kaos.db"
    fill(db, 600)
    return db


def copy_of(library: Path, tmp_path: Path) -> Path:
    db = tmp_path / "kaos.db"
    with Library(library, settings=EXACT) as src:
        src.conn.execute(f"VACUUM INTO '{db}'")
    return db


def test_searches_use_the_graph_only_once_saved_and_agree_with_exact(library: Path, tmp_path: Path) -> None:
    db = copy_of(library, tmp_path)
    with Library(db, settings=EXACT) as lib:
        exact = {q: hits(lib, q) for q in QUERIES}
    with Library(db, settings=ANN) as lib:
        assert lib.vectors.graph("skill") is None  # nothing saved: exact search, and a search never writes
        assert {q: hits(lib, q) for q in QUERIES} == exact
        assert not Path(str(db) + ".ann").exists()
        done = lib.vectors.save_graphs()
        assert done["fast skill"] == {"rows": 600, "action": "built, saved"}
    with Library(db, settings=ANN) as lib:  # a new process loads the saved graph
        graph = lib.vectors.graph("skill")
        assert graph is not None and len(graph.index) == 600
        assert {q: hits(lib, q) for q in QUERIES} == exact
        # the semantic path ran: some hits were found by meaning alone (no query word in common)
        assert any(h.bm25 == 0.0 for q in QUERIES for h in lib.search(q, kind="skill", limit=10))


def test_the_graph_follows_adds_edits_deletes_and_deprecations(library: Path, tmp_path: Path) -> None:
    db = copy_of(library, tmp_path)
    with Library(db, settings=ANN) as lib:
        lib.vectors.save_graphs()
        saved = lib.vectors.graph("skill")
        assert saved is not None
        new = lib.skills.add("canary-yaml-x", "deploy canary yaml release", tags=["ship"]).id
        lib.skills.update(1, description="restore backup audit report")
        gone = lib.conn.execute("SELECT name, id FROM skills WHERE id = 2").fetchone()
        lib.skills.delete(gone[0])
        deprecated = lib.conn.execute("SELECT name, id FROM skills WHERE id = 3").fetchone()
        lib.skills.deprecate(deprecated[0])
        graph = lib.vectors.graph("skill")
        assert graph is not None and graph.seq == lib.conn.execute("SELECT max(seq) FROM embeddings").fetchone()[0]
        ann_hits = {q: hits(lib, q) for q in QUERIES + ["deploy canary yaml release", "restore backup audit report"]}
    with Library(db, settings=EXACT) as lib:
        exact = {q: hits(lib, q) for q in ann_hits}
    assert ann_hits == exact
    found = {i for h in ann_hits.values() for i, _ in h}
    assert new in found and gone[1] not in found and deprecated[1] not in found


def test_a_torn_or_foreign_graph_is_never_trusted(library: Path, tmp_path: Path) -> None:
    db = copy_of(library, tmp_path)
    with Library(db, settings=ANN) as lib:
        lib.vectors.save_graphs()
    folder = Path(str(db) + ".ann")
    meta_path = next(folder.glob("*.json"))
    meta = json.loads(meta_path.read_text())
    graph_path = folder / meta["graph"]
    graph_path.write_bytes(graph_path.read_bytes()[: meta["bytes"] // 2])  # a torn write
    with Library(db, settings=ANN) as lib:
        assert lib.vectors.graph("skill") is None  # exact search until it is rebuilt
        assert lib.vectors.save_graphs()["fast skill"]["action"] == "built, saved"
    other = tmp_path / "other" / "kaos.db"  # another library's graph copied beside this database
    other.parent.mkdir()
    fill(other, 600, seed=99)
    meta_other = json.loads(meta_path.read_text())
    os.makedirs(str(other) + ".ann")
    for f in folder.iterdir():
        (Path(str(other) + ".ann") / f.name).write_bytes(f.read_bytes())
    with Library(other, settings=ANN) as lib:
        assert lib.vectors.graph("skill") is None  # sampled vectors differ: not used
        assert meta_other["seq"] <= lib.conn.execute("SELECT max(seq) FROM embeddings").fetchone()[0]


SAVER = """
import sys
from kaos_dream import Library, Settings
s = Settings(embedding_model="hash-trigram", strong_embedding_model="none", ann_min_rows=100)
with Library(sys.argv[1], settings=s) as lib:
    i = 0
    while True:
        lib.skills.add(f"saver-{i}", f"deploy backup {i}")
        lib.vectors.save_graphs(force=True)
        print(i, flush=True)
        i += 1
"""


def test_kill_9_while_saving_leaves_a_usable_or_no_graph(library: Path, tmp_path: Path) -> None:
    db = copy_of(library, tmp_path)
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT)}
    for round_ in range(3):
        proc = subprocess.Popen([sys.executable, "-c", SAVER, str(db)], stdout=subprocess.PIPE, env=env, text=True)
        assert proc.stdout is not None
        for _ in range(round_ + 1):
            proc.stdout.readline()
        proc.send_signal(signal.SIGKILL)  # somewhere inside a save or an add
        proc.wait()
        with Library(db, settings=ANN) as lib:
            graph = lib.vectors.graph("skill")  # loaded and caught up, or None: exact
            ann_hits = {q: hits(lib, q) for q in QUERIES}
            if graph is not None:
                assert graph.seq == lib.conn.execute("SELECT max(seq) FROM embeddings").fetchone()[0]
        with Library(db, settings=EXACT) as lib:
            assert ann_hits == {q: hits(lib, q) for q in QUERIES}


def test_the_dream_saves_the_graph(library: Path, tmp_path: Path) -> None:
    db = copy_of(library, tmp_path)
    with Library(db, clock=ManualClock(T0), settings=ANN) as lib:
        lib.dream.run(apply=True)
        assert lib.vectors.graph("skill") is not None
    assert ann.folder_of(str(db)) is not None and any(Path(str(db) + ".ann").glob("skill-*.usearch"))


def test_a_bad_setting_is_one_line(tmp_path: Path) -> None:
    assert run_kaos("init", db=tmp_path / "x.db").returncode == 0
    r = run_kaos("search", "deploy", db=tmp_path / "x.db", env={"KAOS_ANN_MIN_ROWS": "-1"})
    assert r.returncode == 1 and r.stderr.strip().splitlines() == [
        "kaos: error: KAOS_ANN_MIN_ROWS must not be negative (0 turns the ANN graph off)"]


def test_a_graph_ahead_of_the_database_is_not_used(library: Path, tmp_path: Path) -> None:
    """A library restored from an older backup beside a newer graph: the graph holds vectors the
    database never had, so it is not trusted (exact search until the dream rebuilds it)."""
    db = copy_of(library, tmp_path)
    with Library(db, settings=ANN) as lib:
        lib.vectors.save_graphs()
        seq = lib.conn.execute("SELECT max(seq) FROM embeddings").fetchone()[0]
    meta_path = next(Path(str(db) + ".ann").glob("*.json"))
    meta = json.loads(meta_path.read_text())
    meta["seq"] = seq + 10
    meta_path.write_text(json.dumps(meta))
    with Library(db, settings=ANN) as lib:
        assert lib.vectors.graph("skill") is None
        assert lib.vectors.save_graphs()["fast skill"]["action"] == "built, saved"
        assert lib.vectors.graph("skill") is not None
    assert ann.folder_of("postgresql://kaos@db.internal/kaos") is None and ann.folder_of(":memory:") is None
