"""A linear-time screen in front of the diagnosers' Python patterns (issue 34: cheap, bounded cost).

The built-in rules and cues are Python regular expressions, some with look-arounds RE2 cannot run. Each
pattern gets a *relaxed* twin for RE2: the look-arounds and word boundaries dropped, and ``\\w``, ``\\d``,
``\\s`` spelled as Python's Unicode classes. Dropping a zero-width assertion only widens what matches,
so the twin matches every text the pattern matches: when the twin finds nothing (most rules, on most
messages) the answer is "no match" without running the Python pattern; otherwise the Python pattern
decides, so results are exactly what the Python pattern alone gives. A pattern the relaxation cannot
express (a back-reference, ``\\Z``) has no screen and always runs as written.
"""

from __future__ import annotations

import re
from typing import Any

import re2

_WORD = r"\pL\pN_"
_SPACE = r"\s\p{Z}\x{85}\x{1c}-\x{1f}"
# Python's class shorthands, spelled as the Unicode sets Python gives them (RE2's are ASCII)
_OUTSIDE = {"w": f"[{_WORD}]", "W": f"[^{_WORD}]", "d": r"\p{Nd}", "D": r"\P{Nd}", "s": f"[{_SPACE}]",
            "S": f"[^{_SPACE}]", "b": "", "B": ""}
_INSIDE = {"w": _WORD, "d": r"\p{Nd}", "s": _SPACE}
_UNSUPPORTED = set("ZWDS123456789gG")  # inside a class, the negated shorthands too


class _Unsupported(ValueError):
    pass


def _class_end(pattern: str, start: int) -> int:
    """Index just past the character class opened at ``start`` (a leading ``^`` and ``]`` are part of it)."""
    i = start + 1
    if pattern[i : i + 1] == "^":
        i += 1
    if pattern[i : i + 1] == "]":
        i += 1
    while i < len(pattern):
        if pattern[i] == "\\":
            i += 2
            continue
        if pattern[i] == "]":
            return i + 1
        i += 1
    raise _Unsupported("unclosed class")


def _skip_group(pattern: str, start: int) -> int:
    """Index just past the group opened at ``start`` (escapes and character classes respected)."""
    depth, i = 0, start
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "[":
            i = _class_end(pattern, i)
            continue
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise _Unsupported("unbalanced group")


def relaxed(pattern: str) -> str:
    """An RE2 pattern matching every text ``pattern`` matches (look-arounds and boundaries dropped).
    Raises ValueError for what it cannot express."""
    out: list[str] = []
    i, in_class = 0, False
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            nxt = pattern[i + 1 : i + 2]
            if not nxt:
                raise _Unsupported("trailing backslash")
            table = _INSIDE if in_class else _OUTSIDE
            if nxt in table:
                out.append(table[nxt])
            elif nxt in _UNSUPPORTED or (nxt == "0" and not in_class):
                raise _Unsupported(f"\\{nxt}")
            else:
                out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            out.append(ch)
            if ch == "]":
                in_class = False
            i += 1
            continue
        if ch == "[":
            in_class = True
            j = i + 1
            if pattern[j : j + 1] == "^":
                j += 1
            if pattern[j : j + 1] == "]":  # a leading "]" is a literal
                j += 1
            out.append(pattern[i:j])
            i = j
            continue
        if pattern.startswith(("(?=", "(?!", "(?<=", "(?<!"), i):
            i = _skip_group(pattern, i)
            continue
        out.append(ch)
        i += 1
    return "".join(out)


class Screened:
    """A compiled Python pattern behind its RE2 screen: ``search`` answers as ``re.search`` would."""

    __slots__ = ("pattern", "screen")

    def __init__(self, pattern: str, flags: int) -> None:
        self.pattern = re.compile(pattern, flags)
        self.screen: Any = None
        options = re2.Options()
        options.case_sensitive = not flags & re.IGNORECASE
        options.never_nl = False
        options.log_errors = False
        try:
            self.screen = re2.compile(("(?m)" if flags & re.MULTILINE else "") + relaxed(pattern), options)
        except (ValueError, re2.error):
            self.screen = None

    def search(self, text: str) -> re.Match[str] | None:
        if self.screen is not None and self.screen.search(text) is None:
            return None
        return self.pattern.search(text)
