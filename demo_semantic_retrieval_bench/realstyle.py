"""Real-style libraries: does search find the skill, and does ``relevance`` mean what it says (issue 31)?

Sets (each a library of its own, built with the shipped settings, then the dream's strong backfill):

* ``realstyle.json`` — 60 skills in four shapes (Agent Skills front matter, MCP tool descriptions,
  code-skill function names, CI action descriptions), 120 task queries, 22 queries no skill answers;
  written for this bench, used to tune the relevance calibration.
* ``workload.json`` — issue 22's 45 skills: its 135 paraphrases (tuning), ``blind.json`` and
  ``blind2.json`` (held out) and the exact queries (description, name as words); the no-answer
  queries of realstyle.json are asked of it too.
* ``realstyle_blind*.json`` — when present: blind sets in realstyle.json's format, written by an
  independent writer after the constants were frozen; measured, never fitted.

For every set: R@1, R@5 and MRR (no threshold), the same for queries sharing no content word with
their skill, the share of no-answer queries that return nothing at the default threshold, the share
of answerable queries whose right skill the threshold drops, and a reliability table (relevance
decile -> observed share of right hits, top-10 hits of every query). ``--fit`` refits the relevance
constants on the tuning sets (logistic regression, IRLS) and prints them with the threshold they
imply; the constants live in kaos_dream/search/relevance.py.

    python demo_semantic_retrieval_bench/realstyle.py          # ~2 min: realstyle.json/.md/.svg
    python demo_semantic_retrieval_bench/realstyle.py --fit    # also print refitted constants
    python demo_semantic_retrieval_bench/realstyle.py --sets tuning --fit   # iterate without the held-out sets
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from run import HAS_MINILM, T0, backfill, load_sets, stems  # noqa: E402

from kaos_dream import Library, ManualClock, Settings, benchkit  # noqa: E402
from kaos_dream.search import relevance as rel  # noqa: E402

LIMIT = 10
GOALS = {"r1": 0.85, "r5": 0.95, "r5_no_shared": 0.90, "no_answer_empty": 0.90, "answerable_lost": 0.03,
         "calibration_gap": 0.10, "calibration_min_hits": 20}
TUNING = ("realstyle", "workload-tuning", "workload-exact")
# The tuning sets searched with semantic search off: what the lexical model learns from besides the
# searches whose best lexical match held the query (a library without vectors still gets a relevance).
TUNING_LEXICAL = ("realstyle-lexical", "workload-tuning-lexical")
LEXICAL_ONLY = Settings(semantic=False)


def load_realstyle(path: Path) -> tuple[list[dict[str, Any]], list[tuple[int, str]], list[str]]:
    data = json.loads(path.read_text())
    skills = data["skills"]
    pairs = [(i, q) for i, s in enumerate(skills) for q in s["queries"]]
    return skills, pairs, list(data.get("no_answer", []))


def shares_word(skill: dict[str, Any], query: str) -> bool:
    return bool(stems(f"{skill['name']} {skill['description']} {' '.join(skill.get('tags', []))}") & stems(query))


def build(path: Path, skills: list[dict[str, Any]]) -> list[int]:
    with Library(path, clock=ManualClock(T0), settings=Settings()) as lib:
        ids = [lib.skills.add(s["name"], s["description"], tags=s.get("tags", [])).id for s in skills]
    if HAS_MINILM:
        backfill(path)
    return ids


def observe(path: Path, ids: list[int], skills: list[dict[str, Any]], pairs: list[tuple[int, str]],
            no_answer: list[str], settings: Settings | None = None) -> dict[str, Any]:
    """Every query's top 10 at min relevance 0: rank of the right skill, and per hit (cover, z, right)."""
    queries: list[dict[str, Any]] = []
    with Library(path, clock=ManualClock(T0 + 7200), settings=settings or Settings(), readonly=True) as lib:
        pipeline = lib.search
        for target, q in [*pairs, *((None, q) for q in no_answer)]:
            hits = pipeline(q, kind="skill", limit=LIMIT, min_relevance=0.0)
            _, semantic = pipeline._weighted_search(q, ("skill",), LIMIT, False, "weighted", None)
            rows = []
            for h in hits:
                cover, z = pipeline.evidence(q, h, semantic)
                rows.append({"id": h.id, "relevance": h.relevance, "cover": round(cover, 4),
                             "z": None if z is None else round(z, 4),
                             "right": target is not None and h.id == ids[target]})
            rank = next((n for n, r in enumerate(rows) if r["right"]), None)
            queries.append({"query": q, "answerable": target is not None, "rank": rank, "hits": rows,
                            "no_shared_word": target is not None and not shares_word(skills[target], q)})
    return {"queries": queries, "lexical_only": settings is not None and not settings.semantic}


