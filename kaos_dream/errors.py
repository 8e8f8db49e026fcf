"""Exceptions the library raises on purpose.

Every error a user can cause is a :class:`KaosError`; the CLI turns it into one line on stderr and a
non-zero exit, so nothing below the CLI ever has to print.
"""

from __future__ import annotations


class KaosError(Exception):
    """Base class: a problem the user can fix, described in one line."""

    exit_code = 1


class NotFoundError(KaosError):
    """An id or name that does not exist."""


class ConflictError(KaosError):
    """The change would break a uniqueness rule (duplicate name, already merged, ...)."""


class InvalidInputError(KaosError):
    """Malformed input: empty names, bad JSON, missing template parameters, ..."""


class StoreError(KaosError):
    """The database file cannot be used: not SQLite, corrupt, read-only, locked, full, too new."""


class SchemaTooNewError(StoreError):
    """The file was written by a newer kaos-dream; we refuse to touch it."""


class SchemaOutdatedError(StoreError):
    """A read-only open found a file that still needs migrating."""
