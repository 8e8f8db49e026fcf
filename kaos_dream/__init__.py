"""kaos-dream: a skill and memory library for AI agents that learns from use."""

from typing import TYPE_CHECKING

from .lazy import lazy_attributes

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


# Import the library on first use: ``kaos --version`` and light callers need none of it.
__getattr__ = lazy_attributes(__name__, _LAZY, globals())
