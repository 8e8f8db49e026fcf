"""Validation-gated learning, measured: mechanics to 1e-9, utility of the gate, LLM wiring.

1. mechanical (mechanical.py) — the Kairos seed's Table 1 setting (3 queries x 5 cycles) against an
   independent model of LTP, LTD and emergent edges;
2. utility (workload.py, utility.py) — the graph learned from the same episode stream with the real
   validation gate and with an always-pass gate, over several seeds and corruption rates;
3. LLM wiring (llm_wiring.py) — the logical/alignment validators through the real SDK and the local
   fake server, and the same plan with no API key (validators "off").

Exit status 1 when a goal is missed: a mechanical error above 1e-9 or an edge formed at the wrong
count; at 30 % corruption, the LLM-off gate's share of a perfect detector's gain below 0.6
(median gain on−off / median gain oracle−off over seeds) or more than 5 % of the honest episodes
rejected; streams that differ between the gate-on and gate-off runs, or LLM validators not "off"
without a key. The old +0.3 edge-precision goal is reported, not gated (a perfect detector gains
less than that on this workload). The median share over ``sweep.py``'s workloads is read from
``sweep.json`` when it exists and counts toward the budget too (``sweep.py`` computes it).

``--seed N`` moves the episode-stream seeds to N, N+1, … (default 1: seeds 1..7, 1..5 with ``--quick``) and
the LLM-wiring plan to seed N.

    python demo_validation_gate_bench/run.py [--quick] [--out DIR] [--seed N] [--junit FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # this checkout's kaos_dream, not whichever copy pip installed
sys.path.insert(0, str(HERE))

from llm_wiring import run_llm_wiring  # noqa: E402
from mechanical import run_mechanical  # noqa: E402
from utility import run_stream  # noqa: E402

from kaos_dream import benchkit  # noqa: E402

GOAL_MARGIN = 0.3  # issue 6's goal, reported only
GOAL_RATE = 0.3
GOAL_SHARE = 0.6  # share of a perfect detector's gain the LLM-off gate must reach
MAX_FALSE_POSITIVE = 0.05  # share of honest episodes the gate may reject
METRICS = ("edge_precision", "related_p_at_3", "expand_precision", "edges")


def spread(values: list[float | None]) -> dict[str, Any]:
    vals = [v for v in values if v is not None]
    if not vals:
        return {"median": None, "min": None, "max": None, "n": 0}
    return {"median": statistics.median(vals), "min": min(vals), "max": max(vals), "n": len(vals)}


def gain(a: dict[str, Any], b: dict[str, Any]) -> float | None:
    if a["edge_precision"] is None or b["edge_precision"] is None:
        return None
    return a["edge_precision"] - b["edge_precision"]


def share_of_oracle(on_gain: float | None, oracle_gain: float | None) -> float | None:
    """The budget's measure: how much of a perfect detector's gain (over gate off) the gate reaches."""
    if on_gain is None or not oracle_gain:
        return None
    return on_gain / oracle_gain


def honest_rejected(runs: list[dict[str, Any]], side: str = "on") -> float | None:
    """Share of the honest episodes, pooled over seeds, that the gate rejected (its false positives)."""
    total = sum(r[side]["episodes"]["honest"] for r in runs)
    return sum(r[side]["rejected"]["honest"] for r in runs) / total if total else None


def sweep_budget(path: Path) -> dict[str, Any] | None:
    """The sweep's budget block (median share over its workloads), when sweep.py has been run."""
    if not path.exists():
        return None
    return json.loads(path.read_text()).get("budget")


