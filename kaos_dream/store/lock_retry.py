"""Taking SQLite's write lock fairly: bounded, jittered retries of ``BEGIN IMMEDIATE``.

SQLite's own busy handler sleeps on a fixed, growing schedule (1, 2, 5 … 100 ms) and is not fair: a
process that commits back to back takes the lock again microseconds after releasing it, while a
waiter asleep for 100 ms misses every gap. Four writers committing ~4 ms transactions starved three
of them (and most dream passes) past a 10 s busy timeout. Here each attempt does not wait inside
SQLite; the waiter sleeps a short random time instead (full jitter: uniform in [0, min(cap, base x
2^n)], at most a few ms, less the longer it has waited) and tries again, so it polls hundreds of
times a second and catches the gaps. All retries share one total budget, the connection's busy
timeout, after which the lock error is raised as before.

The jitter comes from a ``random.Random`` seeded per process (its pid), so processes do not retry
in step, and one process's schedule can be reproduced.
"""

from __future__ import annotations

import os
import random
import sqlite3
import time
from collections.abc import Callable, Iterator

BASE_S = 0.0005  # first retry within half a millisecond
CAP_S = 0.004  # never sleep longer than a short transaction lasts
AGING_S = 0.05  # after this long waiting the cap is halved, after twice as long a third, ...
MIN_CAP_S = 0.0002  # ... down to 0.2 ms

_rngs: dict[int, random.Random] = {}


def process_rng() -> random.Random:
    """This process's jitter source, seeded with its pid (a forked child gets its own)."""
    pid = os.getpid()
    rng = _rngs.get(pid)
    if rng is None:
        rng = _rngs[pid] = random.Random(pid)
    return rng


def backoff_delays(budget_s: float, rng: random.Random, clock: Callable[[], float] = time.monotonic,
                   base_s: float = BASE_S, cap_s: float = CAP_S) -> Iterator[float]:
    """Sleeps between attempts until ``budget_s`` has passed since the first call: each is uniform in
    [0, min(cap, base x 2^n)], the last one cut to what is left of the budget.

    The cap shrinks as the wait grows (cap / (1 + waited / AGING_S), never below MIN_CAP_S): a writer
    that has waited long polls more often than a newcomer, so it is the likelier one to take the
    next gap between two commits (priority by age, without any shared queue)."""
    start = clock()
    deadline = start + max(0.0, budget_s)
    attempt = 0
    while True:
        now = clock()
        left = deadline - now
        if left <= 0:
            return
        cap = max(MIN_CAP_S, cap_s / (1.0 + (now - start) / AGING_S))
        yield min(left, rng.uniform(0.0, min(cap, base_s * (2**attempt))))
        attempt = min(attempt + 1, 30)


def is_busy(exc: sqlite3.Error) -> bool:
    name = getattr(exc, "sqlite_errorname", "") or ""
    return name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in str(exc).lower()


def retry_begin(conn: sqlite3.Connection, budget_ms: float, rng: random.Random | None = None,
                sleep: Callable[[float], None] = time.sleep) -> int:
    """``BEGIN IMMEDIATE`` on a connection whose SQLite busy wait is off (so an attempt never sleeps in
    SQLite's long steps), then jittered retries within ``budget_ms``; returns the retries it took, or
    raises the last busy error once the budget is spent. The statement goes to the C ``execute``, past
    any Python-level override of the connection's."""
    execute = sqlite3.Connection.execute
    try:
        execute(conn, "BEGIN IMMEDIATE")
        return 0
    except sqlite3.OperationalError as exc:
        if not is_busy(exc):
            raise
        last = exc
    for retries, delay in enumerate(backoff_delays(budget_ms / 1000.0, rng or process_rng()), start=1):
        sleep(delay)
        try:
            execute(conn, "BEGIN IMMEDIATE")
            return retries
        except sqlite3.OperationalError as exc:
            if not is_busy(exc):
                raise
            last = exc
    raise last
