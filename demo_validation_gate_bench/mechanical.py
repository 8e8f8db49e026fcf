"""Mechanical check (the Kairos seed's Table 1 setting): 3 queries repeated for 5 cycles.

Everything goes through the real library (episodes, outcomes, searches, the validation gate, dream
--apply). Beside it runs an independent reference model of the formulas — written here from
the rules in docs/, sharing no code with kaos_dream — and after every episode and every dream the live
``co_occurs_with`` edges of the library are compared with the model: same edges, strengths within
1e-9.

Per cycle: three validated episodes (q1 uses a1 a2 a3, q2 uses b1 b2 b3, q3 uses c1 c2 c3) and two
that the gate rejects (q2 again citing an item that does not exist, q3 again ending failed), then
``lib.dream.run(apply=True)``. Before cycle 1 the "source" edges a1-a2, b1-b2, c1-c2 exist at 0.9
(like the seed's source triples) and two edges u1-u2 (0.6) and u3-u4 (0.12) that no episode uses.
"""

from __future__ import annotations

import math
import tempfile
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any

from kaos_dream import Library, ManualClock, Settings
from kaos_dream.graph.nodes import Node

T0 = 1_767_225_600.0
ETA, DELTA, TAU, FLOOR, THETA, STEP, CAP = 0.1, 0.05, 5.0, 0.1, 3.0, 0.1, 0.5
CYCLES = 5
TOLERANCE = 1e-9

SKILLS = {
    "a1": "audit contract reentrancy guard", "a2": "audit contract access control", "a3": "audit contract report",
    "b1": "risk score liquidity pool", "b2": "risk score oracle price", "b3": "risk score summary",
    "c1": "macro rates inflation trend", "c2": "macro rates yield curve", "c3": "macro rates outlook",
    "u1": "legacy token bridge notes", "u2": "legacy token bridge checklist",
    "u3": "retired staking guide", "u4": "retired staking faq",
}
QUERIES = {"q1": ("audit contract", ("a1", "a2", "a3")), "q2": ("risk score", ("b1", "b2", "b3")),
           "q3": ("macro rates", ("c1", "c2", "c3"))}
SOURCE_EDGES = {("a1", "a2"): 0.9, ("b1", "b2"): 0.9, ("c1", "c2"): 0.9}
UNUSED_EDGES = {("u1", "u2"): 0.6, ("u3", "u4"): 0.12}


@dataclass
class Model:
    """The formulas, independently: LTP per gated episode, LTD + cycle + emergent per dream."""

    edges: dict[tuple[str, str], list[float]] = field(default_factory=dict)  # pair -> [strength, last_cycle]
    counts: dict[tuple[str, str], float] = field(default_factory=dict)
    cycle: int = 0
    formed: dict[tuple[str, str], dict[str, float]] = field(default_factory=dict)

    def episode(self, skills: tuple[str, ...], gated: bool) -> None:
        if not gated:
            return
        for pair in combinations(sorted(skills), 2):
            self.counts[pair] = self.counts.get(pair, 0.0) + 1.0
            if pair in self.edges:
                s = self.edges[pair][0]
                self.edges[pair] = [s + ETA * (1.0 - s), self.cycle]

    def dream(self) -> None:
        for pair, (s, last) in self.edges.items():
            c = max(self.cycle - last, 0)
            if s > FLOOR:
                self.edges[pair][0] = max(FLOOR, s - DELTA * (1.0 - math.exp(-c / TAU)))
        self.cycle += 1
        for pair, n in sorted(self.counts.items()):
            if n >= THETA and pair not in self.edges:
                self.edges[pair] = [min(CAP, STEP * n), self.cycle]
                self.formed[pair] = {"cycle": self.cycle, "count": n, "strength": min(CAP, STEP * n)}


def _library_edges(lib: Library, names: dict[int, str]) -> dict[tuple[str, str], float]:
    out = {}
    for src_id, dst_id, strength in lib.conn.execute(
        "SELECT src_id, dst_id, strength FROM edges WHERE relation = 'co_occurs_with' AND pruned_at IS NULL "
        "AND src_kind = 'skill' AND dst_kind = 'skill'"
    ):
        out[tuple(sorted((names[src_id], names[dst_id])))] = float(strength)
    return out


def _counts(lib: Library, names: dict[int, str]) -> dict[tuple[str, str], float]:
    return {tuple(sorted((names[a], names[b]))): float(n) for a, b, n in lib.conn.execute(
        "SELECT a_id, b_id, count FROM coactivations WHERE a_kind = 'skill' AND b_kind = 'skill'")}


def _compare(lib: Library, model: Model, names: dict[int, str], where: str, log: list[dict[str, Any]]) -> float:
    got = _library_edges(lib, names)
    if set(got) != set(model.edges):
        raise AssertionError(f"{where}: library edges {sorted(got)} != model edges {sorted(model.edges)}")
    counts = _counts(lib, names)
    if counts != model.counts:
        raise AssertionError(f"{where}: co-activation counts differ: {counts} vs {model.counts}")
    err = max((abs(got[p] - model.edges[p][0]) for p in got), default=0.0)
    log.append({"at": where, "max_abs_error": err})
    return err


