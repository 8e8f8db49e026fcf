"""The RE2 screen in front of the diagnosers' Python patterns: it never changes an answer, and on a message
nothing matches it spares the Python patterns (issue 34: cheap, bounded diagnosis)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kaos_dream.failures import (
    cues,
    records,  # noqa: F401  (registers the built-in diagnosers)
)
from kaos_dream.failures.heuristics import BUILTINS
from kaos_dream.failures.screen import Screened, relaxed

ALL = [(rule.name, rule._regex) for rule in BUILTINS] + [(cue.name, cue.regex) for cue in cues.CUES]
# What a real message might hold, and what trips a screen that drops boundaries and look-arounds: Unicode
# letters and digits next to ASCII words, the words the patterns look for, separators.
_WORDS = ["not authorized", "payment ", "Error", "Exception", "timeout", "timed out", "connection refused", "HTTP",
          "503", "502", " 500 ", "status", "code = Unavailable", "no space left", "OOM", "deadlock", "asleep - ",
          "site-packages", "cannot import name 'x' from 'y' (", ".py)", "é", "Ω", "٣", "²", "\u00a0", "_", "-", ".",
          "\n", " ", ":", "(", ")", "'", "Limit", "Exceeded", "TimeLimit", "ERR! ", "errno 13", "Reference",
          "KeyError", "Invalid", "Token", "database is locked", " down"]
_TEXT = st.lists(st.sampled_from(_WORDS), max_size=30).map("".join)


def test_every_rule_and_cue_has_a_screen() -> None:
    missing = [name for name, compiled in ALL if compiled.screen is None]
    assert missing == []


@settings(max_examples=150, deadline=None, derandomize=True)
@given(text=_TEXT)
def test_screen_never_changes_an_answer(text: str) -> None:
    for name, compiled in ALL:
        plain = compiled.pattern.search(text)
        screened = compiled.search(text)
        assert (plain is None) == (screened is None), (name, text)
        if plain is not None:
            assert plain.span() == screened.span()


@pytest.mark.parametrize(("pattern", "text"), [
    (r"(?<!payment )\bnot authori[sz]ed\b", "payment not authorized"),
    (r"\bfoo\b", "éfoo"),
    (r"\w+LimitExceeded", "éLimitExceeded"),
    (r"\d+ items", "٣ items"),
    (r"a\sb", "a\u00a0b"),
    (r"x(?=[A-Z])", "xY"),
    (r"[\w./-]+\.h is missing", "ünï/x.h is missing"),
])
def test_relaxed_pattern_matches_whatever_the_pattern_matches(pattern: str, text: str) -> None:
    import re2

    python = re.search(pattern, text)
    assert re2.search(relaxed(pattern), text) is not None or python is None


def test_what_the_relaxation_cannot_express_has_no_screen() -> None:
    backreference = Screened(r"(a+)\1", re.IGNORECASE)
    assert backreference.screen is None
    assert backreference.search("aaaa") is not None and backreference.search("a") is None
    with pytest.raises(ValueError):
        relaxed(r"x\Z")


class _Counting:
    """Stands in for a compiled Python pattern and counts the searches that reach it."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.inner, self.calls = pattern, 0

    def search(self, text: str) -> re.Match[str] | None:
        self.calls += 1
        return self.inner.search(text)


def test_a_message_nothing_matches_runs_almost_no_python_pattern() -> None:
    compiled = [Screened(rule._regex.pattern.pattern, rule._regex.pattern.flags) for rule in BUILTINS]
    compiled += [Screened(cue.pattern, cue.regex.pattern.flags) for cue in cues.CUES]
    counters = []
    for item in compiled:
        item.pattern = _Counting(item.pattern)  # type: ignore[assignment]
        counters.append(item.pattern)
    text = "1.2.3." * 400
    for item in compiled:
        item.search(text)
    reached = sum(counter.calls for counter in counters)
    assert reached <= len(compiled) // 20, f"{reached} of {len(compiled)} Python patterns ran"
