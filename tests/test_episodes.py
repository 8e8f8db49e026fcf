"""Episodes, the telemetry fast path, weighted ranking and the episode-end batch on real files."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import pytest

from kaos_dream import Library, ManualClock, Settings, hooks
from kaos_dream.errors import ConflictError, InvalidInputError, NotFoundError

from .conftest import T0, file_digest

DAY = 86_400.0


def counts(lib: Library, skill: str) -> tuple[int, int]:
    row = lib.conn.execute(
        "SELECT uses, successes FROM skill_stats WHERE skill_id = ?", (lib.skills.resolve_id(skill),)
    ).fetchone()
    return (row[0], row[1]) if row else (0, 0)


def test_start_generates_unique_ids_and_rejects_duplicates(lib: Library) -> None:
    a, b = lib.episodes.start(), lib.episodes.start(name="second")
    assert a.id != b.id and len(a.id) == 32 and a.state == "running" and b.name == "second"
    lib.episodes.start("run-1")
    with pytest.raises(ConflictError):
        lib.episodes.start("run-1")
    with pytest.raises(InvalidInputError):
        lib.episodes.start("   ")
    assert [e.id for e in lib.episodes.list(state="running")][:1]


def test_record_outcome_counts_and_auto_registers_agent(lib: Library) -> None:
    lib.skills.add("alpha", "first skill")
    lib.record_outcome("alpha", True, agent="never-started")
    lib.record_outcome("alpha", False, agent="never-started", task="do a thing")
    assert counts(lib, "alpha") == (2, 1)
    assert lib.episodes.get("never-started").state == "running"
    with pytest.raises(NotFoundError, match="no skill 'missing'"):
        lib.record_outcome("missing", True)
    with pytest.raises(InvalidInputError):
        lib.record_outcome("alpha", 1)  # type: ignore[arg-type]


def test_task_context_defaults_to_the_search_that_returned_the_skill(lib: Library) -> None:
    lib.skills.add("csv-tool", "convert csv files")
    lib.search("convert csv files please", record_hits=True, agent="a1")
    outcome = lib.record_outcome("csv-tool", True, agent="a1")
    assert outcome.task == "convert csv files please"
    assert outcome.task_hash is not None
    assert lib.record_outcome("csv-tool", True, agent="a2").task is None


def test_search_with_hits_writes_one_row_per_result_with_rank(lib: Library) -> None:
    lib.skills.add("one", "report builder")
    lib.skills.add("two", "report exporter")
    lib.memories.add("the report is due friday", key="due")
    hits = lib.search("report", record_hits=True, agent="r")
    rows = lib.conn.execute("SELECT skill_id, rank, agent_id, query FROM skill_hits ORDER BY rank").fetchall()
    mem_rows = lib.conn.execute("SELECT memory_id, rank FROM memory_hits").fetchall()
    ranks = {(h.kind, h.id): i for i, h in enumerate(hits, 1)}
    assert len(rows) + len(mem_rows) == len(hits) == 3
    for skill_id, rank, agent, query in rows:
        assert ranks[("skill", skill_id)] == rank and agent == "r" and query == "report"
    assert ranks[("memory", mem_rows[0][0])] == mem_rows[0][1]


def test_search_without_record_hits_leaves_the_file_unchanged(db_path: Path, clock: ManualClock) -> None:
    with Library(db_path, clock=clock, settings=Settings()) as lib:
        lib.skills.add("alpha", "load data")
        lib.record_outcome("alpha", True, agent="x")
    before = file_digest(db_path)
    with Library(db_path, clock=clock, settings=Settings(), readonly=True) as ro:
        for rank in ("weighted", "wilson", "bm25"):
            assert ro.search("load data", rank=rank)
        with pytest.raises(InvalidInputError, match="read-only"):
            ro.search("load", record_hits=True)
    assert file_digest(db_path) == before


def twins(lib: Library) -> tuple[int, int]:
    a = lib.skills.add("proven-failure", "classify text topic").id
    b = lib.skills.add("untried-alternative", "classify text topic").id
    return a, b


def test_proven_failure_ranks_below_untried_alternative(lib: Library) -> None:
    failing, untried = twins(lib)
    assert lib.search("classify text topic", kind="skill")[0].id == failing  # same text: id breaks the tie
    for _ in range(10):
        lib.record_outcome(failing, False, task="classify text topic")
    weighted = [h.id for h in lib.search("classify text topic", kind="skill")]
    seed = [h.id for h in lib.search("classify text topic", kind="skill", rank="wilson")]
    assert weighted == [untried, failing]
    assert seed == [failing, untried]  # the reference formula cannot tell 0/10 from untried


def test_task_context_keeps_a_skill_good_for_one_task_and_bad_for_another(lib: Library) -> None:
    shared = lib.skills.add("shared", "resize image crop photo").id
    other = lib.skills.add("other", "resize image crop photo").id
    for _ in range(5):
        lib.record_outcome(shared, True, task="resize image")
        lib.record_outcome(shared, False, task="crop photo")
    assert lib.search("resize image", kind="skill")[0].id == shared
    assert lib.search("crop photo", kind="skill")[0].id == other
    # a task with no history falls back to the global record (5/10): above the untried alternative
    assert lib.search("resize photo", kind="skill")[0].id == shared


def test_ranking_is_deterministic_and_only_the_seed_formula_weighs_time(db_path: Path) -> None:
    clock = ManualClock(T0)
    with Library(db_path, clock=clock, settings=Settings()) as lib:
        old = lib.skills.add("old", "deploy service").id
        new = lib.skills.add("new", "deploy service").id
        lib.record_outcome(old, True)
        clock.advance(60 * DAY)
        lib.record_outcome(new, True)
        seed = [(h.id, h.score) for h in lib.search("deploy service", rank="wilson")]
        assert seed == [(h.id, h.score) for h in lib.search("deploy service", rank="wilson")]
        assert seed[0][0] == new  # the seed formula: same record, the recent one wins
        assert seed[1][1] == pytest.approx(seed[0][1] * 2 ** (-60 / 14), rel=1e-9)
        # The default ages evidence by outcomes, not by time: the same record scores the same, ties by id.
        default = [(h.id, h.score) for h in lib.search("deploy service")]
        assert default == [(old, default[0][1]), (new, default[0][1])]


def test_dream_auto_off_gives_lexical_order_and_learns_nothing(db_path: Path, clock: ManualClock) -> None:
    off = Settings.from_env({"KAOS_DREAM_AUTO": "Off"})
    with Library(db_path, clock=clock, settings=off) as lib:
        failing, untried = twins(lib)
        for _ in range(5):
            lib.record_outcome(failing, False, agent="x", task="classify text topic")
        lib.record_outcome(untried, True, agent="x")
        assert counts(lib, "proven-failure") == (5, 0)  # telemetry still written
        assert [h.id for h in lib.search("classify text topic", kind="skill")] == [
            h.id for h in lib.search("classify text topic", kind="skill", rank="bm25")
        ]
        result = lib.episodes.complete("x")
        assert result.changed and not result.learned
        assert lib.conn.execute("SELECT count(*) FROM coactivations").fetchone()[0] == 0


def plant_edge(lib: Library, a: tuple[str, int], b: tuple[str, int], strength: float = 0.3) -> None:
    lib.conn.execute(
        "INSERT INTO edges (src_kind, src_id, dst_kind, dst_id, relation, strength, provenance, created_at, "
        "updated_at) VALUES (?, ?, ?, ?, 'co_occurs_with', ?, 'emergent', 0, 0)",
        (*a, *b, strength),
    )


def session(lib: Library, agent: str) -> tuple[int, int, int]:
    s1 = lib.skills.resolve_id("s1") if lib.skills.count() else lib.skills.add("s1", "parse logs").id
    s2 = lib.skills.resolve_id("s2") if lib.skills.count() > 1 else lib.skills.add("s2", "parse metrics").id
    m = lib.memories.add("parse notes", key=f"note-{agent}").id
    lib.episodes.start(agent)
    lib.record_outcome(s1, True, agent=agent)
    lib.record_outcome(s2, True, agent=agent)
    lib.search("notes", kind="memory", record_hits=True, agent=agent)
    return s1, s2, m


def test_completed_episode_counts_pairs_and_strengthens_edges_once(lib: Library) -> None:
    s1, s2, m = session(lib, "good")
    plant_edge(lib, ("skill", s1), ("skill", s2), 0.3)
    plant_edge(lib, ("memory", m), ("skill", s1), 0.3)
    result = lib.episodes.complete("good", conclusion="done", citations=[("skill", "s1")])
    assert result.learned and result.pairs == 3 and result.strengthened == 2
    co = {tuple(r[:4]): r[4] for r in lib.conn.execute("SELECT a_kind, a_id, b_kind, b_id, count FROM coactivations")}
    assert co == {("skill", s1, "skill", s2): 1.0, ("memory", m, "skill", s1): 0.5, ("memory", m, "skill", s2): 0.5}
    strengths = {
        (r[0], r[1]): r[2] for r in lib.conn.execute("SELECT src_kind, dst_kind, strength FROM edges ORDER BY id")
    }
    assert strengths[("skill", "skill")] == pytest.approx(0.3 + 0.1 * 0.7)
    assert strengths[("memory", "skill")] == pytest.approx(0.3 + 0.05 * 0.7)  # cross-modal: half eta
    again = lib.episodes.complete("good")
    assert not again.changed
    assert lib.conn.execute("SELECT sum(count) FROM coactivations").fetchone()[0] == 2.0
    assert lib.episodes.get("good").citations == (("skill", "s1"),)


@pytest.mark.parametrize("end", ["fail", "kill"])
def test_failed_or_killed_episodes_reinforce_nothing(lib: Library, end: str) -> None:
    s1, s2, _ = session(lib, "bad")
    plant_edge(lib, ("skill", s1), ("skill", s2), 0.3)
    result = getattr(lib.episodes, end)("bad")
    assert result.changed and not result.learned and result.episode.state in ("failed", "killed")
    assert lib.conn.execute("SELECT count(*) FROM coactivations").fetchone()[0] == 0
    assert tuple(lib.conn.execute("SELECT strength, activations FROM edges").fetchone()) == (0.3, 0)
    assert not lib.episodes.complete("bad").changed  # ended is ended


def test_hooks_see_the_episode_and_gates_can_veto(lib: Library) -> None:
    seen: list[tuple[str, bool, tuple[int, ...]]] = []
    after: list[str] = []
    hooks.register_episode_end("test-seen", lambda _lib, ep, d: seen.append((ep.agent_id, d.passed, ep.skills)))
    hooks.register_after_episode("test-after", lambda _lib, ep: after.append(ep.agent_id))
    hooks.register_gate("test-veto", lambda _lib, ep: hooks.GateDecision(ep.agent_id != "vetoed", "vetoed by test"))
    try:
        s1, s2, _ = session(lib, "vetoed")
        result = lib.episodes.complete("vetoed")
        assert not result.learned and result.gate_reason == "vetoed by test"
        assert seen == [("vetoed", False, (s1, s2))] and after == ["vetoed"]
        assert lib.conn.execute("SELECT count(*) FROM coactivations").fetchone()[0] == 0
    finally:
        for name in ("test-seen", "test-after", "test-veto"):
            hooks.unregister(name)


def test_unknown_agent_cannot_be_ended(lib: Library) -> None:
    with pytest.raises(NotFoundError):
        lib.episodes.complete("ghost")


def _hammer(path: str, worker: int, n: int) -> None:
    with Library(path, settings=Settings()) as lib:
        for i in range(n):
            lib.record_outcome("shared" if i % 2 else f"own-{worker}", i % 3 == 0, agent=f"w{worker}",
                               task=f"task {i % 4}")


def test_counters_exact_after_concurrent_record_outcome_processes(library_target: str) -> None:
    workers, per_worker = 4, 500
    with Library(library_target, settings=Settings()) as lib:
        lib.skills.add("shared", "used by all")
        for w in range(workers):
            lib.skills.add(f"own-{w}", "used by one")
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_hammer, args=(library_target, w, per_worker)) for w in range(workers)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(600)  # PostgreSQL under a loaded CI box: 2,000 serialised writes can take minutes
        assert p.exitcode == 0
    with Library(library_target, settings=Settings(), readonly=True) as lib:
        expected_shared = workers * (per_worker // 2)
        shared_wins = workers * sum(1 for i in range(per_worker) if i % 2 and i % 3 == 0)
        assert counts(lib, "shared") == (expected_shared, shared_wins)
        totals = lib.conn.execute("SELECT sum(uses), sum(successes) FROM skill_stats").fetchone()
        raw = lib.conn.execute("SELECT count(*), sum(success) FROM skill_uses").fetchone()
        assert tuple(totals) == tuple(raw) and raw[0] == workers * per_worker
        per_task = lib.conn.execute("SELECT sum(uses) FROM skill_task_stats").fetchone()[0]
        assert per_task == workers * per_worker


def test_counters_follow_deletes_and_moves(lib: Library) -> None:
    a = lib.skills.add("a", "x").id
    b = lib.skills.add("b", "y").id
    for ok in (True, False, True):
        lib.record_outcome(a, ok, task="t")
    lib.conn.execute("UPDATE skill_uses SET skill_id = ? WHERE success = 0", (b,))
    assert counts(lib, "a") == (2, 2) and counts(lib, "b") == (1, 0)
    lib.conn.execute("DELETE FROM skill_uses WHERE skill_id = ? AND id = (SELECT min(id) FROM skill_uses)", (a,))
    assert counts(lib, "a") == (1, 1)
    lib.skills.delete("a")
    assert lib.conn.execute("SELECT count(*) FROM skill_stats WHERE skill_id = ?", (a,)).fetchone()[0] == 0


def test_weighted_memories_prefer_recent_edits(db_path: Path) -> None:
    clock = ManualClock(T0)
    with Library(db_path, clock=clock, settings=Settings()) as lib:
        old = lib.memories.add("postgres tls settings", key="old").id
        clock.advance(60 * DAY)
        new = lib.memories.add("postgres tls settings", key="new").id
        lib.skills.add("tls-skill", "postgres tls settings")
        weighted = lib.search("postgres tls", kind="memory")
        assert [h.id for h in weighted] == [new, old]
        assert weighted[1].score == pytest.approx(weighted[0].score * 2 ** (-60 / 14), rel=1e-9)
        assert [h.id for h in lib.search("postgres tls", kind="memory", rank="bm25")] == [old, new]
        mixed = lib.search("postgres tls")
        assert [h.kind for h in mixed].count("memory") == 2 and len(mixed) == 3
        assert [h.score for h in mixed] == sorted((h.score for h in mixed), reverse=True)


def test_weighted_pool_prefers_entries_with_every_query_word(lib: Library) -> None:
    with lib.transaction():
        for i in range(60):
            lib.skills.add(f"partial-{i:02d}", "alpha alpha alpha filler")
        for i in range(25):
            lib.skills.add(f"full-{i:02d}", "alpha beta and much more text to lower the bm25 score of it")
    # min_relevance 0: the pool's mechanics, not the relevance threshold (tests/test_search_relevance.py)
    weighted = lib.search("alpha beta", kind="skill", limit=30, min_relevance=0.0)
    assert all(h.name.startswith("full-") for h in weighted[:25])
    lexical = lib.search("alpha beta", kind="skill", limit=100, rank="bm25", min_relevance=0.0)
    assert len(lexical) == 85  # bm25 keeps the plain OR order over every match


@pytest.mark.parametrize("query", ["gamma delta epsilon", "gamma delta epsilon zeta"])
def test_relaxed_level_reports_the_query_own_bm25(db_path, clock, query: str) -> None:
    # Lexical levels only: a semantic-only candidate (issue 22) has no BM25 to compare.
    lib = Library(db_path, clock=clock, settings=Settings(semantic=False))
    with lib.transaction():
        for i in range(60):
            lib.skills.add(f"most-words-{i:02d}", f"gamma delta {'zeta' if i % 2 else 'filler'} {i}")
        lib.skills.add("all-words", "gamma delta epsilon zeta")
        for i in range(60):
            lib.memories.add(f"gamma delta zeta note {i}", key=f"note-{i:02d}")
    lexical = {(h.kind, h.id): h.bm25 for h in lib.search(query, limit=200, rank="bm25", min_relevance=0.0)}
    weighted = lib.search(query, limit=30, min_relevance=0.0)  # the levels' mechanics, not the threshold
    assert len(weighted) == 30
    assert lib.skills.count() > Settings().rank_pool  # large enough for coordination levels
    words = set(query.split())
    for hit in weighted:  # relaxed levels repeat each word; bm25 is divided back to the query's own
        expected = lexical[(hit.kind, hit.id)]  # the default no longer floors relevance, memories included
        if words <= set(hit.text.split()):
            assert hit.bm25 == pytest.approx(expected, rel=1e-9)
        else:
            # FTS5 scores only the phrases of the OR branches a row matches, so a row with some of the
            # words gets a smaller share at a relaxed level (the seed's floor used to hide this).
            assert 0 < hit.bm25 <= expected * (1 + 1e-9)
    assert any(words <= set(h.text.split()) for h in weighted)


def test_coordination_levels_repeat_every_word_equally() -> None:
    from kaos_dream.search.candidates import coordination_levels

    for words in ("w1 w2", "w1 w2 w3", "w1 w2 w3 w4", "w1 w2 w3 w4 w5"):
        for expression, repeat in coordination_levels(words):
            assert all(expression.count(f'"{w}"') == repeat for w in words.split()), (words, expression)
