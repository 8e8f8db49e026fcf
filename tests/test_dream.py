"""The dream pass: formulas, idempotent proposals, rejection/supersession, lease, auto trigger."""

from __future__ import annotations

import math
import time
from pathlib import Path

import pytest

from kaos_dream import Library, ManualClock, Settings, hooks
from kaos_dream.dream import PhaseResult, register_phase, unregister_phase
from kaos_dream.dream.auto import maybe_dream
from kaos_dream.dream.state import current_cycle, set_state, try_acquire
from kaos_dream.errors import InvalidInputError
from kaos_dream.store import transaction

from .conftest import T0


def add_edge(lib: Library, a: tuple[str, int], b: tuple[str, int], strength: float, last_cycle: int = 0,
             relation: str = "co_occurs_with", provenance: str = "observed") -> int:
    with transaction(lib.conn):
        cur = lib.conn.execute(
            "INSERT INTO edges (src_kind, src_id, dst_kind, dst_id, relation, strength, last_activated_cycle, "
            "provenance, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (*a, *b, relation, strength, last_cycle, provenance, T0, T0))
    return int(cur.lastrowid)


def add_coactivation(lib: Library, a: tuple[str, int], b: tuple[str, int], count: float) -> None:
    with transaction(lib.conn):
        lib.conn.execute("INSERT INTO coactivations VALUES (?, ?, ?, ?, ?, ?, ?)", (*a, *b, count, T0, T0))


AGENTS = ("honest-1", "honest-2", "honest-3")  # prune and promote need several distinct agents (issue 17)


def _agents(lib: Library) -> None:
    lib.conn.executemany("INSERT OR IGNORE INTO agents (id, started_at) VALUES (?, ?)",
                         [(a, lib.now()) for a in AGENTS])


def add_uses(lib: Library, skill_id: int, outcomes: list[int]) -> None:
    """Outcomes spread round-robin over three agents."""
    with transaction(lib.conn):
        _agents(lib)
        lib.conn.executemany("INSERT INTO skill_uses (skill_id, agent_key, success, created_at) "
                             "SELECT ?1, (SELECT id FROM agent_keys WHERE agent_id = ?2), ?3, ?4",
                             [(skill_id, AGENTS[i % 3], o, lib.now()) for i, o in enumerate(outcomes)])


def add_hits(lib: Library, memory_id: int, n: int) -> None:
    with transaction(lib.conn):
        _agents(lib)
        lib.conn.executemany(
            "INSERT INTO memory_hits (memory_id, agent_id, query, rank, created_at) VALUES (?, ?, 'q', 1, ?)",
            [(memory_id, AGENTS[i % 3], lib.now()) for i in range(n)])


def strength(lib: Library, edge_id: int) -> float:
    return float(lib.conn.execute("SELECT strength FROM edges WHERE id = ?", (edge_id,)).fetchone()[0])


def counts(lib: Library) -> tuple[int, ...]:
    q = lib.conn.execute
    return tuple(q(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("proposals", "skills", "edges"))


def test_ltd_formula_to_1e9(lib: Library) -> None:
    for n in range(4):
        lib.skills.add(f"s{n}")
    set_state(lib.conn, "cycle", 7)
    fresh = add_edge(lib, ("skill", 1), ("skill", 2), 0.8, last_cycle=7)
    dormant3 = add_edge(lib, ("skill", 1), ("skill", 3), 0.8, last_cycle=4)
    near_floor = add_edge(lib, ("skill", 2), ("skill", 3), 0.11, last_cycle=0)
    declared = add_edge(lib, ("skill", 3), ("skill", 4), 0.8, last_cycle=0, relation="fact", provenance="declared")
    dry = lib.dream.run()
    assert strength(lib, dormant3) == 0.8 and current_cycle(lib.conn) == 7  # dry run changes nothing
    assert dry.summary["phases"]["decay"]["edges_weakened"] == 2
    lib.dream.run(apply=True)
    assert current_cycle(lib.conn) == 8
    assert strength(lib, fresh) == 0.8  # activated in the current cycle: c = 0
    assert abs(strength(lib, dormant3) - (0.8 - 0.05 * (1 - math.exp(-3 / 5)))) < 1e-9
    assert strength(lib, near_floor) == pytest.approx(0.1, abs=1e-9)  # floor, never below
    assert strength(lib, declared) == 0.8
    lib.dream.run(apply=True)  # one more cycle: c = 4 now
    expected = 0.8 - 0.05 * (1 - math.exp(-3 / 5)) - 0.05 * (1 - math.exp(-4 / 5))
    assert abs(strength(lib, dormant3) - expected) < 1e-9


def test_ltd_leaves_causal_edges_to_online_learning(lib: Library) -> None:
    """caused/prevented confidence is lowered by the graph's neglect rule, so LTD must not decay them too."""
    lib.skills.add("s1")
    lib.skills.add("s2")
    set_state(lib.conn, "cycle", 10)
    caused = add_edge(lib, ("skill", 1), ("skill", 2), 0.8, last_cycle=0, relation="caused")
    prevented = add_edge(lib, ("skill", 2), ("skill", 1), 0.8, last_cycle=0, relation="prevented")
    association = add_edge(lib, ("skill", 1), ("skill", 2), 0.8, last_cycle=0)
    lib.dream.run(apply=True)
    assert strength(lib, caused) == strength(lib, prevented) == 0.8
    assert strength(lib, association) < 0.8


def test_emergent_edges_formula_and_canonical_order(lib: Library) -> None:
    for n in range(5):
        lib.skills.add(f"s{n}")
    lib.memories.add("m", key="m1")
    add_coactivation(lib, ("skill", 1), ("skill", 2), 3)  # -> 0.3
    add_coactivation(lib, ("skill", 1), ("skill", 3), 7)  # -> capped 0.5
    add_coactivation(lib, ("memory", 1), ("skill", 4), 3.5)  # cross-modal, -> 0.35
    add_coactivation(lib, ("skill", 2), ("skill", 3), 2.5)  # below θ
    add_coactivation(lib, ("skill", 4), ("skill", 5), 9)  # already linked (reverse direction)
    add_edge(lib, ("skill", 5), ("skill", 4), 0.6, relation="enabled")
    lib.dream.run(apply=True)
    rows = lib.conn.execute(
        "SELECT src_kind, src_id, dst_kind, dst_id, strength, provenance, relation FROM edges "
        "WHERE provenance = 'emergent' ORDER BY src_kind, src_id, dst_kind, dst_id").fetchall()
    got = [(r[0], r[1], r[2], r[3], r[4], r[5], r[6]) for r in rows]
    assert [g[:4] for g in got] == [("memory", 1, "skill", 4), ("skill", 1, "skill", 2), ("skill", 1, "skill", 3)]
    for g, want in zip(got, (0.35, 0.3, 0.5), strict=True):
        assert abs(g[4] - want) < 1e-9 and g[5:] == ("emergent", "co_occurs_with")


def seed_for_proposals(lib: Library) -> None:
    lib.skills.add("sync-postgres-nightly", "sync the postgres tables every night")
    lib.skills.add("sync-postgres-nightly-copy", "sync the postgres tables every night")
    lib.skills.add("flaky-deploy", "deploy with no checks")
    lib.skills.add("solid-deploy", "deploy with health checks")
    lib.memories.add("staging rejects TLS 1.0", key="tls")
    lib.memories.add("rarely used", key="cold")
    add_hits(lib, 1, 5)
    add_hits(lib, 2, 4)
    add_uses(lib, 3, [1, 0, 0, 0, 1, 0, 0, 0, 0])  # 2/9 = 22 %, at most 1/3 for each agent -> prune
    add_uses(lib, 4, [1, 1, 0, 1, 1, 0])  # 4/6 -> keep
    add_coactivation(lib, ("skill", 3), ("skill", 4), 4)


def test_apply_twice_second_run_creates_nothing(lib: Library, clock: ManualClock) -> None:
    seed_for_proposals(lib)
    first = lib.dream.run(apply=True)
    pro = first.summary["phases"]["proposals"]
    assert pro["promote"]["created"] == 1 and pro["prune"]["created"] == 1 and pro["merge"]["created"] == 1
    assert pro["promoted"] == 0 and pro["pruned"] == 1  # a promotion waits for a person (issue 17)
    (promotion,) = lib.dream.promotions()
    assert promotion["agent_count"] == 3 and promotion["agents"] == list(AGENTS)
    lib.dream.accept_promotion(promotion["id"])
    assert lib.skills.get("promoted-tls").description == "staging rejects TLS 1.0"
    assert lib.skills.get("flaky-deploy").deprecated
    after_first = counts(lib)
    clock.advance(60)
    second = lib.dream.run(apply=True)
    assert counts(lib) == after_first
    p2 = second.summary["phases"]["proposals"]
    assert all(p2[k]["created"] == 0 for k in ("promote", "prune", "merge"))
    assert p2["promoted"] == 0 and p2["pruned"] == 0
    assert second.summary["phases"]["emergent"]["created"] == 0
    # The promoted memory keeps being retrieved: still promoted exactly once.
    add_hits(lib, 1, 10)
    lib.dream.run(apply=True)
    assert lib.conn.execute("SELECT count(*) FROM skills WHERE name LIKE 'promoted-%'").fetchone()[0] == 1


def test_rejected_stays_rejected_until_targets_change(lib: Library) -> None:
    seed_for_proposals(lib)
    lib.dream.run()
    merge = lib.dream.merges()[0]
    lib.dream.reject(merge["id"], "they differ in retention")
    lib.dream.run()
    assert lib.dream.merges() == []
    lib.skills.update(2, description="sync the postgres tables every night quickly")
    lib.dream.run()
    again = lib.dream.merges()
    assert len(again) == 1 and again[0]["id"] != merge["id"]


def test_changed_targets_supersede_pending(lib: Library) -> None:
    seed_for_proposals(lib)
    lib.dream.run()
    old = lib.dream.merges()[0]["id"]
    lib.skills.update(2, description="sync the postgres tables every night quickly")
    lib.dream.run()
    statuses = {p["id"]: p["status"] for p in lib.dream.proposals(kind="merge", status=None)}
    assert statuses[old] == "superseded" and sorted(statuses.values()) == ["pending", "superseded"]
    lib.skills.update(2, description="completely different text now")
    lib.dream.run()
    assert lib.dream.merges() == []  # no longer qualifies -> superseded, nothing pending


def test_prune_is_reversible_and_not_repeated_after_restore(lib: Library) -> None:
    seed_for_proposals(lib)
    lib.dream.run(apply=True)
    assert lib.skills.get(3).deprecated
    lib.skills.restore(3)
    lib.dream.run(apply=True)
    assert not lib.skills.get(3).deprecated


def test_dry_run_records_proposals_but_changes_nothing_else(lib: Library) -> None:
    seed_for_proposals(lib)
    out = lib.dream.run()
    assert out.summary["phases"]["emergent"]["candidates"] == 1
    assert lib.conn.execute("SELECT count(*) FROM edges").fetchone()[0] == 0
    assert not lib.skills.get(3).deprecated and lib.skills.count() == 4
    assert {p["kind"] for p in lib.dream.proposals()} == {"promote", "prune", "merge"}


def test_second_run_reports_the_lease_holder(lib: Library, clock: ManualClock) -> None:
    assert try_acquire(lib.conn, "otherhost:1:abcd", clock.now(), 60) is None
    out = lib.dream.run()
    assert out.status == "busy" and out.holder == "otherhost:1:abcd"
    clock.advance(61)  # the crashed holder's lease expires
    assert lib.dream.run().status == "completed"


def test_phase_registry_order_and_digest_sections(lib: Library) -> None:
    seen = []

    def catch_up(ctx, _):
        seen.append((ctx.results.keys() - {"x"}, ctx.mode))
        return PhaseResult({"caught_up": 3}, digest="## Failures\n\n- 3 fingerprints caught up")

    register_phase("test-catch-up", catch_up, order=450)
    try:
        out = lib.dream.run()
    finally:
        unregister_phase("test-catch-up")
    # Built-in phases plus those features register (leases 390, failures 400, vectors 460, policies 600,
    # graph 700, strong-vectors 900, ann 950).
    assert list(out.summary["timings_ms"]) == ["replay", "decay", "emergent", "leases", "failures", "test-catch-up",
                                               "vectors", "proposals", "policies", "graph", "strong-vectors",
                                               "ann", "digest"]
    assert seen[0][0] == {"replay", "decay", "emergent", "leases", "failures"}
    assert "3 fingerprints caught up" in out.digest and out.summary["phases"]["test-catch-up"] == {"caught_up": 3}


def test_failing_phase_marks_run_failed_and_frees_lease(lib: Library) -> None:
    def boom(ctx, _):
        raise RuntimeError("disk on fire")

    register_phase("boom", boom, order=150)
    try:
        with pytest.raises(RuntimeError):
            lib.dream.run(apply=True)
    finally:
        unregister_phase("boom")
    run = lib.dream.runs()[0]
    assert run["status"] == "failed" and "disk on fire" in run["error"]
    assert lib.dream.lease() is None
    assert lib.dream.run().status == "completed"


def test_digest_is_deterministic(tmp_path: Path) -> None:
    digests = []
    for name in ("a.db", "b.db"):
        lib = Library(tmp_path / name, clock=ManualClock(T0), settings=Settings())
        seed_for_proposals(lib)
        digests.append(lib.dream.run().digest)
        lib.close()
    assert digests[0] == digests[1]
    assert "## Proposals" in digests[0] and "kaos dream merges --accept N" in digests[0]


def complete_agents(lib: Library, n: int, start: int = 0) -> None:
    with transaction(lib.conn):
        for i in range(start, start + n):
            lib.conn.execute("INSERT INTO agents (id, state, started_at, ended_at, processed_at) "
                             "VALUES (?, 'completed', ?, ?, ?)", (f"a{i}", lib.now(), lib.now() + i, lib.now()))


def episode(agent: str) -> hooks.EpisodeEnd:
    return hooks.EpisodeEnd(agent, "completed", T0, T0, (), ())


def test_auto_trigger_counts_from_a_marker(db_path: Path, clock: ManualClock) -> None:
    lib = Library(db_path, clock=clock, settings=Settings(dream_threshold=3, dream_auto_budget_ms=1e9))
    try:
        complete_agents(lib, 2)
        hooks.run_after_episode(lib, episode("a1"))
        assert lib.dream.runs() == []
        complete_agents(lib, 1, start=2)
        hooks.run_after_episode(lib, episode("a2"))
        runs = lib.dream.runs()
        assert len(runs) == 1 and runs[0]["trigger"] == "auto" and runs[0]["mode"] == "dry-run"
        hooks.run_after_episode(lib, episode("a2"))  # same count again: not due any more
        complete_agents(lib, 2, start=3)
        hooks.run_after_episode(lib, episode("a4"))
        assert len(lib.dream.runs()) == 1
        complete_agents(lib, 1, start=5)
        assert maybe_dream(lib) == "inline" and len(lib.dream.runs()) == 2
        complete_agents(lib, 3, start=6)
        try_acquire(lib.conn, "otherhost:1:x", clock.now(), 60)
        assert maybe_dream(lib) == "busy"
    finally:
        lib.close()


def test_auto_trigger_off_and_hand_off(db_path: Path, clock: ManualClock) -> None:
    off = Library(db_path, clock=clock, settings=Settings(dream_threshold=1, dream_auto=False))
    complete_agents(off, 1)
    assert maybe_dream(off) == "off"
    off.close()
    lib = Library(db_path, settings=Settings(dream_threshold=1, dream_auto_budget_ms=0.0))
    try:
        assert maybe_dream(lib) == "handed-off"
        assert maybe_dream(lib) in ("not-due", "busy")  # the batch was claimed: no second hand-off
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not [r for r in lib.dream.runs() if r["status"] == "completed"]:
            time.sleep(0.2)
        runs = lib.dream.runs()
        assert runs and runs[0]["trigger"] == "auto" and runs[0]["status"] == "completed"
    finally:
        lib.close()


def test_settings_from_env() -> None:
    s = Settings.from_env({"KAOS_DREAM_THRESHOLD": "7", "KAOS_DREAM_MERGE_JACCARD": "0.8"})
    assert s.dream_threshold == 7 and s.dream_merge_jaccard == 0.8
    from kaos_dream import InvalidInputError

    with pytest.raises(InvalidInputError):
        Settings.from_env({"KAOS_DREAM_THRESHOLD": "0"})


@pytest.mark.parametrize("since", [math.nan, math.inf, -math.inf, 1e400, 9_999_999_999_999.0, -99_999_999_999_999.0,
                                   "2026-01-01", True])
def test_run_rejects_a_since_it_cannot_show_before_writing(lib: Library, since) -> None:
    with pytest.raises(InvalidInputError, match="since"):
        lib.dream.run(since=since)
    assert lib.dream.runs() == [] and lib.dream.lease() is None


@pytest.mark.parametrize("wait", [-1.0, math.nan, math.inf])
def test_run_and_consolidate_reject_a_bad_wait(lib: Library, wait: float) -> None:
    with pytest.raises(InvalidInputError, match="wait"):
        lib.dream.run(wait=wait)
    with pytest.raises(InvalidInputError, match="wait"):
        lib.dream.consolidate(wait=wait)
    assert lib.dream.runs() == []


def test_apply_if_due_fires_while_automatic_dry_runs_run_and_its_window_covers_them(
        db_path: Path, clock: ManualClock) -> None:
    """Automatic dry runs move only the "any pass" mark: a cron `--apply --if-due` still fires every
    threshold episodes, and its digest's window starts at the last *applied* pass."""
    lib = Library(db_path, clock=clock, settings=Settings(dream_threshold=3, dream_auto_budget_ms=1e9))
    try:
        for batch in range(2):
            complete_agents(lib, 3, start=3 * batch)
            clock.advance(10)
            hooks.run_after_episode(lib, episode(f"a{3 * batch + 2}"))
        assert [r["mode"] for r in lib.dream.runs()] == ["dry-run", "dry-run"]
        assert lib.dream.run(if_due=True).status == "not-due"  # a dry run counts from the last pass of any kind
        clock.advance(10)
        applied = lib.dream.run(apply=True, if_due=True)
        assert applied.status == "completed" and applied.mode == "apply"
        assert lib.dream.due()["completed_since_last_apply"] == 0
        assert applied.summary["phases"]["replay"]["episodes"] == {"completed": 6}
        assert "episodes ended in the window: 6 completed" in (applied.digest or "")
        assert lib.dream.run(apply=True, if_due=True).status == "not-due"
        complete_agents(lib, 3, start=6)
        clock.advance(10)
        hooks.run_after_episode(lib, episode("a8"))
        assert lib.dream.runs()[0]["mode"] == "dry-run"
        again = lib.dream.run(apply=True, if_due=True)
        assert again.status == "completed"
        assert again.summary["phases"]["replay"]["episodes"] == {"completed": 3}
    finally:
        lib.close()


def test_a_file_without_the_applied_mark_counts_from_its_last_applied_pass(
        db_path: Path, clock: ManualClock) -> None:
    """Files written before the applied mark existed: `--apply --if-due` counts from the last applied
    pass found in the run history, not from the beginning."""
    lib = Library(db_path, clock=clock, settings=Settings(dream_threshold=3, dream_auto=False))
    try:
        complete_agents(lib, 3)
        clock.advance(10)
        assert lib.dream.run(apply=True).status == "completed"
        with transaction(lib.conn):
            lib.conn.execute("DELETE FROM dream_state WHERE key = 'applied_marker'")
        assert lib.dream.due()["completed_since_last_apply"] == 0
        complete_agents(lib, 2, start=3)
        assert lib.dream.due()["completed_since_last_apply"] == 2
        assert lib.dream.run(apply=True, if_due=True).status == "not-due"
    finally:
        lib.close()


def test_a_pass_never_proposes_both_merging_and_pruning_one_skill(lib: Library) -> None:
    """A failing near-duplicate qualifies for both; the pass proposes the prune only, and a merge left
    pending by an earlier pass is superseded once its skill qualifies for pruning."""
    lib.skills.add("sync-postgres-nightly", "sync the postgres tables every night")
    lib.skills.add("sync-postgres-nightly-copy", "sync the postgres tables every night")
    lib.dream.run()
    assert [(p["kind"], p["targets"]) for p in lib.dream.proposals()] == [("merge", "skill:1,skill:2")]
    add_uses(lib, 2, [0, 0, 0, 0, 0, 0, 0, 1, 0])  # 1/9 over three agents: the copy qualifies for pruning now
    out = lib.dream.run()
    pro = out.summary["phases"]["proposals"]
    assert pro["prune"]["qualifying"] == 1 and pro["merge"]["qualifying"] == 0
    assert lib.dream.merges() == []
    pending = [(p["kind"], p["targets"]) for p in lib.dream.proposals()]
    assert pending == [("prune", "skill:2")]
