"""The default usage factor of one candidate in plain floats, for searches that import no numpy.

:func:`kaos_dream.plasticity.signals.evidence_usage_factor` scores a whole pool with numpy; a search
that took no semantic step scores its pool here instead (:mod:`kaos_dream.search.list_ranking`). The
operations and their order are the same, and each (+, -, *, /, sqrt) is correctly rounded in both,
so the two give bit-identical scores (tests/test_list_ranking.py compares them).
"""

from __future__ import annotations

import math


def wilson_lower(successes: float, n: float, z: float = 1.96) -> float:
    """Lower bound of the Wilson score interval for ``successes`` out of ``n`` (0 when ``n`` is 0)."""
    if not n > 0:
        return 0.0
    p = successes / n
    z2 = z * z
    centre = p + z2 / (2.0 * n)
    margin = z * math.sqrt(max(p * (1.0 - p) / n + z2 / (4.0 * n * n), 0.0))
    low = (centre - margin) / (1.0 + z2 / n)
    return min(max(low, 0.0), 1.0)


def evidence_usage_factor(successes: float, n: float, alpha: float = 3.0, z: float = 1.96) -> float:
    """``0.5 * (1 - wilson_lower(failures, n)) + alpha * wilson_lower(s, n)``: 0.5 when never used."""
    return 0.5 * (1.0 - wilson_lower(n - successes, n, z)) + alpha * wilson_lower(successes, n, z)
