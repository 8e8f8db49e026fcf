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
