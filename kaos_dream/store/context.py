"""The narrow context every store works in: one connection, the clock, the settings, the hook runner.

Stores (skills, memories, episodes, failures, graph, dream, …) receive a :class:`StoreContext`
plus the *other stores they really use*, never the whole :class:`~kaos_dream.library.Library`, so
dependencies point downwards only: the library composes the stores, the stores know nothing above
them. :class:`Context` is the same surface as a protocol, so helpers that only need the connection,
clock and settings accept a context or a library alike (a library satisfies it structurally).
"""

from __future__ import annotations

import sqlite3
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from .connect import transaction

if TYPE_CHECKING:
    from ..clock import Clock
    from ..hooks import HookRunner
    from ..settings import Settings


class Context(Protocol):
    """What a store-level helper may use: the connection, the settings, the clock, the file."""

    @property
    def conn(self) -> sqlite3.Connection: ...

    @property
    def settings(self) -> Settings: ...

    @property
    def path(self) -> str: ...

    @property
    def readonly(self) -> bool: ...

    def now(self) -> float: ...


@dataclass(frozen=True)
class StoreContext:
    """One library's connection, clock, settings and file, shared by its stores.

    ``hooks`` runs the registered gates and episode hooks on behalf of the library that owns this
    context (hooks receive that library, their public argument); stores call it without knowing it.
    """

    conn: sqlite3.Connection
    clock: Clock
    settings: Settings
    path: str
    readonly: bool
    hooks: HookRunner
    # Who writes through this library (issue 33): every episode it registers names this principal.
    principal: str = ""

    def now(self) -> float:
        """The clock's current time (UTC epoch seconds; injectable for tests)."""
        return self.clock.now()

    def transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` … ``COMMIT`` on the connection (joins an enclosing transaction)."""
        return transaction(self.conn)
