"""Text embeddings for semantic retrieval, behind one small interface (:class:`Embedder`).

Nothing here imports numpy or a model at import time: the names below load their modules on first
access (:pep:`562`), and :func:`load_embedder` loads the configured model on first use and keeps it
for the process, so commands that never search or write never pay for it (``kaos db info`` reads
:mod:`.packages` alone).
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_FROM = {"Embedder": ".base", "normalise_rows": ".base", "MODELS": ".loader", "EmbedderUnavailable": ".loader",
         "load_embedder": ".loader", "semantic_status": ".loader"}

__all__ = ["Embedder", "EmbedderUnavailable", "MODELS", "load_embedder", "normalise_rows", "semantic_status"]


def __getattr__(name: str) -> Any:
    if name not in _FROM:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(_FROM[name], __name__), name)
