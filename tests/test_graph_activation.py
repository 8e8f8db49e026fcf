"""Spreading activation on hand-built graphs, checked against activations computed by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from kaos_dream.errors import InvalidInputError
from kaos_dream.graph import GraphArrays, edge_list, gate, spread


def build(keys, edges):
    return GraphArrays.build(edge_list(keys, edges))


def g(x: float) -> float:
    """The normalised gate 2·(1 − σ(x)), written out."""
    return 2.0 * (1.0 - 1.0 / (1.0 + math.exp(-x)))


def test_gate_is_one_without_inhibition_and_falls_with_it() -> None:
    assert gate(np.array([0.0]))[0] == pytest.approx(1.0)
    assert gate(np.array([2.1]))[0] == pytest.approx(g(2.1))
    assert gate(np.array([1e6]))[0] == pytest.approx(0.0)


@pytest.mark.parametrize("mode", ["additive", "gated", "adaptive"])
def test_one_hop_forward_and_backward(mode: str) -> None:
    graph = build(["A", "B"], [("A", "caused", "B", 0.8)])
    act = spread(graph, {"A": 1.0}, mode=mode, hops=1)
    assert act.value("B") == pytest.approx(1.0 * 0.8 * 0.7)  # coeff 1.0 x w x decay
    assert act.value("A") == pytest.approx(1.0)
    back = spread(graph, {"B": 1.0}, mode=mode, hops=1)
    assert back.value("A") == pytest.approx(1.0 * 0.8 * 0.5 * 0.7)  # backward: x reverse factor 0.5


def test_two_hop_chain_with_echo_and_path() -> None:
    graph = build(["A", "B", "C"], [("A", "caused", "B", 1.0), ("B", "caused", "C", 1.0)])
    act = spread(graph, {"A": 1.0}, mode="additive", hops=2)
    assert act.value("B") == pytest.approx(0.7)
    assert act.value("C") == pytest.approx(0.7 * 0.7)
    assert act.value("A") == pytest.approx(1.0 + 0.7 * 0.5 * 0.7)  # the echo back along B -> A
    steps = act.path("C")
    assert [(s.frm, s.relation, s.to, s.forward) for s in steps] == [("A", "caused", "B", True),
                                                                      ("B", "caused", "C", True)]
    assert act.path("A") == []
    assert [k for k, _ in act.ranked()] == ["A", "B", "C"]


def test_relation_coefficients() -> None:
    keys = ["S", "e", "f", "m"]
    graph = build(keys, [("S", "enabled", "e", 1.0), ("S", "fact", "f", 1.0), ("S", "meta", "m", 1.0)])
    act = spread(graph, {"S": 1.0}, mode="additive", hops=1)
    assert act.value("e") == pytest.approx(0.5 * 0.7)
    assert act.value("f") == pytest.approx(0.8 * 0.7)
    assert act.value("m") == pytest.approx(0.6 * 0.7)


def test_threshold_stops_weak_activation() -> None:
    graph = build(["A", "B", "C"], [("A", "caused", "B", 0.2), ("B", "caused", "C", 0.2)])
    act = spread(graph, {"A": 1.0}, mode="additive", hops=5)
    assert act.value("B") == pytest.approx(0.14, abs=1e-9)
    assert act.value("C") == pytest.approx(0.14 * 0.2 * 0.7)  # arrives, but below the threshold
    assert "C" not in [k for k, _ in act.ranked()]


INHIBITED = (["A", "P", "B"], [("A", "caused", "B", 1.0), ("P", "prevented", "B", 1.0)])


def test_additive_inhibition_subtracts_point_three() -> None:
    act = spread(build(*INHIBITED), {"A": 1.0, "P": 1.0}, mode="additive", hops=1)
    assert act.excitation[2] == pytest.approx(0.7)
    assert act.inhibition[2] == pytest.approx(0.3 * 0.7)
    assert act.value("B") == pytest.approx(0.7 - 0.21)


def test_gated_inhibition_multiplies() -> None:
    act = spread(build(*INHIBITED), {"A": 1.0, "P": 1.0}, mode="gated", beta=10.0, hops=1)
    assert act.value("B") == pytest.approx(0.7 * g(10.0 * 0.21))


def test_adaptive_beta_uses_in_degree() -> None:
    # in-degrees: A 0, P 0, B 2 -> mean 2/3; beta(B) = 10 * log(3) / log(5/3)
    beta_b = 10.0 * math.log(3.0) / math.log(1.0 + 2.0 / 3.0)
    act = spread(build(*INHIBITED), {"A": 1.0, "P": 1.0}, mode="adaptive", beta=10.0, hops=1)
    assert act.value("B") == pytest.approx(0.7 * g(beta_b * 0.21))
    assert act.value("B") < 0.02


def test_gating_also_blocks_what_the_inhibited_node_passes_on() -> None:
    keys = ["A", "P", "B", "C"]
    edges = [("A", "caused", "B", 1.0), ("P", "prevented", "B", 1.0), ("B", "caused", "C", 1.0)]
    gated = spread(build(keys, edges), {"A": 1.0, "P": 1.0}, mode="gated", beta=10.0, hops=2)
    additive = spread(build(keys, edges), {"A": 1.0, "P": 1.0}, mode="additive", hops=2)
    assert gated.value("C") == pytest.approx(0.7 * g(2.1) * 0.7)
    assert additive.value("C") == pytest.approx((0.7 - 0.21) * 0.7)


def test_a_confident_preventer_silences_a_hub_only_when_gated() -> None:
    """The seed's additive failure: 20 causes outvote one prevented edge unless it gates."""
    keys = ["hub", "P"] + [f"c{i}" for i in range(20)]
    edges = [(f"c{i}", "caused", "hub", 1.0) for i in range(20)] + [("P", "prevented", "hub", 0.9)]
    seeds = {k: 1.0 for k in keys if k != "hub"}
    graph = build(keys, edges)
    additive = spread(graph, seeds, mode="additive", hops=1).value("hub")
    adaptive = spread(graph, seeds, mode="adaptive", beta=10.0, hops=1).value("hub")
    assert additive == pytest.approx(20 * 0.7 - 0.3 * 0.9 * 0.7)
    assert adaptive < 0.05 * additive


