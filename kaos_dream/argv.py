"""Checks and text the console script and the CLI share before any command is parsed.

:mod:`kaos_dream.entry` answers ``kaos --version`` from here without importing the command tree, and
:mod:`kaos_dream.cli` uses the same line and the same UTF-8 check, so neither imports the other
backwards (the console script sits above the CLI).
"""

from __future__ import annotations

from . import __version__

# The root's options other than --version (cli.application.root): `kaos --db --version` names a file "--version".
ROOT_VALUE_OPTIONS = ("--db", "--format", "--principal")
ROOT_FLAGS = ("--json", "--header", "--quiet")


def version_line() -> str:
    """``kaos-dream <version>`` and a newline: what ``kaos --version`` prints."""
    return f"kaos-dream {__version__}\n"


def is_utf8_text(text: str) -> bool:
    """False for a string holding lone surrogates: how Python passes on bytes that are not UTF-8
    (command-line arguments, file names, stdin in the C locale). SQLite cannot store them."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


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
        if arg in ROOT_VALUE_OPTIONS:
            expect_value = True
        elif arg in ROOT_FLAGS or any(arg.startswith(option + "=") for option in ROOT_VALUE_OPTIONS):
            continue
        else:
            return False  # a subcommand, --help or anything click should judge
    return False


def version_after_words(args: list[str]) -> str | None:
    """The usage error for ``kaos --version extra`` (click would print the version and ignore the
    rest, exit 0), or None when ``--version`` stands alone after the root's options."""
    if not asks_version(args):
        return None
    extra = args[args.index("--version") + 1:]
    if not extra:
        return None
    return f"--version takes no arguments (got {extra[0]!r}); see `kaos --help`"
