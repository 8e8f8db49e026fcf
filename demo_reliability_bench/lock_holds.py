"""The write-lock hold-time distribution, per dream phase and for the writers, from lock traces.

``run.py`` sets ``KAOS_LOCK_TRACE`` (:mod:`kaos_dream.store.lock_trace`) for the dream subprocesses
and, in another file, for the writer processes; every write transaction appends one line. Here they
become one row per label: how many transactions, hold time p50 / p99 / max, the longest ``COMMIT``
(the WAL write and any automatic checkpoint) and the most rows one transaction changed. A writer
starves when one transaction beside it holds the lock past its busy timeout, so the row to read is
the dream's longest hold against the writers' 1 s budget.
"""

from __future__ import annotations

import os
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

from kaos_dream.store import lock_trace


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1))))
    return ordered[k]


def summarise(path: Path, default_label: str) -> dict[str, dict[str, Any]]:
    """Per label (``default_label`` for a transaction opened outside any labelled step): count and
    hold-time figures in ms, the longest COMMIT, the most rows changed, the modules imported while
    holding the lock (all transactions together), rollbacks."""
    if not path.exists():
        return {}
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for line in lock_trace.read(str(path)):
        groups[str(line.get("label") or default_label)].append(line)
    out: dict[str, dict[str, Any]] = {}
    for label in sorted(groups):
        lines = groups[label]
        holds = [float(x["hold_ms"]) for x in lines]
        out[label] = {"count": len(lines), "p50_ms": round(statistics.median(holds), 3),
                      "p99_ms": round(percentile(holds, 99), 3), "max_ms": round(max(holds), 1),
                      "max_commit_ms": round(max(float(x["commit_ms"]) for x in lines), 1),
                      "max_rows": max(int(x["rows"]) for x in lines),
                      "imports": sum(int(x.get("imports", 0)) for x in lines),
                      "rolled_back": sum(not x["ok"] for x in lines)}
    return out


def traced_env(env: dict[str, str], path: Path) -> dict[str, str]:
    """``env`` with the lock trace pointed at ``path``."""
    return {**env, lock_trace.ENV: str(path)}


def set_for_children(path: Path | None) -> None:
    """Point the trace of processes spawned from now on at ``path`` (None: off)."""
    if path is None:
        os.environ.pop(lock_trace.ENV, None)
    else:
        os.environ[lock_trace.ENV] = str(path)


def markdown(title: str, holds: dict[str, dict[str, dict[str, Any]]]) -> list[str]:
    """One table of the dream's rows then the writers' (``holds``: {"dream": ..., "writers": ...})."""
    table = {label: s for part in holds.values() for label, s in part.items()}
    if not table:
        return []
    lines = ["", f"### {title}", "",
             "| who | transactions | hold p50 ms | hold p99 ms | hold max ms | longest COMMIT ms | most rows "
             "| modules imported under the lock |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for label, s in table.items():
        lines.append(f"| {label} | {s['count']} | {s['p50_ms']} | {s['p99_ms']} | {s['max_ms']} | "
                     f"{s['max_commit_ms']} | {s['max_rows']} | {s['imports']} |")
    return lines
