"""Sensitivity sweep: how the gate's edge-precision gain at 30 % corruption depends on how many
unrelated skills a corrupted episode co-uses and on whether the ``silent`` kind (invisible to outcome
and grounding; the co-use validator is the LLM-free signal aimed at it) is in the mix.

The budget (issue 16): in the median over these workloads, the LLM-off gate reaches >= 0.6 of a
perfect detector's gain over gate off (per workload: median gain on−off / median gain oracle−off),
and in every workload it rejects <= 5 % of the honest episodes. The sweep writes that check into
``sweep.json`` (``budget``; run.py reads it) and exits 1 when it is missed.

For ``unrelated`` in 1, 2, 3, mix (uniform 1-3 per corrupted episode) and kinds = all three or
hallucinated + failed only, it runs gate on / off / oracle over run.py's full-mode seeds, episodes
and dream interval, through the same ``run_stream`` machinery, and reports median (min-max) over
seeds. It also reports why the grounding validator rejects the hallucinated episodes it rejects
(their grounding scores against the 0.7 threshold). The default setting (1, all kinds) must
reproduce run.py's 30 % numbers in results.json exactly; the sweep checks that.

    nice -n 15 python demo_validation_gate_bench/sweep.py [--seeds 1 2 3] [--out PATH.json]

Writes sweep.json and sweep.md beside it (or PATH.json and PATH.md); it does not touch
results.json/results.md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from run import GOAL_SHARE, MAX_FALSE_POSITIVE, fmt, gain, honest_rejected, share_of_oracle, spread  # noqa: E402
from utility import run_stream  # noqa: E402
from workload import KINDS  # noqa: E402

RATE = 0.3
SEEDS = [1, 2, 3, 4, 5, 6, 7]  # run.py full mode
EPISODES = 400  # run.py full mode
DREAM_EVERY = 50  # run.py full mode
UNRELATED: tuple[int | str, ...] = (1, 2, 3, "mix")
KIND_SETS: tuple[tuple[str, ...], ...] = (KINDS, ("hallucinated", "failed"))
SIDES = ("on", "off", "oracle")
THRESHOLD = 0.7  # the grounding validator's default threshold (kaos_dream/validation/builtin.py)


def sweep_one(unrelated: int | str, kinds: tuple[str, ...], seeds: list[int]) -> dict[str, Any]:
    runs = []
    for seed in seeds:
        run: dict[str, Any] = {side: run_stream(seed, RATE, gate=side, episodes=EPISODES, dream_every=DREAM_EVERY,
                                                unrelated=unrelated, kinds=kinds, detail=side == "on")
                               for side in SIDES}
        run.update(seed=seed, same_stream=len({run[s]["stream"] for s in SIDES}) == 1,
                   gain=gain(run["on"], run["off"]), oracle_gain=gain(run["oracle"], run["off"]))
        runs.append(run)
        print(f"    seed {seed}: " + " / ".join(f"{s} {fmt(run[s]['edge_precision'])}" for s in SIDES), flush=True)
    summary: dict[str, Any] = {
        side: {m: spread([r[side][m] for r in runs]) for m in ("edge_precision", "expand_precision", "edges")}
        for side in SIDES
    }
    summary["gain"] = spread([r["gain"] for r in runs])
    summary["oracle_gain"] = spread([r["oracle_gain"] for r in runs])
    summary["same_stream"] = all(r["same_stream"] for r in runs)
    summary["share_of_oracle_gain"] = share_of_oracle(summary["gain"]["median"], summary["oracle_gain"]["median"])
    summary["honest_rejected_share"] = honest_rejected(runs)
    totals = {k: sum(r["on"]["episodes"][k] for r in runs) for k in ("honest", *KINDS)}
    summary["episodes"] = totals
    summary["gate_rejected_share"] = {
        k: (sum(r["on"]["rejected"][k] for r in runs) / totals[k] if totals[k] else None) for k in totals
    }
    summary["hallucinated_grounding"] = grounding_breakdown(
        [d for r in runs for d in r["on"]["corrupted_detail"] if d["kind"] == "hallucinated"])
    for r in runs:  # keep the JSON small: the per-episode detail is summarised above
        r["on"].pop("corrupted_detail")
    return {"unrelated": unrelated, "kinds": list(kinds), "summary": summary, "runs": runs}


def grounding_breakdown(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Grounding scores of the hallucinated episodes (gate on): how many fall below the threshold, the
    score histogram, and the rejection share by (unrelated skills, invented citations)."""
    scores = [d["grounding"] for d in rows if d["grounding"] is not None]
    by_shape: dict[str, dict[str, Any]] = {}
    for (u, inv), group in sorted(Counter((d["unrelated"], d["invented"]) for d in rows).items()):
        members = [d for d in rows if (d["unrelated"], d["invented"]) == (u, inv)]
        by_shape[f"unrelated={u},invented={inv}"] = {
            "n": group,
            "rejected_share": sum(not d["learned"] for d in members) / group,
            "scores": sorted(Counter(round(d["grounding"], 3) for d in members).items()),
        }
    return {
        "n": len(rows),
        "rejected_share": sum(not d["learned"] for d in rows) / len(rows) if rows else None,
        "below_threshold_share": sum(s < THRESHOLD for s in scores) / len(scores) if scores else None,
        "score_median": statistics.median(scores) if scores else None,
        "score_min": min(scores) if scores else None,
        "score_max": max(scores) if scores else None,
        "histogram": sorted(Counter(round(s, 3) for s in scores).items()),
        "by_shape": by_shape,
    }