def test_undirected_co_occurrence_spreads_both_ways_at_full_strength() -> None:
    graph = build(["A", "B"], [("A", "co_occurs_with", "B", 0.5)])
    assert spread(graph, {"B": 1.0}, hops=1).value("A") == pytest.approx(0.5 * 0.7)
    assert spread(graph, {"A": 1.0}, hops=1).value("B") == pytest.approx(0.5 * 0.7)


def test_seed_outside_the_graph_and_bad_parameters() -> None:
    graph = build(["A", "B"], [("A", "caused", "B", 1.0)])
    act = spread(graph, {"Z": 0.4}, hops=2)
    assert act.ranked() == [("Z", 0.4)]
    with pytest.raises(InvalidInputError):
        spread(graph, {"A": 1.0}, mode="nope")
    with pytest.raises(InvalidInputError):
        spread(graph, {"A": 1.0}, hops=6)


def test_ranking_is_deterministic_on_ties() -> None:
    graph = build(["S", "b", "a"], [("S", "caused", "b", 1.0), ("S", "caused", "a", 1.0)])
    act = spread(graph, {"S": 1.0}, hops=1)
    assert [k for k, _ in act.ranked()] == ["S", "a", "b"]


def test_large_random_graph_has_no_python_loop_per_edge() -> None:
    """10k edges in well under a second (a per-edge Python loop per hop would take far longer)."""
    rng = np.random.default_rng(0)
    n, m = 2000, 10_000
    keys = list(range(n))
    src = rng.integers(0, n, m)
    dst = (src + rng.integers(1, n, m)) % n
    edges = [(int(a), "caused", int(b), 0.9) for a, b in zip(src, dst, strict=True)]
    graph = build(keys, edges)
    act = spread(graph, {0: 1.0, 1: 1.0}, mode="adaptive")
    ranked = act.ranked()
    assert len(ranked) > 10
    for key, _ in ranked[:10]:
        path = act.path(key)
        assert len(path) <= 5
        if path:
            assert path[0].frm in (0, 1) and path[-1].to == key


@pytest.mark.parametrize("mode", ["gated", "adaptive", "additive"])
@pytest.mark.parametrize("bad", [{"beta": math.inf}, {"beta": math.nan}, {"beta": -1.0}, {"threshold": math.inf},
                                 {"threshold": math.nan}])
def test_non_finite_beta_or_threshold_is_refused(mode: str, bad: dict) -> None:
    """A gate of inf·0 is nan: every node behind a preventer would silently fall out of the ranking."""
    graph = build(["A", "B", "C"], [("A", "caused", "B", 1.0), ("C", "prevented", "B", 0.5)])
    with pytest.raises(InvalidInputError):
        spread(graph, {"A": 1.0, "C": 1.0}, mode=mode, **bad)
