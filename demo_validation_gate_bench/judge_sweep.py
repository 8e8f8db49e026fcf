"""What would a validator have to catch for the +0.3 goal? (A measurement study, not a goal check.)

With the LLM validators off, the gate sees failed episodes (outcome) and some hallucinated ones
(grounding), never the silent co-use of unrelated skills. This study adds, beside the real gate, a
simulated judge of given quality — it flags each corrupted episode with probability ``recall`` and
each honest one with probability ``false positive`` (seeded, one draw per episode; see
``utility.judge_flags``) — standing in for an LLM ``logical`` validator whose accuracy is unknown
here (no network, no API key). For each (recall, false-positive rate) it reports the edge-precision
gain over the ungated graph at 30 % corruption, median (min–max) over run.py's full-mode seeds, on
the committed workload (1 unrelated skill per corrupted episode), on the heavier one (1–3 per
episode, ``mix``), and on ``mix`` over the hand-written English library that ``live_judge.py`` asks a
real model about (so its measured recall can be read against this table). A judge of recall 1 and
false-positive rate 0 is the oracle; on the synthetic library the study checks that it reproduces
``sweep.json``'s oracle runs exactly.

    nice -n 15 python demo_validation_gate_bench/judge_sweep.py [--seeds 1 2 3] [--out PATH.json]

Writes judge_sweep.json and judge_sweep.md beside it (or PATH.json and PATH.md); it never touches
results.* or sweep.*. Takes about 8 minutes.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from run import GOAL_MARGIN, fmt, gain, spread  # noqa: E402
from sweep import DREAM_EVERY, EPISODES, RATE, med, study_args, write_study  # noqa: E402
from utility import run_stream  # noqa: E402
from workload import KINDS  # noqa: E402

WORKLOADS: tuple[tuple[str, int | str], ...] = (("synthetic", 1), ("synthetic", "mix"), ("english", "mix"))
RECALLS = (0.2, 0.4, 0.6, 0.8, 1.0)
FALSE_POSITIVES = (0.0, 0.2)


def rejected_share(run: dict[str, Any], honest: bool) -> float:
    kinds = ("honest",) if honest else KINDS
    total = sum(run["episodes"][k] for k in kinds)
    return sum(run["rejected"][k] for k in kinds) / total if total else 0.0


def study(library: str, unrelated: int | str, seeds: list[int]) -> dict[str, Any]:
    judges = [(r, f) for r in RECALLS for f in FALSE_POSITIVES]
    per_seed = []
    for seed in seeds:
        common = {"episodes": EPISODES, "dream_every": DREAM_EVERY, "unrelated": unrelated, "library": library}
        off = run_stream(seed, RATE, gate="off", **common)
        on = run_stream(seed, RATE, gate="on", **common)
        runs = {f"{r}/{f}": run_stream(seed, RATE, gate="judge", judge=(r, f), **common) for r, f in judges}
        streams = {off["stream"], on["stream"], *(x["stream"] for x in runs.values())}
        per_seed.append({"seed": seed, "off": off, "on": on, "judges": runs, "same_stream": len(streams) == 1})
        best = runs[f"{RECALLS[-1]}/{FALSE_POSITIVES[0]}"]
        print(f"    seed {seed}: off {fmt(off['edge_precision'])} on {fmt(on['edge_precision'])} "
              f"perfect judge {fmt(best['edge_precision'])}", flush=True)
    rows = []
    for r, f in judges:
        key = f"{r}/{f}"
        gains = [gain(s["judges"][key], s["off"]) for s in per_seed]
        rows.append({
            "recall": r, "false_positive": f,
            "edge_precision": spread([s["judges"][key]["edge_precision"] for s in per_seed]),
            "gain": spread(gains),
            "gate_rejects_corrupted": spread([rejected_share(s["judges"][key], honest=False) for s in per_seed]),
            "gate_rejects_honest": spread([rejected_share(s["judges"][key], honest=True) for s in per_seed]),
            "expand_precision": spread([s["judges"][key]["expand_precision"] for s in per_seed]),
            "meets_goal_median": (spread(gains)["median"] or 0) >= GOAL_MARGIN,
            "meets_goal_every_seed": all(g is not None and g >= GOAL_MARGIN for g in gains),
        })
    return {
        "library": library,
        "unrelated": unrelated,
        "off": {"edge_precision": spread([s["off"]["edge_precision"] for s in per_seed])},
        "on": {"edge_precision": spread([s["on"]["edge_precision"] for s in per_seed]),
               "gain": spread([gain(s["on"], s["off"]) for s in per_seed]),
               "gate_rejects_corrupted": spread([rejected_share(s["on"], honest=False) for s in per_seed])},
        "judges": rows,
        "same_stream": all(s["same_stream"] for s in per_seed),
        "per_seed": [{"seed": s["seed"], "off": s["off"]["edge_precision"], "on": s["on"]["edge_precision"],
                      "judges": {k: v["edge_precision"] for k, v in s["judges"].items()}} for s in per_seed],
    }


def check_against_sweep(block: dict[str, Any]) -> bool | None:
    """The perfect judge (recall 1, false positives 0) must reproduce sweep.json's oracle runs."""
    path = HERE / "sweep.json"
    if block["library"] != "synthetic" or not path.exists():
        return None
    for b in json.loads(path.read_text())["blocks"]:
        if b["unrelated"] == block["unrelated"] and b["kinds"] == list(KINDS):
            oracle = {r["seed"]: r["oracle"]["edge_precision"] for r in b["runs"]}
            perfect = f"{RECALLS[-1]}/{FALSE_POSITIVES[0]}"
            return all(oracle[s["seed"]] == s["judges"][perfect] for s in block["per_seed"] if s["seed"] in oracle)
    return None


