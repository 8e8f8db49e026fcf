"""Ask a real model: does the LLM `logical` validator catch corrupted episodes, and what does the gate
then gain? (An opt-in study for whoever has an API key; never run by CI, run.py or the tests' network.)

The +0.3 goal needs a validator that catches most corrupted episodes (``judge_sweep.md``: with 1-3
unrelated skills per corrupted episode, about 60 % of them); only a model can see silent co-use of
unrelated skills, and this machine has neither network nor key. With ``ANTHROPIC_API_KEY`` set, this
script replays run.py's kind of stream on the hand-written English library (``english_library.json``;
texts a model can judge) with the real validators — outcome, grounding and the model's logical score
against the episode's task, conclusion and cited texts — and the same stream with an always-pass
gate, and reports per seed and overall:

* the logical validator's **recall** (share of corrupted episodes it failed, by kind) and **false
  positive rate** (share of honest episodes it failed), and how often it was off (model errors);
* the whole gate's rejections by kind, and edge precision with the gate and without it (the gain).

No preferences are set, so ``alignment`` stays off and the study measures ``logical`` alone. Each
episode costs two requests (logical, novelty); the plan and the request count are printed first.

    ANTHROPIC_API_KEY=... python demo_validation_gate_bench/live_judge.py [--seeds 1 2 3] [--episodes 400]
        [--unrelated mix] [--library english] [--out live_judge.json]

``KAOS_LLM_MODEL``, ``KAOS_LLM_BASE_URL``, ``KAOS_LLM_TIMEOUT_S`` are honoured as everywhere else.
Writes ``live_judge.json`` and ``live_judge.md`` beside this file (or ``--out``). Without a key it says
so and exits 2, writing nothing.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from run import GOAL_MARGIN, fmt, gain, spread  # noqa: E402
from sweep import DREAM_EVERY, EPISODES, RATE, med, write_study  # noqa: E402
from utility import run_stream  # noqa: E402
from workload import KINDS  # noqa: E402

from kaos_dream import Settings  # noqa: E402
from kaos_dream.errors import KaosError  # noqa: E402

REQUESTS_PER_EPISODE = 2  # logical and novelty; alignment is off without preferences


def judge_quality(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """From every episode's stored verdicts: the logical validator's recall by kind and overall, its
    false-positive rate on honest episodes, how often it was off, and the gate's rejections by kind."""
    def failed_share(kinds: tuple[str, ...]) -> float | None:
        judged = [r for r in rows if r["kind"] in kinds and r["validators"].get("logical", {}).get("enabled")]
        return sum(r["validators"]["logical"]["passed"] is False for r in judged) / len(judged) if judged else None

    return {
        "logical_recall": failed_share(KINDS),
        "logical_recall_by_kind": {k: failed_share((k,)) for k in KINDS},
        "logical_false_positive": failed_share(("honest",)),
        "logical_off": sum(not r["validators"].get("logical", {}).get("enabled") for r in rows),
        "logical_off_reasons": sorted({r["validators"]["logical"]["reason"] for r in rows
                                       if "logical" in r["validators"] and not r["validators"]["logical"]["enabled"]}),
        "gate_rejected": {k: sum(not r["learned"] for r in rows if r["kind"] == k) for k in ("honest", *KINDS)},
        "episodes": {k: sum(r["kind"] == k for r in rows) for k in ("honest", *KINDS)},
    }


def live_settings(environ: dict[str, str]) -> Settings:
    """The caller's settings (key, model, endpoint, timeout) with the automatic dream pass off."""
    return dataclasses.replace(Settings.from_env(environ), dream_threshold=10**9)


def study(seeds: list[int], episodes: int, unrelated: int | str, library: str, settings: Settings) -> dict[str, Any]:
    runs = []
    for seed in seeds:
        common = {"episodes": episodes, "dream_every": DREAM_EVERY, "unrelated": unrelated, "library": library}
        t0 = time.perf_counter()
        off = run_stream(seed, RATE, gate="off", **common)
        on = run_stream(seed, RATE, gate="on", settings=settings, verdicts=True, **common)
        quality = judge_quality(on.pop("verdicts"))
        runs.append({"seed": seed, "off": off, "on": on, "gain": gain(on, off), "judge": quality,
                     "same_stream": on["stream"] == off["stream"], "elapsed_s": time.perf_counter() - t0})
        print(f"  seed {seed}: logical recall {fmt(quality['logical_recall'], 2)}, false positives "
              f"{fmt(quality['logical_false_positive'], 2)}, off {quality['logical_off']}; edge precision "
              f"{fmt(on['edge_precision'])} vs {fmt(off['edge_precision'])} (gain {fmt(runs[-1]['gain'])})", flush=True)
    return {
        "runs": runs,
        "summary": {
            "gain": spread([r["gain"] for r in runs]),
            "on": spread([r["on"]["edge_precision"] for r in runs]),
            "off": spread([r["off"]["edge_precision"] for r in runs]),
            "logical_recall": spread([r["judge"]["logical_recall"] for r in runs]),
            "logical_false_positive": spread([r["judge"]["logical_false_positive"] for r in runs]),
            "logical_off": sum(r["judge"]["logical_off"] for r in runs),
            "same_stream": all(r["same_stream"] for r in runs),
            "meets_goal_median": (spread([r["gain"] for r in runs])["median"] or 0) >= GOAL_MARGIN,
        },
    }


