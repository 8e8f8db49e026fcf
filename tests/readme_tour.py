"""Extract the runnable shell commands of a markdown file (README.md's tour, docs/cli.md's examples).

Convention for documentation authors: a fenced block marked ```bash or ```sh is run, line by line
and in order, on a fresh library by tests/test_readme_tour.py; put ``<!-- not-run -->`` on the line
just above a block that only illustrates (installs, servers, endless commands). Other fences
(```cron, ```json, ```python, ```text) are never run. A comment line ``#=> TEXT`` right after a
command says what it prints: the test checks that its output (stdout and stderr) holds TEXT, so an
example that stops doing what its text says fails the tour.
"""

from __future__ import annotations

import re
from pathlib import Path

SKIP_MARKER = "<!-- not-run -->"
EXPECT = "#=> "
_FENCE = re.compile(r"^```(\w*)\s*$")


def shell_blocks(path: Path) -> list[tuple[int, list[str]]]:
    """(first line number, command lines) of every runnable bash/sh block, in document order."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[tuple[int, list[str]]] = []
    i = 0
    while i < len(lines):
        match = _FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        language, start = match.group(1), i + 1
        end = start
        while end < len(lines) and not lines[end].startswith("```"):
            end += 1
        previous = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        if language in ("bash", "sh") and previous.strip() != SKIP_MARKER:
            commands = [line for line in lines[start:end] if line.strip() and not line.lstrip().startswith("#")]
            blocks.append((start + 1, commands))
        i = end + 1
    return blocks


def shell_steps(path: Path) -> list[tuple[int, list[tuple[str, list[str]]]]]:
    """Like :func:`shell_blocks`, each command with the ``#=> TEXT`` lines that follow it."""
    lines = path.read_text(encoding="utf-8").splitlines()
    out: list[tuple[int, list[tuple[str, list[str]]]]] = []
    for first, commands in shell_blocks(path):
        steps: list[tuple[str, list[str]]] = []
        at = first - 1
        for command in commands:
            while lines[at] != command:
                at += 1
            expected = []
            nxt = at + 1
            while nxt < len(lines) and lines[nxt].lstrip().startswith(EXPECT.strip()):
                expected.append(lines[nxt].lstrip()[len(EXPECT):])
                nxt += 1
            steps.append((command, expected))
            at = nxt
        out.append((first, steps))
    return out
