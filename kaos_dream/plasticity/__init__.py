"""Plasticity: pure signals (Wilson, recency, usage), Hebbian rules and task context."""

from .hebbian import CROSS_MODAL_WEIGHT, canonical, coactivation_pairs, ltp
from .signals import evidence_usage_factor, recency_weight, seed_usage_factor, wilson_lower
from .task import task_hash

__all__ = [
    "CROSS_MODAL_WEIGHT",
    "canonical",
    "coactivation_pairs",
    "ltp",
    "evidence_usage_factor",
    "recency_weight",
    "seed_usage_factor",
    "wilson_lower",
    "task_hash",
]
