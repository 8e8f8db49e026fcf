"""kaos-dream: a skill and memory library for AI agents that learns from use."""

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the names below load on first use (see __getattr__)
    from .clock import ManualClock, SystemClock
    from .errors import (
        ConflictError,
        InvalidInputError,
        KaosError,
        NotFoundError,
        SchemaOutdatedError,
        SchemaTooNewError,
        StoreError,
    )
    from .library import Library, open_library
    from .settings import Settings

__version__ = "0.1.0"

__all__ = [
    "Library",
    "open_library",
    "Settings",
    "ManualClock",
    "SystemClock",
    "KaosError",
    "NotFoundError",
    "ConflictError",
    "InvalidInputError",
    "StoreError",
    "SchemaTooNewError",
    "SchemaOutdatedError",
    "__version__",
]

_LAZY = {
    "Library": "library", "open_library": "library", "Settings": "settings", "ManualClock": "clock",
    "SystemClock": "clock", "KaosError": "errors", "NotFoundError": "errors", "ConflictError": "errors",
    "InvalidInputError": "errors", "StoreError": "errors", "SchemaTooNewError": "errors",
    "SchemaOutdatedError": "errors",
}


def __getattr__(name: str) -> object:
    """Import the library on first use: ``kaos --version`` and light callers need none of it."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'kaos_dream' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
