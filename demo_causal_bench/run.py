"""CausalEval-style benchmark for the graph layer (judge-free).

Measures, from scratch on every run:

1. CausalEval (20 graphs x 7 classes, `../shared/bench-data/causaleval/`): each graph is loaded into
   a real library (nodes = memories holding the action text, typed edges via `lib.graph.link`);
   each question seeds activation from its text (the library's FTS5 BM25 search over the nodes);
   gold node in the top 1 / top 3, per class and overall, for BM25-only and each activation mode.
2. A dense stress set (hubs with many excitatory inputs, half of them with one confident
   `prevented` edge from an active preventer): suppression rate and open-above-blocked ordering,
   for each mode and a beta sweep {0.5, 1, 2, 5, 10}.
3. A trap world for online learning: true vs spurious `caused` / `prevented` edges, weights after
   each round, rounds until they separate (true >= 0.7, spurious <= 0.3).
4. Sparsity (100 % -> 10 % of edges) vs accuracy for the weight / coverage / random strategies on the
   CausalEval graphs plus weak distractor edges, and the epsilon-greedy stopping point per strategy.
5. Activation latency on a 100k-edge graph (median and spread over repeats).

Writes results.json and results.md beside this file and exits 1 when an acceptance rule or budget
is missed. `--quick` runs a reduced version for CI. `--seed N` (default 0, the committed results) is the
first seed of the stress, trap-world and random-pruning sweeps (N, N+1, …), the latency graph's seed and,
plus 7, the distractor edges' seed.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Hashable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kaos_dream import Library, ManualClock, Settings, benchkit  # noqa: E402
from kaos_dream.graph import (  # noqa: E402
    EvalQuery,
    GraphArrays,
    Node,
    edge_list,
    greedy_prune,
    load_edge_list,
    observe,
    prune_order,
    seeds_from_hits,
    spread,
)
from kaos_dream.graph.arrays import EdgeList  # noqa: E402
from kaos_dream.graph.relations import RELATIONS  # noqa: E402
from kaos_dream.report.curves import Panel, write_curves  # noqa: E402

HERE = Path(__file__).resolve().parent
DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "bench-data" / "causaleval"
CLASSES = {11: "C1", 12: "C2", 13: "C3", 14: "C4", 15: "C5", 16: "C6", 17: "C7"}
# CausalEval relations -> ours. similar_to is a meta association (the reference harness also writes
# it as a meta edge); "Q invalidates Z" is a declared fact linking the correction to the fix.
RELATION_MAP = {"caused": "caused", "enabled": "enabled", "prevented": "prevented", "similar_to": "meta",
                "invalidates": "fact"}
MODES = ("additive", "gated", "adaptive")
BETAS = (0.5, 1.0, 2.0, 5.0, 10.0)
T0 = 1_767_225_600.0
MAX_DROP_POINTS = 2.0
LATENCY_BUDGET_MS = 50.0
COMBINED_SEED = 7  # the distractor edges of the sparsity set: seed --seed + 7 (7 by default)


# -- 1. CausalEval -------------------------------------------------------------------------------
def gold_node(graph: dict, answer: str) -> int:
    """The node the answer names: exact action text, else the node whose text starts the answer
    (attribution chains and counterfactual choices start with the gold node)."""
    for node in graph["nodes"]:
        if node["action"] == answer:
            return node["id"]
    starts = [n for n in graph["nodes"] if answer.startswith(n["action"])]
    if not starts:
        raise ValueError(f"no gold node for answer {answer[:60]!r}")
    return max(starts, key=lambda n: len(n["action"]))["id"]


def load_causaleval(data: dict) -> list[dict]:
    """One in-memory library per graph (as in the reference: one conversation per graph).

    Each question is searched twice: at the default relevance threshold (what an agent gets; the
    judge-free ranks below use it) and with no threshold (``*_topk``: always the best k, as the
    reference harness retrieves, for the evidence-hit comparison)."""
    loaded = []
    for item in data["graphs"]:
        g = item["graph"]
        lib = Library(":memory:", clock=ManualClock(T0), settings=Settings())
        ids = {}
        for node in g["nodes"]:
            mem = lib.memories.add(node["action"], kind="event", key=f"g{g['id']}n{node['id']}")
            ids[node["id"]] = Node("memory", mem.id)
        for e in g["edges"]:
            lib.graph.link(ids[e["from"]], RELATION_MAP[e["relation"]], ids[e["to"]])
        edges = load_edge_list(lib.conn)
        questions = []
        for qa in item["qa"]:
            hits = lib.search(qa["question"], kind="memory", limit=len(g["nodes"]))
            every = lib.search(qa["question"], kind="memory", limit=len(g["nodes"]), min_relevance=0.0)
            questions.append({
                "cls": CLASSES[qa["category"]],
                "gold": ids[gold_node(g, qa["answer"])],
                "bm25": [Node(h.kind, h.id) for h in hits],
                "seeds": seeds_from_hits(hits[:5]),
                "bm25_topk": [Node(h.kind, h.id) for h in every],
                "seeds_topk": seeds_from_hits(every[:5]),
                "evidence": [ids[n] for n in qa["evidence_nodes"]],
                "text": qa["question"],
            })
        loaded.append({"id": g["id"], "lib": lib, "edges": edges, "ids": ids, "questions": questions,
                       "text": {ids[n["id"]]: n["action"] for n in g["nodes"]},
                       "role": {ids[n["id"]]: n["id"] for n in g["nodes"]}})
    return loaded


def rank_of(ranking: list[Hashable], gold: Hashable) -> int | None:
    return ranking.index(gold) + 1 if gold in ranking else None


def score_rankings(rows: list[tuple[str, int | None]]) -> dict:
    """rows = (class, rank of gold or None) -> top-1 / top-3 accuracy in % per class and overall."""
    out: dict[str, dict[str, float]] = {}
    classes = sorted({c for c, _ in rows})
    for name in classes + ["overall"]:
        sel = [r for c, r in rows if name == "overall" or c == name]
        out[name] = {
            "n": len(sel),
            "top1": round(100.0 * sum(1 for r in sel if r is not None and r <= 1) / len(sel), 2),
            "top3": round(100.0 * sum(1 for r in sel if r is not None and r <= 3) / len(sel), 2),
        }
    return out


def causaleval_ranks(graphs: list[dict], mode: str, beta: float, edges_of=None) -> list[tuple[str, int | None]]:
    rows = []
    for g in graphs:
        edges = g["edges"] if edges_of is None else edges_of(g)
        arrays = GraphArrays.build(edges)
        for q in g["questions"]:
            if mode == "bm25":
                ranking = q["bm25"]
            else:
                act = spread(arrays, q["seeds"], mode=mode, beta=beta, paths=False)
                ranking = [k for k, _ in act.ranked()]
            rows.append((q["cls"], rank_of(ranking, q["gold"])))
    return rows


def beta_holdout(graphs: list[dict]) -> dict:
    """β₀ chosen on the first half of the graphs (best overall top-1 + top-3, then C4 top-1, then the
    smaller β), reported on the second half beside additive: the sweep itself has no held-out set."""
    half = len(graphs) // 2
    tune, test = graphs[:half], graphs[half:]
    out: dict[str, dict] = {"tune_graphs": [g["id"] for g in tune], "test_graphs": [g["id"] for g in test],
                            "additive_on_test": score_rankings(causaleval_ranks(test, "additive", 0.0))}
    for mode in ("gated", "adaptive"):
        def merit(b: float, mode: str = mode) -> tuple:
            r = score_rankings(causaleval_ranks(tune, mode, b))
            return (r["overall"]["top1"] + r["overall"]["top3"], r["C4"]["top1"], -b)
        best = max(BETAS, key=merit)
        out[mode] = {"beta": best, "on_test": score_rankings(causaleval_ranks(test, mode, best))}
    return out


# -- 1b. CausalEval's own LLM-free metric: evidence hit ------------------------------------------
EVIDENCE_K = 5
# The dataset's rule (README "Metric"; its harness's key-token rule): a node's key tokens are its
# lower-cased words of four or more letters minus a short list of function words; a retrieved text
# covers the node when more than half of them (n // 2 + 1) occur in it as substrings.
KEY_TOKEN_STOP = frozenset("with without before after during under into from were was the and that this have "
                           "has had did they their there them".split())
NODE_ROLES = ("bad practice", "failure", "escalation", "fix", "fix outcome", "preventer", "twin bad practice",
              "twin failure", "twin fix", "twin outcome", "correction")
# The published figure: evidence hits of the 140-question run the summary recomputes (computed from the
# retrieval before any answer is generated, so a search-only run of that store scores the same).
PUBLISHED_EVIDENCE_RUN = "results_full140_20260818"


def key_tokens(text: str) -> list[str]:
    words = "".join(ch if ch.isalnum() else " " for ch in text).split()
    return [w.lower() for w in words if len(w) >= 4 and w.lower() not in KEY_TOKEN_STOP]


def covers(text: str, tokens: list[str]) -> bool:
    if not tokens:
        return False
    low = text.lower()
    return sum(1 for t in tokens if t in low) >= len(tokens) // 2 + 1


def retrieved(g: dict, q: dict, arrays: GraphArrays | None, mode: str, beta: float, topk: bool) -> list[Node]:
    """The ranked nodes one mode retrieves for a question (BM25 order, or activation from its seeds)."""
    if mode == "bm25":
        return q["bm25_topk" if topk else "bm25"]
    act = spread(arrays, q["seeds_topk" if topk else "seeds"], mode=mode, beta=beta, paths=False)
    return [k for k, _ in act.ranked()]


def evidence_hits(graphs: list[dict], mode: str, beta: float, *, k: int = EVIDENCE_K, topk: bool = True,
                  answer_only: bool = False) -> dict:
    """Questions whose top ``k`` retrieved nodes hold a text covering one of their evidence nodes (the
    dataset's ``evidence_nodes``; ``answer_only``: the gold-answer node alone), per class and overall,
    with the roles of the evidence nodes of every missed question."""
    by_class: dict[str, list[int]] = {}
    missed: dict[str, dict[str, int]] = {}
    for g in graphs:
        arrays = None if mode == "bm25" else GraphArrays.build(g["edges"])
        for q in g["questions"]:
            texts = [g["text"][n] for n in retrieved(g, q, arrays, mode, beta, topk)[:k] if n in g["text"]]
            wanted = [q["gold"]] if answer_only else q["evidence"]
            hit = any(covers(t, key_tokens(g["text"][n])) for t in texts for n in wanted)
            counts = by_class.setdefault(q["cls"], [0, 0])
            counts[0] += hit
            counts[1] += 1
            if not hit:
                roles = missed.setdefault(q["cls"], {})
                for n in wanted:
                    roles[NODE_ROLES[g["role"][n]]] = roles.get(NODE_ROLES[g["role"][n]], 0) + 1
    total = [sum(c[0] for c in by_class.values()), sum(c[1] for c in by_class.values())]
    return {"overall": f"{total[0]}/{total[1]}", "hits": total[0], "n": total[1],
            "by_class": {c: f"{v[0]}/{v[1]}" for c, v in sorted(by_class.items())},
            "missed_evidence_roles": {c: dict(sorted(r.items())) for c, r in sorted(missed.items())}}


def evidence_report(graphs: list[dict], beta: float, summary: dict | None) -> dict:
    """The evidence-hit metric for BM25 and each activation mode at k = 5, beside the published figure,
    with the variants that locate the difference (threshold, answer node only, k = 10)."""
    modes = ("bm25", *MODES)
    out: dict = {
        "k": EVIDENCE_K,
        "definition": "a question is a hit when one of the top-k retrieved nodes' texts covers more than half "
                      "of the key tokens (words of 4+ letters, function words dropped) of one of its evidence "
                      "nodes; nodes ranked by BM25 order or by activation from the top-5 search hits",
        "no_threshold": {m: evidence_hits(graphs, m, beta) for m in modes},
        "default_threshold": {m: evidence_hits(graphs, m, beta, topk=False) for m in modes},
        "answer_node_only": {m: evidence_hits(graphs, m, beta, answer_only=True) for m in modes},
        "k10_no_threshold": {m: evidence_hits(graphs, m, beta, k=10) for m in modes},
    }
    # How many questions quote one of their own evidence nodes: any retriever that returns the quoted
    # node scores a hit there, so those classes measure little beyond "the quoted text is found".
    quoted: dict[str, int] = {}
    for g in graphs:
        for q in g["questions"]:
            quoted[q["cls"]] = quoted.get(q["cls"], 0) + any(
                covers(q["text"], key_tokens(g["text"][n])) for n in q["evidence"])
    out["questions_quoting_an_evidence_node"] = dict(sorted(quoted.items()))
    c7 = [(g, q) for g in graphs for q in g["questions"] if q["cls"] == "C7"]
    out["c7"] = {
        "questions": len(c7),
        "no_hit_at_default_threshold": sum(1 for _, q in c7 if not q["bm25"]),
        "correction_in_bm25_top5_no_threshold": sum(1 for _, q in c7 if q["gold"] in q["bm25_topk"][:5]),
        "correction_among_activation_seeds": sum(1 for _, q in c7 if q["gold"] in q["seeds_topk"]),
        "graph_nodes": sorted({len(g["text"]) for g, _ in c7}),
    }
    run = (summary or {}).get("runs_recomputed", {}).get(PUBLISHED_EVIDENCE_RUN)
    if run and run.get("evidence_hit"):
        parts = [tuple(int(x) for x in v.split("/")) for v in run["evidence_hit"].values()]
        out["published"] = {"run": PUBLISHED_EVIDENCE_RUN, "by_class": run["evidence_hit"],
                            "overall": f"{sum(a for a, _ in parts)}/{sum(b for _, b in parts)}",
                            "hits": sum(a for a, _ in parts),
                            "retrieval": "top-10 edges (two endpoint texts each) of BM25 + semantic + hop lists "
                                         "fused by RRF over narrated dialogue chunks, plus similar_to expansion "
                                         "for C6 from seeded ground-truth meta edges"}
        gated = out["no_threshold"]["gated"]["hits"]
        out["gated_at_least_published"] = gated >= out["published"]["hits"]
    return out


# -- 2. dense stress set ---------------------------------------------------------------------------
def stress_graph(seed: int, hubs: int, lo: int, hi: int) -> tuple[EdgeList, dict, list, list]:
    """Hubs with n ~ U[lo, hi] active excitatory inputs; half also get one confident `prevented`
    edge (strength 0.9) from an active preventer; every hub leads on to a consequence."""
    rng = np.random.default_rng(seed)
    keys: list[str] = []
    edges: list[tuple[str, str, str, float]] = []
    seeds: dict[str, float] = {}
    blocked, open_ = [], []
    for h in range(hubs):
        hub = f"hub{h}"
        keys += [hub, f"then{h}"]
        edges.append((hub, "caused", f"then{h}", 0.8))
        n = int(rng.integers(lo, hi + 1))
        for i in range(n):
            cause = f"cause{h}_{i}"
            keys.append(cause)
            edges.append((cause, "caused", hub, float(rng.uniform(0.5, 1.0))))
            seeds[cause] = 1.0
        if h % 2 == 0:
            keys.append(f"guard{h}")
            edges.append((f"guard{h}", "prevented", hub, 0.9))
            seeds[f"guard{h}"] = 1.0
            blocked.append(hub)
        else:
            open_.append(hub)
    return edge_list(keys, edges), seeds, blocked, open_


def stress_scores(edges: EdgeList, seeds: dict, blocked: list, open_: list, mode: str, beta: float) -> dict:
    act = spread(GraphArrays.build(edges), seeds, mode=mode, beta=beta, paths=False)
    no_prevent = edges.subset(edges.rel != 3)  # relation code 3 = prevented
    free = spread(GraphArrays.build(no_prevent), seeds, mode=mode, beta=beta, paths=False)
    suppressed = sum(1 for h in blocked if act.value(h) <= 0.5 * free.value(h))
    pairs = sum(1 for b in blocked for o in open_ if act.value(o) > act.value(b))
    return {
        "suppression_rate": round(100.0 * suppressed / len(blocked), 2),
        "open_above_blocked": round(100.0 * pairs / (len(blocked) * len(open_)), 2),
    }


def run_stress(seeds_list: list[int], hubs: int) -> dict:
    out: dict[str, dict] = {}
    configs = [("additive", 0.0)] + [(m, b) for m in ("gated", "adaptive") for b in BETAS]
    for mode, beta in configs:
        per_seed = [stress_scores(*stress_graph(s, hubs, 3, 40), mode, beta) for s in seeds_list]
        name = mode if mode == "additive" else f"{mode}@{beta:g}"
        out[name] = {metric: summary([p[metric] for p in per_seed]) for metric in per_seed[0]}
    return out


# -- 3. trap world ---------------------------------------------------------------------------------
def trap_world(seed: int, rounds: int, pairs: int = 5) -> dict:
    """Actions and traps in a real library. True `caused`: the trap follows the action w.p. 0.9;
    spurious `caused`: w.p. 0.1. Traps spring w.p. 0.9 on their own; a true guard lowers that to
    0.05, a spurious guard does nothing. Every edge starts declared at 0.5 (no prior knowledge)."""
    rng = np.random.default_rng(seed)
    lib = Library(":memory:", clock=ManualClock(T0), settings=Settings())
    roles: dict[int, str] = {}
    plan = []
    # Graph nodes must exist: one failure fingerprint per trap (ids 100+i and 200+i, as before).
    with lib.transaction():
        lib.conn.executemany(
            "INSERT INTO failure_fingerprints (id, hash, algorithm, tool, normalized, key_text, example, first_seen, "
            "last_seen) VALUES (?, ?, 1, 'trap-world', ?, ?, ?, ?, ?)",
            [(f, f"trap-world-{f}", f"trap {f}", f"trap {f}", f"trap {f}", T0, T0)
             for i in range(pairs) for f in (100 + i, 200 + i)])
    for i in range(pairs):
        a = Node("skill", lib.skills.add(f"action{i}").id)
        g = Node("skill", lib.skills.add(f"guard{i}").id)
        fake = Node("skill", lib.skills.add(f"fake-guard{i}").id)
        trap, other = Node("failure", 100 + i), Node("failure", 200 + i)
        roles[lib.graph.link(a, "caused", trap, strength=0.5).id] = "true"
        roles[lib.graph.link(a, "caused", other, strength=0.5).id] = "spurious"
        roles[lib.graph.link(g, "prevented", trap, strength=0.5).id] = "true"
        roles[lib.graph.link(fake, "prevented", trap, strength=0.5).id] = "spurious"
        plan.append((a, g, fake, trap, other))
    history = []
    for _ in range(rounds):
        for a, g, fake, trap, other in plan:
            happened = [n for n, p in ((trap, 0.9), (other, 0.1)) if rng.random() < p]
            observe(lib, a, happened=happened)
            sprung = rng.random() < 0.05
            observe(lib, g, happened=[trap] if sprung else [], absent=[] if sprung else [trap])
            sprung = rng.random() < 0.9
            observe(lib, fake, happened=[trap] if sprung else [], absent=[] if sprung else [trap])
        weights = dict(lib.conn.execute("SELECT id, strength FROM edges").fetchall())
        history.append(weights)
    lib.close()

    def separated(w: dict) -> bool:
        return all((w[e] >= 0.7) if r == "true" else (w[e] <= 0.3) for e, r in roles.items())

    first = next((i + 1 for i, w in enumerate(history) if separated(w)), None)
    final = history[-1]
    tail = history[-10:]
    settled = {e: statistics.mean(w[e] for w in tail) for e in roles}  # what each weight converged to
    return {
        "settled_true_min": round(min(settled[e] for e, r in roles.items() if r == "true"), 4),
        "settled_spurious_max": round(max(settled[e] for e, r in roles.items() if r == "spurious"), 4),
        "rounds_to_separate": first,
        "separated_at_end": separated(final),
        "separated_share_last10": round(100.0 * sum(separated(w) for w in tail) / len(tail), 2),
        "final_true_min": round(min(final[e] for e, r in roles.items() if r == "true"), 4),
        "final_spurious_max": round(max(final[e] for e, r in roles.items() if r == "spurious"), 4),
        "curve_true_mean": [round(statistics.mean(w[e] for e, r in roles.items() if r == "true"), 4)
                            for w in history],
        "curve_spurious_mean": [round(statistics.mean(w[e] for e, r in roles.items() if r == "spurious"), 4)
                                for w in history],
    }


# -- 4. sparsification -----------------------------------------------------------------------------
def combined(graphs: list[dict], seed: int, distractors_per_graph: int) -> tuple[EdgeList, list[EvalQuery], list]:
    """All 20 graphs in one edge list (keys (graph, node)) plus weak co_occurs_with distractors."""
    rng = np.random.default_rng(seed)
    keys: list[tuple[int, int, int]] = []
    edges: list[tuple] = []
    queries: list[EvalQuery] = []
    classes: list[str] = []
    for g in graphs:
        nodes = sorted(g["ids"].values())
        keys += [(g["id"], n.kind == "memory", n.id) for n in nodes]
        key = {n: (g["id"], n.kind == "memory", n.id) for n in nodes}
        el = g["edges"]
        for i in range(len(el)):
            edges.append((key[el.keys[el.src[i]]], RELATIONS[el.rel[i]], key[el.keys[el.dst[i]]],
                          float(el.strength[i])))
        existing = {(e[0], e[2]) for e in edges}
        added = 0
        while added < distractors_per_graph:
            a, b = rng.choice(len(nodes), 2, replace=False)
            ka, kb = sorted((key[nodes[a]], key[nodes[b]]))
            if (ka, kb) in existing or (kb, ka) in existing:
                continue
            existing.add((ka, kb))
            edges.append((ka, "co_occurs_with", kb, float(rng.uniform(0.1, 0.4))))
            added += 1
        for q in g["questions"]:
            queries.append(EvalQuery({key[n]: w for n, w in q["seeds"].items()}, key[q["gold"]]))
            classes.append(q["cls"])
    return edge_list(keys, edges), queries, classes


def accuracy_on(edges: EdgeList, queries: list[EvalQuery], classes: list[str], mode: str, beta: float) -> dict:
    arrays = GraphArrays.build(edges)
    rows = []
    for q, c in zip(queries, classes, strict=True):
        ranking = [k for k, _ in spread(arrays, q.seeds, mode=mode, beta=beta, paths=False).ranked()]
        rows.append((c, rank_of(ranking, q.target)))
    return score_rankings(rows)


def run_sparsity(graphs: list[dict], mode: str, beta: float, fractions: list[float], random_seeds: list[int],
                 epsilon: float, distractor_seed: int) -> dict:
    edges, queries, classes = combined(graphs, distractor_seed, distractors_per_graph=18)
    m = len(edges)
    curves: dict[str, list[dict]] = {}
    orders = {"weight": [prune_order(edges, "weight")],
              "coverage": [prune_order(edges, "coverage", queries=queries, mode=mode, beta=beta)],
              "random": [prune_order(edges, "random", seed=s) for s in random_seeds]}
    for strategy, order_list in orders.items():
        points = []
        for keep_fraction in fractions:
            n_prune = m - int(round(keep_fraction * m))
            accs = []
            for order in order_list:
                keep = np.ones(m, dtype=bool)
                keep[order[:n_prune]] = False
                accs.append(accuracy_on(edges.subset(keep), queries, classes, mode, beta)["overall"])
            points.append({"edges_kept_pct": round(100 * keep_fraction), "edges": m - n_prune,
                           "top1": round(statistics.median(a["top1"] for a in accs), 2),
                           "top3": round(statistics.median(a["top3"] for a in accs), 2),
                           "top3_min": min(a["top3"] for a in accs), "top3_max": max(a["top3"] for a in accs)})
        curves[strategy] = points
    greedy = {}
    for strategy, order_list in orders.items():
        res = greedy_prune(edges, order_list[0], queries, epsilon=epsilon, max_fraction=0.9, mode=mode, beta=beta)
        greedy[strategy] = {"pruned": int(len(res.pruned)), "pruned_pct": round(100.0 * len(res.pruned) / m, 2),
                            "quality_before": round(res.quality_before, 4),
                            "quality_after": round(res.quality_after, 4), "evaluations": res.evaluations}
    n_real = sum(len(g["edges"]) for g in graphs)
    return {"edges": m, "causal_edges": n_real, "distractor_edges": m - n_real, "mode": mode, "beta": beta,
            "epsilon": epsilon, "curves": curves, "greedy_epsilon": greedy,
            "note": "quality objective = hit@3 of the gold node over the 140 questions (the recorded query log "
                    "is the evaluation set itself: in-sample by design of the product)"}


# -- 5. latency ------------------------------------------------------------------------------------
def run_latency(n_edges: int, n_nodes: int, repeats: int, seed: int, beta: float, from_file: bool = True) -> dict:
    rng = np.random.default_rng(seed)
    over = int(n_edges * 1.1)
    src = rng.integers(0, n_nodes, over)
    dst = (src + rng.integers(1, n_nodes, over)) % n_nodes
    rel = rng.choice(6, over, p=[0.4, 0.2, 0.15, 0.1, 0.1, 0.05]).astype(np.int8)
    # distinct (src, dst, relation) triples, as the edge table requires, in generation order
    _, first = np.unique((src * n_nodes + dst) * 8 + rel, return_index=True)
    keep = np.sort(first)[:n_edges]
    src, dst, rel = src[keep], dst[keep], rel[keep]
    edges = EdgeList(tuple(range(n_nodes)), src.astype(np.int64), dst.astype(np.int64), rel,
                     rng.uniform(0.1, 1.0, n_edges), np.arange(n_edges, dtype=np.int64))
    t = time.perf_counter()
    arrays = GraphArrays.build(edges)
    build_ms = (time.perf_counter() - t) * 1000
    out = {"edges": n_edges, "nodes": n_nodes, "build_ms": round(build_ms, 2), "repeats": repeats,
           # writing 100k edges into a file is most of a --quick run: the full run measures the file read
           "load_from_sqlite_ms": load_from_sqlite_ms(edges, 3) if from_file else None}
    for mode in MODES:
        times = []
        reached = []
        for r in range(repeats):
            seeds = {int(k): 1.0 for k in np.random.default_rng(seed + r).choice(n_nodes, 5, replace=False)}
            t = time.perf_counter()
            act = spread(arrays, seeds, mode=mode, beta=beta, paths=True)
            ranked = act.ranked()[:10]
            for key, _ in ranked:
                act.path(key)
            times.append((time.perf_counter() - t) * 1000)
            reached.append(int((act.score >= 0.1).sum()))
        out[mode] = {"p50_ms": round(statistics.median(times), 3), "min_ms": round(min(times), 3),
                     "max_ms": round(max(times), 3), "p90_ms": round(float(np.percentile(times, 90)), 3),
                     "median_nodes_activated": int(statistics.median(reached))}
    return out


def load_from_sqlite_ms(edges: EdgeList, repeats: int) -> dict:
    """What a caller without a cached graph pays first: reading the live edges of a real library file
    and building the CSR arrays (median of ``repeats``)."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        lib = Library(Path(tmp) / "lat.db", clock=ManualClock(T0), settings=Settings())
        with lib.transaction():
            lib.conn.executemany(
                "INSERT INTO edges (src_kind, src_id, dst_kind, dst_id, relation, strength, provenance, created_at, "
                "updated_at) VALUES ('failure', ?, 'failure', ?, ?, ?, 'declared', ?, ?)",
                ((int(a) + 1, int(b) + 1, RELATIONS[int(r)], float(w), T0, T0)
                 for a, b, r, w in zip(edges.src, edges.dst, edges.rel, edges.strength, strict=True)))
        times = []
        for _ in range(repeats):
            t = time.perf_counter()
            GraphArrays.build(load_edge_list(lib.conn))
            times.append((time.perf_counter() - t) * 1000)
        lib.close()
    return {"p50_ms": round(statistics.median(times), 1), "min_ms": round(min(times), 1),
            "max_ms": round(max(times), 1), "repeats": repeats}


def summary(values: list[float]) -> dict:
    return {"median": round(statistics.median(values), 2), "min": round(min(values), 2), "max": round(max(values), 2)}


# -- acceptance ------------------------------------------------------------------------------------
def acceptance(causal: dict, stress: dict, latency: dict, traps: dict, beta: float) -> dict:
    checks = []
    add = causal["additive"]
    add_stress = stress["additive"]
    for mode in ("gated", "adaptive"):
        res = causal[mode]
        st = stress[f"{mode}@{beta:g}"]
        c4_better = (res["C4"]["top1"] > add["C4"]["top1"] and res["C4"]["top3"] >= add["C4"]["top3"]) or (
            res["C4"]["top3"] > add["C4"]["top3"] and res["C4"]["top1"] >= add["C4"]["top1"])
        stress_better = st["suppression_rate"]["median"] > add_stress["suppression_rate"]["median"] and \
            st["open_above_blocked"]["median"] > add_stress["open_above_blocked"]["median"]
        worst = min(res[c][k] - add[c][k] for c in add if c != "C4" for k in ("top1", "top3"))
        checks.append({"mode": mode, "beats_additive_on_C4": c4_better, "beats_additive_on_stress": stress_better,
                       "worst_drop_elsewhere_points": round(-worst if worst < 0 else 0.0, 2),
                       "passed": bool(c4_better and stress_better and worst >= -MAX_DROP_POINTS)})
    learning_ok = traps["settled_true_min"]["min"] >= 0.7 and traps["settled_spurious_max"]["max"] <= 0.3
    latency_ok = all(latency[m]["p50_ms"] <= LATENCY_BUDGET_MS for m in MODES)
    return {"modes": checks, "gated_or_adaptive_passed": any(c["passed"] for c in checks),
            "online_learning_separates": learning_ok, "latency_within_budget": latency_ok,
            "passed": any(c["passed"] for c in checks) and learning_ok and latency_ok}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="folder with graphs_and_qa_140.json")
    parser.add_argument("--quick", action="store_true", help="reduced run for CI (well under a minute)")
    parser.add_argument("--beta", type=float, default=Settings().graph_beta, help="beta_0 for gated/adaptive")
    parser.add_argument("--out", type=Path, default=HERE, help="where results.json / results.md go")
    parser.add_argument("--charts-only", action="store_true",
                        help="only redraw the learning curves from the results.json already in --out")
    benchkit.add_standard_args(parser, here=HERE, data=DEFAULT_DATA, seed=0)  # --seed (first of each sweep), --junit
    args = parser.parse_args(argv)
    stem = "results.quick" if args.quick else "results"  # a quick run never overwrites the full results
    if args.charts_only:
        print(write_curves(curve_panels(json.loads((args.out / f"{stem}.json").read_text("utf-8"))),
                           args.out / f"{stem}.curves.svg"))
        return 0
    beta = args.beta
    started = time.perf_counter()
    results: dict = {"quick": args.quick, "beta0": beta, "defaults": {"hops": 5, "decay": 0.7, "threshold": 0.1}}

    qa_file = args.data / "graphs_and_qa_140.json"
    graphs = None
    if qa_file.exists():
        data = json.loads(qa_file.read_text("utf-8"))
        graphs = load_causaleval(data)
        causal = {"bm25": score_rankings(causaleval_ranks(graphs, "bm25", beta))}
        for mode in MODES:
            causal[mode] = score_rankings(causaleval_ranks(graphs, mode, beta))
        sweep = {}
        for mode in ("gated", "adaptive"):
            for b in BETAS:
                r = score_rankings(causaleval_ranks(graphs, mode, b))
                sweep[f"{mode}@{b:g}"] = {"overall": r["overall"], "C4": r["C4"]}
        results["causaleval"] = {"questions": sum(len(g["questions"]) for g in graphs), "by_mode": causal,
                                 "beta_sweep": sweep, "beta_holdout": beta_holdout(graphs),
                                 "metric": "judge-free: gold node within top-1 / top-3 of the ranked nodes "
                                           "(BM25 order for bm25; activation order, seeds included, otherwise)"}
        summary_file = args.data / "results_summary.json"
        ref = json.loads(summary_file.read_text("utf-8")) if summary_file.exists() else None
        results["causaleval"]["evidence_hit"] = evidence_report(graphs, beta, ref)
        if ref is not None:
            run = ref.get("runs_recomputed", {}).get("results_full140_20260818")
            if run:
                results["causaleval"]["published_reference_llm_judged"] = {
                    "run": "results_full140_20260818", "accuracy": run["accuracy"], "overall": run["overall"],
                    "note": "LLM-judged answer correctness of a retrieve-then-answer pipeline: not the same metric "
                            "as our judge-free gold-node rank; shown for context only"}
    else:
        results["causaleval"] = {"skipped": f"bench data not found at {qa_file}"}
        print(f"CausalEval data not found at {qa_file}; running the rest", file=sys.stderr)

    stress_seeds = benchkit.seed_sweep(args, 3 if args.quick else 5)
    results["stress"] = {"hubs": 20, "inputs_per_hub": [3, 40], "seeds": stress_seeds,
                         "by_mode": run_stress(stress_seeds, 20)}

    trap_seeds = benchkit.seed_sweep(args, 3 if args.quick else 10)
    rounds = 40
    runs = [trap_world(s, rounds) for s in trap_seeds]
    firsts = [r["rounds_to_separate"] for r in runs]
    results["trap_world"] = {
        "seeds": trap_seeds, "rounds": rounds, "learning_rate": Settings().graph_learning_rate,
        "rounds_to_separate": {"median": statistics.median(firsts) if None not in firsts else None,
                               "min": min(f for f in firsts if f is not None) if any(firsts) else None,
                               "max": max(firsts) if None not in firsts else None},
        "separated_share_last10": summary([r["separated_share_last10"] for r in runs]),
        "all_seeds_separated_at_end": all(r["separated_at_end"] for r in runs),
        "settled_true_min": summary([r["settled_true_min"] for r in runs]),
        "settled_spurious_max": summary([r["settled_spurious_max"] for r in runs]),
        "final_true_min": summary([r["final_true_min"] for r in runs]),
        "final_spurious_max": summary([r["final_spurious_max"] for r in runs]),
        "curve_seed0": {"true_mean": runs[0]["curve_true_mean"], "spurious_mean": runs[0]["curve_spurious_mean"]},
    }

    if graphs is not None:
        fractions = [1.0, 0.7, 0.4, 0.1] if args.quick else [1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1]
        results["sparsity"] = run_sparsity(graphs, "gated", beta, fractions,
                                           benchkit.seed_sweep(args, 3 if args.quick else 5),
                                           Settings().graph_prune_epsilon, args.seed + COMBINED_SEED)

    n_edges = 100_000
    results["latency"] = run_latency(n_edges, 20_000, 10 if args.quick else 40, args.seed, beta,
                                     from_file=not args.quick)
    results["latency"]["budget_p50_ms"] = LATENCY_BUDGET_MS

    if graphs is not None:
        results["acceptance"] = acceptance(results["causaleval"]["by_mode"], results["stress"]["by_mode"],
                                           results["latency"], results["trap_world"], beta)
    else:
        results["acceptance"] = {"passed": False, "reason": "CausalEval data missing: acceptance cannot be judged"}
    results["elapsed_s"] = round(time.perf_counter() - started, 2)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{stem}.json").write_text(json.dumps(results, indent=2) + "\n", "utf-8")
    (args.out / f"{stem}.md").write_text(render_md(results), "utf-8")
    for g in graphs or []:
        g["lib"].close()
    print(render_md(results))
    print(write_curves(curve_panels(results), args.out / f"{stem}.curves.svg"))
    acc = results["acceptance"]
    checks = benchkit.Checks()
    if "reason" in acc:  # without the data nothing can be judged: one failed case that says why
        checks.add("CausalEval data present", False, acc["reason"])
    for key in ("gated_or_adaptive_passed", "online_learning_separates", "latency_within_budget"):
        if key in acc:
            checks.add(key, acc[key])
    return benchkit.finish(args, "demo_causal_bench", checks, results["elapsed_s"])


