"""demo_fleet_bench: the quick run verifies every row on each engine, and its verifier catches loss.

The bench runs as a real subprocess (host processes, `kaos dream run --apply` racers) on SQLite, and
on PostgreSQL against the test suite's throw-away server through ``--pg-url``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kaos_dream import Library
from tests.pg_server import BINDIR

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "demo_fleet_bench"


def run_quick(tmp_path: Path, *extra: str) -> dict[str, Any]:
    proc = subprocess.run([sys.executable, str(BENCH / "run.py"), "--quick", "--out", str(tmp_path),
                           "--junit", str(tmp_path / "junit.xml"), *extra],
                          capture_output=True, text=True, timeout=180, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "PASS" in proc.stdout and (tmp_path / "results.quick.md").exists()
    assert 'failures="0"' in (tmp_path / "junit.xml").read_text()
    return json.loads((tmp_path / "results.quick.json").read_text())


def assert_exact(result: dict[str, Any], engine: str) -> None:
    e = result["engines"][engine]
    assert e["runs"] == 2 and e["lost"] == 0 and e["doubled"] == 0 and not e["problems"]
    assert e["incident_alerts_per_run"] == [1, 1] and e["incident_hosts_per_run"] == [1, 2]
    assert e["doubled_alerts"] == 0 and e["lease_overlaps"] == 0 and e["dream_passes_applied"] >= 2
    assert set(e["scaling"]) == {"1", "2"} and e["scaling"]["2"]["ops_per_s"]["median"] > 0
    for run in (r for r in result["runs"] if r["engine"] == engine):
        v = run["verification"]
        for name in ("agents", "skill_uses", "failure_occurrences", "coordination_log", "skill_hits"):
            assert v["tables"][name]["wrote"] == v["tables"][name]["has"] > 0, (name, v["tables"][name])
        assert v["positions"] == {"count": v["tables"]["coordination_log"]["has"], "gaps": 0,
                                  "last": v["tables"]["coordination_log"]["has"]}
        assert v["incident"]["alert_agent_count"] >= result["config"]["systemic_threshold"]
        assert run["dream"]["completed"] == v["lease"]["applied"] >= 1


def test_quick_run_accounts_for_every_row_on_each_engine(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """One quick run of the bench on the SQLite file and, where the server binaries exist, on the
    suite's PostgreSQL server (one subprocess for both: the suite's time budget)."""
    engines, extra = ["sqlite"], []
    if BINDIR is not None:
        engines.append("postgresql")
        extra = ["--pg-url", str(request.getfixturevalue("pg_url"))]
    result = run_quick(tmp_path, "--engines", ",".join(engines), "--no-agreement", *extra)  # agreement: below
    assert result["ok"] and set(result["engines"]) == set(engines)
    for engine in engines:
        assert_exact(result, engine)
    if "postgresql" in engines:
        assert result["engines"]["postgresql"]["label"].startswith("PostgreSQL ")


def test_verifier_counts_a_deleted_row_as_lost_and_an_unreported_one_as_doubled(tmp_path: Path) -> None:
    sys.path[:0] = [str(BENCH), str(ROOT / "demo_reliability_bench")]
    try:
        import targets
        import verify
    finally:
        del sys.path[:2]
    db = str(tmp_path / "v.db")
    with Library(db) as lib:
        sid = lib.skills.add("restart-nginx", "restart nginx", "restart").id
        agent = lib.episodes.start("h0-a0-e1").id
        outcomes = [lib.record_outcome(sid, True, agent=agent).id for _ in range(3)]
        occ = lib.failures.record("curl", "TimeoutError: timed out", agent=agent).occurrence_id
        positions = [lib.log.intent(agent, "deploy web").position for _ in range(2)]
        lib.episodes.complete(agent)
        lib.log.intent("someone-else", "deploy api")  # a row no process reported: doubled
        lib.conn.execute("DELETE FROM skill_uses WHERE id = ?", (outcomes[0],))  # a reported row gone: lost
        lib.conn.commit()
    report = {"agents": [agent], "ended": {agent: "completed"},
              "outcomes": [[o, sid, 1, agent] for o in outcomes], "occurrences": [[occ, agent, False]],
              "alerts_raised": [], "positions": [positions[0], positions[0]],  # one position given twice: lost
              "hits": {}}
    target = targets.SqliteTarget()
    try:
        checked = verify.verify(target, db, [report], {"completed": 0}, threshold=5)
    finally:
        target.close()
    assert checked["tables"]["skill_uses"] == {"wrote": 3, "has": 2, "lost": 1, "doubled": 0}
    assert checked["tables"]["coordination_log"] == {"wrote": 2, "has": 3, "lost": 1, "doubled": 2}
    assert checked["lost"] == 2 and checked["doubled"] == 2
    assert any("skill_stats" in p for p in checked["problems"])
    assert any("incident" in p for p in checked["problems"])  # no incident happened in this library


@pytest.mark.skipif(BINDIR is None, reason="PostgreSQL server binaries (initdb, pg_ctl, postgres) not installed")
def test_agreement_script_finds_the_same_top_k_sets_on_both_engines(tmp_path: Path, pg_url: str) -> None:
    """agreement.py as a real subprocess against the suite's server: BM25 is ranked by the server with
    FTS5's own formula, so every query's top-5 and top-10 sets agree, and both engines' client CPU
    per search is measured."""
    out = tmp_path / "agreement.json"
    proc = subprocess.run([sys.executable, str(BENCH / "agreement.py"), "--sizes", "30", "--pg-url", pg_url,
                           "--out", str(out)], capture_output=True, text=True, timeout=240, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result = json.loads(out.read_text())
    relevance, neuro = result["relevance"], result["neuroplasticity"]
    assert relevance["sizes"] == [30] and relevance["bm25"]["queries"] == relevance["weighted"]["queries"] == 30
    assert neuro["queries"] == 100 and neuro["rounds"] == 100
    for shares in (relevance["bm25"], relevance["weighted"], neuro):
        assert shares["top5_same_set"] == shares["top10_same_set"] == 1.0, shares["disagreements"]
    for figures in result["client_cpu_us_per_search"].values():
        assert figures["sqlite"] > 0 and figures["postgresql"] > 0


def test_agreement_script_refuses_a_bad_size_in_one_line(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, str(BENCH / "agreement.py"), "--sizes", "30,x"],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert proc.returncode == 2 and "--sizes takes whole numbers" in proc.stderr and "Traceback" not in proc.stderr
