"""Normalising and diagnosing a failure message costs time linear in its length, whatever an agent sends
(issue 34): `'1.2.3.' * 2000` used to take seconds because patterns backtracked from every start.

No wall-clock limit: each check compares the CPU time of one input at two sizes, in one run, and allows
three times what linear growth predicts (quadratic growth would be 8x that).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kaos_dream.failures import records  # noqa: F401  (registers the built-in diagnosers)
from kaos_dream.failures.cues import generic_diagnosis
from kaos_dream.failures.diagnosis import REGISTRY, FailureInput
from kaos_dream.failures.fingerprint import bounded_sample
from kaos_dream.failures.normalize import MAX_HEAD_CHARS, MAX_LINE_CHARS, MAX_TAIL_CHARS, bounded, normalize, scrub

SMALL, FACTOR = 1_000, 8
# repeated separators, long dotted/slashed/hex runs, nested brackets, and the runs that made the old
# patterns restart at every position (each found quadratic before issue 34)
ADVERSARIAL = ["1.2.3.", "a.b-", "a.", "1.", "1,", "a-", "1-", "a/", "ab12", "a1", "a$", "a_1-", "[", "((", "[{(",
               "<date>/", "a@", "\n", " \n", ":", "ab:", "='", "\\", "0x", "é.", "Error ", "a.com."]
TAILS = ["", "x", "-", ">", ":"]


def _cpu(fn: Callable[[str], object], text: str, repeats: int = 3) -> float:
    best = float("inf")
    gc.disable()
    try:
        for _ in range(repeats):
            start = time.process_time()
            fn(text)
            best = min(best, time.process_time() - start)
    finally:
        gc.enable()
    return best


def _grows_linearly(fn: Callable[[str], object], unit: str, tail: str) -> tuple[bool, float, float]:
    small = unit * (SMALL // len(unit) + 1) + tail
    big = unit * (SMALL * FACTOR // len(unit) + 1) + tail
    fn(small)  # warm caches (compiled patterns, the registry)
    a, b = _cpu(fn, small), _cpu(fn, big)
    return b <= 3 * FACTOR * a + 0.005, a, b


def _diagnose(text: str) -> object:
    failure = FailureInput("tool", text, text, None)
    return REGISTRY.diagnose(failure) or generic_diagnosis(failure)


@pytest.mark.parametrize("unit", ADVERSARIAL)
def test_scrub_is_linear_on_adversarial_runs(unit: str) -> None:
    for tail in TAILS:
        ok, a, b = _grows_linearly(scrub, unit, tail)
        assert ok, f"scrub({unit!r} * n + {tail!r}): {a:.4f}s at {SMALL} chars, {b:.4f}s at {SMALL * FACTOR}"


@pytest.mark.parametrize("unit", ["1.2.3.", "a.", "a/", "a$", "\n", "[{(", "='", "Error "])
def test_diagnosis_is_linear_on_adversarial_runs(unit: str) -> None:
    for tail in ("x", ":"):
        ok, a, b = _grows_linearly(_diagnose, unit, tail)
        assert ok, f"diagnose({unit!r} * n + {tail!r}): {a:.4f}s at {SMALL} chars, {b:.4f}s at {SMALL * FACTOR}"


_UNIT = st.text(alphabet=st.sampled_from(list("a1f.-/_:@[](){}<>=' \n\\$,xZ")), min_size=1, max_size=6)


@settings(max_examples=8, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(unit=_UNIT, tail=st.sampled_from(TAILS))
def test_scrub_and_diagnosis_are_linear_on_generated_runs(unit: str, tail: str) -> None:
    for fn in (scrub, _diagnose):
        ok, a, b = _grows_linearly(fn, unit, tail)
        assert ok, f"{fn.__name__}({unit!r} * n + {tail!r}): {a:.4f}s small, {b:.4f}s big"


def test_normalisation_reads_a_bounded_part_of_the_message() -> None:
    huge = "ERROR " + "1.2.3." * 200_000 + "\nsecond line\n" + "x" * 500_000 + "\nKeyError: 'k'"
    part = bounded(huge)
    assert len(part) == MAX_HEAD_CHARS + MAX_TAIL_CHARS + 1
    assert part.startswith("ERROR ") and part.endswith("KeyError: 'k'")
    norm = normalize(huge)
    assert all(len(line) <= MAX_LINE_CHARS for line in norm.key_lines.splitlines())
    tb = "Traceback (most recent call last):\n" + '  File "x.py", line 1, in f\n' * 100_000 + "KeyError: 'k'"
    assert normalize(tb).text == "keyerror: 'k' @ f"  # the exception line is kept from the tail


def test_a_megabyte_costs_what_its_bounded_part_costs() -> None:
    """Past the bound, size no longer matters: 1 MB costs about what 100 KB costs (CPU, one run)."""

    def record_path(message: str) -> object:
        norm = normalize(message)
        failure = FailureInput("tool", norm.key_lines[:2000], bounded_sample(message, 2000), norm.exception_type)
        return REGISTRY.diagnose(failure) or generic_diagnosis(failure)

    for unit in ("1.2.3.", "a.b-", "\n"):
        record_path(unit * 10)
        a = _cpu(record_path, unit * (100_000 // len(unit)) + "x")
        b = _cpu(record_path, unit * (1_000_000 // len(unit)) + "x")
        assert b <= 3 * a + 0.01, f"{unit!r}: {a:.4f}s at 100 KB, {b:.4f}s at 1 MB"
