"""Diagnoses and the diagnoser registry.

A diagnoser looks at one failure and either returns a :class:`Diagnosis` or ``None`` ("not mine").
Diagnosers run in ``order`` (then name) and the first answer wins, so specific rules (a DNS failure
wrapped in a connection error) must come before generic ones (any connection error). Users add their
own with :func:`register_diagnoser` or through the ``kaos_dream.diagnosers`` entry-point group, which
is loaded once, the first time a diagnosis is needed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import InvalidInputError

CATEGORIES = ("transient", "config", "code", "infra", "unknown")
METHODS = ("none", "heuristic", "llm", "llm-cached", "manual", "fallback")
ENTRY_POINT_GROUP = "kaos_dream.diagnosers"
LLM_METHODS = ("llm", "llm-cached")
# A model's diagnosis is a guess about text an agent wrote: it never claims certainty.
LLM_MAX_CONFIDENCE = 0.8
UNREVIEWED = "llm, unreviewed"


def diagnosis_source(method: str | None) -> str:
    """Who wrote a diagnosis, as shown and returned everywhere: ``llm, unreviewed`` for a model's text."""
    if method in LLM_METHODS:
        return UNREVIEWED
    return {"manual": "person", "heuristic": "heuristic"}.get(method or "", "none")


def for_agents(data: dict[str, Any], fingerprint_id: int | None) -> dict[str, Any]:
    """``data`` (a fingerprint, lookup or record answer) as other agents may see it: a model's unreviewed
    text (it may carry instructions injected through the failure message) is withheld, and the answer
    says so, until a person confirms it with `kaos dream diagnose ID --confirm`."""
    method = data.get("diagnostic_method")
    out = {**data, "source": diagnosis_source(method)}
    if method not in LLM_METHODS:
        return out
    where = f" {fingerprint_id}" if fingerprint_id is not None else ""
    out.update(category="unknown", root_cause=None, suggested_action=None, confidence=0.0, withheld=(
        f"a model's diagnosis (source: {UNREVIEWED}) is withheld until a person confirms it "
        f"(kaos dream diagnose{where} --confirm)"))
    return out


@dataclass(frozen=True)
class Diagnosis:
    """What went wrong and what to do about it."""

    category: str
    root_cause: str
    suggested_action: str
    confidence: float
    method: str = "heuristic"
    diagnoser: str | None = None

    def __post_init__(self) -> None:
        if self.category not in CATEGORIES:
            raise InvalidInputError(f"category {self.category!r} is not one of {', '.join(CATEGORIES)}")
        if self.method not in METHODS:
            raise InvalidInputError(f"diagnostic method {self.method!r} is not one of {', '.join(METHODS)}")
        if isinstance(self.confidence, bool) or not isinstance(self.confidence, (int, float)):
            raise InvalidInputError("confidence must be a number")
        cap = LLM_MAX_CONFIDENCE if self.method in LLM_METHODS else 1.0
        object.__setattr__(self, "confidence", min(cap, max(0.0, float(self.confidence))))

    def to_dict(self) -> dict[str, object]:
        return {
            "source": diagnosis_source(self.method),
            "category": self.category,
            "root_cause": self.root_cause,
            "suggested_action": self.suggested_action,
            "confidence": self.confidence,
            "diagnostic_method": self.method,
            "diagnoser": self.diagnoser,
        }


@dataclass(frozen=True)
class FailureInput:
    """What a diagnoser sees. ``text`` holds the lines the fingerprint was built from (for a Python
    traceback, its exception line); ``message`` is the stored (bounded) sample of the whole message."""

    tool: str
    text: str
    message: str
    exception_type: str | None = None


Diagnoser = Callable[[FailureInput], Diagnosis | None]


@dataclass(order=True, frozen=True)
class _Entry:
    order: int
    name: str
    fn: Diagnoser = field(compare=False)


class DiagnoserRegistry:
    """Ordered diagnosers; the first one that answers wins."""

    def __init__(self) -> None:
        self._entries: list[_Entry] = []
        self._lock = threading.Lock()
        self._entry_points_loaded = False
        self.load_errors: list[str] = []

    def register(self, name: str, fn: Diagnoser, *, order: int = 1000, replace: bool = False) -> None:
        """Add ``fn`` under ``name``. Built-ins use orders below 1000, so a user diagnoser runs after
        them by default; give a lower order to run first."""
        if not name or not callable(fn):
            raise InvalidInputError("a diagnoser needs a name and a callable")
        with self._lock:
            existing = [e for e in self._entries if e.name == name]
            if existing and not replace:
                raise InvalidInputError(f"a diagnoser named {name!r} is already registered")
            self._entries = [e for e in self._entries if e.name != name]
            self._entries.append(_Entry(order, name, fn))
            self._entries.sort()

    def unregister(self, name: str) -> bool:
        with self._lock:
            before = len(self._entries)
            self._entries = [e for e in self._entries if e.name != name]
            return len(self._entries) != before

    def names(self) -> list[str]:
        self.load_entry_points()
        return [e.name for e in self._entries]

    def load_entry_points(self) -> None:
        """Register every diagnoser published under the entry-point group (once). A plugin that fails
        to load is skipped and its error kept in :attr:`load_errors`, never raised at the caller."""
        if self._entry_points_loaded:
            return
        self._entry_points_loaded = True
        from importlib import metadata  # only when a diagnosis is actually needed (keeps CLI start fast)

        for ep in sorted(metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
            try:
                fn = ep.load()
                self.register(ep.name, fn, order=int(getattr(fn, "order", 1000)), replace=True)
            except Exception as exc:  # a broken plugin must not break failure recording
                self.load_errors.append(f"{ep.name}: {type(exc).__name__}: {exc}")

    def diagnose(self, failure: FailureInput) -> Diagnosis | None:
        """The first diagnoser's answer, or ``None`` when every diagnoser declines. A diagnoser that
        raises or returns something else is skipped (recorded in :attr:`load_errors`)."""
        self.load_entry_points()
        for entry in list(self._entries):
            try:
                result = entry.fn(failure)
            except Exception as exc:
                self.load_errors.append(f"{entry.name} raised {type(exc).__name__}: {exc}")
                continue
            if result is None:
                continue
            if not isinstance(result, Diagnosis):
                self.load_errors.append(f"{entry.name} returned {type(result).__name__}, not a Diagnosis")
                continue
            if result.diagnoser is None or result.method != "heuristic":
                result = Diagnosis(
                    result.category,
                    result.root_cause,
                    result.suggested_action,
                    result.confidence,
                    "heuristic",
                    result.diagnoser or entry.name,
                )
            return result
        return None


REGISTRY = DiagnoserRegistry()


def register_diagnoser(name: str, fn: Diagnoser, *, order: int = 1000, replace: bool = False) -> None:
    """Register a diagnoser in the process-wide registry (see :class:`DiagnoserRegistry`)."""
    REGISTRY.register(name, fn, order=order, replace=replace)


def unregister_diagnoser(name: str) -> bool:
    return REGISTRY.unregister(name)
