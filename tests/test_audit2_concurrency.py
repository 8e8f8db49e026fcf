"""Issue 17, round-2 audit: concurrency and storage faults with real processes and real files."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

from kaos_dream import Library, Settings
from tests.conftest import run_kaos
from tests.test_dream_processes import build, check_clean, snapshot


def test_hits_for_a_skill_deleted_after_the_search_are_skipped_not_fatal(db_path: Path, clock) -> None:
    with Library(db_path, clock=clock, settings=Settings()) as lib:
        for name in ("csv-a", "csv-b", "csv-c"):
            lib.skills.add(name, description="convert csv files")
        lib.memories.add("csv files need a header row", key="csv-note")
        hits = lib.search("csv", limit=10)
        assert {h.name for h in hits} >= {"csv-a", "csv-b", "csv-c"}
        # Another process removes one skill and the memory between the read and the hit insert.
        assert run_kaos("skill", "rm", "csv-b", db=db_path).returncode == 0
        assert run_kaos("memory", "rm", "csv-note", db=db_path).returncode == 0
        lib.episodes.record_hits(hits, "csv", agent="agent-1")
        recorded = lib.conn.execute(
            "SELECT s.name, h.rank FROM skill_hits h JOIN skills s ON s.id = h.skill_id ORDER BY h.rank"
        ).fetchall()
        ranks = {h.name: rank for rank, h in enumerate(hits, 1)}
        assert [tuple(r) for r in recorded] == [(n, ranks[n]) for n in sorted(ranks, key=ranks.get)
                                                if n in ("csv-a", "csv-c")]
        assert lib.conn.execute("SELECT count(*) FROM memory_hits").fetchone()[0] == 0


def test_disk_full_mid_dream_says_what_committed_frees_the_lease_and_resumes(tmp_path: Path) -> None:
    base = tmp_path / "base.db"
    build(base)
    clean, full = tmp_path / "clean.db", tmp_path / "full.db"
    shutil.copy(base, clean)
    shutil.copy(base, full)
    with sqlite3.connect(base) as conn:
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
    assert run_kaos("dream", "run", "--apply", "--quiet", db=clean).returncode == 0
    # The file may not grow: the early phases fit in its free space, a later one does not.
    result = run_kaos("dream", "run", "--apply", db=full, env={"KAOS_MAX_PAGE_COUNT": str(pages)})
    assert result.returncode == 1
    assert "full" in result.stderr and "nothing was written" not in result.stderr, result.stderr
    with sqlite3.connect(full) as conn:
        done = [r[0] for r in conn.execute("SELECT phase FROM dream_run_phases ORDER BY position")]
        status = conn.execute("SELECT status FROM dream_runs").fetchall()
        lease = conn.execute("SELECT holder FROM dream_lease").fetchall()
    assert done[:3] == ["replay", "decay", "emergent"]
    assert f"phases {', '.join(done)} of dream run 1 were committed" in result.stderr
    assert "resumes it from" in result.stderr and "the lease is released" in result.stderr
    assert status == [("running",)] and lease == []
    check_clean(full)
    again = run_kaos("dream", "run", "--apply", "--json", db=full)
    assert again.returncode == 0, again.stderr
    out = json.loads(again.stdout)
    assert out["status"] == "completed" and out["resumed"] is True
    assert snapshot(full) == snapshot(clean)  # nothing replayed twice, nothing lost