def summary(obs: dict[str, Any], threshold: float) -> dict[str, Any]:
    qs = obs["queries"]
    ans = [q for q in qs if q["answerable"]]
    noshare = [q for q in ans if q["no_shared_word"]]
    na = [q for q in qs if not q["answerable"]]

    def recall(group: list[dict[str, Any]], k: int) -> float | None:
        return round(sum(q["rank"] is not None and q["rank"] < k for q in group) / len(group), 3) if group else None

    def mrr(group: list[dict[str, Any]]) -> float | None:
        if not group:
            return None
        return round(sum(1 / (q["rank"] + 1) for q in group if q["rank"] is not None) / len(group), 3)

    found = [q for q in ans if q["rank"] is not None]
    lost = [q for q in found if q["hits"][q["rank"]]["relevance"] < threshold]
    empty = [q for q in na if all(h["relevance"] < threshold for h in q["hits"])]
    return {
        "answerable": len(ans), "no_shared_word": len(noshare), "no_answer": len(na),
        "r1": recall(ans, 1), "r5": recall(ans, 5), "mrr": mrr(ans),
        "r1_no_shared": recall(noshare, 1), "r5_no_shared": recall(noshare, 5), "mrr_no_shared": mrr(noshare),
        "no_answer_empty": round(len(empty) / len(na), 3) if na else None,
        "answerable_lost": round(len(lost) / len(ans), 3) if ans else None,
        "r5_after_threshold": round(sum(q["rank"] is not None and q["rank"] < 5 and q not in lost for q in ans)
                                    / len(ans), 3) if ans else None,
    }


SWEEP = (0.01, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5)


def sweep(observations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What other thresholds would do on these sets: no-answer queries left empty, answerable lost."""
    rows = []
    for t in SWEEP:
        qs = [q for obs in observations for q in obs["queries"]]
        ans = [q for q in qs if q["answerable"]]
        na = [q for q in qs if not q["answerable"]]
        lost = sum(q["rank"] is not None and q["hits"][q["rank"]]["relevance"] < t for q in ans)
        empty = sum(all(h["relevance"] < t for h in q["hits"]) for q in na)
        rows.append({"min_relevance": t, "no_answer_empty": round(empty / len(na), 3) if na else None,
                     "answerable_lost": round(lost / len(ans), 3) if ans else None})
    return rows


def reliability(observations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Relevance decile -> hits, mean relevance, observed share right (every top-10 hit of every query)."""
    bins: list[list[tuple[float, bool]]] = [[] for _ in range(10)]
    for obs in observations:
        for q in obs["queries"]:
            for h in q["hits"]:
                bins[min(int(h["relevance"] * 10), 9)].append((h["relevance"], h["right"]))
    out = []
    for n, b in enumerate(bins):
        row: dict[str, Any] = {"decile": f"{n / 10:.1f}-{(n + 1) / 10:.1f}", "hits": len(b)}
        if b:
            row["mean_relevance"] = round(sum(r for r, _ in b) / len(b), 3)
            row["observed_precision"] = round(sum(ok for _, ok in b) / len(b), 3)
            row["gap"] = round(abs(row["mean_relevance"] - row["observed_precision"]), 3)
        out.append(row)
    return out


def svg(rows: list[dict[str, Any]], title: str) -> str:
    """A reliability diagram: bars of observed precision per relevance decile, the diagonal, hit counts."""
    w, h, pad = 420, 420, 50
    side = w - 2 * pad

    def x(v: float) -> float:
        return pad + v * side

    def y(v: float) -> float:
        return h - pad - v * side

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h + 20}" font-family="sans-serif" '
             'font-size="11">', f'<text x="{w / 2}" y="20" text-anchor="middle" font-size="13">{title}</text>',
             f'<rect x="{pad}" y="{pad}" width="{side}" height="{side}" fill="none" stroke="#888"/>',
             f'<line x1="{x(0)}" y1="{y(0)}" x2="{x(1)}" y2="{y(1)}" stroke="#aaa" stroke-dasharray="4 3"/>']
    for n, r in enumerate(rows):
        if not r["hits"]:
            continue
        p = r["observed_precision"]
        parts.append(f'<rect x="{x(n / 10) + 2:.1f}" y="{y(p):.1f}" width="{side / 10 - 4:.1f}" '
                     f'height="{y(0) - y(p):.1f}" fill="#4a7bd0" opacity="0.8"/>')
        parts.append(f'<circle cx="{x(r["mean_relevance"]):.1f}" cy="{y(r["mean_relevance"]):.1f}" r="2.5" '
                     'fill="#d04a4a"/>')
        parts.append(f'<text x="{x((n + 0.5) / 10):.1f}" y="{y(0) + 14:.1f}" text-anchor="middle" '
                     f'font-size="9">{r["hits"]}</text>')
    for v in (0, 0.5, 1):
        parts.append(f'<text x="{x(v):.1f}" y="{y(0) + 28:.1f}" text-anchor="middle">{v}</text>')
        parts.append(f'<text x="{x(0) - 6:.1f}" y="{y(v) + 4:.1f}" text-anchor="end">{v}</text>')
    parts.append(f'<text x="{w / 2}" y="{h + 12}" text-anchor="middle">relevance decile (hits per bar below it)</text>')
    parts.append(f'<text x="14" y="{h / 2}" transform="rotate(-90 14 {h / 2})" text-anchor="middle">'
                 'observed share of right hits</text></svg>')
    return "\n".join(parts) + "\n"


