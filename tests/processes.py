"""Run one worker function in several real processes at once and gather what each returns.

Why a helper: race tests start spawn-context processes, collect one report each through a queue and
must fail loudly when a worker raised (the traceback would otherwise die with the child). Workers
are plain module-level functions returning a picklable report; an exception comes back as text.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Sequence
from typing import Any


def _report(target: Callable[..., Any], worker: int, args: tuple[Any, ...], out: Any) -> None:
    try:
        out.put({"worker": worker, "report": target(*args)})
    except Exception as exc:
        out.put({"worker": worker, "error": f"worker {worker}: {type(exc).__name__}: {exc}"})


def run_workers(target: Callable[..., Any], args: Sequence[tuple[Any, ...]], timeout: float = 300.0) -> list[Any]:
    """Run ``target(*args[w])`` in one process per worker ``w``; returns their reports in worker
    order, after asserting that none raised and every process exited cleanly."""
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    procs = [ctx.Process(target=_report, args=(target, w, tuple(a), out)) for w, a in enumerate(args)]
    for p in procs:
        p.start()
    results = [out.get(timeout=timeout) for _ in procs]
    assert not [r["error"] for r in results if "error" in r]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    return [r["report"] for r in sorted(results, key=lambda r: r["worker"])]
