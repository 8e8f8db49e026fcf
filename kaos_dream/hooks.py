"""Extension points between features, so each feature stays in its own module.

* **Episode gates** decide whether an ended episode may teach the graph (co-activation counts and
  Hebbian strengthening). Every gate must pass. The default gate passes completed episodes only;
  the validation gate (Kairos validators) adds more.
* **Episode-end hooks** run inside the episode-end transaction, after the gate has been decided,
  for every ended episode (gated or not): causal evidence, failure bookkeeping, …
* **Before-episode-end hooks** run before that transaction begins, outside the write lock, for
  slow read-only work such as LLM validation; they receive an :class:`EpisodeDraft`.
* **After-episode hooks** run after that transaction has committed: the automatic dream trigger,
  which must not hold the write lock of the completing agent.

Registration happens at import time of the feature module; hooks run in ``order`` then name order,
so the sequence is deterministic.

Every callback receives the library the episode belongs to (its first argument, ``host``). This module
sits below every store, so it names that argument's type loosely; each built-in hook states the narrow
part of the library it reads as a protocol of its own. Stores run the hooks through the
:class:`HookRunner` in their context, which binds the host.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Host = Any  # the Library an episode belongs to (see the module docstring)


@dataclass(frozen=True)
class EpisodeEnd:
    """What one ended agent session implies: the input of gates and hooks."""

    agent_id: str
    state: str  # completed | failed | killed
    started_at: float
    ended_at: float
    skills: tuple[int, ...]  # distinct skills the agent reported outcomes for, in id order
    memories: tuple[int, ...]  # distinct memories its searches returned with record_hits, in id order
    conclusion: str | None = None
    citations: tuple[tuple[str, str], ...] = ()  # (kind, name-or-key) the agent says it relied on
    failure_ids: tuple[int, ...] = ()  # failure fingerprints recorded by the agent, in id order
    extra: dict[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class EpisodeDraft:
    """An episode about to end: what is known before the episode-end transaction starts."""

    agent_id: str
    state: str
    conclusion: str | None
    citations: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class GateDecision:
    passed: bool
    reason: str


Gate = Callable[[Host, EpisodeEnd], GateDecision]
EpisodeHook = Callable[[Host, EpisodeEnd, GateDecision], None]
AfterHook = Callable[[Host, EpisodeEnd], None]
BeforeHook = Callable[[Host, EpisodeDraft], None]


@dataclass(frozen=True)
class _Entry:
    order: int
    name: str
    fn: Callable[..., object]


_GATES: list[_Entry] = []
_EPISODE_END: list[_Entry] = []
_AFTER_EPISODE: list[_Entry] = []
_BEFORE_EPISODE_END: list[_Entry] = []


def _register(registry: list[_Entry], name: str, fn: Callable[..., object], order: int) -> None:
    registry[:] = [e for e in registry if e.name != name]  # re-registering replaces
    registry.append(_Entry(order, name, fn))
    registry.sort(key=lambda e: (e.order, e.name))


def register_gate(name: str, fn: Gate, order: int = 100) -> None:
    _register(_GATES, name, fn, order)


def register_episode_end(name: str, fn: EpisodeHook, order: int = 100) -> None:
    _register(_EPISODE_END, name, fn, order)


def register_after_episode(name: str, fn: AfterHook, order: int = 100) -> None:
    _register(_AFTER_EPISODE, name, fn, order)


def register_before_episode_end(name: str, fn: BeforeHook, order: int = 100) -> None:
    _register(_BEFORE_EPISODE_END, name, fn, order)


def unregister(name: str) -> None:
    for registry in (_GATES, _EPISODE_END, _AFTER_EPISODE, _BEFORE_EPISODE_END):
        registry[:] = [e for e in registry if e.name != name]


def decide_gate(lib: Host, episode: EpisodeEnd) -> GateDecision:
    """All gates must pass; the first one that fails gives the reason."""
    for entry in _GATES:
        decision = entry.fn(lib, episode)
        if not decision.passed:
            return decision
    return GateDecision(True, "all gates passed")


def run_episode_end(lib: Host, episode: EpisodeEnd, decision: GateDecision) -> None:
    for entry in list(_EPISODE_END):
        entry.fn(lib, episode, decision)


def run_before_episode_end(lib: Host, draft: EpisodeDraft) -> None:
    for entry in list(_BEFORE_EPISODE_END):
        entry.fn(lib, draft)


def run_after_episode(lib: Host, episode: EpisodeEnd) -> None:
    for entry in list(_AFTER_EPISODE):
        entry.fn(lib, episode)


def outcome_gate(lib: Host, episode: EpisodeEnd) -> GateDecision:
    """The default gate: only an episode that completed successfully may reinforce anything."""
    if episode.state == "completed":
        return GateDecision(True, "episode completed")
    return GateDecision(False, f"episode {episode.state}")


class HookRunner:
    """Runs the registered gates and hooks on behalf of one library (``host``, what every callback receives)."""

    def __init__(self, host: Host) -> None:
        self._host = host

    def decide_gate(self, episode: EpisodeEnd) -> GateDecision:
        """All gates must pass (see :func:`decide_gate`)."""
        return decide_gate(self._host, episode)

    def episode_end(self, episode: EpisodeEnd, decision: GateDecision) -> None:
        """The episode-end hooks, inside the episode-end transaction."""
        run_episode_end(self._host, episode, decision)

    def before_episode_end(self, draft: EpisodeDraft) -> None:
        """The before-episode-end hooks, outside the write lock."""
        run_before_episode_end(self._host, draft)

    def after_episode(self, episode: EpisodeEnd) -> None:
        """The after-episode hooks, after the episode-end transaction committed."""
        run_after_episode(self._host, episode)


register_gate("outcome", outcome_gate, order=0)
