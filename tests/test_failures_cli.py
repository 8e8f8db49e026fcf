"""The failure CLI as users run it: real `kaos` processes on real files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kaos_dream import Library, Settings
from kaos_dream.failures.examples import RULE_FAMILIES

from .conftest import target_digest


@pytest.fixture
def kaos(kaos_in_process):
    """This file's CLI tests check parsing, rendering and effects: run `kaos` in-process."""
    return kaos_in_process

REFUSED = "ConnectionRefusedError: localhost:8000"


@pytest.fixture
def db_target(library_target: str) -> str:
    """The library's ``--db`` on each engine (conftest BOTH_ENGINES): failures are shared state."""
    return library_target


@pytest.fixture
def seeded(db_target: str) -> str:
    """Five agents hitting one failure (an alert) and one config failure, written through the library."""
    with Library(db_target, settings=Settings()) as lib:
        for i in range(5):
            lib.failures.record("llm_call", REFUSED, agent=f"a{i}")
        lib.failures.record("http_get", "HTTP 401 Unauthorized: invalid api key")
    return db_target


def test_record_from_stdin_and_json(kaos, db_target: str) -> None:
    trace = "Traceback (most recent call last):\n  File \"a.py\", line 9, in run\n    x()\nKeyError: 'k'\n"
    r = kaos("--json", "failure", "record", "--tool", "py", "-", db=db_target, input=trace)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["new"] and data["category"] == "code" and data["diagnostic_method"] == "heuristic"
    empty = kaos("failure", "record", "--tool", "py", "-", db=db_target, input="  \n")
    assert empty.returncode == 1 and empty.stderr.startswith("kaos: error:") and "Traceback" not in empty.stderr


def test_record_announces_the_alert_on_stderr(kaos, db_target: str) -> None:
    outs = [kaos("failure", "record", "--tool", "t", "--agent", f"a{i}", REFUSED, db=db_target) for i in range(5)]
    assert "systemic alert 1 raised" in outs[4].stderr and all("systemic" not in o.stderr for o in outs[:4])


READ_COMMANDS = [
    ["dream", "failures"],
    ["--json", "dream", "failures", "--min-count", "2", "--category", "infra"],
    ["dream", "systemic"],
    ["--json", "dream", "systemic", "--all"],
    ["dream", "diagnose", "1"],
    ["--json", "dream", "diagnose", "1"],
    ["failure", "lookup", "--tool", "llm_call", REFUSED],
    ["--json", "failure", "lookup", "--tool", "nope", "nothing"],
    ["dream", "fix", "show", "1"],
    ["alerts", "check"],
]


def test_read_commands_leave_the_file_unchanged(kaos, seeded: str) -> None:
    before = target_digest(seeded)
    for args in READ_COMMANDS + READ_COMMANDS[:2]:
        r = kaos(*args, db=seeded)
        assert r.returncode in (0, 3), (args, r.stderr)
        assert target_digest(seeded) == before, args


def test_lookup_json(kaos, seeded: str) -> None:
    found = json.loads(kaos("--json", "failure", "lookup", "--tool", "llm_call", REFUSED, db=seeded).stdout)
    assert found["category"] == "infra" and found["occurrences"] == 5 and found["fix"] is None
    assert json.loads(kaos("--json", "failure", "lookup", "--tool", "x", "y", db=seeded).stdout) is None


def test_alerts_check_exit_codes_and_lifecycle(kaos, seeded: str, tmp_path: Path) -> None:
    r = kaos("alerts", "check", db=seeded)
    assert r.returncode == 3 and "systemic alert 1 (active)" in r.stderr and "llm_call" in r.stderr
    assert kaos("dream", "systemic", "--ack", "1", "--by", "ops", db=seeded).returncode == 0
    assert kaos("alerts", "check", db=seeded).returncode == 3
    assert kaos("alerts", "check", "--ignore-acked", db=seeded).returncode == 0
    listed = json.loads(kaos("--json", "dream", "systemic", db=seeded).stdout)
    assert listed[0]["status"] == "acked" and listed[0]["acked_by"] == "ops"
    assert kaos("dream", "systemic", "--resolve", "1", "--by", "ops", db=seeded).returncode == 0
    clear = kaos("alerts", "check", db=seeded)
    assert clear.returncode == 0 and clear.stderr == ""
    assert kaos("dream", "systemic", "--ack", "1", db=seeded).returncode == 1
    assert kaos("dream", "systemic", "--ack", "1", "--resolve", "1", db=seeded).returncode == 1
    fresh = kaos("alerts", "check", db=tmp_path / "fresh.db")
    assert fresh.returncode == 1 and "no library at" in fresh.stderr and "kaos" in fresh.stderr


