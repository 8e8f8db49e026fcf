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
    # Policies: an action approved at least this share of the time over at least this many
    # human-decided intents becomes a policy (KAOS_POLICY_MIN_APPROVAL, KAOS_POLICY_MIN_SUPPORT).
    policy_min_approval: float = 0.9
    policy_min_support: int = 3
    # Validation gate thresholds (Kairos appendix): KAOS_GROUNDING_THRESHOLD, KAOS_LOGICAL_THRESHOLD,
    # KAOS_ALIGNMENT_THRESHOLD.
    grounding_threshold: float = 0.7
    logical_threshold: float = 0.7
    alignment_threshold: float = 0.5
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
