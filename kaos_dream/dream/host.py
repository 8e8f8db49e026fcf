"""What the dream works with: the store context plus the stores its phases really use.

:class:`DreamStores` is what a library hands its :class:`~kaos_dream.dream.Dream`; :class:`DreamHost`
is the same surface as a protocol, which a Library also satisfies (the automatic trigger runs a pass
from an episode hook, which receives the library). A phase sees it as ``ctx.lib``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from ..store.context import Context

if TYPE_CHECKING:
    from ..embedding.store import Vectors
    from ..failures.records import Failures
    from ..policies import Policies
    from ..settings import Settings
    from ..skills import Skills
    from ..store.context import StoreContext


class DreamHost(Context, Protocol):
    """The store context (connection, settings, clock, file) and the stores dream phases use."""

    @property
    def skills(self) -> Skills: ...

    @property
    def failures(self) -> Failures: ...

    @property
    def policies(self) -> Policies: ...

    @property
    def vectors(self) -> Vectors: ...


@dataclass(frozen=True)
class DreamStores:
    """The dream's explicit dependencies. ``vectors_of`` builds the vector store on first use (numpy)."""

    ctx: StoreContext
    skills: Skills
    failures: Failures
    policies: Policies
    vectors_of: Callable[[], Vectors]

    @property
    def conn(self) -> sqlite3.Connection:
        return self.ctx.conn

    @property
    def settings(self) -> Settings:
        return self.ctx.settings

    @property
    def path(self) -> str:
        return self.ctx.path

    @property
    def readonly(self) -> bool:
        return self.ctx.readonly

    def now(self) -> float:
        return self.ctx.now()

    @property
    def vectors(self) -> Vectors:
        return self.vectors_of()
