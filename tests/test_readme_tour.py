"""The documentation runs as written: every ```bash/```sh block of README.md, in order, on a fresh
library, with the real `kaos` (see tests/readme_tour.py for the convention new blocks follow)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from .conftest import PROJECT_ROOT
from .readme_tour import SKIP_MARKER, shell_blocks, shell_steps


def tour_env(tmp_path: Path) -> dict[str, str]:
    """A `kaos` on PATH that runs this checkout, a fresh working folder, no KAOS_ settings, no API key."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "kaos"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m kaos_dream "$@"\n', encoding="utf-8")
    wrapper.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("KAOS_") and k != "ANTHROPIC_API_KEY"}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '/usr/bin:/bin')}"
    env["PYTHONPATH"] = str(PROJECT_ROOT)
    env["HOME"] = str(tmp_path)
    return env


def run_document(path: Path, tmp_path: Path) -> list[str]:
    """Run every command line of the document's runnable blocks; the failures, each with its output."""
    work = tmp_path / "work"
    work.mkdir()
    env = tour_env(tmp_path)
    failures = []
    for first_line, steps in shell_steps(path):
        for command, expected in steps:
            proc = subprocess.run(["bash", "-c", command], cwd=work, env=env, capture_output=True,
                                  text=True, stdin=subprocess.DEVNULL, timeout=120)
            if proc.returncode != 0:
                failures.append(f"{path.name} block at line {first_line}: {command!r} exited {proc.returncode}: "
                                f"{(proc.stderr or proc.stdout).strip()[:300]}")
            failures += [f"{path.name} block at line {first_line}: {command!r} did not print {text!r}: "
                         f"{(proc.stdout + proc.stderr).strip()[:300]}"
                         for text in expected if text not in proc.stdout + proc.stderr]
    return failures


def test_readme_shell_blocks_run_in_order_on_a_fresh_library(tmp_path: Path) -> None:
    blocks = shell_blocks(PROJECT_ROOT / "README.md")
    assert sum(len(commands) for _, commands in blocks) >= 60  # the tour is there, not skipped wholesale
    assert run_document(PROJECT_ROOT / "README.md", tmp_path) == []


def test_cli_reference_examples_run_in_order_on_a_fresh_library(tmp_path: Path) -> None:
    assert shell_blocks(PROJECT_ROOT / "docs" / "cli.md")
    assert run_document(PROJECT_ROOT / "docs" / "cli.md", tmp_path) == []


def test_the_extractor_runs_only_marked_shell_blocks(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text(f"```bash\nkaos init\n# a comment\n```\n{SKIP_MARKER}\n```sh\nkaos mcp serve\n```\n"
                   "```cron\n* * * * * kaos x\n```\n```python\nprint()\n```\n```sh\nfalse\n```\n", encoding="utf-8")
    assert [commands for _, commands in shell_blocks(doc)] == [["kaos init"], ["false"]]
    failures = run_document(doc, tmp_path)
    assert len(failures) == 1 and "'false'" in failures[0]


def test_an_expected_output_line_is_checked(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text("```bash\necho hello world\n#=> hello\necho bye\n#=> hello\n```\n", encoding="utf-8")
    assert shell_steps(doc) == [(2, [("echo hello world", ["hello"]), ("echo bye", ["hello"])])]
    failures = run_document(doc, tmp_path)
    assert len(failures) == 1 and "'echo bye' did not print 'hello'" in failures[0]
