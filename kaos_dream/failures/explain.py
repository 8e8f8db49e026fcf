"""Why a message got its fingerprint and its category: the normalisation steps that changed it and the
rule or cue that decided (``kaos failure explain``). Reads nothing from a library: a person's labels and
an LLM, which a recorded failure may also be given, are not consulted here."""

from __future__ import annotations

import re
from typing import Any

from . import records  # noqa: F401  (registers the built-in diagnosers)
from .cues import CUES, LEVEL_NAMES, generic_diagnosis
from .cues import DIAGNOSER_PREFIX as CUE_PREFIX
from .diagnosis import REGISTRY, FailureInput
from .examples import RULE_FAMILIES
from .fingerprint import bounded_sample, fingerprint_hash
from .heuristics import BUILTINS
from .normalize import (
    ALGORITHM,
    MAX_HEAD_CHARS,
    MAX_LINE_CHARS,
    MAX_TAIL_CHARS,
    _traceback_parts,
    bounded,
    first_lines,
    normalize,
    scrub,
)

SAMPLE_CHARS = 2000  # what `failures.record` shows the diagnosers by default (Settings.failure_sample_chars)


def _matched_pattern(name: str, failure: FailureInput) -> str | None:
    """The first of a built-in rule's patterns that matches (the rule matched as one alternation)."""
    for rule in BUILTINS:
        if rule.name == name:
            text = failure.message if rule.whole_message else failure.text
            for pattern in rule.patterns:
                if re.search(pattern, text, re.IGNORECASE | re.MULTILINE):
                    return pattern
    return None


def _cue_family(name: str) -> str:
    """A cue's family in words: its family name and what that family reads (``http-status: state or status code``)."""
    for cue in CUES:
        if cue.name == name:
            return f"{cue.family}: {LEVEL_NAMES[cue.level]}"
    return name.split("/", 1)[0]


def explain(tool: str, message: str) -> dict[str, Any]:
    """Each step from ``message`` to its fingerprint and category, as data."""
    part = bounded(message)
    tb = _traceback_parts(part)
    lines: list[dict[str, Any]] = []
    if tb is not None:
        sources = [tb[0][:MAX_LINE_CHARS]]
        reduction = f"a Python traceback: its exception line, plus the last frame's function ({tb[1]})"
    else:
        sources = first_lines(part)
        reduction = ("the first two lines that say something (a drawn frame stripped; bare severity labels,"
                     " banners and progress steps passed over)")
    for source in sources:
        trace: list[tuple[str, str]] = []
        scrub(source, trace)
        lines.append({"line": source, "steps": [{"step": step, "text": text} for step, text in trace]})
    norm = normalize(message)
    failure = FailureInput(tool, norm.key_lines[:2000], bounded_sample(message, SAMPLE_CHARS), norm.exception_type)
    rule = REGISTRY.diagnose(failure)
    decided: dict[str, Any]
    if rule is not None:
        decided = {"tier": "rule", "name": rule.diagnoser, "category": rule.category,
                   "family": RULE_FAMILIES.get(rule.diagnoser or "", ""),
                   "pattern": _matched_pattern(rule.diagnoser or "", failure)}
    elif (cue := generic_diagnosis(failure)) is not None:
        name = (cue.diagnoser or "").removeprefix(CUE_PREFIX)
        decided = {"tier": "cue", "name": cue.diagnoser, "category": cue.category,
                   "family": _cue_family(name), "pattern": None}
    else:
        decided = {"tier": "none", "name": None, "category": "unknown", "family": None, "pattern": None}
    return {
        "tool": tool,
        "algorithm": ALGORITHM,
        "characters": len(message),
        "cut": len(message) > MAX_HEAD_CHARS + MAX_TAIL_CHARS,
        "key": reduction,
        "lines": lines,
        "exception_type": norm.exception_type,
        "normalized": norm.text,
        "fingerprint": fingerprint_hash(tool, norm),
        "decided_by": decided,
    }
