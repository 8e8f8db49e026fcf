"""Edges, evidence, online learning, reversible sparsification and search expansion on real files."""

from __future__ import annotations

import json

import numpy as np
import pytest

from kaos_dream import Library, Settings
from kaos_dream.errors import InvalidInputError, NotFoundError
from kaos_dream.graph import (
    EvalQuery,
    Node,
    edge_list,
    expand,
    greedy_prune,
    neglect,
    observe,
    prune_order,
    pruned,
    purge,
    record_query,
    resolve_node,
    restore,
    search_expanded,
    sparsify,
)

from .failure_nodes import add_fingerprints

DAY = 86_400.0


@pytest.fixture
def world(lib: Library):
    deploy = Node("skill", lib.skills.add("deploy-friday", "deploy to production on friday").id)
    rollback = Node("skill", lib.skills.add("rollback", "roll back a bad release").id)
    canary = Node("skill", lib.skills.add("canary", "release to five percent first").id)
    note = Node("memory", lib.memories.add("friday deploys broke prod twice", key="friday").id)
    add_fingerprints(lib.conn, 1, 2, 3, 5, 7, 8, 9, 12, 77)
    return lib, deploy, rollback, canary, note


def test_link_show_unlink(world) -> None:
    lib, deploy, rollback, canary, note = world
    outage = Node("failure", 7)
    e = lib.graph.link(deploy, "caused", outage)
    assert (e.strength, e.provenance, e.relation) == (0.8, "declared", "caused")
    again = lib.graph.link(deploy, "caused", outage, strength=0.3)
    assert again.id == e.id and again.strength == 0.3
    co = lib.graph.link(rollback, "co_occurs_with", deploy, strength=0.4)
    assert (co.src, co.dst) == (deploy, rollback)  # canonical order for the undirected relation
    assert lib.graph.get(rollback, "co_occurs_with", deploy).id == co.id
    assert [x.id for x in lib.graph.neighbours(deploy)] == [co.id, e.id]
    assert [x.id for x in lib.graph.neighbours(outage, direction="in")] == [e.id]
    lib.graph.unlink(deploy, "caused", outage)
    assert lib.graph.get(deploy, "caused", outage) is None
    with pytest.raises(NotFoundError):
        lib.graph.unlink(deploy, "caused", outage)


def test_link_rejects_bad_input(world) -> None:
    lib, deploy, *_ = world
    with pytest.raises(InvalidInputError):
        lib.graph.link(deploy, "causes", Node("failure", 1))
    with pytest.raises(InvalidInputError):
        lib.graph.link(deploy, "caused", deploy)
    with pytest.raises(NotFoundError):
        lib.graph.link(deploy, "caused", Node("skill", 999))
    with pytest.raises(InvalidInputError):
        lib.graph.link(deploy, "caused", Node("failure", 1), strength=1.5)


def test_node_syntax(world) -> None:
    lib, deploy, *_ = world
    assert resolve_node(lib.conn, "skill:deploy-friday") == deploy
    assert resolve_node(lib.conn, f"skill:{deploy.id}") == deploy
    assert resolve_node(lib.conn, "memory:friday").kind == "memory"
    assert resolve_node(lib.conn, "failure:12") == Node("failure", 12)
    assert resolve_node(lib.conn, Node("failure", 12)) == Node("failure", 12)
    for bad in ("deploy", "robot:1", "skill:", "failure:abc", "failure:0"):
        with pytest.raises(InvalidInputError):
            resolve_node(lib.conn, bad)
    with pytest.raises(NotFoundError):
        resolve_node(lib.conn, "skill:nope")