def markdown(out: dict[str, Any]) -> str:
    p, s = out["protocol"], out["summary"]
    lines = [
        "# Validation gate with a real model as the logical validator",
        "",
        f"Written by `live_judge.py` from measurement ({out['elapsed_s']:.0f} s) with model `{p['model']}` at "
        f"{p['endpoint']}. Library {p['library']}, corruption {p['rate']:.0%}, unrelated skills per corrupted "
        f"episode {p['unrelated']}, {p['episodes']} episodes, dream every {p['dream_every']}, seeds {p['seeds']}; "
        "median (min–max) over seeds.",
        "",
        f"* logical recall on corrupted episodes {med(s['logical_recall'])}; false positives on honest "
        f"{med(s['logical_false_positive'])}; verdicts off (model errors) {s['logical_off']}",
        f"* edge precision with the gate {med(s['on'])}, without {med(s['off'])}: gain {med(s['gain'])} "
        f"(goal ≥ {GOAL_MARGIN}: {'met' if s['meets_goal_median'] else 'missed'} in the median)",
        f"* identical streams in both arms: {s['same_stream']}",
        "",
        "| seed | recall (h / f / s) | false positives | off | gate rejected (honest / h / f / s) "
        "| precision on | off | gain |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in out["runs"]:
        j = r["judge"]
        by = j["logical_recall_by_kind"]
        rej = j["gate_rejected"]
        lines.append(
            f"| {r['seed']} | {fmt(j['logical_recall'], 2)} ({' / '.join(fmt(by[k], 2) for k in KINDS)}) | "
            f"{fmt(j['logical_false_positive'], 2)} | {j['logical_off']} | "
            f"{' / '.join(str(rej[k]) for k in ('honest', *KINDS))} | {fmt(r['on']['edge_precision'])} | "
            f"{fmt(r['off']['edge_precision'])} | {fmt(r['gain'])} |")
    reasons = sorted({x for r in out["runs"] for x in r["judge"]["logical_off_reasons"]})
    if reasons:
        lines += ["", "Why the logical validator was off for some episodes: " + "; ".join(reasons[:5])]
    return "\n".join(lines) + "\n"


def unrelated_count(text: str) -> int | str:
    if text == "mix":
        return text
    if text.isdigit() and int(text) >= 1:
        return int(text)
    raise argparse.ArgumentTypeError(f"expected a count >= 1 or 'mix', not {text!r}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3], help="seeds (default 1 2 3)")
    parser.add_argument("--episodes", type=int, default=EPISODES, help=f"episodes per seed (default {EPISODES})")
    parser.add_argument("--unrelated", type=unrelated_count, default="mix",
                        help="unrelated skills per corrupted episode: a count >= 1 or mix (default)")
    parser.add_argument("--library", choices=("english", "synthetic"), default="english")
    parser.add_argument("--out", type=Path, default=HERE / "live_judge.json",
                        help="JSON output path; the Markdown report goes beside it with .md")
    args = parser.parse_args()
    unrelated: int | str = args.unrelated
    if args.episodes < DREAM_EVERY:
        parser.error(f"--episodes must be at least {DREAM_EVERY} (one dream pass)")
    try:
        settings = live_settings(dict(os.environ))
    except KaosError as exc:
        print(f"live_judge.py: {exc}", file=sys.stderr)
        return 2
    if not settings.anthropic_api_key or not settings.llm:
        print("live_judge.py: needs ANTHROPIC_API_KEY (and network): it asks a real model. Everything else in "
              "this benchmark runs without one: python demo_validation_gate_bench/run.py", file=sys.stderr)
        return 2
    endpoint = settings.llm_base_url or "the SDK's default endpoint"
    print(f"live judge: model {settings.llm_model} at {endpoint}; {len(args.seeds)} seeds x {args.episodes} "
          f"episodes, about {len(args.seeds) * args.episodes * REQUESTS_PER_EPISODE} requests", flush=True)
    started = time.perf_counter()
    result = study(args.seeds, args.episodes, unrelated, args.library, settings)
    out = {"protocol": {"seeds": args.seeds, "episodes": args.episodes, "unrelated": unrelated, "rate": RATE,
                        "dream_every": DREAM_EVERY, "library": args.library, "model": settings.llm_model,
                        "endpoint": endpoint, "logical_threshold": settings.logical_threshold},
           **result, "elapsed_s": time.perf_counter() - started}
    write_study(out, args.out, markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