def test_failures_listing_filters(kaos, seeded: str) -> None:
    rows = json.loads(kaos("--json", "dream", "failures", db=seeded).stdout)
    assert [r["tool"] for r in rows] == ["llm_call", "http_get"] and all("category" in r for r in rows)
    only = json.loads(kaos("--json", "dream", "failures", "--category", "config", db=seeded).stdout)
    assert [r["tool"] for r in only] == ["http_get"]
    bad = kaos("dream", "failures", "--category", "weird", db=seeded)
    assert bad.returncode == 2 and "'weird' is not one of" in bad.stderr  # a usage error since issue 18
    human = kaos("dream", "failures", db=seeded)
    assert "llm_call" in human.stdout and "LLM diagnosis: off" in human.stderr  # a note: never on stdout
    assert "LLM diagnosis" not in human.stdout
    empty = kaos("dream", "failures", "--category", "transient", db=seeded)
    assert empty.returncode == 0 and empty.stdout == "" and "LLM diagnosis: off" in empty.stderr


def test_manual_diagnosis_override(kaos, seeded: str) -> None:
    r = kaos(
        "--json",
        "dream",
        "diagnose",
        "2",
        "--category",
        "infra",
        "--root-cause",
        "proxy strips auth",
        "--by",
        "ana",
        db=seeded,
    )
    data = json.loads(r.stdout)
    assert data["category"] == "infra" and data["diagnostic_method"] == "manual"
    assert [h["method"] for h in data["history"]] == ["heuristic", "manual"]
    missing = kaos("dream", "diagnose", "99", db=seeded)
    assert missing.returncode == 1 and "no failure fingerprint" in missing.stderr


def test_fix_attach_outcomes_and_withdrawal(kaos, seeded: str) -> None:
    assert kaos("dream", "fix", "attach", "1", "--summary", "start vllm", db=seeded).returncode == 0
    first = json.loads(kaos("--json", "dream", "fix-outcome", "1", "--failed", "--agent", "a9", db=seeded).stdout)
    assert first["downgraded"] is False and first["attempts"] == 1
    with Library(seeded, settings=Settings()) as lib:
        assert [lib.failures.record_fix_outcome(1, False)["downgraded"] for _ in range(3)] == [False] * 3
    last = json.loads(kaos("--json", "dream", "fix-outcome", "1", "--failed", db=seeded).stdout)
    assert last["downgraded"] is True
    found = json.loads(kaos("--json", "failure", "lookup", "--tool", "llm_call", REFUSED, db=seeded).stdout)
    assert found["fix"] is None
    neither = kaos("dream", "fix-outcome", "1", db=seeded)
    assert neither.returncode == 2 and "--succeeded or --failed" in neither.stderr
    none_active = kaos("dream", "fix-outcome", "1", "--succeeded", db=seeded)
    assert none_active.returncode == 1 and "no active fix" in none_active.stderr
    history = json.loads(kaos("--json", "dream", "fix", "show", "1", db=seeded).stdout)
    assert history[0]["status"] == "withdrawn"


def test_recategorize_cli(kaos, db_target: str) -> None:
    kaos("failure", "record", "--tool", "m", "zzfoo.CustomMysteryException was raised", db=db_target)
    r = kaos("--json", "dream", "recategorize", db=db_target)
    data = json.loads(r.stdout)
    assert data["recategorized"] == 0 and data["llm"]["enabled"] is False


def test_help_has_examples(capsys: pytest.CaptureFixture[str]) -> None:
    from kaos_dream.cli import run

    for args in (
        ["failure", "record"],
        ["failure", "lookup"],
        ["alerts", "check"],
        ["dream", "failures"],
        ["dream", "diagnose"],
        ["dream", "systemic"],
        ["dream", "fix", "attach"],
        ["dream", "fix-outcome"],
        ["dream", "recategorize"],
        ["dream", "fix", "show"],
    ):
        assert run([*args, "--help"]) == 0
        assert "Example:" in capsys.readouterr().out, args