def markdown(out: dict[str, Any]) -> str:
    proto = out["protocol"]
    lines = [
        "# Validation gate: what a judge of corrupted episodes would have to catch for +0.3",
        "",
        f"Written by `judge_sweep.py` from measurement ({out['elapsed_s']:.0f} s). Corruption {proto['rate']:.0%} "
        f"(kinds hallucinated, failed, silent), seeds {proto['seeds']}, {proto['episodes']} episodes, dream every "
        f"{proto['dream_every']}; median (min–max) over seeds. Every arm runs the real gate (LLM validators off); "
        "the judge arms add a simulated judge that flags each corrupted episode with probability *recall* and each "
        "honest one with probability *false positive* — a stand-in for an LLM validator of that quality, not a "
        "product feature. Gain = edge precision minus the ungated graph's; the goal is ≥ "
        f"{GOAL_MARGIN}.",
        "",
    ]
    for b in out["blocks"]:
        name = ("1 unrelated skill per corrupted episode (the committed workload)" if b["unrelated"] == 1
                else "1–3 unrelated skills per corrupted episode (mix)")
        if b["library"] == "english":
            name += ", English library (`english_library.json`, what `live_judge.py` uses)"
        lines += [
            f"## {name}",
            "",
            f"Gate off: edge precision {med(b['off']['edge_precision'])}. Real gate alone: "
            f"{med(b['on']['edge_precision'])}, gain {med(b['on']['gain'])}, rejects "
            f"{fmt(b['on']['gate_rejects_corrupted']['median'], 2)} of corrupted episodes. "
            + (f"Perfect judge reproduces sweep.json's oracle: {b['reproduces_sweep_oracle']}. "
             if b["reproduces_sweep_oracle"] is not None else "")
            + f"Identical streams in every arm: {b['same_stream']}.",
            "",
            "| judge recall | false positive | gate rejects corrupted | honest | edge precision | gain | "
            "goal (median) | goal (every seed) |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for row in b["judges"]:
            lines.append(
                f"| {row['recall']:.1f} | {row['false_positive']:.1f} | "
                f"{fmt(row['gate_rejects_corrupted']['median'], 2)} | {fmt(row['gate_rejects_honest']['median'], 2)} | "
                f"{med(row['edge_precision'])} | {med(row['gain'])} | "
                f"{'yes' if row['meets_goal_median'] else 'no'} | {'yes' if row['meets_goal_every_seed'] else 'no'} |")
        lines.append("")
    return "\n".join(lines)


def main() -> int:
    args = study_args(__doc__.splitlines()[0], HERE / "judge_sweep.json")
    started = time.perf_counter()
    blocks = []
    for library, unrelated in WORKLOADS:
        print(f"library={library} unrelated={unrelated} ...", flush=True)
        block = study(library, unrelated, args.seeds)
        block["reproduces_sweep_oracle"] = check_against_sweep(block)
        blocks.append(block)
    out = {"protocol": {"rate": RATE, "seeds": args.seeds, "episodes": EPISODES, "dream_every": DREAM_EVERY,
                        "kinds": list(KINDS), "recalls": RECALLS, "false_positives": FALSE_POSITIVES,
                        "goal_margin": GOAL_MARGIN},
           "blocks": blocks, "elapsed_s": time.perf_counter() - started}
    write_study(out, args.out, markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