def utility(seeds: list[int], rates: list[float], episodes: int, dream_every: int, offtopic: str,
            oracle_at: float | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for rate in rates:
        runs = []
        sides = ("on", "off", "oracle") if oracle_at == rate else ("on", "off")
        for seed in seeds:
            run = {side: run_stream(seed, rate, gate=side, episodes=episodes, dream_every=dream_every,
                                    offtopic=offtopic) for side in sides}
            run.update(seed=seed, same_stream=len({run[s]["stream"] for s in sides}) == 1,
                       edge_precision_gain=gain(run["on"], run["off"]))
            if "oracle" in run:
                run["oracle_edge_precision_gain"] = gain(run["oracle"], run["off"])
            runs.append(run)
            print(f"  {offtopic} corruption {rate:.0%} seed {seed}: edge precision "
                  + " / ".join(f"{s} {fmt(run[s]['edge_precision'])}" for s in sides), flush=True)
        summary = {side: {m: spread([r[side][m] for r in runs]) for m in METRICS} for side in sides}
        summary["edge_precision_gain"] = spread([r["edge_precision_gain"] for r in runs])
        if "oracle" in sides:
            summary["oracle_edge_precision_gain"] = spread([r["oracle_edge_precision_gain"] for r in runs])
        kinds = runs[0]["on"]["episodes"].keys()
        summary["gate_rejected_share"] = {
            k: (sum(r["on"]["rejected"][k] for r in runs) / n if (n := sum(r["on"]["episodes"][k] for r in runs))
                else None)
            for k in kinds
        }
        summary["same_stream"] = all(r["same_stream"] for r in runs)
        summary["honest_rejected_share"] = honest_rejected(runs)
        if "oracle" in sides:
            summary["share_of_oracle_gain"] = share_of_oracle(summary["edge_precision_gain"]["median"],
                                                              summary["oracle_edge_precision_gain"]["median"])
        out[f"{rate:.2f}"] = {"summary": summary, "runs": runs}
    return out


def fmt(v: Any, digits: int = 3) -> str:
    return "-" if v is None else f"{v:.{digits}f}" if isinstance(v, float) else str(v)


def med(s: dict[str, Any]) -> str:
    return f"{fmt(s['median'])} ({fmt(s['min'])}–{fmt(s['max'])})"


def render(results: dict[str, Any]) -> str:
    m = results["mechanical"]
    lines = [
        "# Validation gate benchmark — results",
        "",
        f"Mode: {'quick' if results['quick'] else 'full'}; written by `run.py` from measurement "
        f"({results['elapsed_s']:.1f} s). Goals: "
        f"{'all met' if not results['missed'] else 'MISSED: ' + '; '.join(results['missed'])}.",
        "",
    ]
    a = results["acceptance"]
    lines += [
        "## Budget (issue 16): share of a perfect detector's gain",
        "",
        f"At {GOAL_RATE:.0%} search-driven corruption the LLM-off gate (outcome, grounding, co-use) gains "
        f"{fmt(a['gain_median'])} edge precision over gate off (median over seeds); a perfect detector of the "
        f"corrupted episodes gains {fmt(a['oracle_gain_median'])}: **share {fmt(a['share_of_oracle_gain'])}** "
        f"(budget >= {a['required_share']}), with **{fmt(a['honest_rejected_share'])}** of the honest episodes "
        f"rejected (at most {a['max_honest_rejected_share']}). Median share over `sweep.py`'s workloads: "
        f"{fmt(a['sweep_median_share'])}, largest honest-rejection share there "
        f"{fmt(a['sweep_max_honest_rejected_share'])} (`sweep.md`; '-' = sweep not run). Issue 6's old goal, "
        f"gain >= {a['old_goal_gain']}, is reported only: {'met' if a['old_goal_met'] else 'not met'}.",
        "",
    ]
    lines += [
        "## 1. Mechanical (3 queries x 5 cycles, the seed's Table 1 setting)",
        "",
        f"{m['episodes']} episodes ({m['gate_decisions']['learned']} validated, {m['gate_decisions']['rejected']} "
        f"rejected by the gate), {m['checks']} comparisons of every live `co_occurs_with` edge and every "
        f"co-activation count with the independent model: **max abs error {m['max_abs_error']:.3g}** "
        f"(tolerance {m['tolerance']:g}).",
        "",
        "| cycle | frequent edges mean (measured) | expected | unused u1-u2 | expected | unused u3-u4 | expected "
        "| emergent edges |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in m["per_cycle"]:
        em = ", ".join(f"{k} {v:.3f}" for k, v in r["emergent_edges"].items()) or "none"
        lines.append(
            f"| {r['cycle']} | {r['frequent_edges_mean']:.6f} | {r['frequent_edges_expected']:.6f} | "
            f"{r['unused_edges']['u1-u2']:.6f} | {r['unused_edges_expected']['u1-u2']:.6f} | "
            f"{r['unused_edges']['u3-u4']:.6f} | {r['unused_edges_expected']['u3-u4']:.6f} | {em} |"
        )
    formed = m["emergent_formed"]
    would = m["without_gate_would_form"]
    lines += [
        "",
        f"Emergent edges formed: {len(formed)}, every one at dream cycle 3 with count 3 "
        f"(`emergent_all_at_count_3` = {m['emergent_all_at_count_3']}); co-activation counts at each dream "
        f"for a1-a3: {m['counts_at_each_dream']['a1-a3']} (no edge at 2). Pairs already joined by an edge "
        f"(the seed's situation: its queries only co-activated entities its source triples already linked) "
        f"reached {m['linked_pairs_counts_no_emergent']} co-activations and never got an emergent edge. "
        f"Had the rejected episodes counted, the b/c pairs would have formed at cycle "
        f"{sorted({v['cycle'] for k, v in would.items() if k[0] in 'bc'})} with count "
        f"{sorted({v['count'] for k, v in would.items() if k[0] in 'bc'})}.",
        "",
    ]
    for label, key in (("2a. Utility — search-driven corruption (the goal)", "utility"),
                       ("2b. Utility — uniform-random off-topic skill (sensitivity)", "utility_random")):
        if key not in results:
            continue
        lines += [f"## {label}", "",
                  "median (min–max) over seeds; gate on = the real validation gate (LLM validators off), "
                  "gate off = an always-pass gate.", "",
                  "| corruption | edge precision on | off | gain | related P@3 on | off | expand precision on | off "
                  "| edges on | off | rejected by gate (honest / hallucinated / failed / silent) |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
        for rate, block in results[key].items():
            s = block["summary"]
            rej = s["gate_rejected_share"]
            lines.append(
                f"| {float(rate):.0%} | {med(s['on']['edge_precision'])} | {med(s['off']['edge_precision'])} | "
                f"{med(s['edge_precision_gain'])} | {med(s['on']['related_p_at_3'])} | "
                f"{med(s['off']['related_p_at_3'])} | {med(s['on']['expand_precision'])} | "
                f"{med(s['off']['expand_precision'])} | {fmt(s['on']['edges']['median'], 0)} | "
                f"{fmt(s['off']['edges']['median'], 0)} | "
                f"{fmt(rej['honest'], 3)} / {fmt(rej['hallucinated'], 2)} / {fmt(rej['failed'], 2)} / "
                f"{fmt(rej['silent'], 2)} |"
            )
        lines.append("")
        for rate, block in results[key].items():
            s = block["summary"]
            if "oracle" in s:
                lines += [f"Ceiling at {float(rate):.0%}: the same streams with a perfect detector of corrupted "
                          f"episodes beside the gate (`oracle`, not a product feature): edge precision "
                          f"{med(s['oracle']['edge_precision'])}, gain over gate off "
                          f"{med(s['oracle_edge_precision_gain'])}; expand precision "
                          f"{med(s['oracle']['expand_precision'])}; the gate reaches "
                          f"{fmt(s.get('share_of_oracle_gain'))} of the detector's gain.", ""]
    w = results["llm_wiring"]
    lines += [
        "## 3. LLM wiring (fake server; demonstrates wiring, not model quality)",
        "",
        f"{w['episodes']} episodes at {w['corruption']:.0%} corruption, seed {w['seed']}: the fake received "
        f"{w['fake_requests']} requests (expected {w['expected_requests']}: logical, alignment, novelty per episode); "
        f"{w['task_in_judge_prompts']} of the {w['expected_task_in_judge_prompts']} logical and alignment prompts "
        "quote the episode's search query as its task.",
        "",
        "| episodes | total | rejected with fake LLM | rejected without a key |",
        "|---|---|---|---|",
    ]
    for k, n in w["with_fake_llm"]["episodes"].items():
        lines.append(f"| {k} | {n} | {w['with_fake_llm']['rejected'][k]} | {w['without_key']['rejected'][k]} |")
    lines += ["", f"Without `ANTHROPIC_API_KEY`, logical and alignment report off: {w['off_without_key']} "
              f"(\"{w['example_without_key']['honest']['validators']['logical']['reason']}\").", ""]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="CI: 5 seeds, 160 episodes, 30 %% only, no sensitivity arm; same goals")
    benchkit.add_standard_args(parser, here=HERE, seed=1)  # --out, --seed (first stream seed), --junit
    args = parser.parse_args()
    os.environ.pop("ANTHROPIC_API_KEY", None)  # the measured runs are the default, heuristic-only setting
    started = time.perf_counter()
    if args.quick:
        samples, rates, episodes, dream_every, llm_episodes = 5, [0.3], 160, 40, 12
    else:
        samples, rates, episodes, dream_every, llm_episodes = 7, [0.0, 0.1, 0.3, 0.5], 400, 50, 60
    seeds = benchkit.seed_sweep(args, samples)  # 1..7 (1..5 quick) by default, the committed results
    print("mechanical ...", flush=True)
    mech = run_mechanical()
    print("utility (search-driven corruption) ...", flush=True)
    util = utility(seeds, rates, episodes, dream_every, "search", oracle_at=GOAL_RATE)
    results: dict[str, Any] = {
        "quick": args.quick,
        "protocol": {"seeds": seeds, "rates": rates, "episodes": episodes, "dream_every": dream_every,
                     "goal": f"at {GOAL_RATE:.0%} corruption (search-driven), the LLM-off gate reaches >= "
                             f"{GOAL_SHARE} of a perfect detector's edge-precision gain over gate off (median gain "
                             f"over seeds / median oracle gain) and rejects <= {MAX_FALSE_POSITIVE:.0%} of honest "
                             "episodes; the same median share over sweep.py's workloads (sweep.json)"},
        "mechanical": mech,
        "utility": util,
    }
    if not args.quick:
        print("utility (uniform-random off-topic skill, sensitivity) ...", flush=True)
        results["utility_random"] = utility(seeds, [GOAL_RATE], episodes, dream_every, "random")
    print("LLM wiring ...", flush=True)
    results["llm_wiring"] = run_llm_wiring(seed=args.seed, episodes=llm_episodes)

    checks = benchkit.Checks()
    checks.add("mechanical updates match the independent model", mech["max_abs_error"] <= mech["tolerance"],
               f"mechanical max abs error {mech['max_abs_error']:.3g} > {mech['tolerance']:g}")
    checks.add("emergent edges form at count 3", mech["emergent_all_at_count_3"],
               "an emergent edge formed at a count other than 3")
    goal = util[f"{GOAL_RATE:.2f}"]["summary"]
    goal_gain = goal["edge_precision_gain"]["median"]
    share = goal.get("share_of_oracle_gain")
    false_positive = goal["honest_rejected_share"]
    sweep = None if args.quick else sweep_budget(HERE / "sweep.json")
    results["acceptance"] = {
        "edge_precision_on_median": goal["on"]["edge_precision"]["median"],
        "edge_precision_off_median": goal["off"]["edge_precision"]["median"],
        "gain_median": goal_gain, "gain_min": goal["edge_precision_gain"]["min"],
        "gain_max": goal["edge_precision_gain"]["max"],
        "oracle_edge_precision_median": goal["oracle"]["edge_precision"]["median"],
        "oracle_gain_median": goal["oracle_edge_precision_gain"]["median"],
        "share_of_oracle_gain": share, "required_share": GOAL_SHARE,
        "honest_rejected_share": false_positive, "max_honest_rejected_share": MAX_FALSE_POSITIVE,
        "sweep_median_share": None if sweep is None else sweep["median_share"],
        "sweep_max_honest_rejected_share": None if sweep is None else sweep["max_honest_rejected_share"],
        "sweep_met": None if sweep is None else sweep["met"],
        "met": share is not None and share >= GOAL_SHARE and false_positive is not None
        and false_positive <= MAX_FALSE_POSITIVE and (sweep is None or bool(sweep["met"])),
        "old_goal_gain": GOAL_MARGIN, "old_goal_met": goal_gain is not None and goal_gain >= GOAL_MARGIN,
    }
    checks.add(f"share of the oracle's gain >= {GOAL_SHARE} at {GOAL_RATE:.0%} corruption",
               share is not None and share >= GOAL_SHARE,
               f"share of the oracle's gain at {GOAL_RATE:.0%} corruption is {fmt(share)} (goal >= {GOAL_SHARE})")
    checks.add(f"honest episodes rejected <= {MAX_FALSE_POSITIVE}",
               false_positive is not None and false_positive <= MAX_FALSE_POSITIVE,
               f"the gate rejected {fmt(false_positive)} of honest episodes (at most {MAX_FALSE_POSITIVE})")
    if sweep is not None:
        checks.add("sweep.json: median share and false positives within the budget", bool(sweep["met"]),
                   f"sweep.json: median share {fmt(sweep['median_share'])} over its workloads or a false-positive "
                   f"share {fmt(sweep['max_honest_rejected_share'])} misses the budget")
    checks.add("gate-on and gate-off see the same episodes", all(b["summary"]["same_stream"] for b in util.values()),
               "gate-on and gate-off runs saw different episode streams")
    wiring = results["llm_wiring"]
    checks.add("LLM validators reported off without a key", wiring["off_without_key"],
               "LLM validators not reported off without a key")
    checks.add("one LLM request per validator and episode", wiring["fake_requests"] == wiring["expected_requests"],
               "the fake LLM did not receive one request per validator and episode")
    checks.add("judge prompts quote the episode's task",
               wiring["task_in_judge_prompts"] == wiring["expected_task_in_judge_prompts"],
               "a logical or alignment prompt did not quote its episode's task")
    missed = [c.detail for c in checks.missed]
    results["missed"] = missed
    results["elapsed_s"] = time.perf_counter() - started
    stem = benchkit.results_stem(args)  # --out DIR; a quick run writes results.quick.*
    stem.with_name(stem.name + ".json").write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    stem.with_name(stem.name + ".md").write_text(render(results) + "\n")
    print(render(results))
    return benchkit.finish(args, "demo_validation_gate_bench", checks, results["elapsed_s"])


if __name__ == "__main__":
    sys.exit(main())