def curve_panels(results: dict) -> list[Panel]:
    """The trap world's learning curve: mean weight of the true and the spurious edges per round, for the
    first seed of the sweep (``curve_seed0`` keeps its name: seed 0 is the default's first)."""
    trap = results.get("trap_world", {})
    curve = trap.get("curve_seed0", {})
    first = (trap.get("seeds") or [0])[0]
    series = {f"{role} edges": [(i + 1, float(w)) for i, w in enumerate(curve.get(key, []))]
              for role, key in (("true", "true_mean"), ("spurious", "spurious_mean"))}
    return [Panel(f"trap world (seed {first}): edge weights while learning online", "round", "mean weight",
                  {k: v for k, v in series.items() if v})]


def render_evidence(ev: dict | None) -> list[str]:
    if not ev:
        return []
    lines = ["", f"## CausalEval evidence hit (the dataset's LLM-free metric, k = {ev['k']})", "",
             f"Definition: {ev['definition']}.", "",
             "| variant | mode | " + " | ".join(["C1", "C2", "C3", "C4", "C5", "C6", "C7"]) + " | overall |",
             "|---" * 10 + "|"]
    pub = ev.get("published")
    if pub:
        lines.append(f"| published ({pub['run']}) | search | " + " | ".join(pub["by_class"].values())
                     + f" | {pub['overall']} |")
    variants = (("no_threshold", "k = 5, no threshold"), ("default_threshold", "k = 5, default threshold"),
                ("answer_node_only", "k = 5, answer node only"), ("k10_no_threshold", "k = 10, no threshold"))
    for variant, label in variants:
        for mode, res in ev[variant].items():
            lines.append(f"| {label} | {mode} | " + " | ".join(res["by_class"].values()) + f" | {res['overall']} |")
    c7 = ev["c7"]
    lines += ["", "Questions whose own text covers one of their evidence nodes (a hit for any retriever that finds "
              "the quoted node): "
              + ", ".join(f"{c} {n}/20" for c, n in ev["questions_quoting_an_evidence_node"].items()) + "."]
    lines += ["", f"C7 (\"what does X now believe is the right way to handle <task>?\", gold: the correction node): "
              f"{c7['no_hit_at_default_threshold']} of {c7['questions']} questions get no hit at the default "
              "threshold; without it the correction is in BM25's top 5 for "
              f"{c7['correction_in_bm25_top5_no_threshold']} "
              f"and among the activation seeds for {c7['correction_among_activation_seeds']}."]
    if pub:
        lines.append(f"Gated at k = 5 (no threshold) ≥ published: {ev['gated_at_least_published']}.")
    lines.append("Evidence roles of the missed questions (gated, k = 5, no threshold): " + "; ".join(
        f"{c}: " + ", ".join(f"{r} {n}" for r, n in roles.items())
        for c, roles in ev["no_threshold"]["gated"]["missed_evidence_roles"].items()) + ".")
    return lines


