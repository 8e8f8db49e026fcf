"""How close must a new fingerprint be to one a person labelled before it takes that label?

Measured on the tuning sets (``corpus.jsonl`` and the blind sets already used for tuning, never the
current blind set): their distinct fingerprints (tool + normalised message, as the library computes
them), each with its labelled category. For each of 20 seeds, a seeded 10 % of the fingerprints
are "labelled by hand"; every other fingerprint is diagnosed as the library would — the nearest
labelled example when its weighted Jaccard similarity (tokens weighted by their inverse document
frequency over all the fingerprints, as the library weighs them over its own) reaches the
threshold, else the heuristics — in two orders (learned label before the heuristics, and only
where the heuristics say nothing). Reported per threshold: how many fingerprints take a learned
label (coverage), how many of those are right (precision), and the overall category accuracy of
the unlabelled fingerprints, median over seeds. Writes ``learned_threshold.json`` / ``.md``.

    python demo_failure_intelligence_bench/learned_threshold.py
"""

from __future__ import annotations

import json
import random
import statistics
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from kaos_dream.failures import FailureInput, normalize  # noqa: E402
from kaos_dream.failures.diagnosis import REGISTRY  # noqa: E402
from kaos_dream.failures.fingerprint import fingerprint_hash  # noqa: E402
from kaos_dream.failures.learned import TokenFrequencies, nearest_labelled, tokens  # noqa: E402

THRESHOLDS = (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
SEEDS = range(1, 21)
LABELLED_SHARE = 0.10
TUNING = ("corpus.jsonl", "corpus_blind.jsonl", "corpus_blind2.jsonl", "corpus_blind3.jsonl", "corpus_blind4.jsonl")


def fingerprints(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Distinct fingerprints in first-seen order, with their category and heuristic answer."""
    seen: dict[str, dict[str, Any]] = {}
    for row in rows:
        norm = normalize(row["message"])
        digest = fingerprint_hash(row["tool"], norm)
        if digest not in seen:
            found = REGISTRY.diagnose(FailureInput(row["tool"], norm.key_lines, row["message"], norm.exception_type))
            seen[digest] = {"category": row["category"], "tokens": tokens(row["tool"], norm.text),
                            "heuristic": found.category if found else "unknown"}
    return list(seen.values())


def labelled_sample(n: int, seed: int, share: float = LABELLED_SHARE) -> set[int]:
    """The indexes a person labels: a seeded ``share`` of ``n`` (at least one)."""
    return set(random.Random(f"labels/{seed}").sample(range(n), max(1, round(n * share))))


def frequencies(fps: list[dict[str, Any]]) -> TokenFrequencies:
    freq = TokenFrequencies()
    for fp in fps:
        freq.add(fp["tokens"])
    return freq


def trial(fps: list[dict[str, Any]], seed: int, threshold: float) -> dict[str, float]:
    chosen = labelled_sample(len(fps), seed)
    weight = frequencies(fps).weight
    examples = [(i, fps[i]["tokens"]) for i in sorted(chosen)]
    rest = [i for i in range(len(fps)) if i not in chosen]
    covered = right = first_ok = after_ok = heur_ok = 0
    for i in rest:
        found = nearest_labelled(fps[i]["tokens"], examples, threshold, weight)
        learned = fps[found[0]]["category"] if found else None
        truth, heuristic = fps[i]["category"], fps[i]["heuristic"]
        covered += learned is not None
        right += learned == truth
        first_ok += (learned or heuristic) == truth
        after_ok += (heuristic if heuristic != "unknown" else (learned or "unknown")) == truth
        heur_ok += heuristic == truth
    n = len(rest)
    return {"coverage": covered / n, "precision": right / covered if covered else 1.0,
            "covered": covered, "right": right,
            "accuracy_learned_first": first_ok / n, "accuracy_learned_after": after_ok / n,
            "accuracy_heuristics_only": heur_ok / n}


def main() -> int:
    rows = [json.loads(line) for name in TUNING for line in (HERE / name).read_text("utf-8").splitlines()
            if line.strip()]
    fps = fingerprints(rows)
    table = {}
    for t in THRESHOLDS:
        trials = [trial(fps, seed, t) for seed in SEEDS]
        table[f"{t:.1f}"] = {k: {"median": statistics.median(x[k] for x in trials),
                                 "min": min(x[k] for x in trials), "max": max(x[k] for x in trials)}
                             for k in trials[0] if k not in ("covered", "right")}
        covered = sum(x["covered"] for x in trials)
        table[f"{t:.1f}"]["pooled"] = {"covered": covered, "right": sum(x["right"] for x in trials),
                                       "precision": sum(x["right"] for x in trials) / covered if covered else None}
    out = {"corpus": list(TUNING), "fingerprints": len(fps), "labelled_share": LABELLED_SHARE,
           "seeds": list(SEEDS), "thresholds": table}
    (HERE / "learned_threshold.json").write_text(json.dumps(out, indent=2, sort_keys=True) + "\n", "utf-8")
    lines = ["# Learned labels: the similarity threshold", "",
             f"Written by `learned_threshold.py` from measurement: {len(fps)} distinct fingerprints of "
             f"the tuning sets ({', '.join(TUNING)}), "
             f"{LABELLED_SHARE:.0%} labelled by hand (seeded), {len(SEEDS)} seeds, median (min–max).",
             "", "| threshold | coverage | precision of learned labels | pooled over seeds (right / learned) "
             "| accuracy, learned first | learned only where heuristics say nothing | heuristics only |",
             "|---|---|---|---|---|---|---|"]
    for t, v in table.items():
        cells = [f"{v[k]['median']:.3f} ({v[k]['min']:.3f}–{v[k]['max']:.3f})" for k in
                 ("coverage", "precision", "accuracy_learned_first", "accuracy_learned_after",
                  "accuracy_heuristics_only")]
        pooled = v["pooled"]
        share = "-" if pooled["precision"] is None else f"{pooled['precision']:.3f}"
        cells.insert(2, f"{share} ({pooled['right']} / {pooled['covered']})")
        lines.append(f"| {t} | " + " | ".join(cells) + " |")
    (HERE / "learned_threshold.md").write_text("\n".join(lines) + "\n", "utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
