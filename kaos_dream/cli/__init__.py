"""The `kaos` command line: parses arguments, calls the library, renders the result.

:func:`main` is the console-script entry point. It turns every error a user can cause into one
line on stderr and a non-zero exit code (1 for errors, 2 for usage errors); a traceback is shown
only with ``KAOS_DEBUG=1``.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sqlite3
import sys
from typing import Annotated

import typer
import typer.core
import typer.main

from ..entry import is_utf8_text, version_line
from ..errors import KaosError
from ..store.connect import describe_sqlite_error
from .common import DbOption, forget_resolved_db, global_options, resolved_db
from .compat import Abort, ClickException, Exit, NoArgsIsHelpError, UsageError
from .lazy import Lazy, lazy_group
from .output import error_line, shorten

# Every subcommand, in help order, by where it lives: a call imports only the one it runs.
COMMANDS = {
    "init": Lazy("kaos_dream.cli.db", "init"),
    "search": Lazy("kaos_dream.cli.search", "search"),
    "demo": Lazy("kaos_dream.cli.demo", "demo"),
    "report": Lazy("kaos_dream.cli.report", "report_cmd"),
    "record-outcome": Lazy("kaos_dream.cli.agents", "record_outcome"),
    "agent": Lazy("kaos_dream.cli.agents", "app"),
    "skill": Lazy("kaos_dream.cli.skills", "app"),
    "memory": Lazy("kaos_dream.cli.memories", "app"),
    "db": Lazy("kaos_dream.cli.db", "app"),
    # modules that add commands to `kaos dream` when imported (run, failures, related, validations, ...)
    "dream": Lazy("kaos_dream.cli.dream", "app", also=(
        "kaos_dream.cli.dream_run", "kaos_dream.cli.failures", "kaos_dream.cli.related", "kaos_dream.cli.validation"
    )),
    "log": Lazy("kaos_dream.cli.coordination", "log_app"),
    "policy": Lazy("kaos_dream.cli.coordination", "policy_app"),
    "prefs": Lazy("kaos_dream.cli.validation", "prefs_app"),
    "failure": Lazy("kaos_dream.cli.failures", "app"),
    "alerts": Lazy("kaos_dream.cli.failures", "alerts_app"),
    "graph": Lazy("kaos_dream.cli.graph", "app"),
    "mcp": Lazy("kaos_dream.cli.mcp", "app"),
}

app = typer.Typer(
    name="kaos",
    help="kaos-dream: a skill and memory library for AI agents that learns from use.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    cls=lazy_group(COMMANDS),
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(version_line(), nl=False)  # the same line kaos_dream.entry answers with
        raise typer.Exit()


@app.callback()
def root(
    ctx: typer.Context,
    db: DbOption = None,
    json_out: Annotated[bool, typer.Option("--json", help="JSON output for every command.")] = False,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version and exit.")
    ] = False,
) -> None:
    """kaos-dream: a skill and memory library for AI agents that learns from use."""
    options = global_options(ctx)
    options.db = db
    options.json = json_out



@functools.cache
def click_command() -> typer.core.TyperGroup:
    """The click command tree, built once per process: typer rebuilds it from the function
    signatures on every ``app(...)`` call (~0.4 s here), which in-process callers would pay each time."""
    return typer.main.get_command(app)  # type: ignore[return-value]


def fail(message: str, code: int) -> int:
    first_line = " ".join(message.strip().splitlines()[:1]) or "unknown error"
    sys.stderr.write(f"kaos: {error_line(first_line)}\n")
    return code


def strict_stdin() -> None:
    """Make reading stdin refuse bytes that are not UTF-8 instead of smuggling them in as surrogates."""
    reconfigure = getattr(sys.stdin, "reconfigure", None)
    if reconfigure is not None:
        with contextlib.suppress(OSError, ValueError):  # a closed or detached stdin: nothing to read anyway
            reconfigure(errors="strict")


def run(argv: list[str] | None = None) -> int:
    """Run the CLI and return its exit code instead of exiting (tests and ``main`` use this)."""
    debug = os.environ.get("KAOS_DEBUG", "").lower() in {"1", "true", "yes", "on"}
    forget_resolved_db()
    args = sys.argv[1:] if argv is None else argv
    for position, arg in enumerate(args, 1):
        if not is_utf8_text(arg):
            return fail(f"usage error: argument {position} is not valid UTF-8 text", 2)
    strict_stdin()
    try:
        result = click_command()(args=args, prog_name="kaos", standalone_mode=False)
        return result if isinstance(result, int) else 0
    except NoArgsIsHelpError as exc:
        sys.stdout.write(exc.format_message() if hasattr(exc, "format_message") else str(exc))
        sys.stdout.write("\n")
        return 2
    except UsageError as exc:
        where = exc.ctx.command_path if exc.ctx else "kaos"
        return fail(f"usage error: {exc.format_message()} (see `{where} --help`)", 2)
    except Abort:
        return fail("aborted", 130)
    except Exit as exc:
        return exc.exit_code
    except ClickException as exc:
        return fail(exc.format_message(), exc.exit_code)
    except KaosError as exc:
        if debug:
            raise
        return fail(f"error: {exc}", exc.exit_code)
    except sqlite3.Error as exc:
        if debug:
            raise
        return fail("error: " + describe_sqlite_error(exc, global_options_path()), 1)
    except OverflowError as exc:  # e.g. --limit 9223372036854775808: past SQLite's 64-bit integers
        if debug:
            raise
        return fail(f"usage error: a number is out of range ({exc})", 2)
    except KeyboardInterrupt:
        return fail("interrupted", 130)
    except BrokenPipeError:
        return 0
    except UnicodeError as exc:  # bytes on stdin (or in a variable) that are not UTF-8 text
        if debug:
            raise
        return fail(f"error: input is not valid UTF-8 text ({exc.reason})", 1)
    except SystemExit as exc:
        # Click answers a closed pipe (`kaos db export - | head`) with exit 1 after wrapping stdout so
        # later flushes stay quiet; the reader chose to stop, so that is no error here.
        if type(sys.stdout).__name__ == "PacifyFlushWrapper":
            return 0
        raise exc
    except OSError as exc:  # the environment said no: a path too long, a device error, ...
        if debug:
            raise
        where = f": {shorten(str(exc.filename), 120)}" if exc.filename else ""
        return fail(f"error: {exc.strerror or exc}{where}", 1)
    except Exception as exc:  # the last line of defence: never a traceback for the user
        if debug:
            raise
        return fail(f"internal error: {type(exc).__name__}: {exc} (set KAOS_DEBUG=1 for a traceback)", 1)


def global_options_path() -> str:
    return resolved_db() or os.environ.get("KAOS_DB") or "the database"


def main() -> None:
    """The console script (see :mod:`kaos_dream.entry`, which answers ``--version`` without this module)."""
    from ..entry import main as entry_main

    entry_main()
