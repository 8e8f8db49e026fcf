"""Start-up: `kaos --version` and light commands must not pay for modules they do not use.

Each check runs a real interpreter (a fresh ``sys.modules``) the way the console script does, then
reports which heavy modules got imported. The timing goal itself is measured side by side by
``scripts/measure_startup.py``; these tests pin the causes so a stray top-level import cannot
quietly bring the cost back.
"""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from kaos_dream.cli import COMMANDS
from kaos_dream.cli import run as click_run
from kaos_dream.entry import asks_version
from kaos_dream.entry import run as entry_run

from .conftest import PROJECT_ROOT

HEAVY = ("numpy", "anthropic", "httpx", "pydantic", "typer", "click", "rich", "kaos_dream.library", "wordllama",
         "tokenizers", "safetensors", "kaos_dream.dream", "kaos_dream.validation", "kaos_dream.failures")
CLI_FRAMEWORK = {"typer", "click", "pydantic", "rich"}
MODEL_PACKAGES = {"wordllama", "tokenizers", "safetensors"}
NOT_SEARCHED = {"kaos_dream.dream", "kaos_dream.validation", "kaos_dream.failures", "anthropic", "httpx"}

PROBE = """
import json, sys
heavy = json.loads(sys.argv[2])
sys.argv = ["kaos", *json.loads(sys.argv[1])]
from kaos_dream.entry import run
code = run()
loaded = sorted(m for m in sys.modules if any(m == h or m.startswith(h + ".") for h in heavy))
sys.stderr.write("\\nPROBE " + json.dumps({"code": code, "loaded": loaded}) + "\\n")
"""


def probe(args: list[str], cwd: Path) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(args), json.dumps(HEAVY)],
        capture_output=True, text=True, cwd=cwd, timeout=120,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(PROJECT_ROOT), "XDG_CACHE_HOME": str(cwd / "cache")},
    )
    line = [x for x in proc.stderr.splitlines() if x.startswith("PROBE ")]
    assert line, proc.stderr
    return {**json.loads(line[-1][len("PROBE "):]), "stdout": proc.stdout}


def roots(loaded: list[str]) -> set[str]:
    return {next(h for h in HEAVY if m == h or m.startswith(h + ".")) for m in loaded}


def test_version_imports_nothing_heavy(tmp_path: Path) -> None:
    result = probe(["--version"], tmp_path)
    assert result["code"] == 0
    assert result["stdout"].startswith("kaos-dream ")
    assert roots(result["loaded"]) == set(), result["loaded"]


def test_skill_list_imports_neither_numpy_nor_anthropic(tmp_path: Path, kaos) -> None:
    db = tmp_path / "lib.db"
    assert kaos("init", db=db).returncode == 0
    assert kaos("skill", "add", "csv-to-parquet", "--description", "convert files", db=db).returncode == 0
    result = probe(["--db", str(db), "skill", "list", "--json"], tmp_path)
    assert result["code"] == 0
    assert [s["name"] for s in json.loads(result["stdout"])] == ["csv-to-parquet"]
    found = roots(result["loaded"])
    assert "kaos_dream.library" in found  # the probe really ran a command
    assert not found & {"numpy", "anthropic", "httpx"}, result["loaded"]


def test_lexical_search_imports_no_numpy_and_a_semantic_one_does(tmp_path: Path, kaos) -> None:
    """A search whose lexical matches cover the query ranks its pool on lists (no numpy, no vectors);
    one the words miss loads numpy for the semantic step and still answers."""
    db = tmp_path / "lib.db"
    for name, text in (("csv-to-parquet", "convert csv files to parquet"), ("deploy", "ship the service")):
        assert kaos("skill", "add", name, "--description", text, db=db).returncode == 0
    assert kaos("record-outcome", "csv-to-parquet", "--failure", db=db).returncode == 0  # an outcome to weigh
    result = probe(["--db", str(db), "search", "csv parquet", "--json"], tmp_path)
    assert result["code"] == 0
    assert [h["name"] for h in json.loads(result["stdout"])][:1] == ["csv-to-parquet"]
    found = roots(result["loaded"])
    assert "kaos_dream.library" in found and "numpy" not in found, result["loaded"]
    semantic = probe(["--db", str(db), "search", "publish the app to production", "--json"], tmp_path)
    assert semantic["code"] == 0
    assert "numpy" in roots(semantic["loaded"])


