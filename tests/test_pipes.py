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