def test_user_text_is_rendered_literally(kaos, db_target: str) -> None:
    kaos("failure", "record", "--tool", "[bold]t[/bold]", "[red]boom[/red] zz", db=db_target)
    out = kaos("dream", "failures", db=db_target).stdout
    assert "[bold]t[/bold]" in out.replace("\n", "").replace("│", "").replace(" ", "") or "[bold]" in out


SUSPENDED = "merchant account ACME-1 suspended by the risk review team for store 7781"


def test_a_category_set_by_hand_is_learned_by_a_close_new_fingerprint(kaos, db_target: str) -> None:
    first = json.loads(kaos("--json", "failure", "record", "--tool", "payments", SUSPENDED, db=db_target).stdout)
    assert first["category"] == "unknown" and first["learned_from"] is None
    r = kaos("dream", "diagnose", str(first["fingerprint_id"]), "--category", "config", "--root-cause",
             "the merchant account is suspended", "--action", "ask the risk team to lift it", "--by", "ana",
             db=db_target)
    assert r.returncode == 0, r.stderr
    near = "merchant account ACME-2 suspended by the risk review team for store 9902 (region eu)"
    second = json.loads(kaos("--json", "failure", "record", "--tool", "payments", near, db=db_target).stdout)
    assert second["new"] and second["fingerprint_id"] != first["fingerprint_id"]
    assert (second["category"], second["learned_from"]) == ("config", first["fingerprint_id"])
    assert second["root_cause"] == "the merchant account is suspended"
    assert second["diagnoser"] == f"learned-from:#{first['fingerprint_id']}"
    before = target_digest(db_target)
    looked = json.loads(kaos("--json", "failure", "lookup", "--tool", "payments", near, db=db_target).stdout)
    assert looked["learned_from"] == first["fingerprint_id"] and looked["category"] == "config"
    shown = json.loads(kaos("--json", "dream", "diagnose", str(second["fingerprint_id"]), db=db_target).stdout)
    assert shown["learned_from"] == first["fingerprint_id"]
    table = kaos("dream", "diagnose", str(second["fingerprint_id"]), db=db_target, env={"COLUMNS": "200"})
    assert "learned from" in table.stdout and f"#{first['fingerprint_id']} (labelled by a person)" in table.stdout
    assert f"#{first['fingerprint_id']} (labelled by a person)" in kaos(
        "failure", "lookup", "--tool", "payments", near, db=db_target, env={"COLUMNS": "200"}).stdout
    assert target_digest(db_target) == before  # showing the learned label reads only
    # A distant message stays unknown, and a learned label never teaches another one.
    far = json.loads(kaos("--json", "failure", "record", "--tool", "payments", "ledger export stalled",
                          db=db_target).stdout)
    assert far["category"] == "unknown" and far["learned_from"] is None
    with Library(db_target, settings=Settings()) as lib:
        examples = lib.conn.execute(
            "SELECT count(*) FROM failure_fingerprints WHERE diagnostic_method = 'manual'").fetchone()[0]
    assert examples == 1


def test_explain_shows_the_steps_and_the_deciding_rule(kaos, tmp_path: Path) -> None:
    """`kaos failure explain` (issue 34): the normalisation steps that changed the message, the rule and the
    pattern that decided; it reads no library and writes none."""
    message = 'Error from server (NotFound): pods "web-7d9f8b6c5d-x2k4p" not found'
    r = kaos("--json", "failure", "explain", "--tool", "kubectl", message, db=tmp_path / "none.db")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["normalized"] == "error from server (notfound): pods <name> not found"
    assert [s["step"] for s in data["lines"][0]["steps"]] == ["volatile name"]
    assert data["decided_by"] == {"tier": "rule", "name": "missing_data", "category": "code",
                                  "family": RULE_FAMILIES["missing_data"], "pattern": r"\(NotFound\)"}
    renamed = message.replace("web-7d9f8b6c5d-x2k4p", "api-0")
    none_db = tmp_path / "none.db"
    other = json.loads(kaos("--json", "failure", "explain", "--tool", "kubectl", renamed, db=none_db).stdout)
    assert other["fingerprint"] == data["fingerprint"]  # the pod's name is volatile
    shown = kaos("failure", "explain", "--tool", "t", "-", db=tmp_path / "none.db", input="zzz qqq\n")
    assert shown.returncode == 0 and "nothing (unknown)" in shown.stdout
    assert not (tmp_path / "none.db").exists()