def test_search_needs_no_cli_framework_no_model_package_and_no_dream(tmp_path: Path, kaos) -> None:
    """`kaos search` is answered before typer is built, embeds the query without the wordllama
    package, and opens a library without the features a search never uses."""
    db = tmp_path / "lib.db"
    for name, text in (("deploy-app", "ship the service to production"), ("csv-to-parquet", "convert csv files")):
        assert kaos("skill", "add", name, "--description", text, db=db,
                    env={"XDG_CACHE_HOME": str(tmp_path / "cache")}).returncode == 0
    for query in ("csv parquet", "release software to prod servers"):  # lexical, then one the words miss
        result = probe(["--db", str(db), "search", query, "--json", "--limit", "1"], tmp_path)
        assert result["code"] == 0
        assert [h["name"] for h in json.loads(result["stdout"])] == (
            ["csv-to-parquet"] if query == "csv parquet" else ["deploy-app"])
        found = roots(result["loaded"])
        assert "kaos_dream.library" in found  # it really searched
        assert ("numpy" in found) == (query != "csv parquet")  # only the semantic step needs numpy
        assert not found & (CLI_FRAMEWORK | MODEL_PACKAGES | NOT_SEARCHED), result["loaded"]


def test_search_help_and_errors_still_come_from_typer(tmp_path: Path) -> None:
    help_text = probe(["search", "--help"], tmp_path)
    assert help_text["code"] == 0 and "--record-hits" in help_text["stdout"] and "typer" in roots(help_text["loaded"])
    wrong = probe(["search", "x", "--kind", "bogus"], tmp_path)
    assert wrong["code"] == 2 and "typer" in roots(wrong["loaded"])


@pytest.mark.parametrize("argv", [
    ["--version"], ["--json", "--version"], ["--db", "x.db", "--version"], ["--db=x.db", "--version"],
    ["--db", "--version"], ["skill", "--version"], ["--help"], [],
])
def test_version_fast_path_agrees_with_click(argv: list[str]) -> None:  # with words after it: test_search_fast_path
    """The shortcut answers exactly when click's eager --version would, with the same line."""
    fast_out, slow_out = io.StringIO(), io.StringIO()
    if asks_version(argv):
        with contextlib.redirect_stdout(fast_out):
            fast_code = entry_run(argv)
        with contextlib.redirect_stdout(slow_out), contextlib.redirect_stderr(io.StringIO()):
            slow_code = click_run(argv)
        assert (fast_code, fast_out.getvalue()) == (slow_code, slow_out.getvalue()) == (0, fast_out.getvalue())
        assert fast_out.getvalue().startswith("kaos-dream ")
    else:
        with contextlib.redirect_stdout(slow_out), contextlib.redirect_stderr(io.StringIO()):
            click_run(argv)
        assert not slow_out.getvalue().startswith("kaos-dream "), argv


LISTING = """
import json, sys, importlib, pkgutil
import typer
if sys.argv[2] == "eager":
    import kaos_dream.cli as cli
    for info in pkgutil.iter_modules(cli.__path__):
        importlib.import_module("kaos_dream.cli." + info.name)
from kaos_dream.cli import click_command
group = click_command()
def walk(cmd, path):
    out = [path]
    for name in sorted(getattr(cmd, "commands", {})):
        out += walk(cmd.commands[name], path + " " + name)
    return out
ctx = typer.Context(group)
print(json.dumps(walk(group.get_command(ctx, sys.argv[1]), sys.argv[1])))
"""


def command_paths(name: str, mode: str) -> list[str]:
    proc = subprocess.run([sys.executable, "-c", LISTING, name, mode], capture_output=True, text=True,
                          timeout=120, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(PROJECT_ROOT)})
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_lazy_subcommand_is_complete_on_its_own(name: str) -> None:
    """Loaded alone (as `kaos NAME …` does), each subcommand has every command it has once every CLI
    module is imported: a module that adds commands to a group must be listed in COMMANDS."""
    alone = command_paths(name, "alone")
    assert alone == command_paths(name, "eager")
    assert alone[0] == name
