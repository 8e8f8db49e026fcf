"""WordLlama's static 256-dimension token embeddings, loaded from the weights its wheel ships.

Every text goes through :mod:`.wordllama_fast`: the same vectors as the package, without importing it
(~0.2 s of CPU per process, ~0.8 s with the first batch). One text (a query, a skill being added) is
pooled on its own; a batch (reindex, the dream's backfill) in one gather and one addition per token
position, about half the package's time on 4,000 short texts. The package is loaded only when the
fast path cannot read its files.

WordLlama's loader looks for the packaged tokenizer under its cache folder, not the package, and would
try to download it; pointing ``cache_dir`` at the package's own folder with ``disable_download=True``
loads the packaged files and can never reach the network.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from . import wordllama_fast
from .base import MAX_EMBED_CHARS, normalise_rows

CONFIG = wordllama_fast.CONFIG
DIM = wordllama_fast.DIM


class WordLlamaEmbedder:
    """Mean-pooled WordLlama token vectors (``l2_supercat``, 256 dimensions), unit length."""

    dim = DIM

    def __init__(self) -> None:
        self.model_id = f"wordllama-{CONFIG}-{DIM}"
        self._model: Any = None
        self._fast = wordllama_fast.load()
        if self._fast is None:  # files missing or not understood: the package decides (and says why)
            self._load_package()
        self.model_version = self._fast.version if self._fast is not None else self._package_version

    def _load_package(self) -> Any:
        if self._model is None:
            import wordllama  # imported here so that nothing pays for it before a batch needs it
            from wordllama import WordLlama

            folder = Path(wordllama.__file__).parent
            self._model = WordLlama.load(config=CONFIG, dim=DIM, cache_dir=folder, disable_download=True)
            self._package_version = getattr(wordllama, "__version__", "unknown")
        return self._model

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        cut = [t[:MAX_EMBED_CHARS] for t in texts]
        if self._fast is not None and len(cut) == 1:
            vectors = self._fast.embed_one(cut[0]).reshape(1, self.dim)
        elif self._fast is not None:
            vectors = self._fast.embed_many(cut)
        else:
            vectors = self._load_package().embed(cut, norm=False, return_np=True)
        return normalise_rows(np.asarray(vectors, dtype=np.float32).reshape(len(texts), self.dim))
