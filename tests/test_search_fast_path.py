"""`kaos search` answered before typer is imported must be indistinguishable from typer's answer.

The fast path (kaos_dream.entry.run_search, parsing with cli/search_options.py) and the typer
command (cli/search.py, generated from the same option table) are run on the same arguments over
the whole option set, on copies of one library, and must give byte-identical stdout and stderr and
the same exit code. Arguments the fast parser does not accept (help, errors, odd forms) must be
left to typer, so those outputs are typer's by construction; the test checks they are refused.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kaos_dream import Library, ManualClock, Settings
from kaos_dream.cli import click_command
from kaos_dream.cli import run as typer_run
from kaos_dream.cli.search_options import SHARED_FLAGS, SHARED_VALUE_OPTIONS, options, parse
from kaos_dream.entry import run as entry_run
from kaos_dream.graph.nodes import Node

from .conftest import run_kaos_in_process

SKILLS = [
    ("deploy-app", "deploy the app to production with a canary", ["ops"]),
    ("csv-to-parquet", "convert csv files to parquet columnar storage", ["data"]),
    ("rollback-release", "roll a bad release back to the previous version", ["ops"]),
    ("warm-cache", "fill the cache before traffic arrives", ["perf"]),
]


# Written "in 2100": every age is then 0 whatever the wall clock says, so two runs a few milliseconds
# apart score alike and their output can be compared byte for byte.
@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("fast") / "lib.db"
    with Library(path, clock=ManualClock(4_102_444_800.0), settings=Settings()) as lib:
        for name, text, tags in SKILLS:
            lib.skills.add(name, text, f"run {name}", tags)
        lib.memories.add("the deploy needs a warm cache first", key="warm-first")
        lib.memories.add("parquet files compress csv well", key="parquet-size")
        lib.record_outcome("deploy-app", True, agent="a1", task="ship it")
        lib.record_outcome("deploy-app", False, agent="a1", task="ship it")
        lib.graph.link(Node("skill", lib.skills.resolve_id("deploy-app")), "enabled",
                       Node("skill", lib.skills.resolve_id("warm-cache")))
        assert lib.vectors.status()["skill"]["current"] == len(SKILLS)  # semantic search is exercised
    return path


ACCEPTED = [
    ["search", "deploy"],
    ["search", "deploy", "--json"],
    ["--json", "search", "deploy"],
    ["search", "--kind", "skill", "deploy"],
    ["search", "deploy", "--kind=memory"],
    ["search", "deploy", "--limit", "1"],
    ["search", "deploy", "--limit", "1000", "--limit", "2"],
    ["search", "release", "--include-deprecated"],
    ["search", "deploy", "--rank", "bm25"],
    ["search", "deploy", "--rank", "wilson", "--json"],
    ["search", "deploy", "--rank=weighted"],
    ["search", "deploy", "--explore", "--seed", "7", "--json"],
    ["search", "deploy", "--explore"],
    ["search", "deploy", "--seed", "7"],  # an error from the library: the same line on both paths
    ["search", "deploy", "--rank", "bm25", "--explore"],
    ["search", "deploy", "--task", "ship it", "--json"],
    ["search", "deploy", "--agent", "a2", "--record-hits", "--json"],
    ["search", "deploy", "--agent", "a2"],
    ["search", "deploy", "--expand", "2"],
    ["search", "deploy", "--expand", "2", "--mode", "adaptive", "--json"],
    ["search", "deploy", "--expand=1", "--mode=additive"],
    ["search", "deploy", "--format", "tsv", "--header"],
    ["search", "deploy", "--format", "json"],
    ["search", "deploy", "--format=table"],
    ["search", "deploy", "--quiet"],
    ["--header", "search", "deploy"],
    ["--format", "json", "search", "deploy"],
    ["--format=table", "search", "deploy", "--format", "tsv"],
    ["--quiet", "search", "deploy", "--json"],
    ["search", "shipping a new build to the servers"],  # words the library lacks: the model is used
    ["search", "ship it to prod", "--kind", "memory"],
    ["search", "-"],
    ["search", "[bold]x\x1b[2J", "--format", "table"],
    ["search", "deploy", "--db", ""],
    ["--db", "", "search", "deploy"],
    ["search", "deploy", "--db", "/nonexistent/folder/lib.db"],
]

REFUSED = [
    ["search", "--help"],
    ["search", "deploy", "-h"],
    ["search"],
    ["search", "a", "b"],
    ["search", "x", "--kind", "bogus"],
    ["search", "x", "--limit", "-1"],
    ["search", "x", "--limit", "1001"],
    ["search", "x", "--limit", "07"],
    ["search", "x", "--limit", "ten"],
    ["search", "x", "--seed", "4294967296", "--explore"],
    ["search", "x", "--mode", "bogus"],
    ["search", "x", "--nope"],
    ["search", "x", "--json=1"],
    ["search", "x", "--limit"],
    ["search", "--", "-x"],
    ["search", "x", "--task", "--json"],
    ["--format", "bogus", "search", "x"],
    ["search", "x", "--format", "yaml"],
    ["--version", "search", "x"],
    ["search", ""],
    ["search", "   "],
    ["search", "deploy", "--limit=0"],
    ["skill", "list"],
]


def both(args: list[str], db: Path, tmp_path: Path, env: dict[str, str] | None = None):
    """(fast path's result, typer's result), each on its own copy of the library."""
    results = []
    for name, runner in (("fast", entry_run), ("typer", typer_run)):
        copy = tmp_path / f"{name}.db"
        shutil.copy(db, copy)
        argv = [str(copy) if a == "LIB" else a for a in args]
        if "--db" not in argv:
            argv = ["--db", str(copy), *argv]
        result = run_kaos_in_process(*argv, env=env, runner=runner)
        named = (result.stdout.replace(str(copy), "LIB"), result.stderr.replace(str(copy), "LIB"))
        results.append((result.returncode, *named))
    return results


@pytest.mark.parametrize("args", ACCEPTED, ids=lambda a: " ".join(a)[:60])
def test_fast_path_output_is_byte_identical(args: list[str], library: Path, tmp_path: Path) -> None:
    assert parse(["--db", "x.db", *args]) is not None, "the fast parser should read these arguments"
    fast, slow = both(args, library, tmp_path)
    assert fast == slow


@pytest.mark.parametrize("args", REFUSED, ids=lambda a: " ".join(a)[:60])
def test_what_the_fast_parser_refuses_is_left_to_typer(args: list[str], library: Path, tmp_path: Path) -> None:
    assert parse(args) is None
    fast, slow = both(args, library, tmp_path)
    assert fast == slow


def test_results_are_real_and_warnings_match(library: Path, tmp_path: Path) -> None:
    fast, slow = both(["search", "deploy", "--json"], library, tmp_path, env={"KAOS_DREAM_TRESHOLD": "5"})
    assert fast == slow
    code, out, err = fast
    assert code == 0 and json.loads(out)[0]["name"] == "deploy-app"
    assert "KAOS_DREAM_TRESHOLD is not a kaos setting" in err


def test_parser_knows_exactly_the_typer_commands_options() -> None:
    """One table: the typer command's options are the table's plus the shared output options."""
    import typer

    group = click_command()
    command = group.get_command(typer.Context(group), "search")
    typer_flags = {opt for param in command.params for opt in param.opts if opt.startswith("--")}
    table = {option.flag for option in options()}
    assert typer_flags == table | set(SHARED_VALUE_OPTIONS) | set(SHARED_FLAGS)
    defaults = {param.name: param.default for param in command.params if param.name in {o.name for o in options()}}
    assert {k: getattr(v, "value", v) for k, v in defaults.items()} == {o.name: o.default for o in options()}


@pytest.mark.parametrize("args", [["search", ""], ["search", " \t"], ["search", "deploy", "--limit", "0"],
                                  ["--version", "extra"], ["--version", "search", "x"]])
def test_empty_queries_a_zero_limit_and_version_with_words_are_usage_errors(
        args: list[str], library: Path, tmp_path: Path) -> None:
    """They used to exit 0 with nothing (or the version) on stdout: a script could not tell."""
    for code, out, err in both(args, library, tmp_path):
        assert (code, out) == (2, ""), (code, out, err)
        assert err.startswith("kaos: usage error: ") and len(err.strip().splitlines()) == 1, err
