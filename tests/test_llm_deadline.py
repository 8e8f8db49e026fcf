"""Issue 17 items 3-4: KAOS_LLM_TIMEOUT_S is a wall-clock deadline; the cache keeps validated fields only.

The real anthropic SDK talks to tests/fake_anthropic.py in modes a hostile or broken server can take:
429 with ``Retry-After: 3600``, a body trickled a byte at a time (read timeouts never fire), a hang.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

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


DEADLINE_NOTE = "the KAOS_LLM_TIMEOUT_S deadline passed"


def record(tmp_path: Path, fake: FakeAnthropic, timeout_s: float) -> dict:
    # the subprocess timeout only guards against a hang (90 s against the hour the model asks for)
    r = run_kaos("failure", "record", "--tool", "mystery_tool", "--json", UNKNOWN, db=tmp_path / "k.db",
                 env=llm_env(fake, timeout_s), timeout=90)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def read_timeouts(fake: FakeAnthropic) -> list[float]:
    """The timeout each request's HTTP client was given (the SDK sends it as a header): the proof that
    what is left of the deadline reached the blocking read, measured without a stopwatch."""
    return [float(r["_headers"]["x-stainless-read-timeout"]) for r in fake.requests]


def test_retry_after_an_hour_does_not_hang_failure_record(tmp_path: Path, fake: FakeAnthropic) -> None:
    fake.default = Reply.rate_limited(3600)
    out = record(tmp_path, fake, 2.0)
    assert out["category"] == "unknown" and "429" in out["llm_note"]
    assert fake.calls == 1  # a retry that would wait past the deadline is not attempted
    assert all(0 < t <= 2.0 for t in read_timeouts(fake)), read_timeouts(fake)


def test_trickled_body_ends_at_the_deadline(tmp_path: Path, fake: FakeAnthropic) -> None:
    fake.default = Reply.trickle(0.5, Reply.json(GOOD))  # each byte inside the read timeout: ~2 min in all
    out = record(tmp_path, fake, 2.0)
    # the read timeout never fires on a trickle: only the whole-call deadline ends it
    assert out["category"] == "unknown" and DEADLINE_NOTE in out["llm_note"], out["llm_note"]
    assert fake.calls == 1 and all(0 < t <= 2.0 for t in read_timeouts(fake)), read_timeouts(fake)


def lib_for(path: Path, fake: FakeAnthropic, timeout_s: float, retries: int) -> Library:
    settings = Settings(anthropic_api_key="sk-test", llm_base_url=fake.base_url, llm_timeout_s=timeout_s,
                        llm_max_retries=retries)
    return Library(path, clock=ManualClock(T0), settings=settings)


def test_a_hang_with_retries_ends_at_one_deadline(db_path: Path, fake: FakeAnthropic) -> None:
    fake.default = Reply.hang()
    with lib_for(db_path, fake, 1.0, retries=2) as lib:
        rec = lib.failures.record("mystery_tool", UNKNOWN)
    assert rec.diagnosis.category == "unknown" and DEADLINE_NOTE in (rec.llm_note or "")
    # one deadline for the call, not 1 s per attempt: the two retries the settings allow never start
    assert fake.calls == 1 and all(0 < t <= 1.0 for t in read_timeouts(fake)), read_timeouts(fake)


def test_retries_that_fit_the_deadline_still_happen(db_path: Path, fake: FakeAnthropic) -> None:
    fake.queue(Reply.rate_limited(0.2), Reply.json(GOOD))
    with lib_for(db_path, fake, 5.0, retries=1) as lib:
        rec = lib.failures.record("mystery_tool", UNKNOWN)
    assert rec.diagnosis.category == "infra" and fake.calls == 2
    first, second = read_timeouts(fake)
    assert 0 < second < first <= 5.0  # the retry gets what is left of the one deadline, not a fresh one


def test_validators_end_at_the_deadline(db_path: Path, fake: FakeAnthropic) -> None:
    fake.default = Reply.trickle(0.3, Reply.json({"score": 0.9, "reason": "fine"}))
    with lib_for(db_path, fake, 1.0, retries=1) as lib:
        lib.skills.add("csv-to-parquet", "Convert CSV files to Parquet")
        lib.episodes.start("a1")
        lib.episodes.end("a1", "completed", "Converted the CSV", [("skill", "csv-to-parquet")])
        gates = [json.loads(row) for (row,) in lib.conn.execute("SELECT verdicts FROM episode_gates")]
    reasons = [v["reason"] for verdicts in gates for v in verdicts]
    # logical + novelty ask once each (alignment: no preferences), each bounded by its own deadline
    # and not retried past it
    assert any(DEADLINE_NOTE in (r or "") for r in reasons), reasons
    assert fake.calls == 2 and all(0 < t <= 1.0 for t in read_timeouts(fake)), read_timeouts(fake)


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
