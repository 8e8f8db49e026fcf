"""The SQLite store: connecting, migrating, and small helpers shared by every table module."""

from .connect import connect, transaction
from .helpers import one, placeholders, rows, scalar
from .migrations import LATEST_VERSION, MIGRATIONS, apply_migrations, file_schema_version, schema_version

__all__ = [
    "one",
    "placeholders",
    "rows",
    "scalar",
    "connect",
    "transaction",
    "LATEST_VERSION",
    "MIGRATIONS",
    "apply_migrations",
    "file_schema_version",
    "schema_version",
]
