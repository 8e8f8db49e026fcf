"""Shared fixtures: real SQLite files, a manual clock, and a runner for the real `kaos` binary."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from kaos_dream import Library, ManualClock, Settings

T0 = 1_767_225_600.0  # 2026-01-01T00:00:00Z


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(T0)


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "kaos.db"


@pytest.fixture
def lib(db_path: Path, clock: ManualClock) -> Iterator[Library]:
    library = Library(db_path, clock=clock, settings=Settings())
    yield library
    library.close()


@pytest.fixture
def mem_lib(clock: ManualClock) -> Iterator[Library]:
    library = Library(":memory:", clock=clock, settings=Settings())
    yield library
    library.close()


def file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


PROJECT_ROOT = Path(__file__).resolve().parent.parent


def kaos_command() -> list[str]:
    """`python -m kaos_dream` runs the same ``main()`` as the `kaos` console script, and with
    PYTHONPATH set below it always runs *this* checkout, whichever copy pip installed."""
    return [sys.executable, "-m", "kaos_dream"]


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str


def run_kaos(*args: str, db: Path | None = None, input: str | None = None, env: dict[str, str] | None = None,
             timeout: float = 60) -> Result:
    """Run the installed `kaos` console script as a user would."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("KAOS_") and k != "ANTHROPIC_API_KEY"}
    full_env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PROJECT_ROOT), full_env.get("PYTHONPATH")]))
    full_env.update(env or {})
    cmd = kaos_command() + (["--db", str(db)] if db is not None else []) + list(args)
    proc = subprocess.run(cmd, input=input, capture_output=True, text=True, env=full_env, timeout=timeout)
    return Result(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture
def kaos():
    return run_kaos
