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

register_builtin()
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
