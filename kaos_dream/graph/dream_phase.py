"""The graph's part of a dream cycle: neglect, then quality-preserving sparsification.

One function for the dream's phase registry, so the dream does not need to know the graph's
internals. Dry runs change nothing; ``apply=True`` writes both steps in one transaction.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..store import transaction
from .learning import neglect
from .pruning import sparsify

if TYPE_CHECKING:
    from ..store.context import Context


def graph_phase(
    lib: Context,
    *,
    since: float,
    apply: bool = False,
    strategy: str = "weight",
    max_fraction: float = 0.5,
) -> dict[str, Any]:
    """``since`` = the previous cycle's start: causal edges unverified since then lose λ_neglect.

    Returns a JSON-ready summary: edges that lost confidence (0 on a dry run: nothing is written),
    and the sparsification report (planned on a dry run, applied otherwise).
    """
    if not apply:
        report = sparsify(lib, strategy=strategy, max_fraction=max_fraction, apply=False)
        return {"neglected": 0, "sparsify": report.to_dict(), "applied": False}
    with transaction(lib.conn):
        neglected = neglect(lib, since=since)
        report = sparsify(lib, strategy=strategy, max_fraction=max_fraction, apply=True)
    return {"neglected": neglected, "sparsify": report.to_dict(), "applied": True}
