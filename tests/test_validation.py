"""Validators, trust and the validation gate (LLM validators are tested against a fake server)."""

from __future__ import annotations

import pytest

from kaos_dream import Library, ManualClock, Settings, hooks
from kaos_dream.hooks import EpisodeEnd
from kaos_dream.validation import QUALITY, REPORT, Verdict, register_validator, unregister_validator
from kaos_dream.validation.gate import stored_report, validate_episode


def episode(lib: Library, state: str = "completed", *, citations=(), conclusion=None, skills=(), memories=(),
            agent: str = "agent-1") -> EpisodeEnd:
    now = lib.now()
    lib.conn.execute("INSERT OR IGNORE INTO agents (id, state, started_at) VALUES (?, 'running', ?)", (agent, now))
    return EpisodeEnd(agent, state, now, now, tuple(skills), tuple(memories), conclusion, tuple(citations))


def verdict(report, name: str) -> Verdict:
    return next(v for v in report.verdicts if v.validator == name)


@pytest.fixture
def world(mem_lib: Library) -> Library:
    mem_lib.skills.add("csv-to-parquet", "Convert CSV files to Parquet with a schema")
    mem_lib.skills.add("old-skill", "Obsolete converter")
    mem_lib.skills.deprecate("old-skill")
    mem_lib.memories.add("Parquet schemas avoid type drift", key="parquet-schema")
    return mem_lib


def test_outcome_validator(world: Library) -> None:
    assert verdict(validate_episode(world, episode(world)), "outcome").passed is True
    for state in ("failed", "killed"):
        report = validate_episode(world, episode(world, state))
        v = verdict(report, "outcome")
        assert (v.score, v.passed) == (0.0, False)
        assert report.passed is False and "outcome" in report.reason


def test_grounding_scores_live_share(world: Library) -> None:
    ep = episode(world, citations=[("skill", "csv-to-parquet"), ("memory", "parquet-schema"),
                                   ("skill", "old-skill"), ("skill", "invented-skill")])
    v = verdict(validate_episode(world, ep), "grounding")
    assert v.enabled and v.score == pytest.approx(0.5) and v.passed is False
    assert "missing skill:invented-skill" in v.reason and "deprecated skill:old-skill" in v.reason


def test_grounding_threshold_edges(world: Library) -> None:
    for i in range(7):
        world.skills.add(f"s{i}")
    cites = [("skill", f"s{i}") for i in range(7)] + [("skill", f"ghost{i}") for i in range(3)]
    v = verdict(validate_episode(world, episode(world, citations=cites)), "grounding")
    assert v.score == pytest.approx(0.7) and v.passed is True  # exactly at the threshold passes
    v = verdict(validate_episode(world, episode(world, citations=cites + [("memory", "ghost")])), "grounding")
    assert v.score < 0.7 and v.passed is False


def test_grounding_without_citations_says_so(world: Library) -> None:
    report = validate_episode(world, episode(world))
    v = verdict(report, "grounding")
    assert (v.enabled, v.score, v.reason) == (False, None, "no citations to check")
    assert report.passed and report.trust == 1.0  # trust over enabled validators only (outcome)


def test_grounding_threshold_is_a_setting(clock: ManualClock) -> None:
    with Library(":memory:", clock=clock, settings=Settings(grounding_threshold=0.4)) as lib:
        lib.skills.add("real")
        ep = episode(lib, citations=[("skill", "real"), ("skill", "fake")])
        assert verdict(validate_episode(lib, ep), "grounding").passed is True


def test_novelty_is_reported_but_never_in_trust(world: Library) -> None:
    cites = [("skill", "csv-to-parquet")]
    plain = validate_episode(world, episode(world, citations=cites, conclusion="convert csv files to parquet"))
    novel = validate_episode(world, episode(world, citations=cites,
                                            conclusion="quantum annealing beats gradient descent here"))
    assert plain.novelty == 0.0 and novel.novelty == 1.0
    assert verdict(novel, "novelty").kind == REPORT and verdict(novel, "novelty").passed is None
    assert plain.trust == novel.trust == 1.0
    assert plain.passed and novel.passed


def test_no_conclusion_means_no_novelty(world: Library) -> None:
    report = validate_episode(world, episode(world))
    assert report.novelty is None and verdict(report, "novelty").enabled is False