def budget(blocks: list[dict[str, Any]]) -> dict[str, Any]:
    """Median share of the oracle's gain over the workloads, and the worst honest-rejection share."""
    shares = [b["summary"]["share_of_oracle_gain"] for b in blocks]
    fps = [b["summary"]["honest_rejected_share"] for b in blocks]
    median_share = statistics.median([x for x in shares if x is not None]) if any(x is not None for x in shares) \
        else None
    worst = max((x for x in fps if x is not None), default=None)
    return {"median_share": median_share, "shares": shares, "max_honest_rejected_share": worst,
            "required_share": GOAL_SHARE, "max_allowed_honest_rejected_share": MAX_FALSE_POSITIVE,
            "met": median_share is not None and median_share >= GOAL_SHARE and worst is not None
            and worst <= MAX_FALSE_POSITIVE}


def check_against_results(block: dict[str, Any]) -> bool | None:
    """The default setting must reproduce run.py's committed 30 % runs seed for seed."""
    path = HERE / "results.json"
    if not path.exists():
        return None
    committed = {r["seed"]: r for r in json.loads(path.read_text())["utility"][f"{RATE:.2f}"]["runs"]}
    return all(
        committed[r["seed"]][side][m] == r[side][m]
        for r in block["runs"] if r["seed"] in committed
        for side in SIDES for m in ("edge_precision", "expand_precision", "edges")
    )


def med(s: dict[str, Any]) -> str:
    return f"{fmt(s['median'])} ({fmt(s['min'])}–{fmt(s['max'])})"