RIDGE = 1e-2  # on the weights, not the intercept


def logistic_fit(x: np.ndarray, y: np.ndarray, ridge: float = RIDGE) -> np.ndarray:
    """Weights (last one the intercept) of a logistic regression by IRLS (at most 100 Newton steps,
    from zero: deterministic) with a small ridge on the weights."""
    a = np.hstack([x, np.ones((len(x), 1))])
    w = np.zeros(a.shape[1])
    penalty = np.full(a.shape[1], ridge)
    penalty[-1] = 0.0
    for _ in range(100):
        p = 1 / (1 + np.exp(-(a @ w)))
        g = a.T @ (p - y) + penalty * w
        hess = (a * (p * (1 - p))[:, None]).T @ a + np.diag(penalty) + 1e-9 * np.eye(a.shape[1])
        step = np.linalg.solve(hess, g)
        w -= step
        if np.abs(step).max() < 1e-9:
            break
    return w


def fit(observations: list[dict[str, Any]]) -> dict[str, Any]:
    """Refit both relevance models on every top-10 hit of the tuning observations, and the threshold:
    the largest (in steps of 0.005) that drops the right skill of at most 3 % of the answerable
    queries of the default searches under the refitted models. The lexical model learns from every
    hit without a z (searches that took no semantic path, and the sets searched with semantic search
    off), the semantic one from every hit with a z."""
    hits = [h for obs in observations for q in obs["queries"] for h in q["hits"]]
    lexical = np.array([(h["cover"], h["right"]) for h in hits if h["z"] is None], dtype=float)
    semantic = np.array([[*rel.semantic_features(h["cover"], h["z"]), h["right"]] for h in hits if h["z"] is not None],
                        dtype=float)
    lex = tuple(round(float(v), 2) for v in logistic_fit(lexical[:, :1], lexical[:, -1], ridge=RIDGE))
    sem = tuple(round(float(v), 2) for v in logistic_fit(semantic[:, :-1], semantic[:, -1], ridge=RIDGE))
    default = [obs for obs in observations if not obs.get("lexical_only")]
    right = [rel.relevance(q["hits"][q["rank"]]["cover"], q["hits"][q["rank"]]["z"], lexical=lex, semantic=sem)
             for obs in default for q in obs["queries"] if q["answerable"] and q["rank"] is not None]
    answerable = sum(q["answerable"] for obs in default for q in obs["queries"])
    threshold = 0.0
    for step in range(1, 200):
        t = step * 0.005
        if sum(r < t for r in right) > GOALS["answerable_lost"] * answerable:
            break
        threshold = round(t, 3)
    return {"rows_lexical": len(lexical), "rows_with_cosine": len(semantic), "lexical": lex, "semantic": sem,
            "min_relevance": threshold}


