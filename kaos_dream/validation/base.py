"""Validators and the trust score.

A validator looks at one ended episode and returns a :class:`Verdict`: a score in [0, 1], whether
it passed its threshold, and a one-line reason — or that it is off (no LLM configured, nothing to
check) and why. *Quality* validators (outcome, grounding, logical, alignment) make up trust and the
gate; *report* validators (novelty) are shown beside trust and never averaged into it, because the
Kairos ablation found that averaging novelty with quality degrades the score.

``trust = mean(score of enabled quality validators)``; the gate passes when every enabled quality
validator passes its threshold. Custom validators register with :func:`register_validator` or the
``kaos_dream.validators`` entry-point group.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, Protocol

from ..hooks import EpisodeEnd
from ..store.context import Context

if TYPE_CHECKING:
    from ..llm import LLMClient


class ValidationHost(Context, Protocol):
    """The part of the library validators and the gate read (a Library satisfies it): the store
    context plus the LLM client."""

    @property
    def llm(self) -> LLMClient: ...

QUALITY = "quality"
REPORT = "report"


@dataclass(frozen=True)
class Verdict:
    validator: str
    kind: str
    enabled: bool
    score: float | None
    passed: bool | None
    threshold: float | None
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ValidationContext:
    """What validators may look at; built once per episode."""

    lib: ValidationHost
    episode: EpisodeEnd
    cited: tuple[CitedItem, ...]
    given_preferences: dict[str, str] | None = None  # read from the library on first use when not given

    @cached_property
    def preferences(self) -> dict[str, str]:
        """The user's preferences. Read lazily: only alignment validators look, and they are off
        without an LLM, so most episode ends need not query them."""
        if self.given_preferences is not None:
            return self.given_preferences
        return {k: v for k, v in self.lib.conn.execute("SELECT key, value FROM preferences ORDER BY key")}


@dataclass(frozen=True)
class CitedItem:
    kind: str
    ref: str
    exists: bool
    live: bool
    text: str


@dataclass(frozen=True)
class ValidationReport:
    verdicts: tuple[Verdict, ...]
    passed: bool
    trust: float | None
    novelty: float | None
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "trust": self.trust,
            "novelty": self.novelty,
            "reason": self.reason,
            "validators": [v.to_dict() for v in self.verdicts],
        }


ValidatorFn = Callable[[ValidationContext, float | None], Verdict]


@dataclass(frozen=True)
class ValidatorSpec:
    name: str
    kind: str
    fn: ValidatorFn
    order: int
    threshold_setting: str | None  # name of the Settings field holding the threshold
    default_threshold: float | None


_REGISTRY: dict[str, ValidatorSpec] = {}
_SORTED: list[ValidatorSpec] | None = None  # the registry in run order, rebuilt after any change
_ENTRY_POINTS_LOADED = False
ENTRY_POINT_GROUP = "kaos_dream.validators"


def register_validator(
    name: str,
    fn: ValidatorFn,
    *,
    kind: str = QUALITY,
    threshold: float | None = 0.5,
    threshold_setting: str | None = None,
    order: int = 100,
) -> None:
    """Add (or replace) a validator. ``fn(ctx, threshold) -> Verdict``."""
    if kind not in (QUALITY, REPORT):
        raise ValueError(f"validator kind must be {QUALITY!r} or {REPORT!r}")
    global _SORTED
    _REGISTRY[name] = ValidatorSpec(name, kind, fn, order, threshold_setting, threshold)
    _SORTED = None


def unregister_validator(name: str) -> None:
    global _SORTED
    _REGISTRY.pop(name, None)
    _SORTED = None


def load_entry_points() -> None:
    """Import validators other packages declare under ``kaos_dream.validators`` (once)."""
    global _ENTRY_POINTS_LOADED
    if _ENTRY_POINTS_LOADED:
        return
    _ENTRY_POINTS_LOADED = True
    from importlib import metadata  # here: reading every installed package's metadata is slow

    for entry in metadata.entry_points(group=ENTRY_POINT_GROUP):
        hook = entry.load()
        if callable(hook):
            hook()


def validators() -> list[ValidatorSpec]:
    """Registered validators in run order (order, then name); sorted once per registry change, since
    every episode end asks."""
    global _SORTED
    load_entry_points()
    if _SORTED is None:
        _SORTED = sorted(_REGISTRY.values(), key=lambda s: (s.order, s.name))
    return list(_SORTED)


def threshold_for(lib: ValidationHost, spec: ValidatorSpec) -> float | None:
    if spec.threshold_setting and hasattr(lib.settings, spec.threshold_setting):
        return float(getattr(lib.settings, spec.threshold_setting))
    return spec.default_threshold


def summarise(verdicts: list[Verdict]) -> ValidationReport:
    """Trust, novelty and the gate decision in one pass over the verdicts (every episode end asks)."""
    total, enabled = 0.0, 0
    novelty: float | None = None
    novelty_seen = False
    failed: list[Verdict] = []
    for v in verdicts:
        if not v.enabled:
            continue
        if v.kind == QUALITY:
            enabled += 1
            total += v.score or 0.0
            if not v.passed:
                failed.append(v)
        elif v.kind == REPORT and v.validator == "novelty" and not novelty_seen:
            novelty, novelty_seen = v.score, True
    trust = total / enabled if enabled else None
    if failed:
        reason = "; ".join(f"{v.validator}: {v.reason}" for v in failed)
        return ValidationReport(tuple(verdicts), False, trust, novelty, reason)
    if not enabled:
        return ValidationReport(tuple(verdicts), False, None, novelty, "no quality validator was enabled")
    return ValidationReport(tuple(verdicts), True, trust, novelty, "every enabled validator passed")
