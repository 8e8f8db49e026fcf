"""Categories learned from people: a new fingerprint close to one a person diagnosed takes its label.

When someone sets a category by hand (``kaos dream diagnose ID --category …``), that fingerprint
becomes a *labelled example*. A later new fingerprint whose normalised tokens are close enough to a
labelled one's (weighted Jaccard similarity >= :data:`SIMILARITY`) takes the example's category, root cause
and suggested action, with diagnoser ``learned-from:#ID``, before the LLM is asked. Only labels set by
a person count: a learned label never teaches another one, so a mistake cannot spread by chains.

Tokens are weighted by how rare they are among the library's fingerprints (inverse document
frequency): the envelope an SDK wraps every error in ("the request to the Slack API failed … the
server responded with") is shared by many fingerprints and says little, while the error code inside
it says what went wrong. The frequencies are counted once per process and topped up with the
fingerprints added since, so a lookup reads only the new rows.

:func:`nearest_labelled` is the one place that decides "close": it takes token sets and returns the
best match, so another similarity (embeddings, say) can replace it without touching the callers.
"""

from __future__ import annotations

import math
import re
import sqlite3
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache

from ..store.dialect import library_key
from .diagnosis import Diagnosis

# Measured on the tuning sets by demo_failure_intelligence_bench/learned_threshold.py (learned_threshold.md):
# pooled over 20 seeds, 0.86 of the learned labels are right at 0.5 (0.80 at 0.4, 0.85 at 0.6); plain
# unweighted Jaccard reached 0.81 at 0.5 on the same fingerprints.
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


Weight = Callable[[str], float]


def jaccard(a: frozenset[str], b: frozenset[str], weight: Weight | None = None) -> float:
    """Share of the two token sets' (weighted) mass they have in common."""
    if weight is None:
        union = len(a | b)
        return len(a & b) / union if union else 0.0
    total = sum(weight(t) for t in a | b)
    return sum(weight(t) for t in a & b) / total if total else 0.0


def nearest_labelled(
    query: frozenset[str], labelled: Iterable[tuple[int, frozenset[str]]], threshold: float = SIMILARITY,
    weight: Weight | None = None,
) -> tuple[int, float] | None:
    """(id, similarity) of the labelled example most similar to ``query`` — ties to the lowest id —
    or None when none reaches ``threshold``. ``weight`` gives each token's weight (default 1)."""
    best: tuple[int, float] | None = None
    for example_id, example in labelled:
        sim = jaccard(query, example, weight)
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


@dataclass
class TokenFrequencies:
    """In how many fingerprints each token occurs, counted up to fingerprint ``last_id``."""

    last_id: int = 0
    documents: int = 0
    counts: Counter[str] = field(default_factory=Counter)

    def add(self, toks: frozenset[str]) -> None:
        self.documents += 1
        self.counts.update(toks)

    def weight(self, token: str) -> float:
        """Inverse document frequency, smoothed so a token never seen weighs the most and none is 0."""
        return math.log((self.documents + 1) / (self.counts[token] + 0.5))


_FREQUENCIES: dict[str, TokenFrequencies] = {}


def token_frequencies(conn: sqlite3.Connection) -> TokenFrequencies:
    """The library's token frequencies, topped up with the fingerprints added since the last call
    (recounted from scratch if the file's fingerprints went backwards, e.g. another file at the path)."""
    key = library_key(conn)
    freq = _FREQUENCIES.get(key)
    newest = conn.execute("SELECT coalesce(max(id), 0) FROM failure_fingerprints").fetchone()[0]
    if freq is None or newest < freq.last_id:
        freq = _FREQUENCIES[key] = TokenFrequencies()
    for fp_id, tool, normalized in conn.execute(
        "SELECT id, tool, normalized FROM failure_fingerprints WHERE id > ? ORDER BY id", (freq.last_id,)
    ):
        freq.add(tokens(tool, normalized))
        freq.last_id = int(fp_id)
    return freq


def learned_diagnosis(conn: sqlite3.Connection, tool: str, normalized: str) -> Diagnosis | None:
    """The label of the closest example a person diagnosed, or None when none is close enough."""
    examples = labelled_examples(conn)
    if not examples:
        return None
    weight = token_frequencies(conn).weight
    found = nearest_labelled(tokens(tool, normalized), ((e.id, e.tokens) for e in examples), weight=weight)
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
