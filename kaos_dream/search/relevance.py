"""A calibrated relevance per hit: the estimated chance that the hit answers the query.

The ranking ``score`` folds in the track record and is normalised per query (the best candidate is
1.0 whatever it is), so it cannot tell a match from noise. ``relevance`` is absolute, from two pieces
of evidence that mean the same thing in every library:

    cover  the share of the query's content words the entry holds, each weighted by its IDF
           (:meth:`~kaos_dream.search.semantic.IdealRelevance.coverage`), in [0, 1];
    z      the entry's scaled cosine to the query, (cos − τ) / (c_full − τ) of the tier that scored
           it, or both tiers' blend (:func:`.semantic.blended`), clipped to [−1, 3]; unknown when the
           search took no semantic path (no vectors, semantic search off, or the best lexical match
           already held the query).

Two logistic (Platt) models turn them into a probability, and the hit gets the larger that applies:

    by_words   = 1 / (1 + exp(−(l_c · cover + l_b)))
    by_meaning = 1 / (1 + exp(−(s_c · cover + s_z · z + s_q · max(z, 0)² + s_b)))      (when z is known)
    relevance  = max(by_words, by_meaning)

The lexical model is fitted on every hit without a z: searches whose best lexical match held the
query and the tuning sets searched with semantic search off (so a library without vectors gets a
calibrated number too). The semantic model is fitted on every hit with a z. Its cover weight comes
out negative: an embedding is drawn towards a text sharing the query's words, so of two hits with
the same z the one holding some of the query's words is less often the answer (part of its z is
those words). The max with ``by_words`` keeps a hit from ever scoring below what its words alone
say (a sibling skill holding most of the query's words stays above the threshold), and the z² term
bends the curve so that a close paraphrase is not overconfident.

The constants and ``MIN_RELEVANCE`` are fitted by ``demo_semantic_retrieval_bench/realstyle.py
--fit`` on the tuning sets only (realstyle.json: 60 skills, 120 task queries, 22 queries nothing
answers; workload.json: 45 skills, 135 paraphrases and 90 exact queries; every top-10 hit after the
dream's strong backfill labelled right or wrong; logistic regression by IRLS with a small ridge, a
fixed number of iterations, so the fit is reproducible) and stored here. What the number means,
measured on those sets (realstyle_results.md): of the hits with relevance near p, about a share p
answered the query (see realstyle_results.md for the gap per decile, with semantic search on and
off). ``MIN_RELEVANCE`` is the largest threshold (in steps of 0.005) that drops the
right skill of at most 3 % of the tuning sets' answerable queries.
"""

from __future__ import annotations

import math

# Fitted by demo_semantic_retrieval_bench/realstyle.py --fit (see the module docstring).
LEXICAL = (8.92, -5.31)  # l_c, l_b
SEMANTIC = (-8.28, 10.13, -0.96, -5.79)  # s_c, s_z, s_q, s_b
MIN_RELEVANCE = 0.025
Z_RANGE = (-1.0, 3.0)


def _logistic(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def relevance(cover: float, z: float | None, *, lexical: tuple[float, float] = LEXICAL,
              semantic: tuple[float, float, float, float] = SEMANTIC) -> float:
    """The calibrated relevance of one hit from its ``cover`` and scaled cosine ``z`` (None: unknown),
    rounded to 4 places so that the same evidence prints the same number on every machine. The
    models default to the fitted constants (the bench passes others while fitting)."""
    cover = min(max(float(cover), 0.0), 1.0)
    by_words = _logistic(lexical[0] * cover + lexical[1])
    if z is None or not math.isfinite(z):
        return round(by_words, 4)
    *weights, bias = semantic
    by_meaning = _logistic(sum(w * x for w, x in zip(weights, semantic_features(cover, z), strict=True)) + bias)
    # Never below what the words alone say: a sibling holding most of the query's words stays listed
    # (the drift workloads' agents must be able to try it) even where its z is middling.
    return round(max(by_meaning, by_words), 4)


def semantic_features(cover: float, z: float) -> list[float]:
    """The semantic model's inputs for one hit (what ``realstyle.py --fit`` regresses on)."""
    clipped = min(max(float(z), Z_RANGE[0]), Z_RANGE[1])
    return [min(max(float(cover), 0.0), 1.0), clipped, max(clipped, 0.0) ** 2]


def check_min_relevance(value: float) -> float:
    """``value`` as a threshold, or ValueError when it is not a number in [0, 1]."""
    number = float(value)
    if not math.isfinite(number) or not 0.0 <= number <= 1.0:
        raise ValueError(f"min relevance {value!r} must be a number from 0 to 1")
    return number
