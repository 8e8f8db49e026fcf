"""Issue 17 items 3-4: KAOS_LLM_TIMEOUT_S is a wall-clock deadline; the cache keeps validated fields only.

The real anthropic SDK talks to tests/fake_anthropic.py in modes a hostile or broken server can take:
429 with ``Retry-After: 3600``, a body trickled a byte at a time (read timeouts never fire), a hang.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import anthropic  # noqa: F401  (imported up front so no timing below pays for the SDK's import)
import pytest

from kaos_dream import Library, ManualClock, Settings

from .conftest import T0, run_kaos
from .fake_anthropic import FakeAnthropic, Reply

UNKNOWN = "zzfoo.CustomMysteryException was raised"
GOOD = {"category": "infra", "root_cause": "The zzfoo backend is down.", "suggested_action": "Restart zzfoo.",
        "confidence": 0.7}


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        yield server


def llm_env(fake: FakeAnthropic, timeout_s: float, retries: int = 1) -> dict[str, str]:
    return {"ANTHROPIC_API_KEY": "sk-test", "KAOS_LLM_BASE_URL": fake.base_url,
            "KAOS_LLM_TIMEOUT_S": str(timeout_s), "KAOS_LLM_MAX_RETRIES": str(retries)}


def timed_record(tmp_path: Path, fake: FakeAnthropic, timeout_s: float) -> tuple[float, dict]:
    start = time.perf_counter()
    r = run_kaos("failure", "record", "--tool", "mystery_tool", "--json", UNKNOWN, db=tmp_path / "k.db",
                 env=llm_env(fake, timeout_s), timeout=90)
    elapsed = time.perf_counter() - start
    assert r.returncode == 0, r.stderr
    return elapsed, json.loads(r.stdout)


def answered_at_once(tmp_path: Path, fake: FakeAnthropic) -> float:
    """The same command against a model that answers at once: process start, SDK import and one round
    trip, measured right before the slow case so both pay the machine's current load."""
    fake.default = Reply.json(GOOD)
    (tmp_path / "baseline").mkdir()
    elapsed, _ = timed_record(tmp_path / "baseline", fake, 2.0)
    fake.requests.clear()
    return elapsed


def test_retry_after_an_hour_does_not_hang_failure_record(tmp_path: Path, fake: FakeAnthropic) -> None:
    baseline = answered_at_once(tmp_path, fake)
    fake.default = Reply.rate_limited(3600)
    elapsed, out = timed_record(tmp_path, fake, 2.0)
    assert out["category"] == "unknown" and "429" in out["llm_note"]
    # at most the 2 s deadline beyond the instant answer (with slack for a loaded machine), never the hour
    assert elapsed < baseline * 1.5 + 2.0 + 3.0, (elapsed, baseline)
    assert fake.calls == 1  # a retry that would wait past the deadline is not attempted


def test_trickled_body_ends_at_the_deadline(tmp_path: Path, fake: FakeAnthropic) -> None:
    baseline = answered_at_once(tmp_path, fake)
    fake.default = Reply.trickle(0.5, Reply.json(GOOD))  # each byte inside the read timeout, forever
    elapsed, out = timed_record(tmp_path, fake, 2.0)
    assert out["category"] == "unknown" and "timed out" in out["llm_note"]
    assert elapsed < baseline * 1.5 + 2.0 + 3.0, (elapsed, baseline)


def lib_for(path: Path, fake: FakeAnthropic, timeout_s: float, retries: int) -> Library:
    settings = Settings(anthropic_api_key="sk-test", llm_base_url=fake.base_url, llm_timeout_s=timeout_s,
                        llm_max_retries=retries)
    return Library(path, clock=ManualClock(T0), settings=settings)


def test_a_hang_with_retries_ends_at_one_deadline(db_path: Path, fake: FakeAnthropic) -> None:
    fake.default = Reply.hang()
    with lib_for(db_path, fake, 1.0, retries=2) as lib:
        lib.llm._client()  # build the SDK client first: the deadline is about the server, not imports
        start = time.perf_counter()
        rec = lib.failures.record("mystery_tool", UNKNOWN)
        elapsed = time.perf_counter() - start
    assert rec.diagnosis.category == "unknown" and "timed out" in (rec.llm_note or "")
    assert elapsed < 1.6, elapsed  # not 1 s per attempt plus backoff (~3.5 s)


def test_retries_that_fit_the_deadline_still_happen(db_path: Path, fake: FakeAnthropic) -> None:
    fake.queue(Reply.rate_limited(0.2), Reply.json(GOOD))
    with lib_for(db_path, fake, 5.0, retries=1) as lib:
        rec = lib.failures.record("mystery_tool", UNKNOWN)
    assert rec.diagnosis.category == "infra" and fake.calls == 2


def test_validators_end_at_the_deadline(db_path: Path, fake: FakeAnthropic) -> None:
    fake.default = Reply.trickle(0.3, Reply.json({"score": 0.9, "reason": "fine"}))
    with lib_for(db_path, fake, 1.0, retries=1) as lib:
        lib.skills.add("csv-to-parquet", "Convert CSV files to Parquet")
        lib.llm._client()
        lib.episodes.start("a1")
        start = time.perf_counter()
        lib.episodes.end("a1", "completed", "Converted the CSV", [("skill", "csv-to-parquet")])
        elapsed = time.perf_counter() - start
        gates = [json.loads(row) for (row,) in lib.conn.execute("SELECT verdicts FROM episode_gates")]
    reasons = [v["reason"] for verdicts in gates for v in verdicts]
    assert elapsed < 4.5, elapsed  # logical + novelty, one deadline each (alignment: no preferences)
    assert any("timed out" in (r or "") for r in reasons), reasons


def test_cache_keeps_only_validated_fields(db_path: Path, fake: FakeAnthropic) -> None:
    fake.queue(Reply.json({**GOOD, "extra": "x" * 5000, "notes": {"nested": [1, 2, 3]}}))
    with lib_for(db_path, fake, 5.0, retries=0) as lib:
        rec = lib.failures.record("mystery_tool", UNKNOWN)
        assert rec.diagnosis.category == "infra"
        (answer,) = lib.conn.execute("SELECT answer FROM llm_cache").fetchone()
    assert set(json.loads(answer)) == {"category", "root_cause", "suggested_action", "confidence"}
    assert len(answer) < 500


def test_an_oversized_reply_is_dropped_and_nothing_grows(db_path: Path, fake: FakeAnthropic) -> None:
    fake.queue(Reply.json({**GOOD, "extra": "x" * 5_000_000}))
    with lib_for(db_path, fake, 10.0, retries=0) as lib:
        rec = lib.failures.record("mystery_tool", UNKNOWN)
        assert rec.diagnosis.category == "unknown" and "larger than" in (rec.llm_note or "")
        assert lib.conn.execute("SELECT count(*) FROM llm_cache").fetchone()[0] == 0
    assert db_path.stat().st_size < 1_000_000
