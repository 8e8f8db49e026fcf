"""What a run's searches returned, so two engines' runs of the same workload can be compared.

Every search a run makes (training and evaluation) appends its ranking (ids and scores, best first)
to a :class:`Trace`. Two traces agree on top-1 at a step when their first ids are equal; the digest
is a SHA-256 of every ranking (ids, and scores to 12 significant digits), so equal digests mean the
same full rankings at every step.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

SCORE_DIGITS = 12


@dataclass
class Trace:
    """The rankings of one run's searches, in the order they were made."""

    steps: list[tuple[tuple[int, ...], tuple[float, ...]]] = field(default_factory=list)

    def add(self, results: Sequence[Any]) -> None:
        self.steps.append((tuple(int(r.id) for r in results), tuple(float(r.score) for r in results)))

    def top1(self) -> list[int | None]:
        return [ids[0] if ids else None for ids, _ in self.steps]

    def digest(self) -> str:
        h = hashlib.sha256()
        for ids, scores in self.steps:
            h.update(repr((ids, tuple(f"{s:.{SCORE_DIGITS}g}" for s in scores))).encode())
        return h.hexdigest()

    def top1_digest(self) -> str:
        return hashlib.sha256(repr(self.top1()).encode()).hexdigest()


def compare(traces: dict[str, Trace]) -> dict[str, Any]:
    """Side by side: per engine the number of searches and both digests; across engines the steps
    whose top-1 agree, whether every ranking has the same ids, and the largest relative score gap."""
    names = list(traces)
    first = traces[names[0]]
    out: dict[str, Any] = {"engines": {n: {"searches": len(t.steps), "top1_digest": t.top1_digest()[:16],
                                          "ranking_digest": t.digest()[:16]} for n, t in traces.items()}}
    agree = same_ids = 0
    worst = 0.0
    steps = min(len(t.steps) for t in traces.values())
    for k in range(steps):
        ids0, scores0 = first.steps[k]
        ok_top = ok_ids = True
        for other in names[1:]:
            ids1, scores1 = traces[other].steps[k]
            ok_top &= (ids0[:1] == ids1[:1])
            ok_ids &= ids0 == ids1
            for a, b in zip(scores0, scores1, strict=False):
                scale = max(abs(a), abs(b))
                if scale > 0:
                    worst = max(worst, abs(a - b) / scale)
        agree += ok_top
        same_ids += ok_ids
    lengths_equal = len({len(t.steps) for t in traces.values()}) == 1
    out.update({"steps": steps, "top1_agree": agree, "same_ranking_ids": same_ids,
                "all_top1_agree": lengths_equal and agree == steps,
                "same_rankings": lengths_equal and same_ids == steps
                and len({t.digest() for t in traces.values()}) == 1,
                "max_rel_score_diff": worst})
    return out
