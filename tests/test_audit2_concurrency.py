"""Issue 17, round-2 audit: concurrency and storage faults with real processes and real files."""

from __future__ import annotations

from pathlib import Path

from kaos_dream import Library, Settings
from tests.conftest import run_kaos


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
