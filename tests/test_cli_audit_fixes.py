"""Bugs an audit of the CLI found, each pinned by a real `kaos` run on a real SQLite file.

Bad input must be a one-line `kaos: …` message (exit 1 for errors, 2 for usage errors) and must leave
the file byte-for-byte unchanged.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kaos_dream import Library, Settings
from kaos_dream.errors import InvalidInputError

from .conftest import PROJECT_ROOT, file_digest
from .conftest import run_kaos_in_process as run_kaos  # parsing and rendering: no new process needed


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


def start_follower(db: Path, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT)}
    env = {k: v for k, v in env.items() if not k.startswith("KAOS_")}
    return subprocess.Popen(
        [sys.executable, "-m", "kaos_dream", "--db", str(db), *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )


def test_tail_follow_with_n0_prints_only_entries_appended_after_it_started(db_path: Path) -> None:
    with Library(db_path, settings=Settings()) as lib:
        for action in ("alpha-old", "beta-old", "gamma-old"):
            lib.log.intent("a1", action)
    # --format table: into a pipe an empty listing prints no line, and this test syncs on that line
    proc = start_follower(db_path, "--format", "table", "log", "tail", "-n", "0", "--follow", "--idle-exit", "3")
    assert proc.stdout is not None
    first = proc.stdout.readline()  # printed after the follower fixed its starting point
    assert "nothing to show" in first, first
    with Library(db_path, settings=Settings()) as lib:  # another process appends while tail follows
        lib.log.intent("a2", "delta-new")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "delta-new" in out
    assert not any(old in out for old in ("alpha-old", "beta-old", "gamma-old")), out


def test_tail_follow_json_is_json_lines_from_the_first_entry(db_path: Path) -> None:
    with Library(db_path, settings=Settings()) as lib:
        for action in ("alpha-old", "beta-old", "gamma-old"):
            lib.log.intent("a1", action)
    proc = start_follower(db_path, "--json", "log", "tail", "-n", "2", "--follow", "--idle-exit", "3")
    assert proc.stdout is not None
    initial = [json.loads(proc.stdout.readline()) for _ in range(2)]  # one complete object per line
    assert [e["action"] for e in initial] == ["beta-old", "gamma-old"]
    with Library(db_path, settings=Settings()) as lib:
        lib.log.intent("a2", "delta-new")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert [json.loads(line)["action"] for line in out.splitlines()] == ["delta-new"]


def test_tail_without_follow_keeps_its_json_array(db_path: Path) -> None:
    with Library(db_path, settings=Settings()) as lib:
        lib.log.intent("a1", "alpha-old")
        lib.log.intent("a1", "beta-old")
    r = run_kaos("--json", "log", "tail", "-n", "1", db=db_path)
    assert r.returncode == 0 and r.stdout.startswith("[\n")
    assert [e["action"] for e in json.loads(r.stdout)] == ["beta-old"]


@pytest.mark.parametrize(
    "args, text",
    [
        (("--root-cause", ""), "root cause must not be empty"),
        (("--root-cause", "  \t "), "root cause must not be empty"),
        (("--category", "config", "--root-cause", " "), "root cause must not be empty"),
        (("--action", ""), "suggested action must not be empty"),
        (("--root-cause", "key rotated", "--by", " "), "--by must not be empty"),
    ],
)
def test_diagnose_refuses_empty_override_text(seeded: Path, args: tuple[str, ...], text: str) -> None:
    assert_refused(("dream", "diagnose", "1", *args), seeded, 1, text)
    with Library(seeded, settings=Settings()) as lib:
        assert lib.failures.get(1)["diagnostic_method"] != "manual"


@pytest.mark.parametrize(
    "args, text",
    [
        (("dream", "fix-outcome", "1", "--failed", "--agent", ""), "agent id must not be empty"),
        (("dream", "fix-outcome", "1", "--succeeded", "--agent", "   "), "agent id must not be empty"),
        (("dream", "fix-outcome", "1", "--failed", "--agent", "a" * 300), "the limit is"),
        (("dream", "fix-outcome", "1", "--failed", "--agent", "a\nb"), "control characters"),
        (("failure", "record", "--tool", "t", "--agent", " ", "boom"), "agent id must not be empty"),
        (("failure", "record", "--tool", "t", "--agent", "a" * 300, "boom"), "the limit is"),
        (("record-outcome", "deploy", "--success", "--agent", ""), "agent id must not be empty"),
        (("search", "deploy", "--record-hits", "--agent", ""), "agent id must not be empty"),
    ],
)
def test_agent_options_give_the_agent_id_errors(seeded: Path, args: tuple[str, ...], text: str) -> None:
    assert_refused(args, seeded, 1, text)


def test_fix_outcome_agent_is_stored_trimmed_like_everywhere_else(seeded: Path) -> None:
    assert run_kaos("dream", "fix-outcome", "1", "--failed", "--agent", " a9 ", db=seeded).returncode == 0
    with Library(seeded, settings=Settings()) as lib:
        assert lib.episodes.get("a9").id == "a9"


def test_restoring_a_live_skill_changes_nothing(seeded: Path) -> None:
    before = file_digest(seeded)
    r = run_kaos("skill", "restore", "deploy", db=seeded)
    assert r.returncode == 0, r.stderr
    assert "skill deploy is not deprecated; nothing changed" in r.stdout
    assert file_digest(seeded) == before
    as_json = run_kaos("--json", "skill", "restore", "1", db=seeded)
    assert as_json.returncode == 0 and json.loads(as_json.stdout)["changed"] is False
    assert file_digest(seeded) == before


def test_library_restore_of_a_live_skill_keeps_updated_at(lib: Library, clock) -> None:
    added = lib.skills.add("live", "d", "t")
    clock.advance(3600)
    assert lib.skills.restore("live").updated_at == added.updated_at
    lib.skills.deprecate("live")
    clock.advance(60)
    restored = lib.skills.restore("live")
    assert not restored.deprecated and restored.updated_at > added.updated_at


def test_restoring_a_deprecated_skill_still_works(seeded: Path) -> None:
    assert run_kaos("skill", "deprecate", "deploy", db=seeded).returncode == 0
    r = run_kaos("skill", "restore", "deploy", db=seeded)
    assert r.returncode == 0 and "restored skill 1" in r.stdout
    with Library(seeded, settings=Settings()) as lib:
        assert not lib.skills.get("deploy").deprecated


def test_skill_update_refuses_tag_with_clear_tags(seeded: Path) -> None:
    for args in (("--tag", "x", "--clear-tags"), ("--clear-tags", "--tag", "x")):
        assert_refused(("skill", "update", "deploy", *args), seeded, 2, "--tag and --clear-tags exclude each other")
    with Library(seeded, settings=Settings()) as lib:
        assert lib.skills.get("deploy").tags == ("ops",)
    assert run_kaos("skill", "update", "deploy", "--clear-tags", db=seeded).returncode == 0
    with Library(seeded, settings=Settings()) as lib:
        assert lib.skills.get("deploy").tags == ()


@pytest.mark.parametrize(
    "template, why",
    [
        ("a {0} b", "positional fields are not supported"),
        ("{x.attr}", "attribute access is not supported"),
        ("{a[0]}", "indexing is not supported"),
        ("{a!r}", "conversions are not supported"),
        ("{a:>10}", "format specs are not supported"),
        ("{{{0}}}", "positional fields are not supported"),
    ],
)
def test_templates_with_fields_apply_cannot_fill_are_refused(seeded: Path, template: str, why: str) -> None:
    for args in (("skill", "add", "tpl", "-t", template), ("skill", "update", "deploy", "-t", template)):
        assert_refused(args, seeded, 1, why)
        assert_refused(args, seeded, 1, "is not a plain parameter name")


def test_apply_gives_the_same_error_for_a_stored_bad_template(seeded: Path) -> None:
    import sqlite3

    conn = sqlite3.connect(seeded)  # a template stored before add/update refused such fields
    with conn:
        conn.execute("UPDATE skills SET template = 'run {0} now' WHERE name = 'deploy'")
    conn.close()
    assert_refused(("skill", "apply", "deploy", "-p", "0=x"), seeded, 1, "template field {0} at character 5")


def test_plain_names_and_literal_braces_still_render(seeded: Path) -> None:
    template = "{{0}} {target} {} awk '{print $1}' {{x.attr}}"
    assert run_kaos("skill", "add", "tpl", "-t", template, db=seeded).returncode == 0
    r = run_kaos("skill", "apply", "tpl", "-p", "target=prod", db=seeded)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "{0} prod {} awk '{print $1}' {x.attr}"


INVISIBLE = ["\u202e", "\u200b", "\u2066", "\ufeff", "\u00ad", "\u2028", "\ue000", "\u00a0"]


def test_every_name_check_refuses_invisible_characters(lib: Library) -> None:
    from kaos_dream.episodes import clean_agent_id
    from kaos_dream.skills import clean_name, clean_tags

    checks = [
        clean_name, lambda n: clean_tags([n]), clean_agent_id,
        lambda n: lib.memories.add("content", key=n), lambda n: lib.memories.add("content", kind=n),
        lambda n: lib.preferences.set(n, "v"), lambda n: lib.log.intent(n, "deploy"),
    ]
    for char in INVISIBLE:
        for check in checks:
            with pytest.raises(InvalidInputError, match=f"U\\+{ord(char):04X}"):
                check(f"dep{char}loy")


@pytest.mark.parametrize(
    "args",
    [
        ("skill", "add", "dep\u202eloy"),
        ("skill", "update", "deploy", "--name", "dep\u200bloy"),
        ("skill", "update", "deploy", "--tag", "o\u2066ps"),
        ("memory", "add", "some content", "--key", "k\ufeffey"),
        ("memory", "add", "some content", "--kind", "in\u00adsight"),
        ("prefs", "set", "k\u202eey", "v"),
        ("agent", "start", "--id", "run\u200b42"),
        ("record-outcome", "deploy", "--success", "--agent", "run\u202e42"),
        ("dream", "fix-outcome", "1", "--failed", "--agent", "a\u2028b"),
        ("failure", "record", "--tool", "t", "--agent", "a\ue000b", "boom"),
        ("log", "intent", "work\u200ber", "deploy prod"),
    ],
)
def test_cli_names_keys_and_agent_ids_refuse_invisible_characters(seeded: Path, args: tuple[str, ...]) -> None:
    bad = next(c for a in args for c in a if not c.isprintable())
    assert_refused(args, seeded, 1, f"U+{ord(bad):04X}")


def test_printable_unicode_names_are_still_accepted(seeded: Path) -> None:
    for name in ("café", "数据-pipeline", "🦖 rex", "e\u0301toile"):
        r = run_kaos("skill", "add", name, db=seeded)
        assert r.returncode == 0, (name, r.stderr)


@pytest.mark.parametrize(
    "args",
    [
        ("dream", "failures", "--limit", "-1"),
        ("dream", "failures", "--min-count", "-1"),
        ("dream", "runs", "-n", "-1"),
        ("dream", "run", "--wait", "-1"),
    ],
)
def test_negative_counts_are_usage_errors(seeded: Path, args: tuple[str, ...]) -> None:
    assert_refused(args, seeded, 2, "usage error")


def test_failures_limit_still_limits(seeded: Path) -> None:
    with Library(seeded, settings=Settings()) as lib:
        lib.failures.record("http_get", "HTTP 401 Unauthorized: invalid api key")
        with pytest.raises(InvalidInputError):
            lib.failures.list(limit=-1)
    r = run_kaos("--json", "dream", "failures", "--limit", "1", db=seeded)
    assert r.returncode == 0 and len(json.loads(r.stdout)) == 1
    assert json.loads(run_kaos("--json", "dream", "failures", "--limit", "0", db=seeded).stdout) == []
