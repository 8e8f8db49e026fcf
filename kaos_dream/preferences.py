"""User preferences: plain key/value statements the alignment validator checks conclusions against
(e.g. ``risk = "never deploy on Fridays"``)."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

from . import limits
from .errors import InvalidInputError, NotFoundError
from .names import first_unprintable
from .store import transaction

if TYPE_CHECKING:
    from .store.context import StoreContext

MAX_KEY = limits.PREFERENCE_KEY
MAX_VALUE = limits.PREFERENCE_VALUE


class Preferences:
    def __init__(self, ctx: StoreContext) -> None:
        self._ctx = ctx

    @property
    def _conn(self) -> sqlite3.Connection:
        return self._ctx.conn

    def set(self, key: str, value: str) -> None:
        """Set (or replace) a preference."""
        key = key.strip()
        if not key or len(key) > MAX_KEY or any(ord(c) < 32 for c in key):
            raise InvalidInputError(f"preference key must be 1-{MAX_KEY} printable characters")
        bad = first_unprintable(key)
        if bad:
            raise InvalidInputError(f"preference key must be printable characters; it holds {bad}")
        if not value.strip() or len(value) > MAX_VALUE or "\x00" in value:
            raise InvalidInputError(f"preference value must be 1-{MAX_VALUE} characters without NUL")
        with transaction(self._conn):
            self._conn.execute(
                "INSERT INTO preferences (key, value, updated_at) VALUES (?, ?, ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
                (key, value.strip(), self._ctx.now()),
            )

    def all(self) -> dict[str, str]:
        """Every preference as ``{key: value}``, in key order (what the alignment validator reads)."""
        return {k: v for k, v in self._conn.execute("SELECT key, value FROM preferences ORDER BY key")}

    def remove(self, key: str) -> None:
        """Delete a preference; NotFoundError when there is none."""
        with transaction(self._conn):
            if self._conn.execute("DELETE FROM preferences WHERE key = ?", (key.strip(),)).rowcount == 0:
                raise NotFoundError(f"no preference {key!r}")