def render_md(r: dict) -> str:
    lines = ["# demo_causal_bench results", "",
             f"Generated by `run.py{' --quick' if r['quick'] else ''}`; beta0 = {r['beta0']:g}; "
             f"elapsed {r.get('elapsed_s', '?')} s.", ""]
    ce = r.get("causaleval", {})
    if "by_mode" in ce:
        lines += ["## CausalEval, judge-free (gold node in top-1 / top-3, %)", "",
                  "| mode | " + " | ".join(["C1", "C2", "C3", "C4", "C5", "C6", "C7", "overall"]) + " |",
                  "|---" * 9 + "|"]
        for mode, res in ce["by_mode"].items():
            cells = [f"{res[c]['top1']:g} / {res[c]['top3']:g}" for c in
                     ["C1", "C2", "C3", "C4", "C5", "C6", "C7", "overall"]]
            lines.append(f"| {mode} | " + " | ".join(cells) + " |")
        ref = ce.get("published_reference_llm_judged")
        if ref:
            lines += ["", "Published reference (LLM-judged answers, a different metric; context only): "
                      + ", ".join(f"{k} {v}" for k, v in ref["accuracy"].items()) + f", overall {ref['overall']}."]
        lines += render_evidence(ce.get("evidence_hit"))
        ho = ce["beta_holdout"]
        add_t = ho["additive_on_test"]
        lines += ["", f"β₀ held out (chosen on graphs {ho['tune_graphs'][0]}–{ho['tune_graphs'][-1]}, scored on "
                  f"{ho['test_graphs'][0]}–{ho['test_graphs'][-1]}): additive C4 {add_t['C4']['top1']:g} / "
                  f"{add_t['C4']['top3']:g}, overall {add_t['overall']['top1']:g} / {add_t['overall']['top3']:g}; "
                  + "; ".join(f"{m} (β₀ = {ho[m]['beta']:g}) C4 {ho[m]['on_test']['C4']['top1']:g} / "
                              f"{ho[m]['on_test']['C4']['top3']:g}, overall {ho[m]['on_test']['overall']['top1']:g} / "
                              f"{ho[m]['on_test']['overall']['top3']:g}" for m in ("gated", "adaptive"))]
        lines += ["", "beta sweep (overall and C4, top-1 / top-3):", ""]
        for name, res in ce["beta_sweep"].items():
            lines.append(f"* {name}: overall {res['overall']['top1']:g} / {res['overall']['top3']:g}, "
                         f"C4 {res['C4']['top1']:g} / {res['C4']['top3']:g}")
    st = r["stress"]["by_mode"]
    lines += ["", "## Dense stress set (median over seeds, %)", "", "| mode | suppression | open above blocked |",
              "|---|---|---|"]
    for name, res in st.items():
        lines.append(f"| {name} | {res['suppression_rate']['median']:g} ({res['suppression_rate']['min']:g}–"
                     f"{res['suppression_rate']['max']:g}) | {res['open_above_blocked']['median']:g} "
                     f"({res['open_above_blocked']['min']:g}–{res['open_above_blocked']['max']:g}) |")
    tw = r["trap_world"]
    lines += ["", "## Trap world (online learning)", "",
              f"rounds to separate (true ≥ 0.7, spurious ≤ 0.3): median {tw['rounds_to_separate']['median']}, "
              f"min {tw['rounds_to_separate']['min']}, max {tw['rounds_to_separate']['max']} over {len(tw['seeds'])} "
              f"seeds; separated in {tw['separated_share_last10']['median']:g} % of the last 10 rounds (min "
              f"{tw['separated_share_last10']['min']:g}); settled weights (mean of the last 10 rounds), worst seed: "
              f"weakest true edge {tw['settled_true_min']['min']:g}, strongest spurious "
              f"{tw['settled_spurious_max']['max']:g}; final weakest true edge {tw['final_true_min']['median']:g}, "
              f"strongest spurious {tw['final_spurious_max']['median']:g} (medians)."]
    sp = r.get("sparsity")
    if sp:
        lines += ["", f"## Sparsity vs accuracy ({sp['edges']} edges: {sp['causal_edges']} causal + "
                  f"{sp['distractor_edges']} weak distractors; top-3 overall %)", "",
                  "| kept % | " + " | ".join(sp["curves"]) + " |", "|---" * (1 + len(sp["curves"])) + "|"]
        for i, point in enumerate(sp["curves"]["weight"]):
            cells = [f"{sp['curves'][s][i]['top3']:g}" for s in sp["curves"]]
            lines.append(f"| {point['edges_kept_pct']} | " + " | ".join(cells) + " |")
        lines += ["", f"epsilon-greedy (ε = {sp['epsilon']}): " + "; ".join(
            f"{s} prunes {g['pruned_pct']:g} % (quality {g['quality_before']:g} → {g['quality_after']:g})"
            for s, g in sp["greedy_epsilon"].items())]
    lat = r["latency"]
    lines += ["", f"## Activation latency ({lat['edges']} edges, {lat['nodes']} nodes, {lat['repeats']} repeats, "
              f"5 seeds, 5 hops, paths for the top 10)", ""]
    for mode in MODES:
        x = lat[mode]
        lines.append(f"* {mode}: p50 {x['p50_ms']:g} ms (min {x['min_ms']:g}, p90 {x['p90_ms']:g}, max "
                     f"{x['max_ms']:g}); {x['median_nodes_activated']} nodes activated")
    lines.append(f"* CSR build: {lat['build_ms']:g} ms (once per graph load); budget p50 ≤ {lat['budget_p50_ms']:g} ms")
    ld = lat["load_from_sqlite_ms"]
    if ld is None:
        lines.append("* reading the edges from a library file: measured by the full run only")
    else:
        lines.append(f"* reading the {lat['edges']} edges from a library file and building the arrays (not in the "
                     f"budget; paid once per process or per uncached call): p50 {ld['p50_ms']:g} ms "
                     f"(min {ld['min_ms']:g}, max {ld['max_ms']:g}, {ld['repeats']} repeats)")
    acc = r["acceptance"]
    lines += ["", "## Acceptance", "", f"passed: {acc['passed']}", ""]
    for c in acc.get("modes", []):
        lines.append(f"* {c['mode']}: C4 better {c['beats_additive_on_C4']}, stress better "
                     f"{c['beats_additive_on_stress']}, worst drop elsewhere {c['worst_drop_elsewhere_points']:g} "
                     f"points → {'pass' if c['passed'] else 'fail'}")
    if "online_learning_separates" in acc:
        lines.append(f"* online learning separates: {acc['online_learning_separates']}; latency within budget: "
                     f"{acc['latency_within_budget']}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
