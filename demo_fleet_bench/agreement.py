"""Do SQLite and PostgreSQL rank alike, and what does a search cost the client on each?

Issue 35's contract between the engines is the same top-k *set*, not the same BM25 to the last bit.
This script builds the same libraries on both engines in lockstep (same injected clock, same writes)
and asks both the same queries:

* relevance: demo_relevance_bench's catalogue at several sizes, its queries (a skill's description
  in lower case without "files"), ranks ``bm25`` and ``weighted``, nothing recorded;
* neuroplasticity: demo_neuroplasticity_bench's drift workload (families + filler), its queries with
  their task under the default ranking, checked after every 10 rounds of a seeded outcome replay
  (old convention works before the switch, new after, a seeded wrong pick fails now and then) that
  writes the same outcomes to both engines, so any difference is the ranking's own.

A query *agrees at k* when both engines return the same set of ids in their top k. Client CPU per
search is ``time.process_time()`` over N searches on one connection, divided by N (the server's
CPU is not in it; on SQLite the engine runs in-process, so all of it is).

Used by run.py (results.json "agreement") and runnable alone::

    python demo_fleet_bench/agreement.py [--quick] [--sizes 30,300] [--pg-url URL] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import targets  # noqa: E402

from kaos_dream import Library, ManualClock, Settings  # noqa: E402

T0 = 1_767_225_600.0
KS = (5, 10)
SIZES = (30, 300, 3000)
QUICK_SIZES = (30, 300)
CPU_REPEATS = 3  # each timed pass runs every query once; the figure is the median pass


def _relevance_module() -> Any:
    sys.path.insert(0, str(ROOT / "demo_relevance_bench"))
    try:
        import run as relevance  # demo_relevance_bench/run.py: catalogue, library_sample, query_for
    finally:
        sys.path.remove(str(ROOT / "demo_relevance_bench"))
    sys.modules.pop("run", None)
    return relevance


class Tally:
    """Queries asked, and how many agreed at each k."""

    def __init__(self) -> None:
        self.queries = 0
        self.agree = {k: 0 for k in KS}
        self.examples: list[dict[str, Any]] = []

    def add(self, label: str, a: list[int], b: list[int]) -> None:
        self.queries += 1
        for k in KS:
            same = set(a[:k]) == set(b[:k])
            self.agree[k] += same
            if not same and len(self.examples) < 5:
                self.examples.append({"query": label, "k": k, "sqlite": a[:k], "postgresql": b[:k]})

    def summary(self) -> dict[str, Any]:
        n = max(self.queries, 1)
        return {"queries": self.queries, **{f"top{k}_same_set": round(self.agree[k] / n, 4) for k in KS},
                "disagreements": self.examples}


def _ids(lib: Library, query: str, **kw: Any) -> list[int]:
    return [h.id for h in lib.search(query, kind="skill", limit=max(KS), **kw)]


def _cpu_per_search(lib: Library, queries: list[tuple[str, dict[str, Any]]]) -> float:
    """Median over CPU_REPEATS passes of process CPU seconds per search, in microseconds."""
    passes = []
    for _ in range(CPU_REPEATS):
        started = time.process_time()
        for query, kw in queries:
            lib.search(query, kind="skill", limit=max(KS), **kw)
        passes.append((time.process_time() - started) / len(queries) * 1e6)
    passes.sort()
    return passes[len(passes) // 2]


def relevance_agreement(open_pair: Callable[[ManualClock], tuple[Library, Library]], sizes: tuple[int, ...],
                        cpu: dict[str, dict[str, float]]) -> dict[str, Any]:
    relevance = _relevance_module()
    out: dict[str, Any] = {}
    for rank in ("bm25", "weighted"):
        out[rank] = Tally()
    for size in sizes:
        skills = relevance.library_sample(size, 1)
        rng = random.Random(7919 + size)
        chosen = skills if len(skills) <= 40 else rng.sample(skills, 40)
        queries = [relevance.query_for(desc) for _, desc in chosen]
        clock = ManualClock(T0)
        lite, pg = open_pair(clock)
        try:
            with lite.transaction(), pg.transaction():
                for name, desc in skills:
                    clock.advance(3_600.0)  # a library grows over time: edit recency differs
                    lite.skills.add(name, desc)
                    pg.skills.add(name, desc)
            clock.advance(3_600.0)
            for query in queries:
                for rank in ("bm25", "weighted"):
                    out[rank].add(f"{size}: {query} ({rank})", _ids(lite, query, rank=rank), _ids(pg, query, rank=rank))
            if size == max(sizes):
                timed = [(q, {"rank": "weighted"}) for q in queries]
                cpu[f"relevance_{size}"] = {"sqlite": round(_cpu_per_search(lite, timed), 1),
                                            "postgresql": round(_cpu_per_search(pg, timed), 1),
                                            "searches_per_pass": len(timed)}
        finally:
            lite.close()
            pg.close()
    return {rank: t.summary() for rank, t in out.items()} | {"sizes": list(sizes)}


def neuroplasticity_agreement(open_pair: Callable[[ManualClock], tuple[Library, Library]], seed: int,
                              cpu: dict[str, dict[str, float]]) -> dict[str, Any]:
    data = json.loads((ROOT / "demo_neuroplasticity_bench" / "drift_workload.json").read_text())
    protocol, families = data["protocol"], data["families"]
    rounds = int(protocol["pre_switch"]) + int(protocol["post_switch"])
    tally = Tally()
    clock = ManualClock(T0)
    lite, pg = open_pair(clock)
    rng = random.Random(seed)
    try:
        with lite.transaction(), pg.transaction():
            for skill in [s for f in families for s in f["skills"]] + data.get("filler", []):
                lite.skills.add(skill["name"], skill["description"])
                pg.skills.add(skill["name"], skill["description"])
        for round_ in range(rounds):
            switched = round_ >= int(protocol["pre_switch"])
            order = list(range(len(families)))
            rng.shuffle(order)
            for fi in order:
                family = families[fi]
                clock.advance(60.0)
                works = family["new"] if switched else family["old"]
                pick = rng.choice(family["skills"])["name"] if rng.random() < 0.2 else works
                for lib in (lite, pg):
                    lib.record_outcome(pick, pick == works, agent="replay", task=family["task"])
            if round_ % 10 == 9:
                for family in families:
                    for query in family["queries"]:
                        tally.add(f"round {round_ + 1}: {query}", _ids(lite, query, task=family["task"]),
                                  _ids(pg, query, task=family["task"]))
        timed = [(q, {"task": f["task"]}) for f in families for q in f["queries"]]
        cpu["neuroplasticity"] = {"sqlite": round(_cpu_per_search(lite, timed), 1),
                                  "postgresql": round(_cpu_per_search(pg, timed), 1),
                                  "searches_per_pass": len(timed)}
    finally:
        lite.close()
        pg.close()
    return tally.summary() | {"seed": seed, "rounds": rounds}


def measure(pg: targets.PostgresTarget, quick: bool, seed: int = 1,
            sizes: tuple[int, ...] | None = None) -> dict[str, Any]:
    """Agreement and client CPU per search, on a SQLite file and a fresh database of ``pg``
    (relevance libraries of ``sizes``; default by ``quick``)."""
    lite_target = targets.SqliteTarget()
    made: list[str] = []

    def open_pair(clock: ManualClock) -> tuple[Library, Library]:
        lite_db, pg_db = lite_target.fresh(), pg.fresh()
        made.append(pg_db)
        settings = Settings()
        return Library(lite_db, clock=clock, settings=settings), Library(pg_db, clock=clock, settings=settings)

    cpu: dict[str, dict[str, float]] = {}
    started = time.perf_counter()
    try:
        result = {
            "relevance": relevance_agreement(open_pair, sizes or (QUICK_SIZES if quick else SIZES), cpu),
            "neuroplasticity": neuroplasticity_agreement(open_pair, seed, cpu),
        }
    finally:
        for db in made:
            pg.drop(db)
        lite_target.close()
    result["client_cpu_us_per_search"] = cpu
    result["load_average"] = round(os.getloadavg()[0], 2)
    result["seconds"] = round(time.perf_counter() - started, 1)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="relevance sizes 30 and 300 only")
    parser.add_argument("--pg-url", default=None, metavar="URL", help="an existing server (default: a throw-away one)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the neuroplasticity outcome replay (default 1)")
    parser.add_argument("--sizes", default=None, help="relevance library sizes, comma-separated (default 30,300,3000; "
                        "quick 30,300)")
    parser.add_argument("--out", default=None, metavar="FILE", help="write the JSON here as well as to stdout")
    args = parser.parse_args()
    try:
        sizes = tuple(int(n) for n in args.sizes.split(",")) if args.sizes else None
    except ValueError:
        parser.error("--sizes takes whole numbers separated by commas, such as 30,300")
    largest = len(_relevance_module().catalogue())
    if sizes is not None and (not sizes or min(sizes) < 1 or max(sizes) > largest):
        parser.error(f"--sizes must be between 1 and {largest} (the relevance catalogue's size)")
    pg, reason = targets.postgres_target(args.pg_url)
    if pg is None:
        print(reason, file=sys.stderr)
        return 1
    try:
        result = measure(pg, args.quick, args.seed, sizes)
    finally:
        pg.close()
    text = json.dumps(result, indent=2)
    if args.out:
        out = Path(args.out)
        tmp = out.with_name(out.name + ".tmp")
        tmp.write_text(text + "\n")
        tmp.replace(out)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
