"""Categories learned from people: a new fingerprint close to one a person diagnosed takes its label.

When someone sets a category by hand (``kaos dream diagnose ID --category …``), that fingerprint
becomes a *labelled example*. A later new fingerprint whose normalised tokens are close enough to a
labelled one's (Jaccard similarity >= :data:`SIMILARITY`) takes the example's category, root cause
and suggested action, with diagnoser ``learned-from:#ID``, before the LLM is asked. Only labels set by
a person count: a learned label never teaches another one, so a mistake cannot spread by chains.

:func:`nearest_labelled` is the one place that decides "close": it takes token sets and returns the
best match, so another similarity (embeddings, say) can replace it without touching the callers.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from .diagnosis import Diagnosis

# Measured on corpus.jsonl (demo_failure_intelligence_bench/learned_threshold.py): see its output for
# the accuracy and coverage of learned labels at each threshold.
SIMILARITY = 0.5
DIAGNOSER_PREFIX = "learned-from:#"
_PLACEHOLDER = re.compile(r"<[a-z]+>")
_TOKEN = re.compile(r"[a-z][a-z0-9_]*|\b\d{3}\b")


@lru_cache(maxsize=4096)
def tokens(tool: str, normalized: str) -> frozenset[str]:
    """The words of a normalised message (placeholders such as ``<n>`` dropped: every message has
    them) plus its tool, which is part of a fingerprint's identity too."""
    words = _TOKEN.findall(_PLACEHOLDER.sub(" ", normalized.lower()))
    return frozenset(w for w in words if len(w) > 1) | {f"tool:{tool.lower()}"}


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    union = len(a | b)
    return len(a & b) / union if union else 0.0


def nearest_labelled(
    query: frozenset[str], labelled: Iterable[tuple[int, frozenset[str]]], threshold: float = SIMILARITY
) -> tuple[int, float] | None:
    """(id, similarity) of the labelled example most similar to ``query`` — ties to the lowest id —
    or None when none reaches ``threshold``."""
    best: tuple[int, float] | None = None
    for example_id, example in labelled:
        sim = jaccard(query, example)
        if sim >= threshold and (best is None or sim > best[1] or (sim == best[1] and example_id < best[0])):
            best = (example_id, sim)
    return best


@dataclass(frozen=True)
class Example:
    id: int
    tokens: frozenset[str]
    category: str
    root_cause: str
    suggested_action: str


def labelled_examples(conn: sqlite3.Connection) -> list[Example]:
    """Every fingerprint whose current diagnosis a person set (method ``manual``), by id."""
    return [
        Example(int(r[0]), tokens(r[1], r[2]), r[3], r[4] or "", r[5] or "")
        for r in conn.execute(
            "SELECT id, tool, normalized, category, root_cause, suggested_action FROM failure_fingerprints "
            "WHERE diagnostic_method = 'manual' ORDER BY id"
        )
    ]


def learned_diagnosis(conn: sqlite3.Connection, tool: str, normalized: str) -> Diagnosis | None:
    """The label of the closest example a person diagnosed, or None when none is close enough."""
    examples = labelled_examples(conn)
    if not examples:
        return None
    found = nearest_labelled(tokens(tool, normalized), ((e.id, e.tokens) for e in examples))
    if found is None:
        return None
    example = next(e for e in examples if e.id == found[0])
    return Diagnosis(
        example.category,
        example.root_cause or f"Like failure #{example.id}, which a person diagnosed.",
        example.suggested_action or f"See failure #{example.id}.",
        round(found[1], 4),
        "heuristic",
        f"{DIAGNOSER_PREFIX}{example.id}",
    )


def learned_from(diagnoser: str | None) -> int | None:
    """The labelled example's id when a diagnosis was learned from one (``learned-from:#12`` -> 12)."""
    if diagnoser and diagnoser.startswith(DIAGNOSER_PREFIX) and diagnoser[len(DIAGNOSER_PREFIX):].isdigit():
        return int(diagnoser[len(DIAGNOSER_PREFIX):])
    return None
