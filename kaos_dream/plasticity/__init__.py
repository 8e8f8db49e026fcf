"""Plasticity: pure signals (Wilson, recency, usage), Hebbian rules and task context."""

from .hebbian import CROSS_MODAL_WEIGHT, canonical, coactivation_pairs, ltp
from .task import task_hash

_SIGNALS = ("evidence_usage_factor", "recency_weight", "seed_usage_factor", "wilson_lower")


def __getattr__(name: str) -> object:
    """The numpy-based signals load on first use: opening a library must not import numpy."""
    if name in _SIGNALS:
        from . import signals

        return getattr(signals, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

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
