"""Validation-gated learning: validators, trust, and the gate on Hebbian updates."""

from .base import (
    QUALITY,
    REPORT,
    CitedItem,
    ValidationContext,
    ValidationReport,
    Verdict,
    register_validator,
    unregister_validator,
    validators,
)
from .builtin import register_builtin
from .gate import install, list_reports, stored_report, validate_episode
from .llm_validators import register_llm_validators

register_builtin()
register_llm_validators()
install()

__all__ = [
    "QUALITY",
    "REPORT",
    "CitedItem",
    "ValidationContext",
    "ValidationReport",
    "Verdict",
    "register_validator",
    "unregister_validator",
    "validators",
    "validate_episode",
    "stored_report",
    "list_reports",
]