def run_sets(blind_files: list[Path], *, tuning_only: bool = False) -> dict[str, dict[str, Any]]:
    """Observe every set (``tuning_only``: the tuning sets alone, no held-out query is searched)."""
    observed: dict[str, dict[str, Any]] = {}
    skills, pairs, no_answer = load_realstyle(HERE / "realstyle.json")
    wskills, wsets = load_sets()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "realstyle.db"
        ids = build(path, skills)
        observed["realstyle"] = observe(path, ids, skills, pairs, no_answer)
        observed["realstyle-lexical"] = observe(path, ids, skills, pairs, no_answer, LEXICAL_ONLY)
        wpath = Path(tmp) / "workload.db"
        wids = build(wpath, wskills)
        observed["workload-tuning-lexical"] = observe(wpath, wids, wskills, wsets["tuning"], no_answer, LEXICAL_ONLY)
        for name in ("tuning", "exact") if tuning_only else ("tuning", "blind", "blind2", "exact"):
            observed[f"workload-{name}"] = observe(wpath, wids, wskills, wsets[name],
                                                   no_answer if name == "tuning" else [])
        for n, blind in enumerate(blind_files):
            bskills, bpairs, bnone = load_realstyle(blind)
            bpath = Path(tmp) / f"blind{n}.db"
            observed[blind.stem] = observe(bpath, build(bpath, bskills), bskills, bpairs, bnone)
    return observed


