"""Scaling checks that hold on a busy machine: compare CPU time, never wall time, of two sizes in one run.

A loaded machine (or a parallel test worker) stretches wall time by any factor, but it stretches the
CPU time of two pieces of work measured side by side by the same small factor. So "linear" is proven
by running the large input once and the small input ``factor`` times: the same amount of work if the
code is linear (ratio ~1), ``factor`` times more if it is quadratic.
"""

from __future__ import annotations

import resource
import time
from collections.abc import Callable


def cpu_seconds(work: Callable[[], object], repeats: int = 3) -> float:
    """The least CPU time (user+sys of this process) ``work`` took over ``repeats`` runs."""
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        work()
        best = min(best, time.process_time() - start)
    return best


def assert_linear(work: Callable[[int], object], small: int, factor: int = 16, max_ratio: float = 4.0) -> None:
    """``work(small * factor)`` costs at most ``max_ratio`` times ``factor`` runs of ``work(small)``.

    A quadratic ``work`` costs ``factor`` times more (16x against the 4x bound); a linear one ~1x."""
    def many_small() -> None:
        for _ in range(factor):
            work(small)

    unit = cpu_seconds(many_small)
    large = cpu_seconds(lambda: work(small * factor))
    assert large <= max_ratio * max(unit, 1e-3), (
        f"{factor}x the input took {large:.4f} s of CPU against {unit:.4f} s for {factor} runs of the small one")


def children_cpu_seconds(work: Callable[[], object]) -> float:
    """CPU time (user+sys) spent by child processes that ``work`` started and waited for."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    work()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
