"""Exceptions the library raises on purpose.

Every error a user can cause is a :class:`KaosError`; the CLI turns it into one line on stderr and a
non-zero exit, so nothing below the CLI ever has to print.
"""

from __future__ import annotations

import sqlite3


class KaosError(Exception):
    """Base class: a problem the user can fix, described in one line."""

    exit_code = 1


class NotFoundError(KaosError):
    """An id or name that does not exist."""


class ConflictError(KaosError):
    """The change would break a uniqueness rule (duplicate name, already merged, ...)."""


class InvalidInputError(KaosError):
    """Malformed input: empty names, bad JSON, missing template parameters, ..."""


class NotPermittedError(KaosError):
    """The caller may not act on this (an MCP server on an episode it did not start)."""


class StoreError(KaosError):
    """The database file cannot be used: not SQLite, corrupt, read-only, locked, full, too new."""


class SchemaTooNewError(StoreError):
    """The file was written by a newer kaos-dream; we refuse to touch it."""


class SchemaOutdatedError(StoreError):
    """A read-only open found a file that still needs migrating."""


class StoreFaultError(StoreError, sqlite3.OperationalError):
    """SQLite could not carry out a write or read on the file: full, read-only, locked beyond the busy
    timeout, corrupt, or an I/O error. The transaction was rolled back. It is also a
    ``sqlite3.OperationalError`` so code that already handles SQLite's own errors keeps working.
    ``kind`` says which: full, readonly, locked, io, corrupt or cantopen."""

    kind: str = "unknown"
