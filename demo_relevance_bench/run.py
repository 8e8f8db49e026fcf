"""Relevance with no outcome evidence, at library sizes 3, 30, 300 and 3,000.

A new user's first library is small, and nothing has been recorded yet: the ranking must then be
the relevance order. This benchmark builds libraries of each size from a generated catalogue of data
tools (``csv-to-parquet``, ``csv-to-parquet-fast``, ``validate-json``, ``upload-avro-to-s3`` …; size 3
is exactly issue 16's repro), adds them through the real library with an injected clock (one hour
apart, as a library grows), and asks queries whose answer is known (the words of one skill's
description). Nothing is recorded. Top-1 accuracy is measured for:

* ``bm25`` — ``rank="bm25"``, FTS5's lexical order (the reference the goal compares with),
* ``weighted`` — the default ranking,
* ``wilson`` — the seed's formula exactly, which is what the default was before issue 16,
* ``bm25_plus`` — an outside reference with an IDF that stays positive: ``rank_bm25.BM25Plus`` over
  the same texts (name, description, tags), scored in memory (not a library ranking).

Goal (exit 1 when missed): weighted top-1 >= bm25 top-1 at every size and seed. Sizes above 3 use
several seeded samples of the catalogue; results are median [min, max] over them.

    python demo_relevance_bench/run.py [--quick] [--out DIR] [--seed N] [--junit FILE]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import sys
import time
from itertools import permutations
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from rank_bm25 import BM25Plus  # noqa: E402

from kaos_dream import Library, ManualClock, Settings, benchkit  # noqa: E402
from kaos_dream.search import content_tokens  # noqa: E402

T0 = 1_767_225_600.0
SIZES = (3, 30, 300, 3000)
SEED = 1  # the first of the samples per size (--seed); the committed results use 1..5
SAMPLES = 5
QUERIES_PER_LIBRARY = 40
RANKS = ("bm25", "weighted", "wilson")

REPRO = [
    ("csv-to-parquet", "Convert CSV files to Parquet"),
    ("csv-to-parquet-fast", "Convert CSV files to Parquet quickly"),
    ("csv-to-json", "Convert CSV files to JSON"),
]
FORMATS = ["CSV", "JSON", "Parquet", "XML", "YAML", "Avro", "Excel", "ORC", "Protobuf", "TOML", "Markdown",
           "HTML", "PDF", "SQL", "MessagePack", "Arrow", "NDJSON", "TSV", "INI", "BSON"]
VARIANTS = [("", ""), ("-fast", " quickly"), ("-stream", " in a streaming way"), ("-batch", " in nightly batches"),
            ("-safe", " with a backup of the input"), ("-validated", " after validating the input"),
            ("-parallel", " on several cores"), ("-cloud", " in the cloud")]
STORES = ["S3", "GCS", "Azure", "SFTP", "HDFS"]


def catalogue() -> list[tuple[str, str]]:
    """Every skill the generator knows (more than 3,000), in a fixed order."""
    out: list[tuple[str, str]] = []
    for a, b in permutations(FORMATS, 2):
        for suffix, words in VARIANTS:
            out.append((f"{a}-to-{b}{suffix}".lower(), f"Convert {a} files to {b}{words}"))
    for f in FORMATS:
        out.append((f"validate-{f}".lower(), f"Validate {f} files against a schema"))
        out.append((f"compress-{f}".lower(), f"Compress {f} files with zstd"))
        out.append((f"merge-{f}".lower(), f"Merge several {f} files into one"))
        out.append((f"split-{f}".lower(), f"Split a large {f} file into parts"))
        for s in STORES:
            out.append((f"upload-{f}-to-{s}".lower(), f"Upload {f} files to {s}"))
            out.append((f"download-{f}-from-{s}".lower(), f"Download {f} files from {s}"))
    return out


def query_for(description: str) -> str:
    """What a user would type: the description, lower case, without the word 'files'."""
    return re.sub(r"\bfiles?\b ?", "", description.lower()).strip()


def library_sample(size: int, seed: int) -> list[tuple[str, str]]:
    if size == 3:
        return list(REPRO)
    universe = catalogue()
    return random.Random(seed).sample(universe, size)


def measure(size: int, seed: int) -> dict[str, Any]:
    skills = library_sample(size, seed)
    rng = random.Random(seed * 7919 + size)
    targets = skills if len(skills) <= QUERIES_PER_LIBRARY else rng.sample(skills, QUERIES_PER_LIBRARY)
    queries = [(query_for(desc), name) for name, desc in targets]
    # The answer must be unique: drop a query whose words are another skill's exact words too.
    texts = {name: desc for name, desc in skills}
    clock = ManualClock(T0)
    correct = {rank: 0 for rank in (*RANKS, "bm25_plus")}
    with Library(":memory:", clock=clock, settings=Settings()) as lib:
        with lib.transaction():
            for name, desc in skills:
                clock.advance(3_600.0)
                lib.skills.add(name, desc)
        clock.advance(3_600.0)
        for query, truth in queries:
            for rank in RANKS:
                top = lib.search(query, kind="skill", limit=1, rank=rank)
                correct[rank] += bool(top) and top[0].name == truth
    names = [name for name, _ in skills]
    corpus = [content_tokens(f"{name} {texts[name]}") for name in names]
    plus = BM25Plus(corpus)
    for query, truth in queries:
        scores = plus.get_scores(content_tokens(query))
        best = max(range(len(names)), key=lambda i: (scores[i], -i))  # ties by id (insertion order)
        correct["bm25_plus"] += names[best] == truth
    n = len(queries)
    return {"size": size, "seed": seed, "queries": n, "top1": {k: round(v / n, 4) for k, v in correct.items()}}


def spread(values: list[float]) -> dict[str, float]:
    return {"median": round(statistics.median(values), 4), "min": min(values), "max": max(values)}


def pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def render(r: dict[str, Any]) -> str:
    lines = ["# demo_relevance_bench results", "", "Generated by run.py; do not edit.", "",
             "Top-1 with no outcome evidence, median [min, max] over library samples.", "",
             "| size | samples | queries each | bm25 | weighted (default) | wilson (seed formula) | "
             "BM25+ reference (rank_bm25) |", "|---|---|---|---|---|---|---|"]
    for size, s in r["sizes"].items():
        cells = [f"{pct(s[k]['median'])} [{pct(s[k]['min'])}, {pct(s[k]['max'])}]"
                 for k in ("bm25", "weighted", "wilson", "bm25_plus")]
        lines.append(f"| {size} | {len(s['runs'])} | {s['runs'][0]['queries']} | " + " | ".join(cells) + " |")
    lines += ["", "Issue 16's repro (size 3, `convert csv to parquet`, kind skill):", ""]
    for rank, rows in r["repro"].items():
        lines.append(f"* {rank}: " + ", ".join(f"{name} {score:.4g}" for name, score in rows))
    lines += ["", "## Checks", ""]
    lines += [f"* {name}: {'pass' if ok else 'FAIL'}" for name, ok in r["checks"].items()]
    lines += ["", f"Overall: {'PASS' if r['passed'] else 'FAIL'} ({r['seconds']} s)", ""]
    return "\n".join(lines)


def repro() -> dict[str, list[tuple[str, float]]]:
    out = {}
    with Library(":memory:", clock=ManualClock(T0), settings=Settings()) as lib:
        for name, desc in REPRO:
            lib.skills.add(name, desc)
        for rank in RANKS:
            out[rank] = [(h.name, h.score) for h in lib.search("convert csv to parquet", kind="skill", rank=rank)]
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="2 samples per size")
    parser.add_argument("--out", type=Path, default=HERE)
    benchkit.add_standard_args(parser, here=HERE, seed=SEED)  # --seed (first catalogue sample), --junit
    args = parser.parse_args()
    stem = benchkit.results_stem(args).name  # results or results.quick, in a folder that exists
    seeds = benchkit.seed_sweep(args, 2 if args.quick else SAMPLES)
    started = time.perf_counter()
    results: dict[str, Any] = {"quick": args.quick, "sizes": {}, "repro": repro()}
    checks: dict[str, bool] = {}
    for size in SIZES:
        runs = [measure(size, s) for s in (seeds[:1] if size == 3 else seeds)]
        entry: dict[str, Any] = {"runs": runs}
        for key in (*RANKS, "bm25_plus"):
            entry[key] = spread([run["top1"][key] for run in runs])
        results["sizes"][str(size)] = entry
        checks[f"size_{size}_weighted_ge_bm25_every_sample"] = all(
            run["top1"]["weighted"] >= run["top1"]["bm25"] for run in runs)
    results["checks"] = checks
    results["passed"] = all(checks.values())
    results["seconds"] = round(time.perf_counter() - started, 2)
    (args.out / f"{stem}.json").write_text(json.dumps(results, indent=2) + "\n")
    (args.out / f"{stem}.md").write_text(render(results))
    print(render(results))
    return benchkit.finish(args, "demo_relevance_bench", benchkit.Checks.from_mapping(checks), results["seconds"])


if __name__ == "__main__":
    sys.exit(main())
