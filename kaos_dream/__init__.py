"""kaos-dream: a skill and memory library for AI agents that learns from use."""

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
