"""Where an episode end's time goes: SQL statements and WAL pages per completion (exact counts), and
median time per part (noisy: the machine is shared), with plasticity on and off.

The session shape is the overhead benchmark's ``agent_complete_session`` op: 100 skills, 50
memories, agents that each report 3 outcomes and run one memory search with hits (28 co-activation
pairs at the end), and 780 planted ``co_occurs_with`` edges among the first 40 skills. Everything is
generated here, so the script needs no bench data. Writes scripts/episode_end_profile.json.

    python scripts/episode_end_profile.py [--agents 200] [--rounds 5]

Counts are what to compare between versions: they do not drift with the machine. Timings come with
a calibration loop (a fixed pure-Python loop timed before each round) for context.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's kaos_dream
sys.path.insert(0, str(ROOT / "demo_plasticity_overhead_bench"))  # its machine-speed calibration loop

from run import agents_with_sessions, calibration_ms  # noqa: E402

from kaos_dream import Library, ManualClock, Settings, hooks  # noqa: E402
from kaos_dream.episodes import Episodes  # noqa: E402

T0 = 1_767_225_600.0
WAL_FRAME = 4096 + 24  # page size plus the frame header
WORDS = "load save sync index deploy retry cache batch schema token shard audit metric trace".split()


def prepared_library(path: Path, auto: bool, agents: int) -> tuple[Library, list[str]]:
    rng = random.Random(7)
    lib = Library(path, clock=ManualClock(T0), settings=Settings(dream_auto=auto, anthropic_api_key="",
                                                                  dream_threshold=10**9))
    with lib.transaction():
        ids = [lib.skills.add(f"skill-{i:03d}", " ".join(rng.sample(WORDS, 4))).id for i in range(100)]
        for i in range(50):
            lib.memories.add(f"note number {i} about {' '.join(rng.sample(WORDS, 3))}", key=f"m{i:02d}")
    return lib, agents_with_sessions(lib, ids, agents, rng)


def counts(auto: bool, agents: int) -> dict[str, float]:
    """Exact: statements and WAL frames per completion (no automatic pass lands inside: the library is
    made with an unreachable KAOS_DREAM_THRESHOLD)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "c.db"
        lib, names = prepared_library(path, auto, agents)
        with lib:
            lib.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            lib.conn.execute("PRAGMA wal_autocheckpoint = 0")
            statements: list[str] = []
            lib.conn.set_trace_callback(statements.append)
            for agent in names:
                lib.episodes.complete(agent)
            lib.conn.set_trace_callback(None)
            frames = os.path.getsize(f"{path}-wal") / WAL_FRAME
    return {"statements": len(statements) / len(names), "wal_pages": round(frames / len(names), 2)}


@contextmanager
def timed_parts(store: dict[str, list[int]]) -> Iterator[None]:
    """Time the episode end's parts by wrapping them (restored on exit)."""
    from kaos_dream.validation import gate

    wrapped: list[tuple[Any, str, Callable[..., Any]]] = []

    def wrap(owner: Any, attr: str, label: str) -> None:
        original = getattr(owner, attr)

        def timed(*args: Any, **kwargs: Any) -> Any:
            t = time.perf_counter_ns()
            try:
                return original(*args, **kwargs)
            finally:
                store.setdefault(label, []).append(time.perf_counter_ns() - t)

        wrapped.append((owner, attr, original))
        setattr(owner, attr, timed)

    wrap(Episodes, "_session_nodes", "session read")
    wrap(gate, "validate_episode", "validators")
    wrap(gate, "store_report", "store gate report")
    wrap(Episodes, "_reinforce", "co-activations + LTP")
    wrap(hooks, "run_episode_end", "episode-end hooks")
    wrap(hooks, "run_after_episode", "after-commit hooks")
    try:
        yield
    finally:
        for owner, attr, original in reversed(wrapped):
            setattr(owner, attr, original)


def timings(rounds: int, agents: int) -> dict[str, Any]:
    per_round: dict[str, list[float]] = {}
    calibration = []
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(rounds):
            calibration.append(calibration_ms())
            for auto in (True, False):
                lib, names = prepared_library(Path(tmp) / f"t{r}{auto}.db", auto, agents)
                parts: dict[str, list[int]] = {}
                total = []
                with lib, timed_parts(parts):
                    for agent in names:
                        t = time.perf_counter_ns()
                        lib.episodes.complete(agent)
                        total.append(time.perf_counter_ns() - t)
                key = "on" if auto else "off"
                per_round.setdefault(f"complete ({key})", []).append(statistics.median(total) / 1000)
                if auto:
                    for label, samples in parts.items():
                        per_round.setdefault(label, []).append(statistics.median(samples) / 1000)
    return {
        "median_us": {k: round(statistics.median(v), 1) for k, v in per_round.items()},
        "range_us": {k: [round(min(v), 1), round(max(v), 1)] for k, v in per_round.items()},
        "calibration_loop_ms": {"median": round(statistics.median(calibration), 2),
                                "min": round(min(calibration), 2), "max": round(max(calibration), 2)},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "episode_end_profile.json")
    args = parser.parse_args()
    result = {
        "agents": args.agents,
        "rounds": args.rounds,
        "per_completion": {"on": counts(True, args.agents), "off": counts(False, args.agents)},
        "timings": timings(args.rounds, args.agents),
    }
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
