"""Rules you can see (issue 34): every built-in rule and cue states its family and carries example messages,
positives it must decide or match and near misses it must not, checked here one by one."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from kaos_dream.failures import (
    cues,
    records,  # noqa: F401  (registers the built-in diagnosers)
)
from kaos_dream.failures.diagnosis import REGISTRY, FailureInput
from kaos_dream.failures.examples import CUE_EXAMPLES, RULE_EXAMPLES, RULE_FAMILIES
from kaos_dream.failures.fingerprint import bounded_sample
from kaos_dream.failures.heuristics import BUILTINS
from kaos_dream.failures.normalize import normalize


def as_failure(message: str) -> FailureInput:
    """The input the diagnosers get when `failures.record` sees ``message``."""
    norm = normalize(message)
    return FailureInput("example", norm.key_lines[:2000], bounded_sample(message, 2000), norm.exception_type)


def test_every_rule_and_cue_states_a_family_and_carries_examples() -> None:
    assert set(RULE_FAMILIES) == {rule.name for rule in BUILTINS} == set(RULE_EXAMPLES)
    assert set(CUE_EXAMPLES) == {cue.name for cue in cues.CUES}
    for rule in BUILTINS:
        positives, near_misses = rule.examples
        assert rule.family and positives and near_misses, rule.name
    for cue in cues.CUES:
        positives, near_misses = cue.examples
        assert cue.family and positives and near_misses, cue.name


@pytest.mark.parametrize("rule", BUILTINS, ids=[rule.name for rule in BUILTINS])
def test_rule_decides_its_positives_and_not_its_near_misses(rule) -> None:
    positives, near_misses = rule.examples
    for message in positives:
        found = REGISTRY.diagnose(as_failure(message))
        assert found is not None and found.diagnoser == rule.name, (message, found and found.diagnoser)
    for message in near_misses:
        assert rule(as_failure(message)) is None, message


@pytest.mark.parametrize("cue", cues.CUES, ids=[cue.name for cue in cues.CUES])
def test_cue_matches_its_positives_and_not_its_near_misses(cue) -> None:
    positives, near_misses = cue.examples
    for message in positives:
        assert cues.matches(as_failure(message), [cue]), message
    for message in near_misses:
        assert not cues.matches(as_failure(message), [cue]), message


def test_explain_names_the_family_that_decided() -> None:
    message = RULE_EXAMPLES["package_lock_held"][0][0]
    done = subprocess.run([sys.executable, "-m", "kaos_dream", "failure", "explain", "--tool", "apt", "--json",
                           message], capture_output=True, text=True, check=True)
    decided = json.loads(done.stdout)["decided_by"]
    assert decided["name"] == "package_lock_held"
    assert decided["family"] == RULE_FAMILIES["package_lock_held"]
    cue_message = CUE_EXAMPLES["signal/arithmetic trap"][0][0]
    done = subprocess.run([sys.executable, "-m", "kaos_dream", "failure", "explain", "--json", cue_message],
                          capture_output=True, text=True, check=True)
    decided = json.loads(done.stdout)["decided_by"]
    assert (decided["tier"], decided["name"]) == ("cue", "cue:signal/arithmetic trap")
    assert decided["family"] == "signal: state or status code"