def test_evidence_helpers(world) -> None:
    lib, deploy, rollback, canary, note = world
    f = Node("failure", 3)
    e = lib.graph.add_evidence(deploy, "caused", f)
    assert (e.strength, e.provenance, e.verifications, e.verified_correct) == (pytest.approx(0.55), "observed", 1, 1)
    e = lib.graph.add_evidence(deploy, "caused", f)
    assert e.strength == pytest.approx(0.55 + 0.1 * (1 - 0.55))
    e = lib.graph.add_evidence(deploy, "caused", f, correct=False)
    assert e.strength == pytest.approx(0.595 + 0.1 * (0 - 0.595))
    assert (e.verifications, e.verified_correct) == (3, 2)
    p = lib.graph.add_evidence(rollback, "prevented", f)
    assert lib.graph.preventers(f) == [p]
    lib.graph.add_evidence(note, "enabled", rollback)
    declared = lib.graph.link(canary, "prevented", f, strength=0.9)
    assert lib.graph.add_evidence(canary, "prevented", f).provenance == "declared"
    assert [x.src for x in lib.graph.preventers(f)] == [canary, rollback]
    assert declared.id == lib.graph.preventers(f)[0].id
    with pytest.raises(InvalidInputError):
        lib.graph.add_evidence(note, "caused", f)
    lib.skills.deprecate("canary")
    assert [x.src for x in lib.graph.preventers(f)] == [rollback]


def test_observe_caused_and_prevented(world, clock) -> None:
    lib, deploy, rollback, canary, note = world
    f1, f2 = Node("failure", 1), Node("failure", 2)
    c1 = lib.graph.link(deploy, "caused", f1, strength=0.5)
    c2 = lib.graph.link(deploy, "caused", f2, strength=0.5)
    p1 = lib.graph.link(rollback, "prevented", f1, strength=0.5)
    p2 = lib.graph.link(rollback, "prevented", f2, strength=0.5)
    en = lib.graph.link(note, "enabled", deploy, strength=0.5)

    out = observe(lib, deploy, happened=[f1])
    assert {u.edge_id: u.after for u in out.updates} == {c1.id: pytest.approx(0.55), c2.id: pytest.approx(0.45)}
    out = observe(lib, deploy, happened=[f1], closed_world=False)
    assert [u.edge_id for u in out.updates] == [c1.id] and out.skipped == (c2.id,)

    # prevented learns only for observable outcomes
    out = observe(lib, rollback, absent=[f1])
    assert [(u.edge_id, u.correct) for u in out.updates] == [(p1.id, True)]
    assert out.skipped == (p2.id,)
    assert lib.graph.edge(p1.id).strength == pytest.approx(0.55)
    assert lib.graph.edge(p2.id).strength == pytest.approx(0.5)
    out = observe(lib, rollback, happened=[f2])
    assert [(u.edge_id, u.correct, round(u.after, 6)) for u in out.updates] == [(p2.id, False, 0.45)]
    # mentioned, not done: nothing moves; enabled never moves
    assert observe(lib, rollback, happened=[f1, f2], taken=False).updates == ()
    assert lib.graph.edge(en.id).strength == 0.5
    with pytest.raises(InvalidInputError):
        observe(lib, deploy, happened=[f1], absent=[f1])


def test_repeated_evidence_converges_to_prediction_accuracy(world) -> None:
    lib, deploy, *_ = world
    f = Node("failure", 9)
    e = lib.graph.link(deploy, "caused", f, strength=0.5)
    for i in range(200):
        observe(lib, deploy, happened=[f] if i % 4 else [])  # right 3 times out of 4
    assert lib.graph.edge(e.id).strength == pytest.approx(0.75, abs=0.08)


def test_neglect_decays_unverified_causal_edges_only(world, clock) -> None:
    lib, deploy, rollback, canary, note = world
    stale = lib.graph.link(deploy, "caused", Node("failure", 1), strength=0.5)
    fact = lib.graph.link(deploy, "fact", rollback, strength=0.5)
    clock.advance(10 * DAY)
    fresh = lib.graph.link(rollback, "prevented", Node("failure", 1), strength=0.5)
    changed = neglect(lib, since=lib.now() - DAY, rate=0.1)
    assert changed == 1
    assert lib.graph.edge(stale.id).strength == pytest.approx(0.45)
    assert lib.graph.edge(fact.id).strength == 0.5 and lib.graph.edge(fresh.id).strength == 0.5
    for _ in range(100):
        neglect(lib, since=lib.now() + 1, rate=0.5)
    assert lib.graph.edge(stale.id).strength == pytest.approx(0.1)


