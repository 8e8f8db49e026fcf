"""Choose the strong tier's cosine calibration (threshold τ and full cosine) on the tuning set only.

The library is built as a user's would be: skills added with the fast model (WordLlama), then the
strong model's vectors backfilled by ``kaos db reindex``'s code path. Each (τ, full) pair on a grid is
scored by hybrid recall@5 and top-1 over ``workload.json``'s 135 tuning queries, with the exact set
(each skill's own name and description) required to stay at top-1 1.0. Writes calibrate_strong.json
and prints the grid; the blind set is not read.

    python demo_semantic_retrieval_bench/calibrate_strong.py
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from kaos_dream import Library, ManualClock, Settings  # noqa: E402

sys.path.insert(0, str(HERE))
from run import T0, build, load_sets, metrics, search_ranks  # noqa: E402

THRESHOLDS = (0.1, 0.15, 0.2, 0.25, 0.3)
FULLS = (0.4, 0.5, 0.6, 0.7)


def main() -> int:
    skills, sets = load_sets()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "lib.db"
        ids = build(path, skills, Settings(embedding_model="wordllama", strong_embedding_model="none"))
        with Library(path, clock=ManualClock(T0), settings=Settings()) as lib:
            done = lib.vectors.reindex()
        assert done.get("strong", {}).get("skill") == len(skills), done
        for tau in THRESHOLDS:
            for full in FULLS:
                if full <= tau:
                    continue
                st = Settings(strong_semantic_threshold=tau, strong_semantic_full=full)
                tuning = metrics(search_ranks(path, ids, sets["tuning"], st))
                exact = metrics(search_ranks(path, ids, sets["exact"], st))
                rows.append({"threshold": tau, "full": full, "tuning": tuning, "exact": exact})
                print(tau, full, tuning["recall_at_5"], tuning["top_1"], exact["top_1"], flush=True)
    ok = [r for r in rows if r["exact"]["top_1"] == 1.0]
    best = max(ok, key=lambda r: (r["tuning"]["top_1"] + r["tuning"]["recall_at_5"], r["tuning"]["top_1"],
                                  -r["threshold"], -r["full"]))
    (HERE / "calibrate_strong.json").write_text(json.dumps({"grid": rows, "chosen": best}, indent=2) + "\n")
    print("chosen", best)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