def test_gate_stores_results_and_blocks_learning(world: Library) -> None:
    ep = episode(world, "completed", citations=[("skill", "ghost")])
    with world.transaction():
        decision = hooks.decide_gate(world, ep)
    assert decision.passed is False and "grounding" in decision.reason
    stored = stored_report(world.conn, "agent-1")
    assert stored is not None and stored["passed"] is False
    assert {v["validator"] for v in stored["validators"]} >= {"outcome", "grounding", "novelty"}


def test_custom_validator_joins_trust_and_gate(world: Library) -> None:
    def strict(ctx, threshold):
        score = 0.2
        return Verdict("strict", QUALITY, True, score, score >= (threshold or 0), threshold, "always unhappy")

    register_validator("strict", strict, threshold=0.5)
    try:
        report = validate_episode(world, episode(world))
        assert report.passed is False and report.trust == pytest.approx((1.0 + 0.2) / 2)
    finally:
        unregister_validator("strict")


def test_broken_custom_validator_is_reported_not_raised(world: Library) -> None:
    def broken(ctx, threshold):
        raise RuntimeError("boom")

    register_validator("broken", broken)
    try:
        report = validate_episode(world, episode(world))
        v = verdict(report, "broken")
        assert v.enabled is False and "boom" in v.reason and report.passed
    finally:
        unregister_validator("broken")


@pytest.mark.parametrize("answer", [
    Verdict("odd", QUALITY, True, float("nan"), True, 0.5, "nan score"),
    Verdict("odd", QUALITY, True, 1.5, True, 0.5, "score above 1"),
    Verdict("odd", QUALITY, True, "high", True, 0.5, "text score"),  # type: ignore[arg-type]
    {"score": 1.0},
    None,
])
def test_malformed_custom_verdict_is_off_and_the_episode_still_ends(lib: Library, answer) -> None:
    lib.skills.add("s1")
    register_validator("odd", lambda ctx, threshold: answer)
    try:
        lib.episodes.start("a")
        lib.record_outcome("s1", True, agent="a")
        result = lib.episodes.complete("a")
        report = stored_report(lib.conn, "a")
        assert report is not None and result.learned is True
        odd = next(v for v in report["validators"] if v["validator"] == "odd")
        assert odd["enabled"] is False and odd["reason"].startswith("off: validator returned")
    finally:
        unregister_validator("odd")


def test_numpy_values_in_a_custom_verdict_are_stored_as_plain_values(lib: Library) -> None:
    """A validator computing with numpy returns numpy bools and floats; they are stored as JSON
    booleans and numbers (the JSON encoder alone rejects numpy bools)."""
    import numpy as np

    lib.skills.add("s1")
    score = np.float64(0.8)
    register_validator("numeric", lambda ctx, th: Verdict("numeric", QUALITY, np.bool_(True), score,
                                                          score >= np.float64(0.5), np.float64(0.5), "fine"))
    try:
        lib.episodes.start("a")
        lib.record_outcome("s1", True, agent="a")
        assert lib.episodes.complete("a").learned is True
        report = stored_report(lib.conn, "a")
        assert report is not None
        numeric = next(v for v in report["validators"] if v["validator"] == "numeric")
        assert numeric == {"validator": "numeric", "kind": "quality", "enabled": True, "score": 0.8, "passed": True,
                           "threshold": 0.5, "reason": "fine"}
    finally:
        unregister_validator("numeric")


@pytest.mark.parametrize("value", ["nan", "inf", "-0.1", "1.5"])
def test_gate_thresholds_must_be_shares(value: str) -> None:
    from kaos_dream.errors import InvalidInputError

    for name in ("KAOS_GROUNDING_THRESHOLD", "KAOS_LOGICAL_THRESHOLD", "KAOS_ALIGNMENT_THRESHOLD"):
        with pytest.raises(InvalidInputError, match=name):
            Settings.from_env({name: value})


def test_rejected_episode_reinforces_nothing_and_is_kept_for_audit(lib: Library) -> None:
    for name in ("a", "b"):
        lib.skills.add(name, f"skill {name}")
    with lib.transaction():
        lib.conn.execute(
            "INSERT INTO edges (src_kind, src_id, dst_kind, dst_id, relation, strength, provenance, created_at, "
            "updated_at) VALUES ('skill', 1, 'skill', 2, 'co_occurs_with', 0.5, 'observed', 0, 0)"
        )
    lib.episodes.start("liar")
    lib.record_outcome("a", True, agent="liar")
    lib.record_outcome("b", True, agent="liar")
    result = lib.episodes.complete("liar", conclusion="done", citations=[("skill", "ghost"), ("memory", "nope")])
    assert result.learned is False and "grounding" in (result.gate_reason or "")
    assert lib.conn.execute("SELECT strength FROM edges").fetchone()[0] == 0.5
    assert lib.conn.execute("SELECT count(*) FROM coactivations").fetchone()[0] == 0
    assert lib.episodes.get("liar").citations == (("skill", "ghost"), ("memory", "nope"))
    lib.episodes.start("honest")
    lib.record_outcome("a", True, agent="honest")
    lib.record_outcome("b", True, agent="honest")
    assert lib.episodes.complete("honest", citations=[("skill", "a")]).learned is True
    assert lib.conn.execute("SELECT strength FROM edges").fetchone()[0] == 0.55


