"""The `kaos` console-script entry point, kept free of heavy imports.

A shell loop or a cron job pays the start-up on every call: ``kaos --version`` is answered here,
before typer, rich or the library are imported; everything else goes to :func:`kaos_dream.cli.run`.
"""

from __future__ import annotations

import os
import sys

from .argv import is_utf8_text, version_line

_VALUE_OPTIONS = {"--db", "--format"}  # root options that take a value: `kaos --db --version` names a file "--version"
_FLAG_OPTIONS = {"--json", "--header", "--quiet"}


def asks_version(args: list[str]) -> bool:
    """True when click would answer these arguments with the root's eager ``--version``: it comes
    before any subcommand, among the root's own options only."""
    expect_value = False
    for arg in args:
        if expect_value:
            expect_value = False
            continue
        if arg == "--version":
            return True
        if arg in _VALUE_OPTIONS:
            expect_value = True
        elif arg in _FLAG_OPTIONS or any(arg.startswith(option + "=") for option in _VALUE_OPTIONS):
            continue
        else:
            return False  # a subcommand, --help or anything click should judge
    return False


def run(argv: list[str] | None = None) -> int:
    """Run the CLI and return its exit code; ``--version`` without importing the command tree."""
    args = sys.argv[1:] if argv is None else argv
    if asks_version(args) and all(is_utf8_text(arg) for arg in args):
        sys.stdout.write(version_line())
        sys.stdout.flush()
        return 0
    from .cli import run as run_cli

    return run_cli(args)


def main() -> None:
    # Started with stdout or stderr closed (`kaos … >&-`): Python leaves them None. Nobody is
    # listening, but the command must still run and report through its exit code.
    for name in ("stdout", "stderr"):
        if getattr(sys, name) is None:
            setattr(sys, name, open(os.devnull, "w", encoding="utf-8"))  # noqa: SIM115 - lives as long as the process
    try:
        code = run()
    except BrokenPipeError:  # `kaos --version | true`: the reader left first
        code = 0
    sys.exit(code)
