"""Which approximate-nearest-neighbour library the SQLite engine uses (issue 35 item 4).

The same fast-tier vectors (corpus.py, default 100k) and queries go through each candidate with
comparable HNSW settings (M=16 links, efConstruction=128, inner product on unit vectors, one build
thread for a deterministic graph) and exact numpy search. Two query sets (corpus.py): ``anchored``
(three words of an existing skill and one other: a close neighbour exists) and ``random`` (2-4
unrelated words: every cosine is low and neighbours barely stand out, the hard case). Two ways to
search: ``top10`` (efSearch 64, the graph's own top 10) and ``rescored`` (what kaos-dream does: 400
candidates at efSearch 400, ranked by their exact cosine). Reported per candidate: build CPU seconds,
and per set and way the query p50 (ms) and recall@10 against the exact top 10 (an answer whose
cosine ties the exact 10th counts as right), and the index's bytes once saved.

    python demo_scale_bench/ann_choice.py [--rows 100000] [--queries 300]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import corpus  # noqa: E402

M, EF_BUILD, EF_SEARCH, K = 16, 128, 64, 10  # the rescored way uses kaos_dream.embedding.ann's values


def exact(matrix: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, float]:
    scores = np.einsum("ij,j->i", matrix, q)
    top = np.argpartition(-scores, K)[:K]
    top = top[np.lexsort((top, -scores[top]))]
    return top, float(scores[top[-1]])


def recall(found: np.ndarray, truth: np.ndarray, tenth: float, matrix: np.ndarray, q: np.ndarray) -> float:
    ok = sum(1 for f in found[:K] if f in set(truth.tolist()) or float(matrix[f] @ q) >= tenth - 1e-6)
    return ok / K


RESCORE = 400


def usearch_candidate(dtype: str):
    def build(matrix: np.ndarray):
        from usearch.index import Index
        index = Index(ndim=matrix.shape[1], metric="ip", dtype=dtype, connectivity=M,
                      expansion_add=EF_BUILD, expansion_search=EF_SEARCH)
        index.add(np.arange(len(matrix), dtype=np.uint64), matrix, threads=1)
        return index

    def search(index, q: np.ndarray, count: int, ef: int) -> np.ndarray:
        return np.asarray(_usearch_search(index, q, count, ef), dtype=np.int64)

    def save(index, path: str) -> None:
        index.save(path)
    return build, search, save


def _usearch_search(index, q: np.ndarray, count: int, ef: int) -> np.ndarray:
    index.expansion_search = ef
    return index.search(q, count, threads=1).keys


def hnswlib_candidate():
    def build(matrix: np.ndarray):
        import hnswlib
        index = hnswlib.Index(space="ip", dim=matrix.shape[1])
        index.init_index(max_elements=len(matrix), ef_construction=EF_BUILD, M=M, random_seed=1)
        index.set_num_threads(1)
        index.add_items(matrix, np.arange(len(matrix)))
        return index

    def search(index, q: np.ndarray, count: int, ef: int) -> np.ndarray:
        index.set_ef(max(ef, count))
        return np.asarray(index.knn_query(q, k=count)[0][0], dtype=np.int64)

    def save(index, path: str) -> None:
        index.save_index(path)
    return build, search, save


def faiss_candidate():
    def build(matrix: np.ndarray):
        import faiss
        faiss.omp_set_num_threads(1)
        index = faiss.IndexHNSWFlat(matrix.shape[1], M, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = EF_BUILD
        index.add(np.ascontiguousarray(matrix))
        return index

    def search(index, q: np.ndarray, count: int, ef: int) -> np.ndarray:
        index.hnsw.efSearch = max(ef, count)
        return np.asarray(index.search(q.reshape(1, -1), count)[1][0], dtype=np.int64)

    def save(index, path: str) -> None:
        import faiss
        faiss.write_index(index, path)
    return build, search, save


CANDIDATES = {"usearch f32": lambda: usearch_candidate("f32"), "usearch i8": lambda: usearch_candidate("i8"),
              "hnswlib": hnswlib_candidate, "faiss-cpu HNSWFlat": faiss_candidate}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=100_000)
    p.add_argument("--queries", type=int, default=300)
    p.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "kaos-scale-bench")
    p.add_argument("--out", type=Path, default=HERE / "ann_choice.json")
    a = p.parse_args()
    matrix = np.ascontiguousarray(corpus.vectors(a.rows, a.cache))
    from kaos_dream.embedding.loader import load_embedder
    model = load_embedder("wordllama")
    sets = {"anchored": model.embed(corpus.anchored_queries(a.rows, a.queries)),
            "random": model.embed(corpus.queries(a.queries))}
    truths = {name: [exact(matrix, q) for q in qs] for name, qs in sets.items()}
    out = {"rows": a.rows, "queries": a.queries, "M": M, "ef_construction": EF_BUILD, "ef_search": EF_SEARCH,
           "load": os.getloadavg(), "candidates": {}}
    for name, make in CANDIDATES.items():
        build, search, save = make()
        t0 = time.process_time()
        index = build(matrix)
        built = time.process_time() - t0
        row: dict = {"build_cpu_s": round(built, 2)}
        for set_name, qs in sets.items():
            for way, count, ef in (("top10", K, EF_SEARCH), ("rescored", RESCORE, RESCORE)):
                times, recalls = [], []
                for q, (top, tenth) in zip(qs, truths[set_name], strict=True):
                    t = time.perf_counter()
                    found = search(index, q, count, ef)
                    if way == "rescored":
                        found = found[found >= 0]
                        scores = matrix[found] @ q
                        found = found[np.lexsort((found, -scores))][:K]
                    times.append((time.perf_counter() - t) * 1000)
                    recalls.append(recall(found, top, tenth, matrix, q))
                row[f"{set_name} {way}"] = {"p50_ms": round(statistics.median(times), 3),
                                            "recall_at_10": round(statistics.mean(recalls), 4)}
        with tempfile.TemporaryDirectory() as d:
            save(index, f"{d}/i")
            row["bytes"] = os.path.getsize(f"{d}/i")
        out["candidates"][name] = row
        print(name, out["candidates"][name], flush=True)
        del index
    a.out.write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
