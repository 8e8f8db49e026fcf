"""The phase registry: the ordered, named steps of a dream pass.

A phase is ``run(ctx, prepared) -> PhaseResult``. The runner calls the optional ``prepare(ctx)``
first, outside any transaction (heavy read-only work, and imports: it must not hold the write lock;
the vector backfills also store their vectors there, in idempotent chunks of bounded transactions
of their own, so no dream transaction writes thousands of rows), then ``run``
inside ``BEGIN IMMEDIATE`` together with the phase's record in ``dream_run_phases``: a phase's writes
and the fact that it finished commit together, so a run killed at any moment resumes at the first
unfinished phase and nothing is done twice. ``run`` must write only when ``ctx.apply`` is true,
except for review items (proposals), which a dry run records too.

Features register their phases at import time (``register_phase``); phases run in ``order`` then
name order. The built-in orders leave room between them — use the ``ORDER_*`` constants.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .host import DreamHost

ORDER_REPLAY = 100
ORDER_DECAY = 200
ORDER_EMERGENT = 300
ORDER_FAILURES = 400  # failure catch-up (failures feature)
ORDER_PROPOSALS = 500
ORDER_POLICIES = 600  # policies from the coordination log (coordination feature)
ORDER_SPARSIFY = 700  # graph sparsification (graph feature)
ORDER_STRONG_VECTORS = 900  # the strong tier's backfill, after every phase that reads vectors
ORDER_DIGEST = 1000

RUN_KINDS = ("run", "consolidate")
# The most rows a phase writes in one transaction before it yields the lock (``ctx.yield_lock``) or
# commits a chunk of its own; the vector backfills store at most BACKFILL_COMMIT_ROWS vectors at once.
MAX_ROWS_PER_TRANSACTION = 256


@dataclass
class DreamContext:
    """What a phase sees. ``results`` holds the summaries of the phases before it (also after a resume)."""

    lib: DreamHost
    run_id: int
    kind: str  # run | consolidate
    mode: str  # dry-run | apply
    trigger: str  # manual | auto | cron
    since: float
    started_at: float
    cycle: int
    results: dict[str, dict[str, Any]] = field(default_factory=dict)
    digests: dict[str, str] = field(default_factory=dict)
    # Renews the run's lease in a transaction of its own; a long ``prepare`` (the strong tier's
    # backfill at the lowest CPU priority on a busy machine) calls it between steps, so the lease does
    # not lapse while nothing is written. Rate-limited by the runner.
    heartbeat: Callable[[], None] = lambda: None
    # Inside ``run``: commit the phase's writes so far and take the write lock again, so writers
    # waiting beside the dream get a turn. For a phase that writes many rows whose writes are
    # idempotent (a pass killed between two chunks and resumed ends in the same state); it keeps
    # every dream transaction within :data:`MAX_ROWS_PER_TRANSACTION` rows (issue 33 item 13).
    yield_lock: Callable[[], None] = lambda: None

    @property
    def apply(self) -> bool:
        return self.mode == "apply"

    @property
    def conn(self) -> sqlite3.Connection:
        return self.lib.conn

    def now(self) -> float:
        return self.lib.now()


@dataclass(frozen=True)
class PhaseResult:
    """``summary`` is JSON-able (stored, shown by `kaos dream show`); ``digest`` is a markdown section."""

    summary: dict[str, Any]
    digest: str | None = None


PhaseFn = Callable[[DreamContext, Any], PhaseResult]
PrepareFn = Callable[[DreamContext], Any]


@dataclass(frozen=True)
class Phase:
    name: str
    run: PhaseFn
    order: int
    prepare: PrepareFn | None = None
    kinds: tuple[str, ...] = ("run",)


_PHASES: list[Phase] = []


def register_phase(
    name: str,
    run: PhaseFn,
    *,
    order: int,
    prepare: PrepareFn | None = None,
    kinds: tuple[str, ...] = ("run",),
) -> None:
    """Add (or replace, by name) a phase. ``kinds``: which passes include it (`run`, `consolidate`)."""
    if not name or any(c.isspace() for c in name):
        raise ValueError("phase names are non-empty and have no spaces")
    for k in kinds:
        if k not in RUN_KINDS:
            raise ValueError(f"unknown run kind {k!r}")
    _PHASES[:] = [p for p in _PHASES if p.name != name]
    _PHASES.append(Phase(name, run, order, prepare, tuple(kinds)))
    _PHASES.sort(key=lambda p: (p.order, p.name))


def unregister_phase(name: str) -> None:
    _PHASES[:] = [p for p in _PHASES if p.name != name]


def phases_for(kind: str) -> list[Phase]:
    return [p for p in _PHASES if kind in p.kinds]


def registered_phases() -> list[Phase]:
    return list(_PHASES)
