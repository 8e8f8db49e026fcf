"""Slow commands draw a rich progress bar on a terminal's stderr, and nothing into a pipe or with --quiet."""

from __future__ import annotations

import importlib.util
import os
import pty
import subprocess
from pathlib import Path

import pytest

from kaos_dream.demo import build_demo_library

from .conftest import PROJECT_ROOT, kaos_command, run_kaos

pytest.importorskip("matplotlib")


def stderr_on_a_terminal(db: Path, *args: str) -> tuple[int, str, str]:
    """(exit code, stdout through a pipe, what a terminal on stderr was sent)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KAOS_")}
    env.update(PYTHONPATH=str(PROJECT_ROOT), COLUMNS="100", TERM="xterm")
    leader, follower = pty.openpty()
    proc = subprocess.Popen(kaos_command() + ["--db", str(db), *args], stdout=subprocess.PIPE, stderr=follower,
                            env=env)
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 4096)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    out = proc.stdout.read().decode() if proc.stdout else ""
    code = proc.wait(timeout=120)
    os.close(leader)
    return code, out, b"".join(chunks).decode(errors="replace")


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("demo") / "demo.db"
    build_demo_library(str(path))
    return path


def test_report_shows_progress_on_a_terminal_only(demo: Path, tmp_path: Path) -> None:
    code, out, shown = stderr_on_a_terminal(demo, "report", "--out", str(tmp_path / "a.html"))
    assert code == 0 and "report written to" in out
    assert "report:" in shown  # the bar's label, with the section it is drawing
    assert "report:" not in out
    quiet = stderr_on_a_terminal(demo, "--quiet", "report", "--out", str(tmp_path / "b.html"))
    assert quiet[0] == 0 and "report:" not in quiet[2]
    piped = run_kaos("report", "--out", str(tmp_path / "c.html"), db=demo, timeout=120)
    assert piped.returncode == 0 and piped.stderr == ""


@pytest.mark.skipif(importlib.util.find_spec("wordllama") is None, reason="the semantic extra is not installed")
def test_reindex_shows_progress_on_a_terminal_only(demo: Path) -> None:
    code, out, shown = stderr_on_a_terminal(demo, "db", "reindex", "--all")
    assert code == 0 and "embedded" in out
    assert "reindex:" in shown and "vectors" in shown
    quiet = stderr_on_a_terminal(demo, "--quiet", "db", "reindex")
    assert quiet[0] == 0 and "reindex:" not in quiet[2]
