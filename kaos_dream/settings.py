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
    # Search ranking (DESIGN §4). rank: weighted (default, chosen by demo_neuroplasticity_bench),
    # wilson (the seed formula exactly) or bm25 (lexical order).
    rank: str = "weighted"
    rank_alpha: float = 3.0  # weight of the Wilson lower bound in the usage factor
    rank_half_life_days: float = 14.0  # recency half-life
    rank_z: float = 1.96  # Wilson confidence (95 %)
    rank_floor: float = 0.01  # BM25 relevance floor, so a barely-matching entry keeps a positive score
    rank_task_context: bool = True  # weighted: use the outcomes of the same task when it has history
    rank_pool: int = 50  # weighted ranking re-scores at most this many lexical candidates per kind
    rank_pool_min: int = 20  # coordination levels are relaxed until at least this many candidates match
    ltp_eta: float = 0.1  # Hebbian strengthening rate at episode end (half for skill x memory pairs)
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
        if self.rank not in {"weighted", "wilson", "bm25"}:
            raise InvalidInputError(f"KAOS_RANK={self.rank!r} must be weighted, wilson or bm25")
        if self.rank_half_life_days <= 0 or self.rank_z <= 0 or self.rank_alpha < 0 or self.rank_floor < 0:
            raise InvalidInputError(
                "KAOS_RANK_HALF_LIFE_DAYS and KAOS_RANK_Z must be positive; KAOS_RANK_ALPHA and KAOS_RANK_FLOOR "
                "must not be negative"
            )
        if self.rank_pool < 1 or self.rank_pool_min < 1:
            raise InvalidInputError("KAOS_RANK_POOL and KAOS_RANK_POOL_MIN must be at least 1")
        if not 0.0 < self.ltp_eta <= 1.0:
            raise InvalidInputError("KAOS_LTP_ETA must be in (0, 1]")
        if self.busy_timeout_ms < 0:
            raise InvalidInputError("KAOS_BUSY_TIMEOUT_MS must not be negative")
