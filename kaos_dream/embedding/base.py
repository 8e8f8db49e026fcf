"""The interface every embedding model implements, so a local model or an API can replace another."""

from __future__ import annotations

from typing import Protocol

import numpy as np

MAX_EMBED_CHARS = 4000  # longer texts are cut: a skill's gist is in its first paragraphs, and cost stays bounded


class Embedder(Protocol):
    """Maps texts to unit-length float32 rows. ``model_id`` and ``model_version`` are stored beside every
    vector: a vector made by another model or version is stale and is recomputed by ``kaos db reindex``."""

    model_id: str
    model_version: str
    dim: int

    def embed(self, texts: list[str]) -> np.ndarray:
        """A ``(len(texts), dim)`` float32 array, each row of length 1 (or all zeros for a text with no word)."""
        ...


def normalise_rows(matrix: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length as float32; an all-zero row stays zero (it matches nothing)."""
    m = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    return np.divide(m, norms, out=np.zeros_like(m), where=norms > 0).astype(np.float32, copy=False)
