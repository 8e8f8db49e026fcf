"""The `kaos` command line: parses arguments, calls the library, renders the result.

:func:`main` is the console-script entry point. It turns every error a user can cause into one
line on stderr and a non-zero exit code (1 for errors, 2 for usage errors); a traceback is shown
only with ``KAOS_DEBUG=1``.
"""

from __future__ import annotations

import copy
import functools
import sys
from typing import Annotated

import typer
import typer.core
import typer.main

from ..argv import is_utf8_text, version_after_words, version_line
from . import output
from .common import STDIN_HINT, DbOption, global_options
from .compat import Abort, ClickException, Exit, NoArgsIsHelpError, NoSuchOption, UsageError
from .guard import fail, guarded, start_command, strict_stdin
from .lazy import Lazy, lazy_group

# Every subcommand, in help order, by where it lives: a call imports only the one it runs.
COMMANDS = {
    "init": Lazy("kaos_dream.cli.db", "init"),
    "config": Lazy("kaos_dream.cli.config", "config"),
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
    "hook": Lazy("kaos_dream.cli.hook", "app"),
}

app = typer.Typer(
    name="kaos",
    help="kaos-dream: a skill and memory library for AI agents that learns from use.",
    no_args_is_help=True,
    add_completion=True,
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
    format_: Annotated[str | None, typer.Option(
        "--format", help="table, tsv or json (default: table on a terminal, tsv into a pipe).",
        callback=lambda v: _choose_format(v), show_default=False)] = None,
    header: Annotated[bool, typer.Option("--header", help="tsv: print the column names first.",
                                         callback=lambda v: _header(v))] = False,
    quiet: Annotated[bool, typer.Option("--quiet", help="Print nothing but errors (and JSON asked for).",
                                        callback=lambda v: _quiet(v))] = False,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version and exit.")
    ] = False,
    principal: Annotated[str | None, typer.Option(
        "--principal", help="Who writes (counted once by the dream's prune and promotion rules; default "
        "$KAOS_PRINCIPAL, else user@host).", show_default=False)] = None,
) -> None:
    """kaos-dream: a skill and memory library for AI agents that learns from use."""
    options = global_options(ctx)
    options.db = db
    options.json = json_out
    options.principal = principal



def _choose_format(value: str | None) -> str | None:
    if value is not None:
        if value not in output.FORMATS:
            raise typer.BadParameter(f"{value!r} is not one of {', '.join(output.FORMATS)}", param_hint="--format")
        output.set_format(value)
    return value


def _header(value: bool) -> bool:
    output.mode.header = output.mode.header or value
    return value


def _quiet(value: bool) -> bool:
    output.mode.quiet = output.mode.quiet or value
    return value


def _shared_options(command, root_params: dict) -> None:
    """Give a command the output options every command takes, in one place rather than per command:
    ``--format``/``--header`` where it prints results, and ``--quiet`` where it has none of its own.
    They are copies of the root's options (so ``kaos --quiet X`` and ``kaos X --quiet`` are one thing)."""
    names = {param.name for param in command.params}
    wanted = (["format_", "header"] if "json_out" in names else []) + ([] if "quiet" in names else ["quiet"])
    extra = []
    for name in wanted:
        option = copy.copy(root_params[name])
        option.expose_value = False  # the command's function does not take it; the callback records it
        extra.append(option)
    command.params.extend(extra)


_TYPE_LABELS = {"<str>": "TEXT", "<int>": "INTEGER", "<float>": "FLOAT", "<int range>": "INTEGER",
                "<float range>": "FLOAT", "<list[str]>": "TEXT", "<list[int]>": "INTEGER", "<path>": "PATH"}


def _plain_help_labels(command) -> None:
    """Help reads as for any CLI: a flag shows no value, an option its value's kind (TEXT, INTEGER).

    This typer prints ``<bool>`` after flags and ``<str>``/``<list[str]>`` after options, which
    reads as if ``--json`` took a value.
    """
    for param in command.params:
        if getattr(param, "param_type_name", "") == "argument":
            _plain_argument_label(param)
            continue
        if getattr(param, "param_type_name", "") != "option" or param.metavar is not None:
            continue
        if getattr(param, "is_flag", False):
            param.metavar = ""
            continue
        label = _type_label(param.type)
        if label in _TYPE_LABELS:
            param.metavar = _TYPE_LABELS[label]


