"""Number checks for CLI options that typer's ``min=``/``max=`` cannot express.

Click's range checks compare with ``<`` and ``>``, so ``nan`` passes every range and ``inf`` passes a
range with no upper bound. Options whose value feeds arithmetic (weights, durations, timestamps) use
:func:`finite` as their typer ``callback`` so such values are usage errors before anything is opened.
"""

from __future__ import annotations

import math

import typer


def finite(value: float | None) -> float | None:
    """Typer option callback: refuse ``nan``, ``inf`` and ``-inf`` (``None``, an unset option, passes)."""
    if value is not None and not math.isfinite(value):
        raise typer.BadParameter(f"{value} is not a finite number")
    return value


SECONDS_PER_DAY = 86_400.0


def finite_days(value: float | None) -> float | None:
    """Typer option callback for a count of days: finite, and still finite once turned into seconds
    (``1e308`` days is a finite float but ``inf`` seconds, which made "got -inf" errors later)."""
    finite(value)
    if value is not None and not math.isfinite(value * SECONDS_PER_DAY):
        raise typer.BadParameter(f"{value} days is too large (more seconds than a number can hold)")
    return value
