"""The `kaos` command in shells, pipes, cron and CI (issue 18): real `kaos` processes throughout."""

from __future__ import annotations

import functools
import json
import os
import pty
import re
import select
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

from kaos_dream import Settings
from kaos_dream.cli.output import number, plain

from .conftest import PROJECT_ROOT, kaos_command, run_kaos, run_kaos_in_process

BOX = set("┃┏┗━│┌└─╇┡")


def run_on_terminal(*args: str, db: Path, columns: int = 100) -> str:
    """Run kaos with stdout on a pseudo-terminal (what a person at a shell sees)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KAOS_")}
    env.update(PYTHONPATH=str(PROJECT_ROOT), COLUMNS=str(columns), LINES="40", TERM="xterm")
    leader, follower = pty.openpty()
    proc = subprocess.Popen(kaos_command() + ["--db", str(db), *args], stdout=follower, stderr=subprocess.PIPE,
                            env=env)
    os.close(follower)
    chunks = []
    while True:
        ready, _, _ = select.select([leader], [], [], 30)
        if not ready:
            break
        try:
            data = os.read(leader, 65536)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=60)
    os.close(leader)
    assert proc.returncode == 0, proc.stderr.read()
    return b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")


def add_skills(db: Path, count: int) -> None:
    """``count`` skills added by `kaos skill add`, in this process: the listing is what is tested."""
    assert run_kaos_in_process("init", db=db).returncode == 0
    for i in range(count):  # few enough to add one by one
        assert run_kaos_in_process("skill", "add", f"skill-{i:03d}", "-d", "a skill", db=db).returncode == 0


# -- pipes and scripts ---------------------------------------------------------------------------------

def test_init_into_a_pipe_prints_the_whole_path_on_one_line(tmp_path: Path) -> None:
    deep = tmp_path / ("a-rather-long-folder-name-" * 4) / "library.db"
    deep.parent.mkdir()
    r = run_kaos("--db", str(deep), "init")
    assert r.returncode == 0, r.stderr
    assert [line for line in r.stdout.splitlines() if "library.db" in line][0].count(str(deep)) == 1


def test_listing_into_a_pipe_is_tab_separated_one_row_a_line(tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    name = "a-skill-with-a-very-long-name-" * 4
    run_kaos("skill", "add", name, "-d", "word " * 60, "--tag", "x", "--tag", "y", db=db)
    run_kaos("skill", "add", "second", db=db)
    r = run_kaos("skill", "list", db=db)
    lines = r.stdout.splitlines()
    assert len(lines) == 2 and not BOX & set(r.stdout) and "skills" not in r.stdout
    first = lines[0].split("\t")
    assert first[:2] == ["1", name] and first[3] == "x, y" and first[4] == "no"
    header = run_kaos("skill", "list", "--header", db=db).stdout.splitlines()
    assert header[0].split("\t") == ["id", "name", "description", "tags", "deprecated"] and len(header) == 3


def test_format_chooses_table_tsv_or_json_and_json_stays_an_alias(tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    run_kaos("skill", "add", "csv", db=db)
    table = run_kaos("skill", "list", "--format", "table", db=db).stdout
    assert BOX & set(table) and "csv" in table
    as_json = json.loads(run_kaos("skill", "list", "--format", "json", db=db).stdout)
    assert as_json == json.loads(run_kaos("skill", "list", "--json", db=db).stdout)
    assert as_json[0]["name"] == "csv"
    assert run_kaos("--format", "tsv", "skill", "list", db=db).stdout == "1\tcsv\t\tnone\tno\n"
    bad = run_kaos("skill", "list", "--format", "yaml", db=db)
    assert bad.returncode == 2 and "yaml" in bad.stderr


def test_big_listing_on_a_terminal_stops_with_a_more_line_unless_limit_is_given(tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    add_skills(db, 55)
    shown = run_on_terminal("skill", "list", db=db)
    assert "skill-049" in shown and "skill-050" not in shown
    assert "5 more; use --limit" in shown
    whole = run_on_terminal("skill", "list", "--limit", "55", db=db)
    assert "skill-054" in whole and "more; use --limit" not in whole
    piped = run_kaos("skill", "list", db=db)
    assert len(piped.stdout.splitlines()) == 55


def test_names_never_fold_inside_a_cell_on_a_narrow_terminal(tmp_path: Path) -> None:
    """On a terminal a skill name stays on one line: the other columns give way, and where they
    cannot (COLUMNS=40, five columns) the listing turns into one `column: value` line per field."""
    db = tmp_path / "k.db"
    fits, too_long = "nightly-backup-job", "a-really-long-skill-name-that-must-not-fold-anywhere"
    description = "copy the database somewhere safe every night"
    assert run_kaos("skill", "add", fits, "-d", description, db=db).returncode == 0
    for command in (["skill", "list"], ["search", "nightly database", "--kind", "skill"]):
        narrow = run_on_terminal(*command, db=db, columns=40).splitlines()
        assert not BOX & set("".join(narrow)) and any(line.endswith(f"name: \x1b[0m{fits}") for line in narrow)
    table = run_on_terminal("skill", "list", db=db, columns=60).splitlines()
    assert BOX & set("".join(table)) and any(fits in line for line in table)  # still a table: the name whole
    assert max(len(re.sub(r"\x1b\[[0-9;]*m", "", line)) for line in table) <= 60
    assert not any(description in line for line in table)  # the description wrapped instead
    assert run_kaos("skill", "add", too_long, "-d", "x", db=db).returncode == 0
    records = run_on_terminal("skill", "list", db=db, columns=60).splitlines()
    assert not BOX & set("".join(records)) and f"\x1b[1mname: \x1b[0m{too_long}" in records
    wide = run_on_terminal("skill", "list", db=db, columns=120).splitlines()
    assert BOX & set("".join(wide)) and any(too_long in line for line in wide)


def test_human_output_shows_no_python_reprs(tmp_path: Path) -> None:
    assert number(1.055e-06) == "0.000001055" and plain(1.055e-06) == "0.000001055"
    assert plain([1, 2]) == "1, 2" and plain([]) == "none" and plain(None) == "-" and plain(True) == "yes"
    assert number(12345678.0) == "12350000" and number(0.5) == "0.5"
    db = tmp_path / "k.db"
    run_kaos("init", db=db)
    for i in (1, 4, 7):
        run_kaos("log", "intent", "agent-7", "deploy staging", db=db)
        run_kaos("log", "vote", "alice", str(i), "--approve", db=db)
        run_kaos("log", "decide", str(i), db=db)
    r = run_kaos("policy", "mine", "--apply", db=db)
    assert r.returncode == 0, r.stderr
    assert "enabled 1," in r.stdout and "[" not in r.stdout


# -- cron ---------------------------------------------------------------------------------------------

def minimal_env_command(*args: str) -> list[str]:
    """`env -i` with nothing but PATH and the checkout on PYTHONPATH: what cron gives a job."""
    return ["env", "-i", "PATH=/usr/bin:/bin", f"PYTHONPATH={PROJECT_ROOT}", sys.executable, "-m", "kaos_dream",
            *args]


def test_mistyped_db_is_refused_and_never_created(tmp_path: Path) -> None:
    typo = tmp_path / "typo.db"
    commands = [
        ["dream", "run", "--apply", "--quiet"], ["dream", "consolidate"], ["graph", "link", "skill:a", "caused",
                                                                              "skill:b"],
        ["dream", "failures"], ["alerts", "check"], ["log", "tail"], ["policy", "mine"], ["policy", "list"],
        ["log", "intent", "a", "deploy"], ["db", "migrate"], ["db", "backup", str(tmp_path / "b.db")],
        ["skill", "deprecate", "x"], ["graph", "prune", "--apply"],
    ]
    for args in commands:
        proc = subprocess.run(minimal_env_command("--db", str(typo), *args), capture_output=True, text=True,
                              timeout=60)
        assert proc.returncode != 0, args
        assert proc.stdout == "" and len(proc.stderr.splitlines()) == 1, (args, proc.stderr)
        assert str(typo) in proc.stderr, (args, proc.stderr)
        if args[0] != "db" or args[1] == "migrate":
            assert "kaos" in proc.stderr and "init" in proc.stderr, (args, proc.stderr)
        assert not typo.exists(), args


def test_quiet_on_the_commands_a_cron_job_runs(tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    run_kaos("skill", "add", "csv", db=db)
    for args in (["db", "backup", str(tmp_path / "b.db"), "--quiet"], ["dream", "run", "--apply", "--quiet"],
                 ["dream", "consolidate", "--quiet"], ["db", "check", "--quiet"],
                 ["graph", "neglect", "--quiet"], ["--quiet", "skill", "list"],
                 ["db", "export", str(tmp_path / "e.jsonl"), "--quiet"]):
        r = run_kaos(*args, db=db)
        assert r.returncode == 0, (args, r.stderr)
        assert r.stdout == "" and r.stderr == "", args
    assert (tmp_path / "b.db").exists() and (tmp_path / "e.jsonl").exists()


def readme_cron_lines() -> list[str]:
    text = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8")
    block = text.split("```cron\n", 1)[1].split("```", 1)[0]
    return [line for line in block.splitlines() if line.strip() and not line.startswith("#")]


def test_readme_cron_lines_use_the_venv_path_and_run_in_a_minimal_environment(tmp_path: Path) -> None:
    lines = readme_cron_lines()
    assert lines
    db = tmp_path / "kaos.db"
    assert run_kaos("init", db=db).returncode == 0
    (tmp_path / "backups").mkdir()
    for line in lines:
        command = line.split(None, 5)[5]  # after the five schedule fields
        program, *args = command.split()
        assert program.endswith("/bin/kaos") and program.startswith("/"), line  # cron's PATH has no venv
        args = [a.replace("/srv/agents/", f"{tmp_path}/") for a in args]
        proc = subprocess.run(minimal_env_command(*args), capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, (line, proc.stderr)
        assert proc.stdout == "" and proc.stderr == "", line  # cron mails any output


# -- conventions --------------------------------------------------------------------------------------

def test_invalid_option_values_are_usage_errors(tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    run_kaos("skill", "add", "a", db=db)
    run_kaos("skill", "add", "b", db=db)
    for args in (["dream", "proposals", "--status", "bogus"], ["dream", "proposals", "--kind", "bogus"],
                 ["dream", "failures", "--category", "bogus"], ["graph", "link", "skill:a", "bogusrel", "skill:b"],
                 ["graph", "show", "skill:a", "--relation", "bogusrel"]):
        r = run_kaos(*args, db=db)
        assert r.returncode == 2, (args, r.stderr)
        assert "bogus" in r.stderr and len(r.stderr.splitlines()) == 1


def test_help_shows_flags_as_flags(tmp_path: Path) -> None:
    for args in (["skill", "list"], ["skill", "add"], ["dream", "run"], ["failure", "record"], [], ["db", "backup"]):
        r = run_kaos(*args, "--help")
        assert r.returncode == 0
        for label in ("<bool>", "<str>", "<list[str]>", "<int>", "<float>"):
            assert label not in r.stdout, (args, label)
    assert "TEXT" in run_kaos("skill", "add", "--help").stdout


def test_shell_completion_installs_and_completes_skill_names(tmp_path: Path) -> None:
    shown = run_kaos("--show-completion", "bash", env={"HOME": str(tmp_path)})
    assert shown.returncode == 0 and "_KAOS_COMPLETE" in shown.stdout
    installed = run_kaos("--install-completion", "bash", env={"HOME": str(tmp_path)})
    assert installed.returncode == 0, installed.stderr
    assert "kaos" in (tmp_path / ".bashrc").read_text()
    db = tmp_path / "k.db"
    for name in ("csv-to-parquet", "csv-to-delta", "deploy"):
        run_kaos("skill", "add", name, db=db)
    r = run_kaos(env={"_KAOS_COMPLETE": "complete_bash", "COMP_WORDS": "kaos skill show csv",
                      "COMP_CWORD": "3", "KAOS_DB": str(db)})
    assert r.returncode == 0
    assert sorted(r.stdout.split()) == ["csv-to-delta", "csv-to-parquet"]


def test_unknown_kaos_variable_warns_once(tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    run_kaos("init", db=db)
    r = run_kaos("skill", "list", db=db, env={"KAOS_DREAM_TRESHOLD": "5"})
    assert r.returncode == 0
    assert r.stderr.count("KAOS_DREAM_TRESHOLD") == 1 and "KAOS_DREAM_THRESHOLD" in r.stderr
    assert len(r.stderr.splitlines()) == 1
    assert run_kaos("skill", "list", db=db, env={"KAOS_DREAM_THRESHOLD": "5"}).stderr == ""


def test_config_lists_every_setting_its_value_and_source() -> None:
    r = run_kaos("config", "--json", env={"KAOS_DREAM_THRESHOLD": "50", "ANTHROPIC_API_KEY": "sk-secret"})
    assert r.returncode == 0, r.stderr
    rows = {row["variable"]: row for row in json.loads(r.stdout)}
    expected = {"KAOS_" + f.name.upper() for f in fields(Settings) if f.name not in ("extra", "anthropic_api_key")}
    assert expected <= set(rows)
    assert rows["KAOS_DREAM_THRESHOLD"] == {"variable": "KAOS_DREAM_THRESHOLD", "value": 50, "default": 100,
                                            "source": "env"}
    assert rows["KAOS_RANK"]["source"] == "default"
    assert rows["ANTHROPIC_API_KEY"]["value"] == "set" and "sk-secret" not in r.stdout
    table = run_kaos("config").stdout
    assert "KAOS_DREAM_THRESHOLD\t100\tdefault\t100" in table


def test_failure_record_does_not_leave_a_running_session(tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    r = run_kaos("failure", "record", "--tool", "http_get", "--agent", "a7", "HTTP 429 Too Many Requests", db=db)
    assert r.returncode == 0, r.stderr
    running = json.loads(run_kaos("agent", "list", "--state", "running", "--json", db=db).stdout)
    assert running == []
    shown = json.loads(run_kaos("agent", "show", "a7", "--json", db=db).stdout)
    assert shown["state"] != "running" and shown["ended_at"] is not None
    # an agent that did start a session keeps it running
    run_kaos("agent", "start", "--id", "a8", db=db)
    run_kaos("failure", "record", "--tool", "http_get", "--agent", "a8", "HTTP 429 Too Many Requests", db=db)
    assert json.loads(run_kaos("agent", "show", "a8", "--json", db=db).stdout)["state"] == "running"


# -- Python users -------------------------------------------------------------------------------------

def test_package_ships_py_typed() -> None:
    import tomllib

    assert (PROJECT_ROOT / "kaos_dream" / "py.typed").exists()
    config = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "py.typed" in config["tool"]["setuptools"]["package-data"]["kaos_dream"]
    assert not any(dep.startswith(("sqlite-utils", "rank-bm25")) for dep in config["project"]["dependencies"])


def test_citations_accept_kind_colon_ref_strings(tmp_path: Path) -> None:
    import pytest

    from kaos_dream import Library
    from kaos_dream.errors import InvalidInputError

    with Library(tmp_path / "k.db", settings=Settings()) as lib:
        lib.skills.add("csv-to-parquet", "Convert CSV files to Parquet")
        lib.memories.add("mixed columns need a schema", key="parquet-schema")
        agent = lib.episodes.start(name="e").id
        result = lib.episodes.complete(agent, "done", ["skill:csv-to-parquet", ("memory", "parquet-schema")])
        assert result.episode.citations == (("skill", "csv-to-parquet"), ("memory", "parquet-schema"))
        other = lib.episodes.start(name="f").id
        with pytest.raises(InvalidInputError, match="KIND:REF"):
            lib.episodes.complete(other, "done", ["sk"])  # a two-letter string is not a (kind, ref) pair


def test_every_public_method_of_the_library_has_a_docstring() -> None:
    import inspect

    from kaos_dream import Library

    lib = Library(":memory:", settings=Settings())
    try:
        built_on_use = [name for name, attr in vars(Library).items() if isinstance(attr, functools.cached_property)]
        values = {**{name: getattr(lib, name) for name in built_on_use}, **vars(lib)}  # the lazy stores too
        components = [lib] + [value for name, value in values.items() if not name.startswith("_")
                              and type(value).__module__.startswith("kaos_dream")]
        missing = []
        for component in components:
            for name, member in inspect.getmembers(type(component), callable):
                if not name.startswith("_") and not (inspect.getdoc(member) or "").strip():
                    missing.append(f"{type(component).__name__}.{name}")
        assert len(components) >= 10 and missing == []
    finally:
        lib.close()