def table(blocks: list[dict[str, Any]]) -> str:
    lines = ["| kinds | unrelated | edge prec on | off | oracle | gain on−off | gain oracle−off | share | expand on "
             "| off | oracle | rejected honest / h / f / s | halluc. grounding < 0.7 |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for b in blocks:
        s = b["summary"]
        rej = s["gate_rejected_share"]
        kinds = "h+f+s" if len(b["kinds"]) == 3 else "+".join(k[0] for k in b["kinds"])
        lines.append(
            f"| {kinds} | {b['unrelated']} | {med(s['on']['edge_precision'])} | {med(s['off']['edge_precision'])} | "
            f"{med(s['oracle']['edge_precision'])} | {med(s['gain'])} | {med(s['oracle_gain'])} | "
            f"{fmt(s['share_of_oracle_gain'], 2)} | "
            f"{fmt(s['on']['expand_precision']['median'])} | {fmt(s['off']['expand_precision']['median'])} | "
            f"{fmt(s['oracle']['expand_precision']['median'])} | {fmt(rej['honest'], 3)} / "
            f"{fmt(rej['hallucinated'], 2)} / {fmt(rej['failed'], 2)} / {fmt(rej['silent'], 2)} | "
            f"{fmt(s['hallucinated_grounding']['below_threshold_share'], 2)} |")
    return "\n".join(lines)


def study_args(description: str, default_out: Path) -> argparse.Namespace:
    """The options every study script takes (--seeds, --out); also drops any API key from the
    environment, so the LLM validators are off whatever the caller's shell holds."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--seeds", type=int, nargs="+", default=SEEDS, help="seeds (default: run.py full mode's)")
    parser.add_argument("--out", type=Path, default=default_out,
                        help="JSON output path; the Markdown report goes beside it with .md")
    args = parser.parse_args()
    os.environ.pop("ANTHROPIC_API_KEY", None)
    return args


def write_study(out: dict[str, Any], path: Path, render: Any) -> None:
    """Write the study's JSON and its Markdown report beside it, and print the report."""
    path.write_text(json.dumps(out, indent=2, sort_keys=True) + "\n")
    report = render(out)
    path.with_suffix(".md").write_text(report)
    print(report)
    print(f"wrote {path} and {path.with_suffix('.md')}")


def main() -> int:
    args = study_args(__doc__.splitlines()[0], HERE / "sweep.json")
    started = time.perf_counter()
    blocks = []
    for kinds in KIND_SETS:
        for unrelated in UNRELATED:
            t0 = time.perf_counter()
            print(f"kinds={'+'.join(kinds)} unrelated={unrelated} ...", flush=True)
            block = sweep_one(unrelated, kinds, args.seeds)
            block["elapsed_s"] = time.perf_counter() - t0
            if unrelated == 1 and kinds == KINDS:
                block["reproduces_results_json"] = check_against_results(block)
                print(f"    reproduces results.json 30 % runs: {block['reproduces_results_json']}", flush=True)
            blocks.append(block)
    out = {"protocol": {"rate": RATE, "seeds": args.seeds, "episodes": EPISODES, "dream_every": DREAM_EVERY,
                        "sides": SIDES, "grounding_threshold": THRESHOLD},
           "blocks": blocks, "budget": budget(blocks), "elapsed_s": time.perf_counter() - started}
    write_study(out, args.out, markdown)
    if not out["budget"]["met"]:
        print(f"budget missed: median share {fmt(out['budget']['median_share'])} (>= {GOAL_SHARE}), largest "
              f"honest-rejection share {fmt(out['budget']['max_honest_rejected_share'])} (<= {MAX_FALSE_POSITIVE})",
              file=sys.stderr)
        return 1
    return 0


def markdown(out: dict[str, Any]) -> str:
    blocks = out["blocks"]
    proto = out["protocol"]
    lines = [
        "# Validation gate: how the gain depends on how corruption is modelled",
        "",
        f"Written by `sweep.py` from measurement ({out['elapsed_s']:.0f} s). Corruption rate {proto['rate']:.0%}, "
        f"seeds {proto['seeds']}, {proto['episodes']} episodes, dream every {proto['dream_every']}; median "
        "(min–max) over seeds. Kinds: h = hallucinated, f = failed, s = silent; `unrelated` = unrelated skills "
        "a corrupted episode co-uses (mix = 1–3 drawn per episode). Gate on = the real gate with LLM validators "
        "off; oracle = a perfect detector of corrupted episodes beside it (not a product feature).",
        "",
        table(blocks),
        "",
        f"Budget: median share of the oracle's gain over these {len(blocks)} workloads "
        f"**{fmt(out['budget']['median_share'])}** (>= {out['budget']['required_share']}); largest share of honest "
        f"episodes the gate rejected **{fmt(out['budget']['max_honest_rejected_share'])}** (<= "
        f"{out['budget']['max_allowed_honest_rejected_share']}): {'met' if out['budget']['met'] else 'MISSED'}.",
        "",
        "Grounding scores of the hallucinated episodes (live citations / all citations; threshold "
        f"{proto['grounding_threshold']}):",
        "",
    ]
    for b in blocks:
        g = b["summary"]["hallucinated_grounding"]
        if not g["n"]:
            continue
        lines.append(f"* kinds={'+'.join(b['kinds'])} unrelated={b['unrelated']}: n={g['n']}, rejected "
                     f"{fmt(g['rejected_share'], 2)}; median {fmt(g['score_median'])} (min {fmt(g['score_min'])}, "
                     f"max {fmt(g['score_max'])})")
    same = all(b["summary"]["same_stream"] for b in blocks)
    default = next((b.get("reproduces_results_json") for b in blocks if "reproduces_results_json" in b), None)
    lines += ["", f"Gate on, off and oracle replayed identical streams in every setting: {same}. "
              f"The default setting reproduces results.json's 30 % runs seed for seed: {default}.", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
