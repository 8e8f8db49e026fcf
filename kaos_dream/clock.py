"""Injectable clocks: every time-dependent function reads ``now`` from one of these."""

from __future__ import annotations

import math
import time
from datetime import UTC, datetime
from typing import Protocol


class Clock(Protocol):
    def now(self) -> float:
        """Current time as UTC epoch seconds."""
        ...


class SystemClock:
    """Wall-clock time."""

    def now(self) -> float:
        """The wall clock: UTC epoch seconds."""
        return time.time()


class ManualClock:
    """A clock that only moves when told to: tests and benchmarks replay time with it."""

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self._now = float(start)

    def now(self) -> float:
        """The time the test set (it moves only when told to)."""
        return self._now

    def set(self, t: float) -> None:
        self._now = float(t)

    def advance(self, seconds: float) -> float:
        self._now += float(seconds)
        return self._now


# The epoch seconds :func:`iso` can render: datetime covers years 1 to 9999 (UTC).
MIN_TIMESTAMP = datetime(1, 1, 1, tzinfo=UTC).timestamp()
MAX_TIMESTAMP = datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC).timestamp()


def representable(ts: float) -> bool:
    """True when ``ts`` is a finite epoch time :func:`iso` can show (``nan`` and ``inf`` are not)."""
    return math.isfinite(ts) and MIN_TIMESTAMP <= ts <= MAX_TIMESTAMP


def iso(ts: float | None) -> str | None:
    """Render epoch seconds as ISO-8601 UTC (the only way timestamps are shown to people)."""
    if ts is None:
        return None
    return datetime.fromtimestamp(ts, tz=UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
