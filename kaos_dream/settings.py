"""Settings read from the environment, with documented defaults.

Library code never reads ``os.environ`` directly: it gets a :class:`Settings`, so tests and
benchmarks can pass their own.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields

from .errors import InvalidInputError

_FALSE_WORDS = {"0", "false", "no", "off"}
_TRUE_WORDS = {"1", "true", "yes", "on"}


def parse_bool(text: str, name: str) -> bool:
    word = text.strip().lower()
    if word in _FALSE_WORDS:
        return False
    if word in _TRUE_WORDS:
        return True
    raise InvalidInputError(f"{name}={text!r} is not a boolean (use 1/0, true/false, yes/no, on/off)")


@dataclass(frozen=True)
class Settings:
    """Tunables. Each field maps to an environment variable ``KAOS_<FIELD NAME IN CAPITALS>``."""

    db: str = "kaos.db"
    busy_timeout_ms: int = 10_000
    synchronous: str = "NORMAL"
    dream_auto: bool = True
    # Dream consolidation (kaos_dream/dream). Defaults are DESIGN.md §6/§9's constants.
    dream_threshold: int = 100  # completed episodes between automatic dry-run passes
    dream_auto_budget_ms: float = 20.0  # an automatic pass estimated above this runs in a detached process
    dream_lease_s: float = 120.0  # how long a run's lease lasts without a heartbeat
    dream_promote_hits: int = 5  # memory retrieved this often -> promote proposal
    dream_prune_min_uses: int = 6  # prune needs at least this many outcomes ...
    dream_prune_max_success: float = 0.4  # ... and a success rate at or below this
    dream_merge_jaccard: float = 0.65  # token Jaccard between two live skills -> merge proposal
    dream_emergent_min: float = 3.0  # co-activations before an emergent co_occurs_with edge
    dream_emergent_step: float = 0.1  # emergent strength = min(cap, step x count)
    dream_emergent_cap: float = 0.5
    dream_ltd_delta: float = 0.05  # LTD per cycle: s -= delta * (1 - exp(-c / tau))
    dream_ltd_tau: float = 5.0
    dream_strength_floor: float = 0.1
    extra: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if environ is None else environ
        values: dict[str, object] = {}
        for f in fields(cls):
            if f.name == "extra":
                continue
            key = "KAOS_" + f.name.upper()
            if key not in env or env[key] == "":
                continue
            raw = env[key]
            default = getattr(cls, f.name)
            if isinstance(default, bool):
                values[f.name] = parse_bool(raw, key)
            elif isinstance(default, int):
                try:
                    values[f.name] = int(raw)
                except ValueError:
                    raise InvalidInputError(f"{key}={raw!r} is not a whole number") from None
            elif isinstance(default, float):
                try:
                    values[f.name] = float(raw)
                except ValueError:
                    raise InvalidInputError(f"{key}={raw!r} is not a number") from None
            else:
                values[f.name] = raw
        extra = {k: v for k, v in env.items() if k.startswith("KAOS_")}
        settings = cls(extra=extra, **values)  # type: ignore[arg-type]
        settings.validate()
        return settings

    def validate(self) -> None:
        if self.synchronous.upper() not in {"OFF", "NORMAL", "FULL", "EXTRA"}:
            raise InvalidInputError(
                f"KAOS_SYNCHRONOUS={self.synchronous!r} must be OFF, NORMAL, FULL or EXTRA"
            )
        if self.busy_timeout_ms < 0:
            raise InvalidInputError("KAOS_BUSY_TIMEOUT_MS must not be negative")
        if self.dream_threshold < 1:
            raise InvalidInputError("KAOS_DREAM_THRESHOLD must be at least 1")
        if not 0.0 < self.dream_merge_jaccard <= 1.0:
            raise InvalidInputError("KAOS_DREAM_MERGE_JACCARD must be in (0, 1]")
        if not 0.0 <= self.dream_prune_max_success <= 1.0:
            raise InvalidInputError("KAOS_DREAM_PRUNE_MAX_SUCCESS must be in [0, 1]")
        if self.dream_lease_s <= 0 or self.dream_ltd_tau <= 0:
            raise InvalidInputError("KAOS_DREAM_LEASE_S and KAOS_DREAM_LTD_TAU must be positive")
        if self.dream_promote_hits < 1 or self.dream_prune_min_uses < 1 or self.dream_emergent_min <= 0:
            raise InvalidInputError("dream thresholds (promote hits, prune uses, emergent minimum) must be positive")
