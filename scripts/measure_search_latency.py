"""Measure BM25 search latency on a generated library of N skills (default 10,000).

Writes scripts/search_latency.json with p50/p95/p99 over many queries and repeats, and the median
share of the corpus each query's OR of words matches (what BM25 has to score). The library is
generated from a seeded vocabulary, so the run is reproducible:

    python scripts/measure_search_latency.py [--skills 10000] [--queries 500] [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from pathlib import Path

from kaos_dream import Library, ManualClock, Settings

VERBS = "load save transform validate sync export import index compress encrypt deploy monitor".split()
DOMAINS = "postgres redis sqs kafka s3 http grpc csv parquet json yaml docker kubernetes git".split()
WORDS = (VERBS + DOMAINS + "retry backoff schema cache batch stream token auth quota shard replica "
         "snapshot vacuum migrate rollback audit metric alert trace".split())


def build(path: Path, n: int, rng: random.Random) -> None:
    with Library(path, clock=ManualClock(), settings=Settings()) as lib, lib.transaction():
        for i in range(n):
            verb, domain = rng.choice(VERBS), rng.choice(DOMAINS)
            words = " ".join(rng.sample(WORDS, 6))
            lib.skills.add(f"{verb}-{domain}-{i}", f"{words} {domain}", f"Run {verb} against {domain}", [domain])


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--skills", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", type=Path, default=Path(__file__).with_name("search_latency.json"))
    args = parser.parse_args()
    rng = random.Random(42)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "latency.db"
        t0 = time.perf_counter()
        build(path, args.skills, rng)
        build_s = time.perf_counter() - t0
        queries = [" ".join(rng.sample(WORDS, rng.randint(2, 4))) for _ in range(args.queries)]
        p50s: list[float] = []
        all_ms: list[float] = []
        with Library(path, readonly=True, settings=Settings()) as lib:
            matched = statistics.median(
                lib.conn.execute("SELECT count(*) FROM skills_fts WHERE skills_fts MATCH ?",
                                 (" OR ".join(f'"{w}"' for w in q.split()),)).fetchone()[0] / args.skills
                for q in queries
            )
            for q in queries[:20]:
                lib.search(q, kind="skill", rank="bm25")  # warm the page cache
            for _ in range(args.repeats):
                run_ms = []
                for q in queries:
                    t = time.perf_counter()
                    lib.search(q, kind="skill", limit=10, rank="bm25")
                    run_ms.append((time.perf_counter() - t) * 1000)
                p50s.append(statistics.median(run_ms))
                all_ms.extend(run_ms)
    result = {
        "skills": args.skills,
        "queries_per_repeat": args.queries,
        "repeats": args.repeats,
        "build_seconds": round(build_s, 3),
        "median_fraction_of_corpus_matched_by_or": round(matched, 3),
        "p50_ms_median_of_repeats": round(statistics.median(p50s), 4),
        "p50_ms_min": round(min(p50s), 4),
        "p50_ms_max": round(max(p50s), 4),
        "p95_ms": round(percentile(all_ms, 0.95), 4),
        "p99_ms": round(percentile(all_ms, 0.99), 4),
        "max_ms": round(max(all_ms), 4),
    }
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
