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
