"""Pure plasticity signals: Wilson lower bound, recency weight, usage factors.

Every function accepts scalars or numpy arrays, so ranking can score a whole candidate pool in one
vectorised pass and tests can check single values against hand-computed ones.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

DAY_S = 86_400.0

ArrayLike = npt.ArrayLike
Floats = npt.NDArray[np.float64]


def wilson_lower(successes: ArrayLike, n: ArrayLike, z: float = 1.96) -> Floats:
    """Lower bound of the Wilson score interval for ``successes`` out of ``n`` (0 when ``n`` is 0).

    It shrinks small samples towards zero, so 10/10 outranks 1/1, and is 0 for 0/n.
    """
    s = np.asarray(successes, dtype=np.float64)
    m = np.asarray(n, dtype=np.float64)
    safe = np.where(m > 0, m, 1.0)
    p = s / safe
    z2 = z * z
    centre = p + z2 / (2.0 * safe)
    margin = z * np.sqrt(np.maximum(p * (1.0 - p) / safe + z2 / (4.0 * safe * safe), 0.0))
    low = (centre - margin) / (1.0 + z2 / safe)
    return np.where(m > 0, np.clip(low, 0.0, 1.0), 0.0)


def recency_weight(age_s: ArrayLike, half_life_days: float = 14.0) -> Floats:
    """``2^(-age / half_life)``; a future timestamp (clock skew) counts as age 0."""
    age = np.maximum(np.asarray(age_s, dtype=np.float64), 0.0)
    return np.exp2(-age / (half_life_days * DAY_S))


def seed_usage_factor(successes: ArrayLike, n: ArrayLike, alpha: float = 3.0, z: float = 1.96) -> Floats:
    """The seed's usage factor: 0.5 when never used, else ``0.5 + alpha * wilson_lower(s, n)``.

    Its weakness: 0/10 scores 0.5, exactly like a skill never tried.
    """
    m = np.asarray(n, dtype=np.float64)
    return np.where(m > 0, 0.5 + alpha * wilson_lower(successes, n, z), 0.5)


def evidence_usage_factor(successes: ArrayLike, n: ArrayLike, alpha: float = 3.0, z: float = 1.96) -> Floats:
    """The default usage factor: ``0.5 * (1 - wilson_lower(failures, n)) + alpha * wilson_lower(s, n)``.

    Never used it is 0.5, like the seed's; proven successes raise it exactly as the seed does; but
    proven failures now lower it below 0.5 (0/10 gives 0.14, 0/1 gives 0.40), so a skill that keeps
    failing falls below an untried alternative. It stays positive, so relevance still matters.
    """
    s = np.asarray(successes, dtype=np.float64)
    m = np.asarray(n, dtype=np.float64)
    return 0.5 * (1.0 - wilson_lower(m - s, m, z)) + alpha * wilson_lower(s, m, z)
