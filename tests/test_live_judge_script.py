"""demo_validation_gate_bench/live_judge.py, run as a user would, against the local fake Anthropic server.

The script is the opt-in study that asks a real model; here the real SDK talks to the fake, whose
scripted answers make the expected numbers exact. No network is used.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from .fake_anthropic import FakeAnthropic, Reply

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "demo_validation_gate_bench" / "live_judge.py"
EPISODES = 50


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        yield server


def run_script(tmp_path: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), "--seeds", "1", "--episodes", str(EPISODES),
                           "--out", str(tmp_path / "live.json"), *args],
                          env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path)


def fake_env(fake: FakeAnthropic) -> dict[str, str]:
    return {**os.environ, "ANTHROPIC_API_KEY": "test-key", "KAOS_LLM_BASE_URL": fake.base_url,
            "KAOS_LLM_MAX_RETRIES": "0", "KAOS_LLM": "1"}


def test_without_a_key_it_says_so_and_writes_nothing(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    done = run_script(tmp_path, env)
    assert done.returncode == 2
    assert "ANTHROPIC_API_KEY" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


def test_a_judge_that_passes_everything_leaves_the_heuristic_gate(tmp_path: Path, fake: FakeAnthropic) -> None:
    """Every logical score 0.9: recall and false positives 0, two requests per episode, and the gate
    rejects exactly what outcome and grounding reject (no honest or silent episode)."""
    fake.default = Reply.json({"score": 0.9, "reason": "fits the task"})
    done = run_script(tmp_path, fake_env(fake), "--library", "english")
    assert done.returncode == 0, done.stderr
    out = json.loads((tmp_path / "live.json").read_text())
    run = out["runs"][0]
    assert fake.calls == 2 * EPISODES
    assert run["judge"]["logical_recall"] == 0 and run["judge"]["logical_false_positive"] == 0
    assert run["judge"]["logical_off"] == 0 and run["same_stream"] is True
    rejected = run["judge"]["gate_rejected"]
    assert rejected["honest"] == 0 and rejected["silent"] == 0
    assert rejected["failed"] == run["judge"]["episodes"]["failed"]
    assert (tmp_path / "live.md").read_text().startswith("# Validation gate with a real model")


def test_a_judge_that_fails_everything_teaches_the_graph_nothing(tmp_path: Path, fake: FakeAnthropic) -> None:
    fake.default = Reply.json({"score": 0.2, "reason": "relies on material unrelated to the task"})
    done = run_script(tmp_path, fake_env(fake), "--library", "synthetic", "--unrelated", "1")
    assert done.returncode == 0, done.stderr
    run = json.loads((tmp_path / "live.json").read_text())["runs"][0]
    assert run["judge"]["logical_recall"] == 1 and run["judge"]["logical_false_positive"] == 1
    assert run["judge"]["gate_rejected"] == run["judge"]["episodes"]
    assert run["on"]["edges"] == 0 and run["off"]["edges"] > 0