def test_cli_shows_validations(tmp_path) -> None:
    import json

    from .conftest import file_digest
    from .conftest import run_kaos_in_process as run_kaos  # parsing and rendering: no new process needed

    db = tmp_path / "v.db"
    run_kaos("skill", "add", "a", db=db)
    run_kaos("agent", "start", "--id", "r1", db=db)
    run_kaos("agent", "complete", "r1", "--conclusion", "did a", "--cite", "skill:a", "--cite", "skill:ghost", db=db)
    before = file_digest(db)
    shown = json.loads(run_kaos("agent", "show", "r1", "--json", db=db).stdout)
    assert shown["validation"]["passed"] is False
    names = {v["validator"]: v for v in shown["validation"]["validators"]}
    assert names["grounding"]["score"] == 0.5 and names["logical"]["enabled"] is False
    listed = json.loads(run_kaos("dream", "validations", "--failed", "--json", db=db).stdout)
    assert [r["agent_id"] for r in listed] == ["r1"]
    assert "rejected" in run_kaos("agent", "show", "r1", db=db).stdout
    assert file_digest(db) == before


def test_storing_a_report_again_replaces_the_old_one(world: Library) -> None:
    from kaos_dream.validation.gate import store_report

    ep = episode(world, citations=(("skill", "csv-to-parquet"),))
    store_report(world, ep.agent_id, validate_episode(world, ep))
    store_report(world, ep.agent_id, validate_episode(world, episode(world, "failed")))
    rows = world.conn.execute("SELECT passed FROM episode_gates WHERE agent_id = ?", (ep.agent_id,)).fetchall()
    assert [r[0] for r in rows] == [0]
    report = stored_report(world.conn, ep.agent_id)
    assert report is not None and report["passed"] is False and "outcome" in report["reason"]


def play_episode(lib: Library, agent: str, skills: tuple[str, ...]):
    lib.episodes.start(agent)
    for name in skills:
        lib.record_outcome(name, True, agent=agent)
    return lib.episodes.complete(agent, "done", [("skill", s) for s in skills])


def test_co_use_rejects_a_skill_never_used_with_the_others_and_needs_history(mem_lib: Library) -> None:
    for name in ("extract", "transform", "load", "send-newsletter"):
        mem_lib.skills.add(name, f"{name} step")
    trio = ("extract", "load", "transform")
    for i in range(5):
        assert play_episode(mem_lib, f"warm-{i}", trio).learned
    v = next(x for x in stored_report(mem_lib.conn, "warm-0")["validators"] if x["validator"] == "co_use")
    assert v["enabled"] is False and "fewer than 5 co-uses" in v["reason"]  # no history: off, not a rejection
    odd = play_episode(mem_lib, "odd", ("extract", "send-newsletter", "transform"))
    assert not odd.learned
    v = next(x for x in stored_report(mem_lib.conn, "odd")["validators"] if x["validator"] == "co_use")
    assert v["passed"] is False and v["score"] == 0.0 and "skill send-newsletter is rarely co-used" in v["reason"]
    assert play_episode(mem_lib, "honest", trio).learned
    two = play_episode(mem_lib, "two", ("extract", "send-newsletter"))
    v = next(x for x in stored_report(mem_lib.conn, "two")["validators"] if x["validator"] == "co_use")
    assert two.learned and v["enabled"] is False and v["reason"] == "fewer than three skills used"


def test_co_use_threshold_is_a_setting(clock: ManualClock) -> None:
    assert Settings.from_env({"KAOS_CO_USE_THRESHOLD": "0"}).co_use_threshold == 0.0
    with Library(":memory:", clock=clock, settings=Settings(co_use_threshold=0.0)) as lib:
        for name in ("a", "b", "c", "d"):
            lib.skills.add(name, f"{name} step")
        for i in range(5):
            play_episode(lib, f"w{i}", ("a", "b", "c"))
        assert play_episode(lib, "odd", ("a", "b", "d")).learned  # threshold 0: never rejects