def render(results: dict[str, Any]) -> str:
    lines = ["# Real-style retrieval and relevance calibration (issue 31)", "",
             f"Strong tier backfilled: {results['strong_tier']}; default threshold min_relevance = "
             f"{results['threshold']}; relevance constants {results['constants']}.", "",
             "| set | answerable (no shared word) | no-answer | R@1 | R@5 | MRR | R@1 / R@5 no shared word | "
             "no-answer returning nothing | answerable lost to threshold |", "|---|---|---|---|---|---|---|---|---|"]
    for name, s in results["sets"].items():
        lines.append(f"| {name} | {s['answerable']} ({s['no_shared_word']}) | {s['no_answer']} | {s['r1']} | {s['r5']} "
                     f"| {s['mrr']} | {s['r1_no_shared']} / {s['r5_no_shared']} | {s['no_answer_empty']} "
                     f"| {s['answerable_lost']} |")
    for label, rows in (("tuning sets", results["reliability_tuning"]),
                        ("tuning sets searched with semantic search off", results["reliability_lexical_only"]),
                        ("blind sets", results["reliability_blind"])):
        if not any(r["hits"] for r in rows):
            continue
        lines += ["", f"## Reliability, {label} (every top-10 hit)", "",
                  "| relevance decile | hits | mean relevance | observed precision | gap |", "|---|---|---|---|---|"]
        for r in rows:
            lines.append(f"| {r['decile']} | {r['hits']} | {r.get('mean_relevance', '-')} | "
                         f"{r.get('observed_precision', '-')} | {r.get('gap', '-')} |")
    lines += ["", "## Other thresholds on the tuning sets", "",
              "| min_relevance | no-answer returning nothing | answerable lost |", "|---|---|---|"]
    lines += [f"| {r['min_relevance']} | {r['no_answer_empty']} | {r['answerable_lost']} |"
              for r in results["threshold_sweep_tuning"]]
    if "fit" in results:
        lines += ["", f"Refit on the tuning sets: {results['fit']}"]
    lines += ["", "## Goals", ""] + [f"- [{'x' if ok else ' '}] {g}" for g, ok in results["goals"].items()]
    lines += ["", f"{results['seconds']} s"]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fit", action="store_true", help="refit the relevance constants on the tuning sets")
    parser.add_argument("--sets", choices=("all", "tuning"), default="all",
                        help="tuning: search only the tuning sets (while iterating; results go to "
                             "realstyle_results_tuning.*, the committed results stay those of a full run)")
    parser.add_argument("--blind", type=Path, action="append", default=[],
                        help="an extra blind set in realstyle.json's format (default: realstyle_blind*.json here)")
    benchkit.add_standard_args(parser, here=HERE)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    tuning_only = args.sets == "tuning"
    blind_files = [] if tuning_only else args.blind or sorted(HERE.glob("realstyle_blind*.json"))
    observed = run_sets(blind_files, tuning_only=tuning_only)
    threshold = Settings().min_relevance
    results: dict[str, Any] = {
        "strong_tier": HAS_MINILM, "threshold": threshold,
        "constants": {"lexical": rel.LEXICAL, "semantic": rel.SEMANTIC},
        "sets": {name: summary(obs, threshold) for name, obs in observed.items()},
        "threshold_sweep_tuning": sweep([observed[n] for n in TUNING]),
        "reliability_tuning": reliability([observed[n] for n in TUNING]),
        "reliability_lexical_only": reliability([observed[n] for n in TUNING_LEXICAL]),
        "reliability_blind": reliability([o for n, o in observed.items() if n not in TUNING + TUNING_LEXICAL]),
    }
    if args.fit:
        results["fit"] = fit([observed[n] for n in TUNING + TUNING_LEXICAL])
    goals: dict[str, bool] = {}
    for name in ["realstyle", *(p.stem for p in blind_files)]:
        s = results["sets"][name]
        goals[f"{name}: R@1 >= {GOALS['r1']} ({s['r1']})"] = s["r1"] >= GOALS["r1"]
        goals[f"{name}: R@5 >= {GOALS['r5']} ({s['r5']})"] = s["r5"] >= GOALS["r5"]
        goals[f"{name}: R@5 no shared word >= {GOALS['r5_no_shared']} ({s['r5_no_shared']})"] = (
            s["r5_no_shared"] is not None and s["r5_no_shared"] >= GOALS["r5_no_shared"])
        goals[f"{name}: no-answer returning nothing >= {GOALS['no_answer_empty']} ({s['no_answer_empty']})"] = (
            s["no_answer_empty"] is not None and s["no_answer_empty"] >= GOALS["no_answer_empty"])
        goals[f"{name}: answerable lost <= {GOALS['answerable_lost']} ({s['answerable_lost']})"] = (
            s["answerable_lost"] <= GOALS["answerable_lost"])
    for label in ("reliability_tuning", "reliability_lexical_only", *(() if tuning_only else ("reliability_blind",))):
        bad = [r["decile"] for r in results[label]
               if r["hits"] >= GOALS["calibration_min_hits"] and r["gap"] > GOALS["calibration_gap"]]
        goals[f"{label}: every decile with >= 20 hits within 0.10 (off: {bad or 'none'})"] = not bad
    if not tuning_only:
        b2 = results["sets"]["workload-blind2"]["r5"]
        goals[f"no regression: blind2 R@5 >= 0.95 after backfill ({b2})"] = b2 >= 0.95
    ex = results["sets"]["workload-exact"]["r1"]
    goals[f"no regression: exact queries R@1 = 1.0 ({ex})"] = ex == 1.0
    results["goals"] = goals
    results["pass"] = all(goals.values())
    results["seconds"] = round(time.perf_counter() - started, 1)
    stem = benchkit.results_stem(args)
    base = stem.with_name("realstyle_results_tuning" if tuning_only else "realstyle_results")
    base.with_suffix(".json").write_text(json.dumps({**results, "observed": observed}) + "\n")
    base.with_suffix(".md").write_text(render(results))
    base.with_suffix(".svg").write_text(svg(results["reliability_tuning"], "relevance vs observed precision (tuning)"))
    if results["reliability_blind"] and any(r["hits"] for r in results["reliability_blind"]):
        base.with_name(base.name + "_blind.svg").write_text(
            svg(results["reliability_blind"], "relevance vs observed precision (held out)"))
    print(render(results))
    return benchkit.finish(args, "demo_semantic_retrieval_bench/realstyle", benchkit.Checks.from_mapping(goals),
                           results["seconds"])


if __name__ == "__main__":
    sys.exit(main())
