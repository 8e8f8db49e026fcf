"""A model-free baseline: hashed character trigrams of each word, 256 dimensions.

It knows no synonyms, only spelling (``deploy`` ~ ``deployment``), so it is the floor a real model must
beat in ``demo_semantic_retrieval_bench``. It needs nothing but numpy, which also makes it the second
model the tests switch to when they check that a model change is detected and reindexed.
"""

from __future__ import annotations

import hashlib

import numpy as np

from ..tokens import content_tokens
from .base import MAX_EMBED_CHARS, normalise_rows

DIM = 256


def _bucket(gram: str) -> tuple[int, float]:
    digest = hashlib.blake2b(gram.encode("utf-8"), digest_size=8).digest()
    value = int.from_bytes(digest, "little")
    return value % DIM, 1.0 if (value >> 63) & 1 else -1.0


class HashingEmbedder:
    """Signed feature hashing of ``#word#`` trigrams (stop words dropped), unit length."""

    model_id = "hash-trigram-256"
    model_version = "1"
    dim = DIM
    spelling_only = True  # relates spelling, not meaning: never blended into a strong tier's z

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for row, text in enumerate(texts):
            for token in content_tokens(text[:MAX_EMBED_CHARS]):
                padded = f"#{token}#"
                for i in range(max(len(padded) - 2, 1)):
                    index, sign = _bucket(padded[i : i + 3])
                    out[row, index] += sign
        return normalise_rows(out)
