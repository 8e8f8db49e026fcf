"""Features working together: failing episodes, causal evidence, fixes, lookups, expansion, LTP cycles."""

from __future__ import annotations

import json
from pathlib import Path

from kaos_dream import Library
from kaos_dream.dream.state import current_cycle

from .conftest import run_kaos_in_process as run_kaos  # parsing and rendering: no new process needed

ERROR = "Error from server: deployment 'web' timed out waiting for rollout to finish"


def test_agent_fail_with_tool_records_the_failure_and_causal_evidence(lib: Library) -> None:
    lib.skills.add("deploy-app", "deploy the app")
    lib.episodes.start("a1")
    lib.record_outcome("deploy-app", False, agent="a1")
    result = lib.episodes.fail("a1", tool="kubectl", error=ERROR)
    assert result.episode.state == "failed" and not result.learned
    fp = lib.failures.list()[0]
    assert fp["occurrences"] == 1 and fp["agents"] == 1
    edge = lib.conn.execute("SELECT src_kind, src_id, relation, dst_kind, dst_id FROM edges").fetchone()
    assert tuple(edge) == ("skill", 1, "caused", "failure", fp["id"])


def test_fix_skill_outcomes_become_prevented_evidence_and_show_in_lookup(lib: Library) -> None:
    lib.skills.add("canary-release", "roll out gradually")
    rec = lib.failures.record("kubectl", ERROR, agent="a1")
    lib.failures.attach_fix(rec.fingerprint_id, summary="release behind a canary", skill="canary-release")
    lib.failures.record_fix_outcome(rec.fingerprint_id, True)
    found = lib.failures.lookup("kubectl", ERROR)
    assert found is not None
    assert [p["name"] for p in found.preventing_skills] == ["canary-release"]
    strength_after_success = found.preventing_skills[0]["strength"]
    lib.failures.record_fix_outcome(rec.fingerprint_id, False)
    weaker = lib.failures.lookup("kubectl", ERROR).preventing_skills[0]["strength"]
    assert weaker < strength_after_success


def test_ltp_stamps_the_current_dream_cycle(lib: Library) -> None:
    for name in ("a", "b"):
        lib.skills.add(name, f"skill {name}")
    for i in range(3):  # three validated co-uses: the dream then creates the emergent edge
        agent = f"w{i}"
        lib.episodes.start(agent)
        lib.record_outcome("a", True, agent=agent)
        lib.record_outcome("b", True, agent=agent)
        lib.episodes.complete(agent)
    lib.dream.run(apply=True)
    lib.dream.run(apply=True)
    cycle = current_cycle(lib.conn)
    assert cycle == 2
    lib.episodes.start("w9")
    lib.record_outcome("a", True, agent="w9")
    lib.record_outcome("b", True, agent="w9")
    lib.episodes.complete("w9")
    row = lib.conn.execute("SELECT last_activated_cycle, activations FROM edges WHERE relation = 'co_occurs_with'")
    assert tuple(row.fetchone()) == (cycle, 1)


def test_cli_agent_fail_lookup_and_expand(tmp_path: Path) -> None:
    db = tmp_path / "cli.db"
    assert run_kaos("skill", "add", "deploy-app", "-d", "deploy the app to production", db=db).returncode == 0
    assert run_kaos("skill", "add", "canary-release", "-d", "roll out gradually", db=db).returncode == 0
    run_kaos("agent", "start", "--id", "a1", db=db)
    run_kaos("record-outcome", "deploy-app", "--failure", "--agent", "a1", db=db)
    r = run_kaos("agent", "fail", "a1", "--tool", "kubectl", "--error", ERROR, db=db)
    assert r.returncode == 0, r.stderr
    r = run_kaos("agent", "fail", "nobody", "--tool", "kubectl", "--error", ERROR, db=db)
    assert r.returncode == 1 and "no agent" in r.stderr
    assert run_kaos("dream", "fix", "attach", "1", "--summary", "canary", "--skill", "canary-release",
                    db=db).returncode == 0
    assert run_kaos("dream", "fix-outcome", "1", "--succeeded", db=db).returncode == 0
    found = json.loads(run_kaos("failure", "lookup", "--tool", "kubectl", ERROR, "--json", db=db).stdout)
    assert found["preventing_skills"][0]["name"] == "canary-release"
    assert run_kaos("graph", "link", "skill:deploy-app", "enabled", "skill:canary-release", db=db).returncode == 0
    # Lexical hits only, so the graph is what brings canary-release (a semantic search finds it too).
    expanded = json.loads(run_kaos("search", "deploy production", "--kind", "skill", "--expand", "2", "--json",
                                   db=db, env={"KAOS_SEMANTIC": "0"}).stdout)
    assert [(h["name"], h["source"]) for h in expanded] == [("deploy-app", "lexical"), ("canary-release", "graph")]
