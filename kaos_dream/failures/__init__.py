"""Failure intelligence: fingerprints, diagnosis, fix plasticity and systemic alerts."""

from .diagnosis import CATEGORIES, DiagnoserRegistry, Diagnosis, FailureInput, register_diagnoser, unregister_diagnoser
from .heuristics import BUILTINS, PatternDiagnoser
from .normalize import ALGORITHM, normalize
from .records import Failures, Known, Recorded

__all__ = [
    "ALGORITHM",
    "BUILTINS",
    "CATEGORIES",
    "Diagnosis",
    "DiagnoserRegistry",
    "FailureInput",
    "Failures",
    "Known",
    "PatternDiagnoser",
    "Recorded",
    "normalize",
    "register_diagnoser",
    "unregister_diagnoser",
]
