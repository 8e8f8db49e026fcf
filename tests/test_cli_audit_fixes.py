"""Bugs an audit of the CLI found, each pinned by a real `kaos` run on a real SQLite file.

Bad input must be a one-line `kaos: …` message (exit 1 for errors, 2 for usage errors) and must leave
the file byte-for-byte unchanged.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kaos_dream import Library, Settings

from .conftest import file_digest, run_kaos


@pytest.fixture
def seeded(db_path: Path) -> Path:
    """A skill, an open intent (position 1) and a failure fingerprint (1) with an active fix."""
    with Library(db_path, settings=Settings()) as lib:
        lib.skills.add("deploy", "deploy the app", "deploy {target}", ["ops"])
        lib.log.intent("worker", "deploy staging")
        lib.failures.record("llm_call", "ConnectionRefusedError: localhost:8000", agent="a1")
        lib.failures.attach_fix(1, summary="start vllm")
    return db_path


def assert_refused(args: tuple[str, ...], db: Path, code: int, text: str) -> None:
    """The command fails with one `kaos:` line naming ``text`` and the file is unchanged."""
    before = file_digest(db)
    r = run_kaos(*args, db=db)
    assert r.returncode == code, (args, r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kaos: ") and text in lines[0], (args, r.stderr)
    assert file_digest(db) == before, args


@pytest.mark.parametrize(
    "args, text",
    [
        (("log", "vote", "bob", "1", "--approve", "--reject"), "--approve and --reject exclude each other"),
        (("log", "vote", "bob", "1", "--reject", "--approve"), "--approve and --reject exclude each other"),
        (("record-outcome", "deploy", "--success", "--failure"), "--success and --failure exclude each other"),
        (("record-outcome", "deploy", "--failure", "--success"), "--success and --failure exclude each other"),
        (("dream", "fix-outcome", "1", "--succeeded", "--failed"), "--succeeded and --failed exclude each other"),
        (("dream", "fix-outcome", "1"), "say --succeeded or --failed"),
        (("log", "vote", "bob", "1"), "say --approve or --reject"),
        (("skill", "list", "--deprecated", "--all"), "--deprecated and --all exclude each other"),
    ],
)
def test_contradictory_flags_are_usage_errors(seeded: Path, args: tuple[str, ...], text: str) -> None:
    assert_refused(args, seeded, 2, text)


def test_each_single_flag_of_a_pair_still_works(seeded: Path) -> None:
    assert run_kaos("log", "vote", "bob", "1", "--reject", db=seeded).returncode == 0
    assert run_kaos("record-outcome", "deploy", "--failure", db=seeded).returncode == 0
    assert run_kaos("dream", "fix-outcome", "1", "--succeeded", db=seeded).returncode == 0
    with Library(seeded, settings=Settings()) as lib:
        votes = [e for e in lib.log.thread(1) if e.kind == "vote"]
        assert [e.approve for e in votes] == [False]
