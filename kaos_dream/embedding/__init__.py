"""Text embeddings for semantic retrieval, behind one small interface (:class:`Embedder`).

Nothing here imports a model at module import time: :func:`load_embedder` loads the configured model
on first use and keeps it for the process, so commands that never search or write never pay for it.
"""

from .base import Embedder, normalise_rows
from .loader import MODELS, EmbedderUnavailable, load_embedder, semantic_status

__all__ = ["Embedder", "EmbedderUnavailable", "MODELS", "load_embedder", "normalise_rows", "semantic_status"]
