"""WordLlama's static 256-dimension token embeddings, loaded from the weights its wheel ships.

WordLlama's loader looks for the packaged tokenizer under its cache folder, not the package, and would
try to download it; pointing ``cache_dir`` at the package's own folder with ``disable_download=True``
loads the packaged files and can never reach the network.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .base import MAX_EMBED_CHARS, normalise_rows

CONFIG = "l2_supercat"
DIM = 256


class WordLlamaEmbedder:
    """Mean-pooled WordLlama token vectors (``l2_supercat``, 256 dimensions), unit length."""

    dim = DIM

    def __init__(self) -> None:
        import wordllama  # imported here so that nothing pays for it before a search or a write needs it
        from wordllama import WordLlama

        folder = Path(wordllama.__file__).parent
        self._model = WordLlama.load(config=CONFIG, dim=DIM, cache_dir=folder, disable_download=True)
        self.model_id = f"wordllama-{CONFIG}-{DIM}"
        self.model_version = getattr(wordllama, "__version__", "unknown")

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self._model.embed([t[:MAX_EMBED_CHARS] for t in texts], norm=False, return_np=True)
        return normalise_rows(np.asarray(vectors, dtype=np.float32).reshape(len(texts), self.dim))