def test_greedy_prune_keeps_the_edge_a_query_needs() -> None:
    keys = ["q", "answer", "x", "y", "z"]
    edges = edge_list(keys, [("q", "caused", "answer", 0.3), ("q", "co_occurs_with", "x", 0.6),
                             ("x", "co_occurs_with", "y", 0.6), ("y", "co_occurs_with", "z", 0.6)])
    queries = [EvalQuery({"q": 1.0}, "answer")]
    order = prune_order(edges, "weight")
    assert int(edges.edge_id[order[0]]) == 0  # weakest first
    res = greedy_prune(edges, order, queries, epsilon=0.0, max_fraction=1.0, batch_fraction=0.5)
    assert len(res.pruned) == 0 and res.quality_after == res.quality_before == 1.0  # stops before the loss
    assert greedy_prune(edges, order, queries, epsilon=1.0, max_fraction=1.0).quality_after == 0.0
    cov = prune_order(edges, "coverage", queries=queries)
    assert int(edges.edge_id[cov[-1]]) == 0  # the only edge on the answer's path goes last
    res = greedy_prune(edges, cov, queries, epsilon=0.0, max_fraction=1.0, batch_fraction=0.5)
    assert {int(edges.edge_id[i]) for i in res.pruned} == {1, 2, 3} and res.quality_after == 1.0
    a = prune_order(edges, "random", seed=3)
    assert np.array_equal(a, prune_order(edges, "random", seed=3))


def test_sparsify_apply_restore_purge(lib: Library, clock) -> None:
    nodes = [Node("skill", lib.skills.add(f"s{i}", f"skill number {i} alpha").id) for i in range(6)]
    strong = lib.graph.link(nodes[0], "caused", nodes[1], strength=0.9)
    weak = [lib.graph.link(nodes[i], "co_occurs_with", nodes[i + 1], strength=0.1) for i in range(2, 5)]
    clock.advance(40 * DAY)
    plan = sparsify(lib, strategy="weight", max_fraction=1.0)
    assert plan.applied is False and set(plan.pruned_edge_ids) == {e.id for e in weak}
    assert lib.graph.count() == 4  # the dry run changed nothing
    with pytest.raises(InvalidInputError):
        sparsify(lib, strategy="coverage")  # needs recorded queries
    record_query(lib, "alpha", {nodes[0]: 1.0}, target=nodes[1])
    done = sparsify(lib, strategy="weight", max_fraction=1.0, apply=True)
    assert done.run == "prune-1" and done.quality_before == done.quality_after == 1.0
    assert strong.id not in done.pruned_edge_ids and lib.graph.count() == 4 - len(done.pruned_edge_ids)
    rows = pruned(lib)
    assert {r["edge_id"] for r in rows} == set(done.pruned_edge_ids)
    snap = json.loads(lib.conn.execute("SELECT snapshot FROM edge_prunes LIMIT 1").fetchone()[0])
    assert snap["relation"] == "co_occurs_with"
    assert lib.graph.get(nodes[2], "co_occurs_with", nodes[3]) is None  # invisible while pruned
    assert restore(lib, run="prune-1") == sorted(done.pruned_edge_ids)
    assert lib.graph.count() == 4 and pruned(lib) == []
    with pytest.raises(NotFoundError):
        restore(lib, run="prune-1")
    again = sparsify(lib, strategy="random", max_fraction=1.0, epsilon=0.0, apply=True)
    assert strong.id not in again.pruned_edge_ids  # pruning it would lose the recorded target
    clock.advance(31 * DAY)
    assert purge(lib, older_than_s=30 * DAY) == len(again.pruned_edge_ids)
    assert lib.graph.count(include_pruned=True) == 4 - len(again.pruned_edge_ids)
    with pytest.raises(NotFoundError):
        restore(lib, edge_ids=list(again.pruned_edge_ids))


