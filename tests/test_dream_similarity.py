"""Merge detection: the sub-quadratic join returns exactly the all-pairs scan's pairs."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kaos_dream.dream.similarity import brute_force_pairs, jaccard, similar_pairs, similar_skill_pairs, tokenize

BENCH = Path(__file__).resolve().parents[2] / "shared" / "bench-data" / "kaos"


def test_tokenisation_is_letter_digit_runs_of_name_and_description() -> None:
    assert tokenize("sync-postgres-0", "Encrypt, compile_check") == frozenset(
        {"sync", "postgres", "0", "encrypt", "compile", "check"})
    assert jaccard(frozenset("ab"), frozenset("bc")) == pytest.approx(1 / 3)


@pytest.mark.parametrize("seed", range(40))
def test_random_collections_match_brute_force(seed: int) -> None:
    rng = random.Random(seed)
    vocab = rng.randint(3, 60)
    long_sets = seed % 4 == 0  # exercise the classic-prefix path for sets above 16 tokens
    sets = []
    for _ in range(rng.randint(2, 120)):
        k = rng.randint(0, min(vocab, 40 if long_sets else 10))
        sets.append(frozenset(str(t) for t in rng.sample(range(vocab), k)))
    sets += sets[: rng.randint(0, 5)]  # exact duplicates
    threshold = rng.choice([0.2, 0.5, 0.65, 0.65, 0.8, 0.9, 1.0])
    expected = brute_force_pairs(sets, threshold)
    for cap in (1, 4, 64) if long_sets else (1, 4, 64, 10_000):
        got = similar_pairs(sets, threshold, cap=cap)
        assert [(i, j) for i, j, _ in got] == [(i, j) for i, j, _ in expected], (seed, cap)
        assert all(abs(a[2] - b[2]) < 1e-12 for a, b in zip(got, expected, strict=True))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.frozensets(st.integers(0, 12).map(str), max_size=9), min_size=2, max_size=40),
       st.sampled_from([0.3, 0.5, 0.65, 0.75, 1.0]))
def test_property_same_pairs_as_brute_force(sets: list[frozenset[str]], threshold: float) -> None:
    assert [p[:2] for p in similar_pairs(sets, threshold)] == [p[:2] for p in brute_force_pairs(sets, threshold)]


@pytest.mark.parametrize("n,pairs", [(100, 0), (1000, 0), (10000, 9)])
def test_reference_libraries_pair_counts(n: int, pairs: int) -> None:
    path = BENCH / f"consolidation_scale_data_{n}.json"
    if not path.exists():
        pytest.skip(f"bench data not present at {path}")
    data = json.loads(path.read_text())
    rows = [(s["skill_id"], s["name"], s["description"]) for s in data["skills"]]
    found = similar_skill_pairs(rows, 0.65)
    assert len(found) == pairs
    if n == 10000:
        assert (786, 7091) in {(a, b) for a, b, _ in found}
