"""Which embedding model a library uses, loaded once per process and only when first needed."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from .base import Embedder
from .packages import INSTALL_HINT, LEXICAL_ONLY, OFF, PACKAGES, absent_package, hint, missing_package

if TYPE_CHECKING:
    from ..settings import Settings

__all__ = ["INSTALL_HINT", "MODELS", "OFF", "PACKAGES", "EmbedderUnavailable", "absent_package", "hint", "identity",
           "load_embedder", "missing_package", "semantic_status"]


def _wordllama() -> Embedder:
    from .wordllama_model import WordLlamaEmbedder

    return WordLlamaEmbedder()


def _minilm() -> Embedder:
    from .minilm_model import MiniLMEmbedder

    return MiniLMEmbedder()


def _hashing() -> Embedder:
    from .hashing import HashingEmbedder

    return HashingEmbedder()


MODELS: dict[str, Callable[[], Embedder]] = {"wordllama": _wordllama, "minilm": _minilm, "hash-trigram": _hashing}


def identity(name: str) -> tuple[str, str, int]:
    """(model id, version, dimension) of model ``name``, as stored beside its vectors. The transformer
    answers from its package metadata without loading its weights, so a search can ask whether the
    library holds its vectors before paying for the model; the others are cheap to load."""
    if name == "minilm":
        from .minilm_model import identity as minilm_identity

        return minilm_identity()
    model = load_embedder(name)
    return model.model_id, model.model_version, model.dim


class EmbedderUnavailable(Exception):
    """The configured model cannot be loaded; the message says why in one line."""


_loaded: dict[str, Embedder] = {}
_failed: dict[str, str] = {}


def load_embedder(name: str) -> Embedder:
    """The embedder called ``name`` (a key of :data:`MODELS`), loaded at most once per process."""
    if name in _loaded:
        return _loaded[name]
    if name in _failed:
        raise EmbedderUnavailable(_failed[name])
    if name not in MODELS:
        raise EmbedderUnavailable(f"unknown embedding model {name!r} (known: {', '.join(sorted(MODELS))})")
    try:
        model = MODELS[name]()
    except ImportError as exc:
        _failed[name] = f"{exc.name or name} is not installed ({hint(name)})"
        raise EmbedderUnavailable(_failed[name]) from None
    except Exception as exc:  # a damaged package or weights file: lexical search still works
        _failed[name] = f"the {name} model could not be loaded: {type(exc).__name__}: {str(exc)[:200]}"
        raise EmbedderUnavailable(_failed[name]) from None
    _loaded[name] = model
    return model


def semantic_status(settings: Settings) -> tuple[Embedder | None, str]:
    """(the embedder, "") when semantic retrieval is on, else (None, one line saying why it is off)."""
    if not settings.semantic:
        return None, LEXICAL_ONLY
    try:
        return load_embedder(settings.embedding_model), ""
    except EmbedderUnavailable as exc:
        return None, f"semantic search is off: {exc}; search is lexical only"