def test_expand_never_evicts_lexical_hits(lib: Library) -> None:
    a = lib.skills.add("backup-postgres", "backup the postgres database nightly")
    b = lib.skills.add("verify-restore", "check that a restore works")
    c = lib.skills.add("rotate-keys", "rotate credentials")
    d = lib.skills.add("old-restore", "deprecated way to check restores")
    m = lib.memories.add("postgres backups were corrupt in march", key="march")
    lib.graph.link(Node("skill", a.id), "enabled", Node("skill", b.id))
    lib.graph.link(Node("skill", a.id), "co_occurs_with", Node("skill", d.id), strength=1.0)
    lib.graph.link(Node("skill", b.id), "fact", Node("skill", c.id))
    lib.skills.deprecate(d.id)
    hits = lib.search("postgres backup")
    out = expand(lib, hits, extra=1)
    assert [(o.kind, o.id) for o in out[: len(hits)]] == [(h.kind, h.id) for h in hits]
    assert all(o.source == "lexical" for o in out[: len(hits)])
    added = out[len(hits):]
    assert len(added) == 1 and added[0].id == b.id and added[0].source == "graph"
    assert added[0].path[0]["relation"] == "enabled"
    assert all(o.id != d.id or o.kind != "skill" for o in out)
    assert [(o.kind, o.id) for o in search_expanded(lib, "postgres backup", extra=0)] == \
        [(h.kind, h.id) for h in hits]
    assert m.id in [o.id for o in out if o.kind == "memory"]


def test_settings_read_graph_tunables_from_env() -> None:
    s = Settings.from_env({"KAOS_GRAPH_BETA": "2.5", "KAOS_GRAPH_LEARNING_RATE": "0.3"})
    assert (s.graph_beta, s.graph_learning_rate) == (2.5, 0.3)
    for bad in ({"KAOS_GRAPH_LEARNING_RATE": "0"}, {"KAOS_GRAPH_BETA": "-1"}, {"KAOS_GRAPH_PRUNE_EPSILON": "2"}):
        with pytest.raises(InvalidInputError):
            Settings.from_env(bad)


def test_relinking_a_pruned_edge_closes_its_prune_record(lib: Library, clock) -> None:
    a = Node("skill", lib.skills.add("a").id)
    b = Node("skill", lib.skills.add("b").id)
    lib.graph.link(a, "co_occurs_with", b, strength=0.1)
    clock.advance(40 * DAY)
    sparsify(lib, strategy="weight", max_fraction=1.0, apply=True)
    assert len(pruned(lib)) == 1
    lib.graph.link(a, "co_occurs_with", b, strength=0.7)  # the user declares it again
    assert pruned(lib) == []
    with pytest.raises(NotFoundError):
        restore(lib, run="prune-1")


def test_episode_evidence_rules(world) -> None:
    from kaos_dream.graph import record_episode_evidence
    from kaos_dream.hooks import EpisodeEnd, GateDecision

    lib, deploy, rollback, canary, note = world
    f = Node("failure", 5)
    failed = EpisodeEnd("a1", "failed", 0.0, 1.0, skills=(deploy.id, rollback.id), memories=(), failure_ids=(5,))
    counts = record_episode_evidence(lib, failed, GateDecision(False, "episode failed"))
    assert counts == {"predictions_checked": 0, "caused_created": 2, "enabled_evidence": 0}
    assert lib.graph.get(deploy, "caused", f).strength == pytest.approx(0.55)
    # a second failure learns through observe (no double count), a success lowers the prediction
    record_episode_evidence(lib, failed, GateDecision(False, "episode failed"))
    assert lib.graph.get(deploy, "caused", f).strength == pytest.approx(0.55 + 0.1 * 0.45)
    ok = EpisodeEnd("a2", "completed", 0.0, 1.0, skills=(deploy.id,), memories=(),
                    citations=(("memory", "friday"), ("memory", "missing"), ("skill", "x")))
    counts = record_episode_evidence(lib, ok, GateDecision(True, "passed"))
    assert counts["enabled_evidence"] == 1 and counts["predictions_checked"] == 1
    assert lib.graph.get(note, "enabled", deploy).provenance == "observed"
    assert lib.graph.get(deploy, "caused", f).strength == pytest.approx(0.595 * 0.9)
    rejected = EpisodeEnd("a3", "completed", 0.0, 1.0, skills=(rollback.id,), memories=(),
                          citations=(("memory", "friday"),))
    assert record_episode_evidence(lib, rejected, GateDecision(False, "gate"))["enabled_evidence"] == 0


