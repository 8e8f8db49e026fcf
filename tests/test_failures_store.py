"""lib.failures: recording, lookup, fix plasticity, systemic alerts, recategorisation."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import pytest

from kaos_dream import Library, ManualClock, Settings
from kaos_dream.errors import ConflictError, InvalidInputError, NotFoundError
from kaos_dream.failures import ALGORITHM, Diagnosis, FailureInput, register_diagnoser, unregister_diagnoser

from .conftest import T0

REFUSED = "ConnectionRefusedError: localhost:8000"


def test_record_creates_fingerprint_occurrence_and_diagnosis(lib: Library) -> None:
    rec = lib.failures.record("http_post", "HTTP 429 Too Many Requests: retry after 60s", agent="a1")
    assert rec.new and rec.diagnosis.category == "transient" and rec.diagnosis.diagnoser == "rate_limit"
    again = lib.failures.record("http_post", "HTTP 429 Too Many Requests: retry after 3s", agent="a2")
    assert not again.new and again.fingerprint_id == rec.fingerprint_id
    fp = lib.failures.get(rec.fingerprint_id)
    assert fp["occurrences"] == 2 and fp["agents"] == 2 and fp["algorithm"] == ALGORITHM
    assert lib.failures.get(rec.hash[:10])["id"] == rec.fingerprint_id
    assert lib.failures.ids_for_agent("a1") == (rec.fingerprint_id,)
    assert len(lib.failures.history(rec.fingerprint_id)) == 1


def test_unknown_agent_is_registered_as_an_ended_session(lib: Library) -> None:
    """Issue 18: a failure report must not leave a running session that never ends."""
    lib.failures.record("t", "boom", agent="agent-7")
    row = lib.conn.execute(
        "SELECT state, started_at, ended_at, processed_at FROM agents WHERE id = 'agent-7'").fetchone()
    assert tuple(row) == ("failed", T0, T0, T0)


def test_huge_message_is_accepted_and_stored_bounded(lib: Library) -> None:
    """A message up to the text cap (1,000,000 characters, issue 33 item 5: the CLI and MCP cap it alike)
    is accepted and stored as a bounded sample plus the whole message's hash; one past it is refused."""
    from kaos_dream import limits
    from kaos_dream.errors import InvalidInputError

    frame = '  File "x.py", line 1, in f\n    g()\n'
    head, tail = "Traceback (most recent call last):\n", "KeyError: 'k'\n"
    message = head + frame * ((limits.TEXT - len(head) - len(tail)) // len(frame)) + tail
    assert len(message) <= limits.TEXT
    with pytest.raises(InvalidInputError, match="the limit is 1000000"):
        lib.failures.record("py", message + "x" * (limits.TEXT + 1 - len(message)))
    rec = lib.failures.record("py", message)
    row = lib.conn.execute("SELECT message_sample, message_chars, message_hash FROM failure_occurrences").fetchone()
    assert row["message_chars"] == len(message) and len(row["message_sample"]) <= lib.settings.failure_sample_chars
    assert row["message_sample"].rstrip().endswith("KeyError: 'k'") and len(row["message_hash"]) == 64
    assert rec.diagnosis.category == "code"


def test_a_huge_one_line_message_stores_bounded_text_and_still_groups(lib: Library) -> None:
    """One 3 MB line used to be stored whole as the fingerprint's normalized text (400 kB: 200x the
    bound shows the same, and normalising 3 MB three times took 3 s of the suite). Normalisation reads
    a key line's first MAX_LINE_CHARS only (issue 34), so a difference past them is the same failure and
    one inside them is another."""
    message = "ERROR upstream said: " + "x" * 400_000
    first = lib.failures.record("t", message, agent="a1")
    again = lib.failures.record("t", message, agent="a2")
    past = lib.failures.record("t", message + "y", agent="a3")  # differs past what normalisation reads
    other = lib.failures.record("t", message.replace("said", "wrote"), agent="a3")
    assert past.fingerprint_id == first.fingerprint_id
    row = lib.conn.execute("SELECT normalized, key_text, example FROM failure_fingerprints WHERE id = ?",
                           (first.fingerprint_id,)).fetchone()
    assert max(len(row["normalized"]), len(row["key_text"])) <= 2000
    assert len(row["example"]) <= lib.settings.failure_sample_chars
    assert again.fingerprint_id == first.fingerprint_id != other.fingerprint_id
    total = lib.conn.execute("SELECT sum(length(normalized) + length(key_text) + length(example)) FROM "
                             "failure_fingerprints").fetchone()[0]
    assert total < 20_000


@pytest.mark.parametrize(("tool", "message"), [("", "x"), ("  ", "x"), ("t", ""), ("t", " \n "), ("t" * 201, "x")])
def test_bad_input_is_rejected(lib: Library, tool: str, message: str) -> None:
    with pytest.raises(InvalidInputError):
        lib.failures.record(tool, message)


def test_lookup_is_read_only_and_returns_none_when_unknown(db_path: Path, clock: ManualClock) -> None:
    with Library(db_path, clock=clock, settings=Settings()) as lib:
        rec = lib.failures.record("llm_call", REFUSED)
        lib.failures.attach_fix(rec.fingerprint_id, summary="start vllm")
    with Library(db_path, readonly=True, settings=Settings()) as ro:
        found = ro.failures.lookup("llm_call", "ConnectionRefusedError: localhost:9999")
        assert found is not None and found.fix["summary"] == "start vllm" and found.category == "infra"
        assert found.to_dict()["fingerprint_id"] == rec.fingerprint_id  # the same style as record's result
        assert ro.failures.lookup("llm_call", "something else entirely") is None
        assert ro.failures.lookup("other_tool", REFUSED) is None


def test_fix_withdrawn_at_five_attempts_below_half(lib: Library) -> None:
    fp = lib.failures.record("t", REFUSED).fingerprint_id
    lib.failures.attach_fix(fp, summary="retry with backoff")
    results = [lib.failures.record_fix_outcome(fp, ok)["downgraded"] for ok in (True, False, False, False)]
    assert results == [False] * 4 and lib.failures.get(fp)["fix_summary"] == "retry with backoff"
    last = lib.failures.record_fix_outcome(fp, False)
    assert last["downgraded"] and last["fix"]["status"] == "withdrawn"
    assert lib.failures.get(fp)["fix"] is None and lib.failures.lookup("t", REFUSED).fix is None
    with pytest.raises(NotFoundError):
        lib.failures.record_fix_outcome(fp, True)
    fresh = lib.failures.attach_fix(fp, summary="restart the server")
    assert (fresh["attempts"], fresh["successes"]) == (0, 0)
    history = lib.failures.fix_history(fp)
    assert [f["status"] for f in history] == ["withdrawn", "active"]
    outcomes = lib.conn.execute("SELECT COUNT(*) FROM failure_fix_outcomes").fetchone()[0]
    assert outcomes == 5


def test_a_working_fix_survives(lib: Library) -> None:
    fp = lib.failures.record("t", REFUSED).fingerprint_id
    lib.failures.attach_fix(fp, summary="s")
    for ok in (True, True, False, True, False, False):
        assert not lib.failures.record_fix_outcome(fp, ok)["downgraded"]  # 3/6 = 50 % is not below half


def test_attaching_a_fix_replaces_the_active_one_and_can_name_a_skill(lib: Library) -> None:
    fp = lib.failures.record("t", REFUSED).fingerprint_id
    skill = lib.skills.add("restart-vllm", "Restart the vLLM server", "systemctl restart vllm")
    lib.failures.attach_fix(fp, summary="a")
    second = lib.failures.attach_fix(fp, skill="restart-vllm")
    assert second["skill_id"] == skill.id
    assert [f["status"] for f in lib.failures.fix_history(fp)] == ["replaced", "active"]
    with pytest.raises(InvalidInputError):
        lib.failures.attach_fix(fp)
    with pytest.raises(NotFoundError):
        lib.failures.attach_fix(fp, skill="no-such-skill")


def test_five_agents_in_window_raise_exactly_one_alert(lib: Library, clock: ManualClock) -> None:
    ids = []
    for i in range(8):
        clock.advance(5)
        ids.append(lib.failures.record("llm_call", REFUSED, agent=f"a{i}").alert_id)
    assert [i for i in ids if i is not None] == [ids[4]]
    alert = lib.failures.alerts()[0]
    assert alert["agent_count"] == 8 and alert["status"] == "active" and alert["root_cause"]


def test_same_agent_repeating_is_not_systemic(lib: Library, clock: ManualClock) -> None:
    for _ in range(10):
        clock.advance(1)
        assert lib.failures.record("llm_call", REFUSED, agent="a1").alert_id is None
    for _ in range(10):
        assert lib.failures.record("llm_call", REFUSED).alert_id is None  # no agent: not counted


def test_agents_spread_beyond_the_window_do_not_alert(lib: Library, clock: ManualClock) -> None:
    for i in range(6):
        clock.advance(50)  # 5 agents need 200 s, the window is 120 s
        assert lib.failures.record("llm_call", REFUSED, agent=f"a{i}").alert_id is None


def test_failures_timestamped_long_ago_never_alert(lib: Library, clock: ManualClock) -> None:
    for i in range(10):
        assert lib.failures.record("llm_call", REFUSED, agent=f"old{i}", at=T0 - 3600 + i).alert_id is None
    # and they do not count towards a current wave either
    for i in range(4):
        assert lib.failures.record("llm_call", REFUSED, agent=f"new{i}").alert_id is None
    assert lib.failures.alerts(include_resolved=True) == []


def test_future_timestamps_are_refused(lib: Library) -> None:
    with pytest.raises(InvalidInputError):
        lib.failures.record("t", "boom", at=T0 + 3600)


def test_alert_lifecycle_and_next_incident(lib: Library, clock: ManualClock) -> None:
    for i in range(5):
        clock.advance(1)
        lib.failures.record("llm_call", REFUSED, agent=f"a{i}")
    alert = lib.failures.alerts()[0]["id"]
    assert lib.failures.ack_alert(alert, by="ops") is True and lib.failures.ack_alert(alert, by="ops") is False
    assert lib.failures.active_alerts()[0]["status"] == "acked"
    assert lib.failures.resolve_alert(alert, by="ops") is True and lib.failures.resolve_alert(alert) is False
    assert lib.failures.active_alerts() == []
    with pytest.raises(ConflictError):
        lib.failures.ack_alert(alert)
    with pytest.raises(NotFoundError):
        lib.failures.ack_alert(999)
    # the same wave continuing right after resolution does not re-raise...
    clock.advance(1)
    assert lib.failures.record("llm_call", REFUSED, agent="a0").alert_id is None
    # ...but five agents failing after the resolution (a0 again, b0..b3) are a new incident, even within 60 s
    raised = []
    for i in range(5):
        clock.advance(1)
        raised.append(lib.failures.record("llm_call", REFUSED, agent=f"b{i}").alert_id)
    assert raised[3] is not None and raised[:3] == [None] * 3 and raised[4] is None
    assert len(lib.failures.alerts(include_resolved=True)) == 2


def test_threshold_and_window_come_from_settings(db_path: Path) -> None:
    settings = Settings.from_env({"KAOS_SYSTEMIC_THRESHOLD": "3", "KAOS_SYSTEMIC_WINDOW_S": "60"})
    clock = ManualClock(T0)
    with Library(db_path, clock=clock, settings=settings) as lib:
        raised = []
        for i in range(3):
            clock.advance(1)
            raised.append(lib.failures.record("llm_call", REFUSED, agent=f"a{i}").alert_id)
    assert raised[2] is not None
    with pytest.raises(InvalidInputError):
        Settings.from_env({"KAOS_SYSTEMIC_THRESHOLD": "0"})


def test_recategorize_after_registering_a_diagnoser(lib: Library) -> None:
    rec = lib.failures.record("mystery_tool", "zzfoo.CustomMysteryException was raised")
    manual = lib.failures.record("other", "zzfoo.CustomMysteryException again")
    lib.failures.diagnose(manual.fingerprint_id, category="unknown", root_cause="we looked", by="ana")
    assert rec.diagnosis.category == "unknown"

    def mystery(failure: FailureInput) -> Diagnosis | None:
        return Diagnosis("code", "custom", "fix zzfoo", 0.9) if "CustomMysteryException" in failure.text else None

    register_diagnoser("test-mystery", mystery)
    try:
        assert lib.failures.recategorize(use_llm=False) == 1  # the manual one is left alone
        assert lib.failures.recategorize(use_llm=False) == 0
    finally:
        unregister_diagnoser("test-mystery")
    fp = lib.failures.get(rec.fingerprint_id)
    assert (fp["category"], fp["diagnoser"], fp["diagnostic_method"]) == ("code", "test-mystery", "heuristic")
    assert lib.failures.get(manual.fingerprint_id)["diagnostic_method"] == "manual"


def test_manual_override_is_recorded_as_such(lib: Library) -> None:
    fp = lib.failures.record("http_get", "HTTP 401 Unauthorized").fingerprint_id
    data = lib.failures.diagnose(fp, category="infra", root_cause="gateway strips headers", by="ana")
    assert (data["category"], data["diagnostic_method"], data["root_cause"]) == (
        "infra",
        "manual",
        "gateway strips headers",
    )
    history = lib.failures.history(fp)
    assert [h["method"] for h in history] == ["heuristic", "manual"] and history[1]["decided_by"] == "ana"
    with pytest.raises(InvalidInputError):
        lib.failures.diagnose(fp, category="bad")


def test_listing_filters_and_orders(lib: Library) -> None:
    for _ in range(3):
        lib.failures.record("llm_call", REFUSED)
    lib.failures.record("http_get", "HTTP 401 Unauthorized")
    rows = lib.failures.list()
    assert [r["tool"] for r in rows] == ["llm_call", "http_get"]
    assert [r["tool"] for r in lib.failures.list(min_count=2)] == ["llm_call"]
    assert [r["tool"] for r in lib.failures.list(category="config")] == ["http_get"]
    with pytest.raises(InvalidInputError):
        lib.failures.list(category="nope")


def test_resolve_id_errors(lib: Library) -> None:
    with pytest.raises(NotFoundError):
        lib.failures.get(42)
    with pytest.raises(InvalidInputError):
        lib.failures.get("xyz")
    with pytest.raises(NotFoundError):
        lib.failures.get("abcdef12")


def test_deleting_a_fingerprint_deletes_its_edges(lib: Library) -> None:
    fp = lib.failures.record("t", "boom").fingerprint_id
    skill = lib.skills.add("s1", "d", "t")
    lib.conn.execute(
        "INSERT INTO edges (src_kind, src_id, dst_kind, dst_id, relation, strength, provenance, created_at, updated_at)"
        " VALUES ('skill', ?, 'failure', ?, 'caused', 0.5, 'observed', 0, 0)",
        (skill.id, fp),
    )
    lib.conn.execute("DELETE FROM failure_fingerprints WHERE id = ?", (fp,))
    assert lib.conn.execute("SELECT COUNT(*) FROM edges").fetchone()[0] == 0


def _record_wave(path: str, start: int, count: int) -> None:
    with Library(path, settings=Settings()) as lib:
        for i in range(start, start + count):
            lib.failures.record("llm_call", REFUSED, agent=f"proc-agent-{i}")


def test_concurrent_processes_raise_one_alert(library_target: str) -> None:
    Library(library_target, settings=Settings()).close()
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_record_wave, args=(library_target, n * 4, 4)) for n in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    with Library(library_target, settings=Settings(), readonly=True) as lib:
        conn = lib.conn
        assert conn.execute("SELECT occurrences FROM failure_fingerprints").fetchone()[0] == 16
        assert conn.execute("SELECT COUNT(*) FROM failure_fingerprints").fetchone()[0] == 1
        assert conn.execute("SELECT COUNT(*) FROM systemic_alerts").fetchone()[0] == 1
