"""Semantic neighbours of an error message among the labelled fingerprints.

Two messages can mean the same failure in different words ("connection refused by upstream" and
"could not reach the backend: ECONNREFUSED"); their normalised texts share few tokens, so neither the
exact fingerprint nor a token rule relates them. This compares embeddings of the normalised texts
(the library's semantic model; nothing when semantic search is off) and returns the closest labelled
fingerprints, for a person or an agent to consider. It never labels anything by itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from ..store.context import Context
from .normalize import normalize

if TYPE_CHECKING:
    from ..embedding.store import Vectors


class _Host(Context, Protocol):
    """The part of a library this reads (a Library satisfies it)."""

    @property
    def vectors(self) -> Vectors: ...


MAX_COMPARED = 2000  # labelled fingerprints compared, most recently seen first: bounded cost per lookup
MIN_COSINE = 0.5  # below this a neighbour is not shown


def semantic_neighbours(
    lib: _Host, message: str, *, k: int = 3, min_cosine: float = MIN_COSINE, exclude_id: int | None = None
) -> list[dict[str, Any]]:
    """Up to ``k`` labelled fingerprints (category other than ``unknown``) whose normalised text is
    closest to ``message``'s by cosine, best first, ties by id; [] when semantic search is off."""
    model = lib.vectors.embedder()
    if model is None or k <= 0:
        return []
    rows = lib.conn.execute(
        "SELECT id, tool, normalized, category, root_cause, suggested_action FROM failure_fingerprints "
        "WHERE category != 'unknown' ORDER BY last_seen DESC, id LIMIT ?",
        (MAX_COMPARED,),
    ).fetchall()
    rows = [r for r in rows if r[0] != exclude_id]
    if not rows:
        return []
    query = model.embed([normalize(message).text])[0]
    if not query.any():
        return []
    cosine = model.embed([str(r[2]) for r in rows]) @ query
    order = np.lexsort(([int(r[0]) for r in rows], -cosine))
    out = []
    for i in order[:k]:
        if cosine[i] < min_cosine:
            break
        r = rows[i]
        out.append({"fingerprint_id": int(r[0]), "tool": r[1], "category": r[3], "root_cause": r[4],
                    "suggested_action": r[5], "cosine": round(float(cosine[i]), 4)})
    return out
