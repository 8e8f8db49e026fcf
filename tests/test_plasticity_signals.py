"""Pure signals and ranking formulas against hand-computed values."""

from __future__ import annotations

import math

import numpy as np
import pytest

from kaos_dream.plasticity import (
    canonical,
    coactivation_pairs,
    evidence_usage_factor,
    ltp,
    recency_weight,
    seed_usage_factor,
    task_hash,
    wilson_lower,
)

DAY = 86_400.0


def wilson_by_hand(s: int, n: int, z: float = 1.96) -> float:
    p = s / n
    return (p + z * z / (2 * n) - z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))) / (1 + z * z / n)


@pytest.mark.parametrize(
    ("s", "n", "expected"),
    [
        (0, 10, 0.0),
        (10, 10, 0.7224598),  # p = 1: 1 / (1 + z^2/n) = 10 / 13.8416
        (1, 1, 0.2065433),  # 1 / 4.8416
        (5, 10, 0.2365896),
        (80, 100, 0.7111690),
    ],
)
def test_wilson_lower_matches_hand_computed_values(s: int, n: int, expected: float) -> None:
    assert float(wilson_lower(s, n)) == pytest.approx(expected, abs=1e-6)
    assert float(wilson_lower(s, n)) == pytest.approx(max(0.0, wilson_by_hand(s, n)), abs=1e-12)


def test_wilson_lower_of_no_evidence_is_zero_and_vectorised() -> None:
    out = wilson_lower(np.array([0, 0, 3]), np.array([0, 4, 3]))
    assert out[0] == 0.0 and out[1] == 0.0 and 0.0 < out[2] < 1.0
    assert float(wilson_lower(10, 10)) > float(wilson_lower(1, 1))  # more evidence, higher bound


@pytest.mark.parametrize(("days", "expected"), [(0, 1.0), (14, 0.5), (365, 2 ** (-365 / 14))])
def test_recency_weight_halves_every_half_life(days: float, expected: float) -> None:
    assert float(recency_weight(days * DAY, 14.0)) == pytest.approx(expected, rel=1e-12)


def test_recency_of_a_future_timestamp_is_one() -> None:
    assert float(recency_weight(-5 * DAY)) == 1.0


def test_seed_usage_factor_cannot_tell_failures_from_untried() -> None:
    assert float(seed_usage_factor(0, 0)) == 0.5
    assert float(seed_usage_factor(0, 10)) == 0.5  # the seed formula's known weakness
    assert float(seed_usage_factor(10, 10)) == pytest.approx(0.5 + 3.0 * 0.7224598, abs=1e-6)


def test_evidence_usage_factor_demotes_proven_failures_below_untried() -> None:
    untried = float(evidence_usage_factor(0, 0))
    assert untried == 0.5
    assert float(evidence_usage_factor(0, 1)) == pytest.approx(0.5 * (1 - 0.2065433), abs=1e-6)
    assert float(evidence_usage_factor(0, 10)) == pytest.approx(0.5 * (1 - 0.7224598), abs=1e-6)
    assert float(evidence_usage_factor(0, 10)) < float(evidence_usage_factor(0, 1)) < untried
    # successes raise it exactly as much as in the seed formula
    assert float(evidence_usage_factor(10, 10)) == pytest.approx(float(seed_usage_factor(10, 10)), abs=1e-6)
    assert float(evidence_usage_factor(0, 1000)) > 0.0


def test_ltp_is_asymptotic() -> None:
    assert ltp(0.1) == pytest.approx(0.19)
    assert ltp(0.5, 0.05) == pytest.approx(0.525)
    s = 0.1
    for _ in range(200):
        s = ltp(s)
    assert 0.99 < s <= 1.0


def test_coactivation_pairs_are_canonical_and_weighted() -> None:
    pairs = coactivation_pairs([3, 1, 3], [7])
    assert pairs == sorted(pairs)
    assert (("skill", 1), ("skill", 3), 1.0) in pairs
    assert (("memory", 7), ("skill", 1), 0.5) in pairs  # 'memory' < 'skill': canonical order
    assert len(pairs) == 3
    assert canonical(("skill", 2), ("memory", 9)) == (("memory", 9), ("skill", 2))
    assert coactivation_pairs([1], []) == []


def test_task_hash_ignores_case_order_and_stop_words() -> None:
    assert task_hash("Convert the CSV to parquet") == task_hash("parquet csv convert")
    assert task_hash("convert csv") != task_hash("convert json")
    assert task_hash(None) is None and task_hash("!!!") is None