def run_mechanical() -> dict[str, Any]:
    clock = ManualClock(T0)
    # No automatic dry-run passes in the middle of the script; the strong tier pinned off (see utility.py).
    settings = Settings(dream_threshold=10**9, strong_embedding_model="none")
    with tempfile.TemporaryDirectory() as tmp, Library(Path(tmp) / "mech.db", clock=clock, settings=settings) as lib:
        ids = {name: lib.skills.add(name, text, f"{text} for {{target}}").id for name, text in SKILLS.items()}
        names = {v: k for k, v in ids.items()}
        model = Model()
        ungated = Model()  # the same stream if every episode taught the graph (the counterfactual)
        for (a, b), s in {**SOURCE_EDGES, **UNUSED_EDGES}.items():
            edge = lib.graph.link(Node("skill", ids[a]), "co_occurs_with", Node("skill", ids[b]), strength=s,
                                  provenance="observed")
            model.edges[(a, b)] = [s, edge.last_activated_cycle]
            ungated.edges[(a, b)] = [s, edge.last_activated_cycle]
        checks: list[dict[str, Any]] = []
        _compare(lib, model, names, "start", checks)
        rows: list[dict[str, Any]] = []
        gate_log: list[dict[str, Any]] = []
        count_at_dream: dict[str, list[float]] = {}
        n = 0

        def episode(query_key: str, variant: str, cycle: int) -> None:
            nonlocal n
            n += 1
            query, skills = QUERIES[query_key]
            agent = lib.episodes.start(f"c{cycle}-{query_key}-{variant}").id
            lib.search(query, kind="skill", limit=3, record_hits=True, agent=agent)
            for name in skills:
                lib.record_outcome(name, variant != "failed", agent=agent)
            conclusion = f"{query}: {' + '.join(skills)} (cycle {cycle})"
            if variant == "failed":
                result = lib.episodes.fail(agent, conclusion, [("skill", s) for s in skills])
            elif variant == "hallucinated":
                result = lib.episodes.complete(agent, conclusion, [("skill", skills[0]), ("skill", "ghost-audit")])
            else:
                result = lib.episodes.complete(agent, conclusion, [("skill", s) for s in skills])
            model.episode(skills, result.learned)
            ungated.episode(skills, True)
            expected_gate = variant == "honest"
            if result.learned != expected_gate:
                raise AssertionError(f"episode {agent}: gate {result.learned}, expected {expected_gate}")
            gate_log.append({"agent": agent, "variant": variant, "learned": result.learned, "gate": result.gate_reason})
            clock.advance(60.0)
            _compare(lib, model, names, f"after {agent}", checks)

        for cycle in range(1, CYCLES + 1):
            for key in ("q1", "q2", "q3"):
                episode(key, "honest", cycle)
            episode("q2", "hallucinated", cycle)
            episode("q3", "failed", cycle)
            for pair in (("a1", "a3"), ("b1", "b3"), ("c1", "c3"), ("a1", "a2")):
                count_at_dream.setdefault("-".join(pair), []).append(model.counts.get(pair, 0.0))
            outcome = lib.dream.run(apply=True)
            if outcome.status != "completed":
                raise AssertionError(f"dream run {outcome.status}: {outcome.message}")
            model.dream()
            ungated.dream()
            if lib.dream.cycle() != model.cycle:
                raise AssertionError(f"dream cycle {lib.dream.cycle()} != model {model.cycle}")
            _compare(lib, model, names, f"after dream {cycle}", checks)
            got = _library_edges(lib, names)
            emergent = {p: got[p] for p in model.formed}
            rows.append({
                "cycle": cycle,
                "frequent_edges_mean": sum(got[p] for p in SOURCE_EDGES) / len(SOURCE_EDGES),
                "frequent_edges_expected": sum(model.edges[p][0] for p in SOURCE_EDGES) / len(SOURCE_EDGES),
                "unused_edges": {"-".join(p): got[p] for p in UNUSED_EDGES},
                "unused_edges_expected": {"-".join(p): model.edges[p][0] for p in UNUSED_EDGES},
                "emergent_edges": {"-".join(p): v for p, v in sorted(emergent.items())},
                "dream_cycle": lib.dream.cycle(),
            })
        max_err = max(c["max_abs_error"] for c in checks)
        formed = {"-".join(p): v for p, v in sorted(model.formed.items())}
        linked_counts = {"-".join(p): model.counts.get(p, 0.0) for p in SOURCE_EDGES}
    return {
        "cycles": CYCLES,
        "episodes": n,
        "checks": len(checks),
        "max_abs_error": max_err,
        "tolerance": TOLERANCE,
        "per_cycle": rows,
        "emergent_formed": formed,
        "emergent_all_at_count_3": all(v["count"] == THETA and v["cycle"] == 3 for v in formed.values()),
        "counts_at_each_dream": count_at_dream,
        "linked_pairs_counts_no_emergent": linked_counts,
        "without_gate_would_form": {"-".join(p): v for p, v in sorted(ungated.formed.items())},
        "rejected_episodes": [g for g in gate_log if not g["learned"]][:2],
        "gate_decisions": {"learned": sum(g["learned"] for g in gate_log),
                           "rejected": sum(not g["learned"] for g in gate_log)},
    }