def test_episode_evidence_hook_is_registered_and_runs(world) -> None:
    """The Library registers the hook with the episode store; every episode end then records causal evidence."""
    from kaos_dream import hooks

    lib, deploy, *_ = world
    assert lib.episodes is not None  # building the episode store installs the learning hooks
    ep = hooks.EpisodeEnd("a9", "failed", 0.0, 1.0, skills=(deploy.id,), memories=(), failure_ids=(8,))
    with lib.transaction():
        hooks.run_episode_end(lib, ep, hooks.GateDecision(False, "episode failed"))
    assert lib.graph.get(deploy, "caused", Node("failure", 8)) is not None


def test_graph_phase_dry_run_writes_nothing_and_apply_does(lib: Library, clock) -> None:
    from kaos_dream.graph import graph_phase

    from .conftest import library_digest

    a = Node("skill", lib.skills.add("a").id)
    b = Node("skill", lib.skills.add("b").id)
    add_fingerprints(lib.conn, 1)
    causal = lib.graph.link(a, "caused", Node("failure", 1), strength=0.5)
    weak = lib.graph.link(a, "co_occurs_with", b, strength=0.1)
    clock.advance(40 * DAY)
    before = library_digest(lib)
    dry = graph_phase(lib, since=lib.now() - DAY)
    assert dry["sparsify"]["pruned_edge_ids"] == [weak.id] and library_digest(lib) == before
    done = graph_phase(lib, since=lib.now() - DAY, apply=True)
    assert done["neglected"] == 1 and done["sparsify"]["run"] == "prune-1"
    assert lib.graph.edge(causal.id).strength == pytest.approx(0.5 * 0.98)
    assert lib.graph.edge(weak.id).pruned_at is not None


def _evidence_worker(path: str, skill_id: int, n: int) -> None:
    with Library(path, settings=Settings()) as lib:
        for _ in range(n):
            lib.graph.add_evidence(Node("skill", skill_id), "caused", Node("failure", 77))


def test_evidence_from_concurrent_processes_is_never_lost(library_target: str) -> None:
    import multiprocessing as mp

    with Library(library_target, settings=Settings()) as lib:
        sid = lib.skills.add("shared").id
        add_fingerprints(lib.conn, 77)
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_evidence_worker, args=(library_target, sid, 10)) for _ in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    with Library(library_target, settings=Settings()) as lib:
        edge = lib.graph.get(Node("skill", sid), "caused", Node("failure", 77))
        assert (edge.verifications, edge.verified_correct) == (30, 30)
        w = 0.5
        for _ in range(30):
            w += 0.1 * (1 - w)
        assert edge.strength == pytest.approx(w)


def test_graph_arrays_cache_follows_own_and_other_writes(lib: Library, library_target: str) -> None:
    a = Node("skill", lib.skills.add("a").id)
    b = Node("skill", lib.skills.add("b").id)
    add_fingerprints(lib.conn, 1, 2)
    lib.graph.link(a, "caused", Node("failure", 1))
    first = lib.graph.arrays()
    assert lib.graph.arrays() is first  # nothing changed: cached
    lib.graph.link(a, "enabled", b)
    second = lib.graph.arrays()
    assert second is not first and len(second.edges) == 2
    with Library(library_target, settings=Settings()) as other:
        other.graph.link(b, "caused", Node("failure", 2))
    third = lib.graph.arrays()
    assert third is not second and len(third.edges) == 3


def test_unknown_failure_nodes_are_refused_like_unknown_skills(world) -> None:
    """A failure node is a fingerprint: an edge to a missing one would dangle, so link, evidence,
    resolving (what reads use) and observe all refuse it, and nothing is written."""
    lib, deploy, rollback, *_ = world
    missing = Node("failure", 999)
    edges_before = lib.conn.execute("SELECT count(*) FROM edges").fetchone()[0]
    with pytest.raises(NotFoundError, match="no failure"):
        lib.graph.link(deploy, "caused", missing)
    with pytest.raises(NotFoundError, match="no failure"):
        lib.graph.add_evidence(rollback, "prevented", missing)
    with pytest.raises(NotFoundError, match="no failure"):
        resolve_node(lib.conn, "failure:999")
    with pytest.raises(NotFoundError, match="no failure"):
        resolve_node(lib.conn, "failure:99999999999999999999")
    with pytest.raises(NotFoundError, match="no failure"):
        resolve_node(lib.conn, missing)
    assert lib.conn.execute("SELECT count(*) FROM edges").fetchone()[0] == edges_before