def _type_label(kind) -> str | None:
    """The ``<kind>`` typer prints for a parameter type: its name in angle brackets."""
    name = getattr(kind, "name", None)
    if not isinstance(name, str):
        return None
    return name if name.startswith("<") else f"<{name}>"


def _plain_argument_label(param) -> None:
    """An argument's kind as TEXT/INTEGER in the help panel. typer (pinned below 0.29) asks the type's
    ``get_metavar`` by keyword for the panel and positionally for the usage line (which shows the name
    alone), so only the keyword call answers (on a copy of the type, which typer shares between
    parameters)."""
    kind = copy.copy(param.type)
    own = kind.get_metavar

    def get_metavar(*args, **kwargs):
        metavar = own(*args, **kwargs)
        if metavar is not None or "param" not in kwargs:
            return metavar
        return _TYPE_LABELS.get(_type_label(kind))

    kind.get_metavar = get_metavar
    param.type = kind


def _plain_help_option(command) -> None:
    built = command.get_help_option

    def get_help_option(ctx):
        option = built(ctx)
        if option is not None:
            option.metavar = ""
        return option

    command.get_help_option = get_help_option


def _walk(command, root_params: dict) -> None:
    subcommands = getattr(command, "commands", None)
    if subcommands is None:
        _shared_options(command, root_params)
    _plain_help_labels(command)
    _plain_help_option(command)
    for sub in (subcommands or {}).values():
        _walk(sub, root_params)


@functools.cache
def click_command() -> typer.core.TyperGroup:
    """The click command tree, built once per process: typer rebuilds it from the function
    signatures on every ``app(...)`` call (~0.4 s here), which in-process callers would pay each time."""
    command = typer.main.get_command(app)
    root_params = {param.name: param for param in command.params}
    _plain_help_labels(command)
    _plain_help_option(command)
    # Subcommands are built on first use (lazy.py); each gets the shared options and help labels then.
    command.on_load = lambda loaded: _walk(loaded, root_params)  # type: ignore[attr-defined]
    return command  # type: ignore[return-value]


def run(argv: list[str] | None = None) -> int:
    """Run the CLI and return its exit code instead of exiting (tests and ``main`` use this)."""
    start_command()
    args = sys.argv[1:] if argv is None else argv
    for position, arg in enumerate(args, 1):
        if not is_utf8_text(arg):
            return fail(f"usage error: argument {position} is not valid UTF-8 text", 2)
    extra = version_after_words(args)
    if extra is not None:
        return fail(f"usage error: {extra}", 2)
    strict_stdin()
    return guarded(lambda: _run_click(args))


def _run_click(args: list[str]) -> int:
    """Click's own outcomes (usage errors, --help, exits); :func:`guarded` handles the rest."""
    try:
        result = click_command()(args=args, prog_name="kaos", standalone_mode=False)
        return result if isinstance(result, int) else 0
    except NoArgsIsHelpError as exc:
        sys.stdout.write(exc.format_message() if hasattr(exc, "format_message") else str(exc))
        sys.stdout.write("\n")
        return 2
    except UsageError as exc:
        where = exc.ctx.command_path if exc.ctx else "kaos"
        hint = ""
        if isinstance(exc, NoSuchOption) and exc.ctx is not None and any(
                getattr(p, "param_type_name", "") == "argument" for p in exc.ctx.command.params):
            hint = f"; {STDIN_HINT}"  # `kaos failure record -t sh "-x: boom"`: the text was taken for an option
        return fail(f"usage error: {exc.format_message()} (see `{where} --help`{hint})", 2)
    except Abort:
        return fail("aborted", 130)
    except Exit as exc:
        return exc.exit_code
    except ClickException as exc:
        return fail(exc.format_message(), exc.exit_code)
    except SystemExit as exc:
        # Click answers a closed pipe (`kaos db export - | head`) with exit 1 after wrapping stdout so
        # later flushes stay quiet; the reader chose to stop, so that is no error here.
        if type(sys.stdout).__name__ == "PacifyFlushWrapper":
            return 0
        raise exc

