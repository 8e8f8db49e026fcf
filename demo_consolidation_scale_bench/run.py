"""Dream consolidation at scale: a full pass (dry-run and apply) at 100 / 1k / 10k / 100k skills.

For each scale a separate worker process (so peak RSS is per scale):
1. loads the reference library (``consolidation_scale_data_N.json`` from the shared bench data) or,
   at 100k or when the data is absent, generates it with ``generator.py`` (the reference spec,
   reimplemented; the worker checks it reproduces every reference library it can read);
2. seeds a fresh kaos-dream file (timed);
3. times ``lib.dream.run()`` (dry run) and ``lib.dream.run(apply=True)`` — each repeat on a fresh copy
   of the seeded file, opened anew — and one more apply pass on an already-dreamed file (idempotent
   rerun); p50 = sorted[len // 2] as in the reference, plus min/max;
4. reports merge pairs found by the pass vs an exact all-pairs scan (a dense numpy token-incidence
   product in its own process, independent of the join in ``kaos_dream/dream/similarity.py``).

Also timed, on the same fresh copy right before each pass: the read-and-tokenise floor (every live
skill's text read and tokenised as merge detection does, the outcome and memory-hit rows scanned once).

Budgets (issue 5): 10k p50 <= 1 s, 100k p50 <= 15 s, peak RSS at 100k <= 1 GB, merge pairs
identical to the exact scan. Exits 1 when one is missed. ``--quick`` runs 100 and 1k only (CI).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(HERE))

from kaos_dream import benchkit  # noqa: E402  (light: the library loads in the workers only)

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "bench-data" / "kaos"
SCALES = (100, 1000, 10_000, 100_000)
QUICK_SCALES = (100, 1000)
BUDGET_S = {10_000: 1.0, 100_000: 15.0}
RSS_BUDGET_MB = {100_000: 1024.0}
FLOOR_RATIO_BUDGET = {100_000: 2.0}  # issue 19: a 100k pass p50 <= 2 x the read-and-tokenise floor p50
T0 = 1_767_225_600.0


# -- data -----------------------------------------------------------------------------------------
def load_spec(data_dir: Path) -> dict[str, Any] | None:
    path = data_dir / "consolidation_scale_spec.json"
    return json.loads(path.read_text()) if path.exists() else None


def library_data(n: int, data_dir: Path) -> tuple[dict[str, Any], str, bool | None]:
    """(library, source, generator reproduces the reference?)."""
    from generator import generate

    spec = load_spec(data_dir)
    if spec is None:
        raise SystemExit(f"bench data not found in {data_dir}: the spec's VOCAB/DOMAINS are needed (use --data)")
    vocab, domains = spec["generator"]["VOCAB"], spec["generator"]["DOMAINS"]
    ref_path = data_dir / f"consolidation_scale_data_{n}.json"
    generated = generate(n, vocab, domains)
    if ref_path.exists():
        ref = json.loads(ref_path.read_text())
        return ref, f"reference {ref_path.name}", generated == ref
    return generated, "generator.py (reference spec, seed 42)", None


def seed(db: Path, data: dict[str, Any]) -> float:
    from kaos_dream import Library, ManualClock, Settings
    from kaos_dream.store import transaction

    t0 = time.perf_counter()
    lib = Library(db, clock=ManualClock(T0), settings=Settings())
    with transaction(lib.conn):
        c = lib.conn
        c.execute("INSERT INTO agents (id, state, started_at, ended_at, processed_at) "
                  "VALUES ('owner', 'completed', ?, ?, ?)", (T0, T0, T0))
        c.executemany(
            "INSERT INTO skills (id, name, description, template, tags, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            ((s["skill_id"], s["name"], s["description"], s["template"], json.dumps(s["tags"]), T0, T0)
             for s in data["skills"]))
        c.executemany(
            "INSERT INTO memories (id, kind, key, content, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
            ((m["memory_id"], m["type"], m["key"], m["content"], T0, T0) for m in data["memories"]))
        c.executemany(
            "INSERT INTO memory_hits (memory_id, agent_id, query, rank, created_at) VALUES (?, 'owner', ?, 1, ?)",
            ((m["memory_id"], m["key"], T0) for m in data["memories"] for _ in range(m["hits"])))
        c.executemany(
            "INSERT INTO skill_uses (skill_id, agent_key, success, created_at) "
            "SELECT ?, (SELECT id FROM agent_keys WHERE agent_id = 'owner'), ?, ?",
            ((s["skill_id"], ok, T0) for s in data["skills"] for ok in s["uses_success"]))
    lib.close()
    return time.perf_counter() - t0


# -- one pass -------------------------------------------------------------------------------------
# What a pass runs is pinned here, not left to the environment or to which wheels are installed: the
# shipped tiers and the shipped per-pass row cap of the strong tier's backfill (issue 33 item 10).
PASS_SETTINGS = {"dream_auto": False, "semantic": True, "embedding_model": "wordllama",
                 "strong_embedding_model": "minilm", "strong_backfill_rows": 1024}
BACKFILL_PHASE = "strong-vectors"


def timed_pass(db: Path, apply: bool) -> tuple[float, float, dict[str, Any]]:
    """(seconds of the pass without the strong tier's one-time backfill, CPU seconds of the pass's own
    thread, the pass's summary). The backfill is its own phase (issue 36): a row is embedded by it
    once, so it is no part of the steady cost of a pass; its own seconds and rows are in the summary
    (``timings_ms``, ``phases``). It embeds in background threads at the lowest priority, so the
    calling thread's CPU time (``time.thread_time``) is the pass without that embedding (the writes
    of its rows included): on a loaded machine wall time also counts the waits for a core."""
    from kaos_dream import Library, ManualClock, Settings

    lib = Library(db, clock=ManualClock(T0 + 3600), settings=Settings(**PASS_SETTINGS))  # type: ignore[arg-type]
    try:
        t0, c0 = time.perf_counter(), time.thread_time()
        outcome = lib.dream.run(apply=apply)
        elapsed, cpu = time.perf_counter() - t0, time.thread_time() - c0
    finally:
        lib.close()
    assert outcome.status == "completed", outcome.message
    return elapsed - outcome.summary["timings_ms"].get(BACKFILL_PHASE, 0.0) / 1000.0, cpu, outcome.summary


def read_and_tokenise_floor(db: Path) -> float:
    """Seconds to do what no pass can skip, on a plain connection: read every live skill's text and
    tokenise it the way merge detection does, and scan the outcome and memory-hit rows once."""
    import sqlite3

    from kaos_dream.dream.similarity import tokenize

    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        t0 = time.perf_counter()
        rows = conn.execute("SELECT id, name, description FROM skills WHERE deprecated = 0 ORDER BY id").fetchall()
        tokens = [tokenize(name, desc) for _, name, desc in rows]
        conn.execute("SELECT count(*), sum(success) FROM skill_uses").fetchone()
        conn.execute("SELECT count(*) FROM memory_hits").fetchone()
        elapsed = time.perf_counter() - t0
    finally:
        conn.close()
    assert len(tokens) == len(rows)
    return elapsed


def stats(samples: list[float]) -> dict[str, float]:
    s = sorted(samples)
    return {"p50_s": round(s[len(s) // 2], 4), "min_s": round(s[0], 4), "max_s": round(s[-1], 4),
            "samples_s": [round(x, 4) for x in samples]}


def worker(n: int, data_dir: Path, repeats: int) -> dict[str, Any]:
    data, source, reproduces = library_data(n, data_dir)
    tmp = Path(tempfile.mkdtemp(prefix=f"kaos-scale-{n}-"))
    try:
        base = tmp / "seeded.db"
        seeding_s = seed(base, data)
        result: dict[str, Any] = {"skills": n, "source": source, "generator_reproduces_reference": reproduces,
                                  "seeding_s": round(seeding_s, 3)}
        floors: list[float] = []
        for mode in ("dry-run", "apply"):
            samples, cpu_samples, phases, backfill_s, backfill_rows = [], [], [], [], []
            summary: dict[str, Any] = {}
            for r in range(repeats):
                db = tmp / f"{mode}-{r}.db"
                for suffix in ("", "-wal", "-shm"):
                    if Path(str(base) + suffix).exists():
                        shutil.copy(str(base) + suffix, str(db) + suffix)
                floors.append(read_and_tokenise_floor(db))  # the same fresh copy, right before its pass
                elapsed, cpu, summary = timed_pass(db, mode == "apply")
                samples.append(elapsed)
                cpu_samples.append(cpu)
                phases.append(summary["timings_ms"])
                backfill_s.append(summary["timings_ms"].get(BACKFILL_PHASE, 0.0) / 1000.0)
                backfill_rows.append(summary["phases"].get(BACKFILL_PHASE, {}).get("embedded", 0))
            pro = summary["phases"]["proposals"]
            result[mode] = {
                **stats(samples),
                "cpu": stats(cpu_samples),
                "phase_ms_p50": {k: sorted(p[k] for p in phases)[len(phases) // 2] for k in phases[0]},
                "merge_pairs": pro["merge"]["qualifying"],
                "promote": pro["promote"]["qualifying"],
                "prune": pro["prune"]["qualifying"],
                "strong_backfill": {**stats(backfill_s), "rows": backfill_rows,
                                    "on": summary["phases"].get(BACKFILL_PHASE, {}).get("on", False),
                                    "still_missing": summary["phases"].get(BACKFILL_PHASE, {}).get("missing")},
            }
            if mode == "apply":
                rerun_s, _, rerun = timed_pass(db, True)
                p2 = rerun["phases"]["proposals"]
                result["apply_rerun"] = {
                    "seconds": round(rerun_s, 4),
                    "strong_backfill_s": round(rerun["timings_ms"].get(BACKFILL_PHASE, 0.0) / 1000.0, 4),
                    "new_proposals": sum(p2[k]["created"] for k in ("promote", "prune", "merge")),
                    "promoted": p2["promoted"], "pruned": p2["pruned"],
                }
        result["floor"] = stats(floors)
        for mode in ("dry-run", "apply"):
            result[mode]["vs_floor"] = round(result[mode]["p50_s"] / result["floor"]["p50_s"], 3)
        result["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
        return result
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# -- the exact reference scan ---------------------------------------------------------------------
def exact_pairs(n: int, data_dir: Path, threshold: float) -> dict[str, Any]:
    """All pairs by a dense incidence product (O(n²) work, chunked), using the same tokenisation."""
    import numpy as np

    from kaos_dream.dream.similarity import tokenize

    data, _, _ = library_data(n, data_dir)
    t0 = time.perf_counter()
    sets = [tokenize(s["name"], s["description"]) for s in data["skills"]]
    ids = np.array([s["skill_id"] for s in data["skills"]])
    vocab = sorted({t for s in sets for t in s})
    index = {t: i for i, t in enumerate(vocab)}
    from collections import Counter

    df = Counter(t for s in sets for t in s)
    shared = [t for t in vocab if df[t] > 1]  # tokens in one set cannot be in any intersection
    col = {t: i for i, t in enumerate(shared)}
    x = np.zeros((len(sets), max(1, len(shared))), dtype=np.float32)
    for r, s in enumerate(sets):
        for t in s:
            if t in col:
                x[r, col[t]] = 1.0
    sizes = np.array([len(s) for s in sets], dtype=np.float32)
    del index
    pairs = []
    chunk = max(1, 20_000_000 // max(1, len(sets)))
    for lo in range(0, len(sets), chunk):
        inter = x[lo:lo + chunk] @ x.T
        union = sizes[lo:lo + chunk, None] + sizes[None, :] - inter
        sim = np.where(union > 0, inter / np.maximum(union, 1), 0)
        rows, cols = np.nonzero(sim >= threshold - 1e-6)
        for r, c in zip(rows.tolist(), cols.tolist(), strict=True):
            i = lo + r
            if i < c:
                a, b = sets[i], sets[c]
                inter_exact = len(a & b)
                if inter_exact / (len(a) + len(b) - inter_exact) >= threshold - 1e-9:
                    pairs.append([int(ids[i]), int(ids[c])])
    return {"pairs": len(pairs), "seconds": round(time.perf_counter() - t0, 3), "first": sorted(pairs)[:9]}


# -- driver -----------------------------------------------------------------------------------------
def run_child(args: list[str]) -> dict[str, Any]:
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), *args], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    if proc.returncode != 0:
        raise SystemExit(f"worker {args} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def growth(rows: list[dict[str, Any]], mode: str) -> dict[str, Any]:
    import numpy as np

    ns = np.array([r["skills"] for r in rows], dtype=float)
    ts = np.array([r[mode]["p50_s"] for r in rows], dtype=float)
    out: dict[str, Any] = {"steps": {}}
    for a, b in zip(rows, rows[1:], strict=False):
        out["steps"][f"{a['skills']}->{b['skills']}"] = round(
            math.log(b[mode]["p50_s"] / a[mode]["p50_s"]) / math.log(b["skills"] / a["skills"]), 3)
    if len(rows) >= 2:
        out["fit_all"] = round(float(np.polyfit(np.log(ns), np.log(ts), 1)[0]), 3)
    big = [r for r in rows if r["skills"] >= 1000]
    if len(big) >= 2:
        out["fit_from_1k"] = round(float(np.polyfit(np.log([r["skills"] for r in big]),
                                                    np.log([r[mode]["p50_s"] for r in big]), 1)[0]), 3)
    return out


def write_markdown(path: Path, res: dict[str, Any]) -> None:
    lines = ["# Dream consolidation at scale", "",
             f"Measured by `run.py{' --quick' if res['quick'] else ''}` on {res['machine']} "
             f"(Python {res['python']}), {res['repeats']} repeats per mode, each on a fresh copy of the seeded file. "
             "p50 = sorted[len // 2].", "",
             "Each pass's time is the pass without its `strong-vectors` phase, the strong tier's one-time "
             "backfill (a row is embedded once, at most "
             f"{res['pass_settings']['strong_backfill_rows']} rows a pass, at the lowest CPU priority); that "
             "phase's own time and rows are the backfill columns. Pinned settings: "
             + ", ".join(f"`{k}={v}`" for k, v in res["pass_settings"].items()) + ".", "",
             "CPU columns: CPU seconds of the pass's own thread (`time.thread_time`), which excludes the "
             "backfill's embedding threads and, unlike wall time, the waits for a core on a loaded machine. "
             f"Load average at the start: {res.get('load_average', '-')}.", "",
             "| skills | seeding s | floor p50 s | dry-run p50 s (min–max) | dry-run CPU p50 s (min–max) | × floor "
             "| apply p50 s (min–max) | apply CPU p50 s (min–max) | × floor "
             "| backfill p50 s (min–max) | backfill rows | apply rerun s | peak RSS MB | merge pairs | exact pairs "
             "| promote | budget |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in res["scales"]:
        d, a = r["dry-run"], r["apply"]
        b = a["strong_backfill"]
        lines.append(
            f"| {r['skills']:,} | {r['seeding_s']} | {r['floor']['p50_s']} | {d['p50_s']} ({d['min_s']}–{d['max_s']}) "
            f"| {d['cpu']['p50_s']} ({d['cpu']['min_s']}–{d['cpu']['max_s']}) "
            f"| {d['vs_floor']} | {a['p50_s']} ({a['min_s']}–{a['max_s']}) "
            f"| {a['cpu']['p50_s']} ({a['cpu']['min_s']}–{a['cpu']['max_s']}) | {a['vs_floor']} "
            f"| {b['p50_s']} ({b['min_s']}–{b['max_s']}) | {', '.join(map(str, b['rows'])) if b['on'] else 'tier off'} "
            f"| {r['apply_rerun']['seconds']} | {r['peak_rss_mb']} | {a['merge_pairs']} "
            f"| {r['exact']['pairs'] if r.get('exact') else 'not run'} | {a['promote']} | {r.get('budget', '-')} |")
    lines += ["", "Floor: " + res["floor"] + ". The 100k pass budget is p50 <= "
              f"{res['budgets']['p50_vs_floor'].get(100_000, '-')} x the floor p50.", "",
              f"Growth exponent (log-log fit of apply p50): {res['growth']['apply']}", "",
              f"Growth exponent (dry-run p50): {res['growth']['dry-run']}", "",
              "Phase timings (apply, p50 ms):", ""]
    for r in res["scales"]:
        lines.append(f"- {r['skills']:,}: " + ", ".join(f"{k} {v:.1f}" for k, v in r["apply"]["phase_ms_p50"].items()))
    lines += ["", f"Verdict: {'PASS' if not res['failures'] else 'FAIL: ' + '; '.join(res['failures'])}", ""]
    path.write_text("\n".join(lines))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="100 and 1k skills only (CI)")
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="folder with consolidation_scale_*.json")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--scales", help="comma-separated skill counts, e.g. 10000 (default: all; --quick: 100,1000); "
                    "writes results.partial.* so the full results stay")
    ap.add_argument("--no-exact-100k", action="store_true", help="skip the (slow) exact scan at 100k")
    ap.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--exact", type=int, help=argparse.SUPPRESS)
    benchkit.add_standard_args(ap, here=HERE, data=DEFAULT_DATA)  # --out, --junit
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.data, args.repeats)))
        return 0
    if args.exact:
        print(json.dumps(exact_pairs(args.exact, args.data, 0.65)))
        return 0
    if load_spec(args.data) is None:
        print(f"bench data not found in {args.data}: nothing to measure (pass --data PATH)", file=sys.stderr)
        return 1
    scales = QUICK_SCALES if args.quick else SCALES
    if args.scales:
        try:
            scales = tuple(int(x) for x in args.scales.split(","))
        except ValueError:
            ap.error(f"--scales takes comma-separated skill counts, got {args.scales!r}")
        if any(n not in SCALES for n in scales):
            ap.error(f"--scales: each count must be one of {', '.join(map(str, SCALES))}")
    load_average = round(os.getloadavg()[0], 2)
    rows: list[dict] = []
    checks = benchkit.Checks()
    for n in scales:
        print(f"[{n:,} skills] seeding and timing {args.repeats}x dry-run + {args.repeats}x apply …", flush=True)
        row = run_child(["--worker", str(n), "--data", str(args.data), "--repeats", str(args.repeats)])
        if n < 100_000 or not args.no_exact_100k:
            row["exact"] = run_child(["--exact", str(n), "--data", str(args.data)])
        budget = BUDGET_S.get(n)
        verdicts = []
        if budget is not None:
            for mode in ("dry-run", "apply"):
                checks.add(f"{n} skills {mode} p50 <= {budget} s", row[mode]["p50_s"] <= budget,
                           f"{n} skills {mode} p50 {row[mode]['p50_s']} s > {budget} s")
            verdicts.append(f"p50 <= {budget} s")
        if n in FLOOR_RATIO_BUDGET:
            for mode in ("dry-run", "apply"):
                ratio = row[mode]["vs_floor"]
                checks.add(f"{n} skills {mode} p50 <= {FLOOR_RATIO_BUDGET[n]} x the read-and-tokenise floor",
                           ratio <= FLOOR_RATIO_BUDGET[n],
                           f"{n} skills {mode} p50 is {ratio} x the read-and-tokenise floor "
                           f"(> {FLOOR_RATIO_BUDGET[n]})")
            verdicts.append(f"<= {FLOOR_RATIO_BUDGET[n]} x floor")
        if n in RSS_BUDGET_MB:
            checks.add(f"{n} skills peak RSS <= {RSS_BUDGET_MB[n]:.0f} MB", row["peak_rss_mb"] <= RSS_BUDGET_MB[n],
                       f"{n} skills peak RSS {row['peak_rss_mb']} MB > {RSS_BUDGET_MB[n]} MB")
            verdicts.append(f"RSS <= {RSS_BUDGET_MB[n]:.0f} MB")
        if row.get("exact"):
            checks.add(f"{n} skills: merge pairs equal the exact scan",
                       row["exact"]["pairs"] == row["apply"]["merge_pairs"],
                       f"{n} skills: {row['apply']['merge_pairs']} merge pairs, exact scan {row['exact']['pairs']}")
        checks.add(f"{n} skills: generator.py reproduces the reference library",
                   row["generator_reproduces_reference"] is not False,
                   f"generator.py does not reproduce the reference library at {n}")
        rerun = row["apply_rerun"]
        checks.add(f"{n} skills: a second apply pass changes nothing",
                   not (rerun["new_proposals"] or rerun["promoted"] or rerun["pruned"]),
                   f"{n} skills: the second apply pass was not idempotent")
        row["budget"] = ", ".join(verdicts) or "-"
        rows.append(row)
        print(f"  seeding {row['seeding_s']} s; dry-run p50 {row['dry-run']['p50_s']} s "
              f"(CPU {row['dry-run']['cpu']['p50_s']} s); apply p50 "
              f"{row['apply']['p50_s']} s (CPU {row['apply']['cpu']['p50_s']} s; strong backfill beside it: p50 "
              f"{row['apply']['strong_backfill']['p50_s']} s, rows {row['apply']['strong_backfill']['rows']}); "
              f"RSS {row['peak_rss_mb']} MB; merge pairs {row['apply']['merge_pairs']} "
              f"(exact {row.get('exact', {}).get('pairs', 'not run')})", flush=True)
    failures = [c.detail for c in checks.missed]
    res = {
        "benchmark": "demo_consolidation_scale_bench", "quick": args.quick, "repeats": args.repeats,
        "scales_run": list(scales), "load_average": load_average,
        "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs",
        "python": platform.python_version(),
        "pass_settings": PASS_SETTINGS,
        "budgets": {"p50_s": BUDGET_S, "peak_rss_mb": RSS_BUDGET_MB, "p50_vs_floor": FLOOR_RATIO_BUDGET},
        "floor": "read every live skill's name and description, tokenise it as merge detection does, scan "
                 "skill_uses and memory_hits once (plain read-only connection, the same fresh copy right before "
                 "each timed pass)",
        "tokenisation": "casefolded name + ' ' + description, maximal runs of letters/digits, as a set",
        "scales": rows,
        "growth": {"apply": growth(rows, "apply"), "dry-run": growth(rows, "dry-run")},
        "failures": failures,
    }
    stem = benchkit.results_stem(args)  # --out DIR; a quick run writes results.quick.*
    if args.scales:
        stem = stem.with_name("results.partial")
    stem.with_name(stem.name + ".json").write_text(json.dumps(res, indent=2) + "\n")
    write_markdown(stem.with_name(stem.name + ".md"), res)
    print("PASS" if not failures else "FAIL: " + "; ".join(failures))
    return benchkit.finish(args, "demo_consolidation_scale_bench", checks)


if __name__ == "__main__":
    sys.exit(main())
