"""Into a pipe a command writes only its rows, each whole; hints and notes go to stderr."""

from __future__ import annotations

import json
from pathlib import Path

from kaos_dream import Library, ManualClock, Settings

from .conftest import T0, run_kaos_in_process

LONG = ("restart the ledger worker after the vault unseals, then replay the queue " * 4).strip()


def test_tsv_and_json_never_cut_a_long_cell(tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    with Library(db, clock=ManualClock(T0), settings=Settings()) as lib:
        lib.memories.add(LONG, key="ledger-recovery")
    tsv = run_kaos_in_process("memory", "list", db=db)  # stdout is not a terminal: TSV
    assert tsv.returncode == 0, tsv.stderr
    (row,) = tsv.stdout.splitlines()
    assert row.split("\t")[-1] == LONG and "…" not in row
    rows = json.loads(run_kaos_in_process("--format", "json", "memory", "list", db=db).stdout)
    assert LONG in json.dumps(rows) and "…" not in json.dumps(rows)


def test_the_merge_review_hint_goes_to_stderr(tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    with Library(db, clock=ManualClock(T0), settings=Settings()) as lib:
        lib.skills.add("csv-to-parquet", "Convert CSV files to Parquet format with pyarrow")
        lib.skills.add("csv-2-parquet", "Convert CSV files to Parquet format with pyarrow")
        lib.dream.run(apply=True)
    r = run_kaos_in_process("dream", "merges", db=db)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines and all(len(line.split("\t")) > 3 for line in lines), r.stdout  # rows only
    assert "--accept" in r.stderr or "kaos dream merge" in r.stderr, r.stderr
    quiet = run_kaos_in_process("--quiet", "dream", "merges", db=db)
    assert quiet.stderr == ""


def test_names_where_names_were_typed_and_ids_in_json(tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    with Library(db, clock=ManualClock(T0), settings=Settings()) as lib:
        lib.skills.add("warm-up", "Warm the cache")  # ids and names differ: deploy-friday is skill 2
        deploy = lib.skills.add("deploy-friday", "Deploy on a Friday").id
        failure = lib.failures.record("kubectl", "error: deployment web exceeded its progress deadline").fingerprint_id
    r = run_kaos_in_process("graph", "link", "skill:deploy-friday", "caused", f"failure:{failure}", db=db)
    assert r.returncode == 0, r.stderr
    assert f"skill:deploy-friday -caused-> failure:{failure}" in r.stdout and f"skill:{deploy} " not in r.stdout
    out = json.loads(run_kaos_in_process("--json", "graph", "evidence", "skill:deploy-friday", "caused",
                                         f"failure:{failure}", db=db).stdout)
    assert out["src"] == f"skill:{deploy}"  # programs get the id


def test_the_digest_names_skills_in_emergent_edges_and_merges() -> None:
    from kaos_dream.dream.digest import render_digest

    header = {"id": 1, "kind": "run", "mode": "apply", "trigger": "manual", "since": None, "started_at": T0}
    results = {"emergent": {"applied": True, "candidates": 1, "created": 1, "examples": [
        {"src": "skill:1", "dst": "skill:11", "src_name": "skill:csv-to-parquet", "dst_name": "skill:load-s3",
         "strength": 0.5, "count": 7}]}}
    text = render_digest(header, results)
    assert "skill:csv-to-parquet — skill:load-s3" in text and "skill:1 —" not in text


def test_demo_into_a_pipe_titles_its_tables(tmp_path: Path) -> None:
    r = run_kaos_in_process("demo", "--db", str(tmp_path / "demo.db"))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    merges = lines.index(next(x for x in lines if x.startswith("pending merges")))
    assert lines[merges + 1].split("\t") == ["proposal", "skills", "jaccard", "why"]
    assert "csv-to-parquet + parquet-from-csv" in r.stdout
    assert any(x.startswith("- #") and "csv-to-parquet + parquet-from-csv" in x for x in lines)  # the digest's merge
